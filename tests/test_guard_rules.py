"""The commitment guard's rules as data (guard/rules/): every rule's own examples, the prefilter
derived from the rules' literals, the rule-set hash.  No database: the guard is pure.

The corpus figures and the tricky cases are in tests/test_guard.py."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from guard.engine import _PREFILTER, GuardCategory, guard_check, normalised
from guard.outgoing import RULESET_HASH, outgoing_check, ruleset_hash
from guard.prefilter import Prefilter, required_literals
from guard.rules import RULES, SCOPES, Rule, Scope

CORPUS = Path(__file__).parent.parent / "guard" / "corpus"
BY_ID = {rule.id: rule for rule in RULES}
LITERALS = dict(zip((rule.id for rule in RULES), _PREFILTER.literals, strict=True))


def _fired(text: str) -> tuple[str | None, str | None]:
    verdict = guard_check(text)
    return verdict.rule, verdict.paired_rule


# --- the rules' own examples -----------------------------------------------------------------


def test_rule_ids_are_unique_and_every_rule_has_examples() -> None:
    ids = [rule.id for rule in RULES]
    assert len(ids) == len(set(ids))
    for rule in RULES:
        assert re.fullmatch(r"(price|deadline|outcome|conclusion)\.(en|zh)\.[a-z_.]+", rule.id), rule.id
        assert rule.id.split(".")[:2] == [rule.category, rule.language], rule.id
        assert rule.category in {category.value for category in GuardCategory}
        assert 1 <= len(rule.must_block) <= 3, rule.id
        assert rule.must_pass, rule.id
    assert len({scope.id for scope in SCOPES}) == len(SCOPES)
    # The money rules stay one pattern each, to be swapped for the figure reader's.
    assert {"price.en.money", "price.zh.money"} <= set(ids)


BLOCKING = [(rule.id, text) for rule in RULES for text in rule.must_block]
PASSING = [(rule.id, text) for rule in RULES for text in rule.must_pass]


@pytest.mark.parametrize("rule_id, text", BLOCKING)
def test_every_must_block_example_is_blocked_by_its_rule(rule_id: str, text: str) -> None:
    rule = BY_ID[rule_id]
    verdict = guard_check(text)
    assert verdict.blocked and verdict.category == GuardCategory(rule.category), verdict
    # A deadline names its time rule and the verb rule it was read with.
    verb = rule.kind == "verb" or (rule.category == "deadline" and rule.kind == "general")
    named = verdict.paired_rule if verb else verdict.rule
    assert named == rule_id, verdict
    assert verdict.clause is not None
    start, end = verdict.clause
    assert 0 <= start < end <= len(normalised(text))


@pytest.mark.parametrize("rule_id, text", PASSING)
def test_no_must_pass_example_is_blocked_by_its_rule(rule_id: str, text: str) -> None:
    assert rule_id not in _fired(text)


def test_a_deadline_names_both_of_its_rules() -> None:
    verdict = guard_check("Your order ships tomorrow.")
    assert (verdict.category, verdict.rule, verdict.paired_rule) == (
        GuardCategory.DEADLINE,
        "deadline.en.day_word",
        "deadline.en.verb.deliver",
    )
    assert (BY_ID[verdict.rule or ""].kind, BY_ID[verdict.paired_rule or ""].kind) == ("time", "verb")


def test_the_clause_span_points_into_the_normalised_text() -> None:
    text = "Thanks for asking! I can't say much, but the price is €45 for you."
    verdict = guard_check(text)
    assert verdict.rule == "price.en.money" and verdict.clause is not None
    start, end = verdict.clause
    assert normalised(text)[start:end] == "the price is €45 for you"
    assert guard_check("保证").clause == (0, 2)
    # The span of the clause, not the text: the verdict holds no text.
    assert not any(isinstance(value, str) and "€45" in value for value in dataclasses.astuple(verdict))


# --- the prefilter ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, literals",
    [
        (r"\bprice\b", {"price"}),
        (r"colou?r", {"color", "colour"}),
        (r"(?:is|are) (?:sure|certain)", {"sure", "certain"}),  # the longer run wins over "is "/"are "
        (r"[$€£¥]\s?\d", {"$", "€", "£", "¥"}),
        (r"\d+ days?", {" day"}),
        (r"保证(?!金)|承诺", {"保证", "承诺"}),
        (r"(?<!为)保证", {"保证"}),  # look-arounds require nothing
        (r"a(?:b|cd)?[xy]", {"ax", "ay", "abx", "aby", "acdx", "acdy"}),
        (r"(?:ship|deliver)(?:s|ed)?", {"ship", "deliver"}),  # minimal: "ships" contains "ship"
        (r"\bwon't break again\b", {"won't break again"}),
        (r"x{2,3}", {"xx"}),
        (r"\d+", None),  # nothing literal: the rule always runs
        (r"\w+|price", None),  # one branch needs nothing, so the branch needs nothing
        (r"(?:price)?\d", None),  # an optional group requires nothing
        (r"[^a-z]+", None),
        (r"[a-z]", None),  # a wide range is not expanded
        (r"(.)不\1", {"不"}),
    ],
)
def test_literal_extraction(pattern: str, literals: set[str] | None) -> None:
    assert required_literals(pattern) == (None if literals is None else frozenset(literals))


def test_a_prefilter_finds_every_literal_even_overlapping_ones() -> None:
    prefilter = Prefilter([frozenset({"address"}), frozenset({"dress"}), frozenset({"add"}), None, frozenset({"$"})])
    assert set(prefilter.found("my address")) == {"address", "dress", "add"}
    assert prefilter.active("my address") == {0, 1, 2, 3}
    assert prefilter.active("a dress for $5") == {1, 3, 4}
    assert prefilter.active("nothing here") == {3}


@pytest.mark.parametrize("rule_id, text", BLOCKING)
def test_the_prefilter_never_hides_an_example(rule_id: str, text: str) -> None:
    literals = LITERALS[rule_id]
    if literals is None:
        return  # a rule without literals is always tried
    verdict = guard_check(text)
    assert verdict.clause is not None
    start, end = verdict.clause
    clause = normalised(text)[start:end]
    assert any(literal in clause for literal in literals), (rule_id, clause, sorted(literals))


def _corpus() -> list[str]:
    texts: list[str] = []
    for name in ("commitments.tsv", "harmless.tsv"):
        _header, *lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
        texts += [line.split("\t")[-1] for line in lines if line.strip()]
    return texts + [text for rule in RULES for text in rule.must_block + rule.must_pass]


def test_every_match_in_the_corpus_contains_one_of_its_rules_literals() -> None:
    """The property the prefilter rests on, over every sentence we have: wherever a rule's pattern
    matches, the matched text contains one of the literals derived from it."""
    texts = [normalised(text) for text in _corpus()]
    hidden = []
    for rule in RULES:
        literals = LITERALS[rule.id]
        if literals is None:
            continue
        pattern = re.compile(rule.pattern)
        for text in texts:
            for match in pattern.finditer(text):
                if not any(literal in match.group() for literal in literals):
                    hidden.append((rule.id, match.group()))
    assert not hidden, hidden[:10]


def test_most_rules_have_literals() -> None:
    # A rule without literals is tried on every clause; today only the money rules are, whose
    # cue is any digit or number word (the figure reader then reads the clause).
    assert [rule.id for rule in RULES if LITERALS[rule.id] is None] == ["price.en.money", "price.zh.money"]


# --- the rule-set hash and the outgoing verdict ----------------------------------------------


def test_the_ruleset_hash_follows_the_rules() -> None:
    assert ruleset_hash() == RULESET_HASH and re.fullmatch(r"[0-9a-f]{64}", RULESET_HASH)
    added = Rule("price.en.extra", "price", "en", r"\bgratis\b", ("It's gratis.",), ("Gratis? No.",))
    assert ruleset_hash(RULES + (added,)) != RULESET_HASH
    changed = (dataclasses.replace(RULES[0], pattern=RULES[0].pattern + "|x"),) + RULES[1:]
    assert ruleset_hash(changed) != RULESET_HASH
    assert ruleset_hash(RULES, SCOPES + (Scope("hedge.en.extra", "hedge", "en", r"\bperchance\b"),)) != RULESET_HASH
    # The examples are documentation, not behaviour: they leave the hash alone.
    relabelled = tuple(dataclasses.replace(rule, must_pass=rule.must_pass + ("x",)) for rule in RULES)
    assert ruleset_hash(relabelled) == RULESET_HASH


def test_the_outgoing_verdict_names_the_rule() -> None:
    verdict = outgoing_check("The haircut costs €35.", given=["€35"])
    assert (verdict.blocked, verdict.category, verdict.check) == (True, "price", "guard")
    assert verdict.rule == "price.en.money"
    verdict = outgoing_check("保证三天内送达。")
    assert (verdict.category, verdict.rule) == ("deadline", "deadline.zh.within_days")
    assert outgoing_check("The owner will confirm the price.").rule is None
