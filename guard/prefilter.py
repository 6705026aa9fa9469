"""The guard's prefilter, derived from the rules: for every rule, the literal strings at least one of
which every match of its pattern contains.  A clause that contains none of a rule's literals cannot
match it, so the rule is not tried there.  Nothing here is kept by hand: the literals are read off
the compiled patterns (Python's own regex parser), so a new or changed rule brings its own.

How a pattern is read (`required_literals`):

* a run of literal characters is one string ("price"); a class of a few characters ([$€£¥]) or a
  branch of literals ((?:is|are)) is a set of strings, joined with its neighbours into all their
  concatenations while that stays small ("colou?r" gives {"color", "colour"});
* zero-width items (\\b, ^, $, look-arounds) consume nothing, so they join their neighbours;
* a sequence needs what any one of its items needs: the most selective set is kept (longest
  shortest string, then fewest strings);
* a branch needs one of what each alternative needs; a repeat needs what its body needs when its
  minimum is at least 1;
* anything else (\\d, \\w, ., a negated class, a large range, a backreference) needs nothing.  A
  rule whose pattern yields no requirement has no literals and is always tried.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, Final

__all__ = ["Prefilter", "required_literals"]

# Sets of strings grow by concatenation; beyond this many a run is cut in two.
_MAX_STRINGS: Final = 64
# A character range up to this wide is expanded into its characters.
_MAX_RANGE: Final = 12

_Strings = frozenset[str]


def _class_chars(items: Sequence[tuple[Any, Any]]) -> _Strings | None:
    chars: set[str] = set()
    for op, value in items:
        if op is sre.LITERAL:
            chars.add(chr(value))
        elif op is sre.RANGE and value[1] - value[0] < _MAX_RANGE:
            chars.update(chr(code) for code in range(value[0], value[1] + 1))
        else:  # NEGATE, CATEGORY (\d, \s, \w), a wide range
            return None
    return frozenset(chars) if len(chars) <= _MAX_STRINGS else None


def _product(left: _Strings, right: _Strings) -> _Strings | None:
    if len(left) * len(right) > _MAX_STRINGS:
        return None
    return frozenset(a + b for a in left for b in right)


def _better(a: _Strings | None, b: _Strings | None) -> _Strings | None:
    """The more selective of two requirements (either is enough on its own)."""
    if a is None:
        return b
    if b is None:
        return a
    key_a = (min(4, min(map(len, a))), -len(a))
    key_b = (min(4, min(map(len, b))), -len(b))
    return a if key_a >= key_b else b


def _usable(strings: _Strings | None) -> _Strings | None:
    return strings if strings and "" not in strings else None


def _item(op: Any, value: Any) -> tuple[_Strings | None, _Strings | None]:
    """(exact, required) of one parsed item: `exact` is every string it can match, when that set is
    small and known; `required` a set one of which every match contains."""
    if op is sre.LITERAL:
        exact: _Strings | None = frozenset({chr(value)})
        return exact, exact
    if op is sre.IN:
        exact = _class_chars(value)
        return exact, exact
    if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
        return frozenset({""}), None  # zero-width: joins its neighbours, requires nothing
    if op is sre.SUBPATTERN:
        return _sequence(value[3])
    if op is sre.ATOMIC_GROUP:
        return _sequence(value)
    if op is sre.BRANCH:
        pairs = [_sequence(branch) for branch in value[1]]
        exacts = [e for e, _ in pairs]
        requireds = [r for _, r in pairs]
        exact = frozenset().union(*exacts) if all(e is not None for e in exacts) else None  # type: ignore[arg-type]
        if exact is not None and len(exact) > _MAX_STRINGS:
            exact = None
        required = (
            frozenset().union(*requireds) if all(r is not None for r in requireds) else None  # type: ignore[arg-type]
        )
        return exact, _usable(required)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, high, body = value
        body_exact, body_required = _sequence(body)
        exact = None
        if body_exact is not None and high is not sre.MAXREPEAT and high <= 3:
            # Every count from low to high: "(?:ab)?" is {"", "ab"}.
            options: set[str] = set()
            for count in range(low, high + 1):
                strings: _Strings | None = frozenset({""})
                for _ in range(count):
                    strings = _product(strings, body_exact) if strings is not None else None
                if strings is None:
                    options = set()
                    break
                options |= strings
            exact = frozenset(options) if options and len(options) <= _MAX_STRINGS else None
        return exact, body_required if low >= 1 else None
    return None, None  # ANY, NOT_LITERAL, GROUPREF, CATEGORY ...


def _sequence(items: Iterable[tuple[Any, Any]]) -> tuple[_Strings | None, _Strings | None]:
    best: _Strings | None = None
    run: _Strings | None = frozenset({""})  # the concatenations of the current run of exact items
    whole: _Strings | None = frozenset({""})  # the concatenations of the whole sequence, while known
    for op, value in items:
        exact, required = _item(op, value)
        best = _better(best, required)
        if exact is None:
            best = _better(best, _usable(run))
            run, whole = frozenset({""}), None
            continue
        whole = _product(whole, exact) if whole is not None else None
        joined = _product(run, exact) if run is not None else None
        if joined is None:
            best = _better(best, _usable(run))
            joined = exact
        run = joined
    best = _better(best, _usable(run))
    return whole, best


def required_literals(pattern: str) -> frozenset[str] | None:
    """Strings one of which every match of `pattern` contains; None when none can be read off (the
    rule must always be tried).  Minimal: no string contains another of the set."""
    _exact, required = _sequence(sre_parse.parse(pattern))
    if not required:
        return None
    return frozenset(s for s in required if not any(t != s and t in s for t in required))


class Prefilter:
    """Which of a list of patterns can match a text, from their literals alone.

    The literals are indexed by their first two characters (one-character literals by that
    character): the character pairs of a text, a C-level set, select the few literals worth an
    `in` test.  `found` gives the literals a text contains; `active` the patterns they open (and the
    patterns without literals, always)."""

    def __init__(self, literals: Sequence[frozenset[str] | None]) -> None:
        self.literals = tuple(literals)
        self._always = frozenset(index for index, found in enumerate(literals) if found is None)
        owners: dict[str, set[int]] = {}
        for index, found in enumerate(literals):
            for s in found or ():
                owners.setdefault(s, set()).add(index)
        self._owners = {s: frozenset(indices) for s, indices in owners.items()}
        self._singles = frozenset(s for s in owners if len(s) == 1)
        by_pair: dict[tuple[str, str], list[str]] = {}
        for s in owners:
            if len(s) > 1:
                by_pair.setdefault((s[0], s[1]), []).append(s)
        self._by_pair = {pair: tuple(strings) for pair, strings in by_pair.items()}

    def found(self, text: str) -> list[str]:
        """The literals `text` contains."""
        pairs = set(zip(text, text[1:], strict=False)) & self._by_pair.keys()
        present = [s for pair in pairs for s in self._by_pair[pair] if s in text]
        present.extend(self._singles.intersection(text))
        return present

    def active(self, text: str, found: Sequence[str] | None = None) -> frozenset[int]:
        """The indices of the patterns that may match somewhere in `text`.  `found`, the literals of
        a longer text that contains `text`, saves looking them up again."""
        present = self.found(text) if found is None else [s for s in found if s in text]
        if not present:
            return self._always
        return self._always.union(*(self._owners[s] for s in present))
