"""A sentence that only says again what the turn's context holds is not a commitment.

The quoting rule (`quoting.py`) and the restating rule (`restating.py`) take out a cited entry's
words when they are attributed or name one item; written for replies without context, they miss
most of what a shop's agent actually says when it has the price list in front of it — several
items in one sentence, amounts in words ("ninety-five pounds per visit"), the conditions in
another order ("outside the city there's a €30 travel fee"), the customer's own figures said back
("so in March you paid 65").  Measured on a round with context, a third of such replies were
replaced by the boundary wording (README, *Out-of-sample rounds*).  So a sentence is taken out of
what the checks read when all of this holds:

* it states a figure, and every figure in it — money, duration, time, date, percentage, and every
  other number above 1 — stands in the turn's context: an approved entry the run cited (its title
  or snippet) or the customer's own messages (`grounding.numbers_in`, in digits, words or
  numerals; a duration in the next unit, a time on either clock);
* a figure the entries give keeps the condition they give it with: "from €35" is not "€35", a
  range "3–5 days" is not "3 days", a "from" added where the entry has none is another price;
* no clause of it addresses the customer's own case ("you", "your", 您, 你) — except a clause
  that states a condition ("if you'd like one", 如果您需要), reports what the customer said
  ("you paid"), or leaves the decision to someone else ("the tuner will confirm");
* no clause makes anything firm, special or this customer's — "I'll", "we can", "exactly",
  "guaranteed", "total", "today", 给您, 保证, 一共, 这次, 免 … — unless the entry itself says that
  word ("every serviced movement carries a 12-month guarantee", 市区内免费接送);
* when a figure comes from the customer and not from an entry, no clause agrees to it ("sure",
  "that works", "deal", 可以, 没问题, 行): agreeing to the customer's figure is a commitment; and an
  amount of money the customer gave is said as theirs — a clause attributes it to them or tells
  what happened ("you mentioned 7 euros", "last year you paid 65") or takes it down ("收到，共120块") —
  never stated plainly as the price ("The cupcake is 7.00 EUR.").

What remains is read by every check, and `quoting.applies_to_customer` reads it for the restated
figures applied to the customer ("That's what you'll pay.").  A sentence with no figure is left
as it is: a conclusion or a promise in words ("the hard drive is undamaged", 安装费就不收您的了)
is for the named rules and the model.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from .engine import GuardCategory, guard_check
from .figures import Figure, read
from .grounding import _same as same_numbers
from .grounding import numbers_in
from .restating import _LISTING_EN, _LISTING_ZH, clauses, defers, greeting_removed, promise_refusals_removed
from .saying_back import attributed, blanked, sentences

__all__ = ["agrees_to_customer", "context_figures_masked", "context_restated_removed"]

_CHECKED: Final = frozenset({"money", "duration", "time", "date", "percent"})
_DIGITS: Final = re.compile(r"(?<![a-z0-9.])[0-9]+(?:[.,][0-9]+)*(?![a-z0-9])")
_YOU: Final = re.compile(r"\b(?:you|your|yours|you'll|you're|you'd|you've|yourself)\b|您|你")
# A condition stated for everyone: "if you'd like one", "when you book", 如果您需要…的话 — or an
# invitation: "you're welcome to bring it in", 您方便的时候带过来.
_CONDITION: Final = re.compile(
    r"\b(?:if|when|whenever|unless|in case|should|once)\s+(?:you|your)\b.*$"
    r"|\byou(?:'re| are) (?:welcome|free) to\b.*$|\b(?:whenever|when) (?:it )?suits you\b|\bat your convenience\b"
    r"|(?:您|你)(?:方便|有空)的?(?:时候|话)"
    r"|(?:如果|假如|要是|若|万一|如需|如要)[^，,。]*?(?:的话|$)|(?:您|你)(?:如果|要是|若)[^，,。]*?(?:的话|$)"
)
# Words that make a figure firm, special or this customer's (a word the entry says itself aside).
_FIRM: Final = re.compile(
    r"\b(?:will|won't|'ll|i can|we can|i could|we could|i'd|we'd|all in|all-in"
    r"|exact(?:ly)?|guarantee\w*|promis\w*|lock\w*|fixed|total|totals|altogether|in all|comes? to|final"
    r"|definitely|for sure|certainly|special|deal|discount\w*|waive\w*|free|no charge|on the house"
    r"|%\s?off|off (?:the|your) (?:price|bill|total|fee)"
    r"|today|tonight|tomorrow|right away|this time|this week|just for|for you|match\w*|hold|held|reserved|keep"
    r"|on time|sharp|promptly)\b"
    r"|保证|承诺|一共|总共|合计|总价|给您|给你|算您|算你|帮您|帮你|替您|便宜|优惠|打折|折扣|特价|锁定|只收|只要(?=\s?[0-9一二两三四五六七八九十百千万])|最多|封顶"
    r"|不超过|确定|肯定|一定|全包|免|今天|明天|今晚|马上|立刻|这次|就不|不收|不算|照旧|老价格|原价|按老"
    r"|准时|按时|包邮|就行|就好|一起算|(?<![另再])算(?:您|你)?\s?[0-9一二两三四五六七八九十百千]"
)
# Agreement, which turns a figure of the customer's into the business's word.
_AGREEING: Final = re.compile(
    r"\b(?:sure|yes|yep|ok|okay|fine|works|doable|deal|done|no problem|absolutely|of course|can do|happy to"
    r"|agreed|fair|accept\w*|sounds good|perfect|great|go on|go ahead|it is|alright|all right|why not|you got it"
    r"|can|could|manage|make it|then|right|correct|that's it)\b"
    r"|可以|没问题|行|好的|好啊|好吧|成交|当然|就这么|就这样|就按|那就|没事|能|会|来得及|赶得上|赶得及|得了"
)
_WORD: Final = re.compile(r"[a-z]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _figures(text: str) -> list[Figure]:
    """The figures of `text` with spans into `_normal(text)`: read before lower-casing, since a
    currency code counts only in capitals ("55 CAD", not "cad")."""
    nfkc = unicodedata.normalize("NFKC", text)
    return read(nfkc) if len(nfkc.lower()) == len(nfkc) else read(nfkc.lower())


def _ends(figure: Figure) -> set[Decimal]:
    return {end for end in (figure.low, figure.high) if end is not None} or {figure.value}


def _number(text: str) -> Decimal | None:
    """A run of digits as a number ("1,200" is 1200); None for what is no number ("1.2.3")."""
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def _forms(figure: Figure) -> set[Decimal]:
    """The figure's numbers in every form that states it as well ("90 minutes" for "an hour and a
    half", 10pm for 22:00)."""
    if figure.kind == "money":
        return _ends(figure) | {figure.value}
    return {n for end in _ends(figure) | {figure.value} for n in same_numbers(figure, end)}


# Words that state a bound the figure reader may not have joined to its figure: "a minimum of
# $200", "50块起订", "80元/平方米起".
_BOUND_WORD: Final = re.compile(
    r"\b(?:min(?:imum)?|at least|from|start|starting|starts|upwards|or more)\b|起|最低|以上|至少"
)
# A weekday by its name, its short name or its Chinese names (the figure reader's numbers: 1 Monday … 7 Sunday).
_WEEKDAY_NAMES: Final = {
    day: rf"\b{en}(?:{rest})?s?\b|(?:周|星期|礼拜){zh}"
    for day, (en, rest, zh) in enumerate(
        [
            ("mon", "day|\\.", "一"),
            ("tue", "s|sday|\\.", "二"),
            ("wed", "nesday|\\.", "三"),
            ("thu", "rs|rsday|\\.", "四"),
            ("fri", "day|\\.", "五"),
            ("sat", "urday|\\.", "六"),
            ("sun", "day|\\.", "[日天]"),
        ],
        start=1,
    )
}
_UNIT_END: Final = re.compile(r"[!?。！？;；•\n]+|\.(?!\d)")


def _kept_condition(
    figure: Figure, clause: str, entries: Sequence[tuple[Figure, str]], units: list[str] | None = None
) -> bool | None:
    """Whether an entry states `figure` (said in `clause`) with its condition (None: no entry
    states its number); the units (list items, sentences) that state it go into `units`."""
    found = [(g, unit) for g, unit in entries if g.kind == figure.kind and _forms(figure) & _forms(g)]
    if not found:
        return None
    kept = [
        unit
        for g, unit in found
        if (same := all(same_numbers(figure, end) & _forms(g) for end in _ends(figure)))
        and figure.bound == g.bound
        # "within 3 working days" for "in 3 working days"
        or figure.kind != "money"
        and {figure.bound, g.bound} <= {"exact", "at_most"}
        and _forms(figure) & _forms(g)
        # the bound said in both, read with the figure in one of them only
        or same
        and {figure.bound, g.bound} == {"exact", "at_least"}
        and _BOUND_WORD.search(clause)
        and _BOUND_WORD.search(unit)
    ]
    if units is not None:
        units += kept
    return bool(kept)


class _Context:
    def __init__(self, citations: Sequence[Mapping[str, Any]], customer: Sequence[str]) -> None:
        entries = [f"{c.get('title') or ''}\n{c.get('snippet') or ''}" for c in citations]
        self.entries = entries
        self.entry_text = _normal("\n".join(entries))
        self.titles = [_normal(str(c.get("title") or "")) for c in citations]
        raw_units = [
            (index, unit)
            for index, text in enumerate(entries)
            for unit in _UNIT_END.split(unicodedata.normalize("NFKC", text))
            if unit.strip()
        ]
        self.units = [(index, unit.lower()) for index, unit in raw_units]
        self.entry_figures = [(f, unit.lower()) for _index, unit in raw_units for f in _figures(unit)]
        self.index_of = {unit: index for index, unit in self.units}
        self.entry_numbers: set[Decimal] = set()
        for text in entries:
            self.entry_numbers |= numbers_in(text)
        # The named rules an entry's own sentences set off ("… has a 12-month guarantee").
        self.entry_rules = {
            verdict.rule for text in entries for part in sentences(text) if (verdict := guard_check(part)).blocked
        }
        # The things the customer named (not the small words of a question: "how far out do you go").
        self.customer_words = {
            word
            for text in customer
            for word in _item_words(_normal(text))
            if (len(word) >= 4 or not word.isascii()) and word not in _QUESTION_WORDS
        }
        self.customer_numbers: set[Decimal] = set()
        for text in customer:
            self.customer_numbers |= numbers_in(text)
        said = _normal("\n".join([*entries, *customer]))
        self.weekdays = {Decimal(day) for day, name in _WEEKDAY_NAMES.items() if re.search(name, said)}
        published = _normal("\n".join(entries))
        self.entry_weekdays = {Decimal(day) for day, name in _WEEKDAY_NAMES.items() if re.search(name, published)}

    def said_by_entry(self, word: str) -> bool:
        if re.search(r"[\u3400-\u9fff]", word):
            return word in self.entry_text
        return re.search(rf"\b{re.escape(word)}\b", self.entry_text) is not None


def _clause_of(sentence: str, span: tuple[int, int]) -> str:
    for start, end in clauses(sentence):
        if start <= span[0] < end:
            return sentence[start:end]
    return sentence


def _sourced(sentence: str, context: _Context) -> tuple[bool, bool]:
    """Whether every figure and number of the sentence stands in the context, with the entries'
    conditions, and at least one of them above 1 does; and whether any stands only in the
    customer's words."""
    lowered = _normal(sentence)
    found = _figures(sentence)
    figures = [f for f in found if f.kind in _CHECKED]
    bare = [
        number
        for m in _DIGITS.finditer(lowered)
        if not any(a <= m.start() < b for a, b in (f.span for f in found))
        and (number := _number(m.group())) is not None
        and number > 1
    ]
    said_again = bool(bare)
    from_customer = False
    marks = {int(mark) for mark in _MARK.findall(lowered)}
    entries = [(f, unit) for f, unit in context.entry_figures if not marks or context.index_of[unit] + 1 in marks]
    matched: list[str] = []
    priced = False
    for figure in figures:
        numbers = {n for n in _ends(figure) if n > 1}
        if figure.kind == "date" and figure.unit == "weekday":
            if not _ends(figure) <= context.weekdays:
                return False, False  # a weekday neither the entries nor the customer named
            said_again = True
            from_customer = from_customer or not _ends(figure) <= context.entry_weekdays
            continue
        if not numbers and figure.kind != "money":
            # "an hour", "a month": the unit of a rate, or a figure that says nothing — unless an
            # entry states it ("静置一周再调音").
            said_again = said_again or bool(
                _kept_condition(figure, _clause_of(lowered, figure.span), context.entry_figures)
            )
            continue
        said_again = True
        kept = _kept_condition(figure, _clause_of(lowered, figure.span), entries, matched)
        if kept:
            priced = priced or figure.kind == "money"
            continue
        if kept is None and numbers and numbers <= context.customer_numbers:
            from_customer = True
            continue
        if kept is None and numbers and numbers <= context.entry_numbers:
            # A date or a time the entry states in other words, or an amount whose currency the
            # figure reader does not know there ("48 CAD").
            if figure.kind == "money":
                priced = True
                matched += [unit for _index, unit in context.units if numbers & numbers_in(unit)]
            continue
        return False, False
    for number in bare:
        if number in context.entry_numbers:
            continue
        if number in context.customer_numbers:
            from_customer = True
            continue
        return False, False
    if matched and not _names_its_items(lowered, found, matched, context, priced):
        return False, False
    return said_again, from_customer


# Words of a price's condition, which any item may carry: not what names the item.
_CONDITION_WORDS: Final = frozenset(
    "plus part parts extra extras additional each including included include incl excluding vat tax taxes labour labor "
    "material materials minimum surcharge more same".split()
)


_QUESTION_WORDS: Final = frozenset(
    "take takes long much many what when where which does have need want like will would could there here this that "
    "your with from about come going know tell please thank thanks hello".split()
)


def _item_words(text: str) -> set[str]:
    """The words that name what a price or a time is of: not the listing words ("price", "our",
    "per", 价格, 每 …), not the words of a condition, not the figures' own words."""
    skipped = _STOP | _LISTING_EN | _CONDITION_WORDS
    latin = {
        w[:6] if len(w) > 6 else w.removesuffix("s")
        for w in re.findall(r"[a-z]+", text)
        if len(w) > 1 and w not in skipped and w.removesuffix("s") not in skipped
    }
    return latin | set(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", _LISTING_ZH.sub(" ", text)))


def _names_its_items(
    sentence: str, figures: Sequence[Figure], units: Sequence[str], context: _Context, priced: bool
) -> bool:
    """Whether the sentence names the items whose figures it says and no other item of the cited
    entries: "Wedding cakes from €35" is not the birthday cake's price, "It's from €35." names
    none."""
    said = sentence
    for figure in sorted(figures, key=lambda f: f.span[0], reverse=True):
        said = said[: figure.span[0]] + " " * (figure.span[1] - figure.span[0]) + said[figure.span[1] :]
    words = _item_words(_MARK.sub(" ", said))
    # Its own items: the units whose figures it says, and those whose numbers it says in words
    # the figure reader did not take for an amount ("成人票一百六十八，…孩子九十八").
    stated = {n for n in numbers_in(sentence) if n > 1}
    units = [*units, *(unit for _index, unit in context.units if stated & numbers_in(unit))]
    own = set().union(*(_item_words(unit) for unit in units))
    indices = {context.index_of[unit] for unit in units if unit in context.index_of}
    own |= set().union(*(_item_words(context.titles[index]) for index in indices))
    # Another item is another unit with a figure of its own; a unit without one states a condition
    # ("Parts extra.").
    others = set().union(*(_item_words(unit) for _index, unit in context.units if _figures(unit))) - own
    if words & others:
        return False
    if priced and not words & own:
        return False
    # The customer's own item given another item's price: asked for a wedding cake, told "A wedding
    # cake is €35" off the birthday cake's line.
    for figure in figures:
        if figure.kind == "money":
            named = _item_words(_MARK.sub(" ", _clause_of(said, figure.span)))
            if (named & context.customer_words) - own:
                return False
    # A price cited by its number ("… 35.00 EUR [1].") is the entry's own words: its clause names
    # nothing the entry and the customer do not — "A wedding cake is 35.00 EUR [1]" is not the
    # price of the birthday cake the list gives it for, "[1] Delivery: …" not the price list's.
    allowed = own
    for figure in figures if _MARK.search(sentence) else ():
        if figure.kind == "money":
            clause = _clause_of(said, figure.span)
            if _item_words(_MARK.sub(" ", clause)) - allowed:
                return False
    return True


# What the record says happened: "your parcel left us on Monday the 9th", "we received your $150
# deposit on 5 September", 您的500元定金是3月2号到账的, 您订的是6月15号下午3点 — a past fact, not a promise.
_PAST: Final = re.compile(
    r"\b(?:was|were|did|had|has been|have been|received|arrived|came|left|shipped|sent|emailed|posted|paid|booked"
    r"|returned|refunded|collected|picked up|dropped off|delivered|ordered|placed|declared|confirmed|took|signed"
    r"|reached|got|dispatched|issued|settled|registered)\b"
    r"|已经|已|过了|到账|收到了|寄到|发给|发到|交付|付了|交了|退回|退还|(?:订|约|买|取|付|交|寄|拍|选|定)的是"
    r"|是.{1,16}(?:收到|寄出|寄到|到账|付|交|取|拍|订|约|发|送|到)的"
)
_AHEAD: Final = re.compile(
    r"\b(?:will|won't|'ll|going to|can|could|shall|would|tomorrow|next|soon|by then|from now)\b"
    r"|\b(?:guarantee\w*|promis\w*|definitely|certainly|within)\b"
    r"|会|能|可以|将|明天|后天|下周|下个月|马上|尽快|之后|以后|一定|保证|肯定|承诺|确保|以内|之内|内(?:完成|审完|做好|送到|给)"
)


def _record(clause: str) -> bool:
    """Whether a clause tells what already happened, and nothing to come."""
    return _PAST.search(clause) is not None and _AHEAD.search(clause) is None


def _firm(clause: str, context: _Context) -> bool:
    return any(not context.said_by_entry(m.group()) for m in _FIRM.finditer(clause))


@functools.lru_cache(maxsize=32)
def _cached(entries: tuple[tuple[str, str], ...], customer: tuple[str, ...]) -> _Context:
    return _Context([{"title": title, "snippet": snippet} for title, snippet in entries], customer)


def _context_of(citations: Sequence[Mapping[str, Any]], customer: Sequence[str]) -> _Context:
    """The reply's context, read once: the outgoing check asks three questions of it (what is said
    again, what the model reads, what agrees to the customer), and a rewrite asks them again."""
    entries = tuple((str(c.get("title") or ""), str(c.get("snippet") or "")) for c in citations)
    return _cached(entries, tuple(customer))


def _concludes(sentence: str, context: _Context) -> bool:
    """Whether the named rules read a conclusion or a promised outcome in the sentence that the
    entries do not say themselves: figures said again do not make "so she's eligible" any less a
    conclusion, while "every serviced movement carries a 12-month guarantee" says the entry's."""
    verdict = guard_check(sentence)
    concluded = verdict.blocked and verdict.category in (GuardCategory.CONCLUSION, GuardCategory.OUTCOME)
    return concluded and verdict.rule not in context.entry_rules


# The business giving its own word: a clause that has it does not leave the matter to anyone.
_OWN_WORD: Final = re.compile(
    r"\b(?:i'll|we'll|i will|we will|i can|we can|i've|we've|let me|i'd|we'd)\b|给您|给你|帮您|帮你"
)
_MARK: Final = re.compile(r"\[(\d{1,2})\]")
_STOP: Final = frozenset(
    "a an the is are be was were it its this that there their our we us you your of to in on at for with and or "
    "by as if from so than then also just still only".split()
)


def _content(text: str) -> set[str]:
    words = {w for w in re.findall(r"[a-z]+", text) if w not in _STOP}
    words |= set(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", text))
    # A word's first six letters stand for it ("rescheduled" for "reschedule"); a letter alone is
    # what is left of "there's".
    return {w[:6] if len(w) > 6 else w.removesuffix("s") for w in words if len(w) > 1}


def _cited_words(sentence: str, context: _Context) -> bool:
    """Whether a sentence that cites an entry by its number ("… at no charge [1].") says nothing
    but that entry's words: four in five of its words stand in it."""
    marks = {int(mark) for mark in _MARK.findall(sentence)}
    if len(marks) != 1:
        return False
    [number] = marks
    if not 1 <= number <= len(context.entries):
        return False
    said = _content(_MARK.sub(" ", _normal(sentence)))
    entry = _content(_normal(context.entries[number - 1]))
    return bool(said) and len(said & entry) >= 0.8 * len(said)


# The customer's words taken down, not answered: "Noted: …", "收到，共120块…".
_NOTED: Final = re.compile(r"^\s*(?:noted|got it|understood|received)\b|^\s*(?:收到|记下了|好的，记下)")


def _customer_money(sentence: str, context: _Context) -> bool:
    """Whether the sentence states an amount of money that only the customer's messages hold."""
    for figure in _figures(sentence):
        numbers = {n for n in _ends(figure) if n > 1}
        if figure.kind == "money" and numbers and numbers <= context.customer_numbers:
            if not numbers <= context.entry_numbers:
                return True
    return False


def _only_restates(sentence: str, context: _Context) -> bool:
    sourced, from_customer = _sourced(sentence, context)
    if not sourced:
        sourced = not read(_MARK.sub(" ", sentence)) and _cited_words(sentence, context)
    if not sourced or _concludes(sentence, context):
        return False
    lowered = greeting_removed(_normal(sentence))
    if from_customer and _customer_money(sentence, context):
        # The customer's amount said back must be said as theirs ("you mentioned 7 euros", a record
        # of what they paid): stated plainly ("The cupcake is 7.00 EUR.") it is the business's price.
        spans = clauses(lowered)
        if not any(attributed(lowered[a:b]) or _record(lowered[a:b]) or _NOTED.search(lowered[a:b]) for a, b in spans):
            return False
    for start, end in clauses(lowered):
        clause = promise_refusals_removed(lowered[start:end])
        if defers(clause) and not _OWN_WORD.search(clause):
            continue
        record = _record(clause)
        reported = attributed(clause) or record
        if _YOU.search(_CONDITION.sub(" ", clause)) and not reported:
            return False
        if _firm(clause, context) and not record:
            return False  # a record's "sent to you" (发给您了), "in all" (一共) make nothing firm
        if from_customer and _AGREEING.search(clause) and not reported:
            return False
    return True


def context_restated_removed(text: str, citations: Sequence[Mapping[str, Any]], customer: Sequence[str]) -> str:
    """`text` without the sentences that only say again the figures of the turn's context, as the
    module docstring describes: what the checks read."""
    if not citations and not customer:
        return text
    context = _context_of(citations, customer)
    kept = []
    for sentence in sentences(text):
        kept.append(blanked(sentence) if _only_restates(sentence, context) else sentence)
    return "".join(kept)


def context_figures_masked(text: str, citations: Sequence[Mapping[str, Any]], customer: Sequence[str]) -> str:
    """`text` with every figure whose numbers the context holds (an entry the run cited, the
    customer's messages) taken out: what the guard's model reads, so that a figure said again
    never makes a reply read as a commitment to it (issue 27 §4) — its words still may."""
    if not citations and not customer:
        return text
    context = _context_of(citations, customer)
    known = context.entry_numbers | context.customer_numbers
    lowered = _normal(text)
    if len(lowered) != len(text):
        return text  # NFKC changed the length: the figure reader's spans are not this text's
    out = text
    for figure in sorted(_figures(text), key=lambda f: f.span[0], reverse=True):
        numbers = {n for end in _ends(figure) | {figure.value} for n in same_numbers(figure, end)}
        if figure.kind in _CHECKED and numbers & known and all(n in known or n <= 1 for n in _ends(figure)):
            out = out[: figure.span[0]] + " " + out[figure.span[1] :]
    return out


# Agreeing, in so many words: what turns the customer's own figure into the business's word.
_AGREED: Final = re.compile(
    r"\b(?:yes|yep|yeah|sure|ok|okay|deal|agreed|no problem|it is|you got it|of course|consider it done)\b"
    r"|(?:^|(?<=[\s,，.。!！—]))对(?:的|啊|呀)?(?=[\s,，.。!！—]|$)|是的|没问题|(?<![不])行(?![程吗不])|成交|就这么定"
)
_AMOUNT_OR_TIME: Final = frozenset({"money", "date", "time", "duration"})


def agrees_to_customer(text: str, citations: Sequence[Mapping[str, Any]], customer: Sequence[str]) -> bool:
    """Whether a sentence of `text` says an amount or a time of the customer's (one no cited entry
    gives) and agrees to it: "You said €500 tomorrow — yes.", "3–5 working days — Friday, yes.".
    The guard's rules leave the customer's own figure to the customer; agreeing to it is the
    business's word."""
    if not customer:
        return False
    context = _context_of(citations, customer)
    for sentence in sentences(text):
        theirs = [
            f
            for f in _figures(sentence)
            if f.kind in _AMOUNT_OR_TIME
            and _kept_condition(f, "", context.entry_figures) is None
            and (
                {n for n in _ends(f) if n > 1} & context.customer_numbers
                or f.unit == "weekday"
                and _ends(f) <= context.weekdays - context.entry_weekdays
            )
        ]
        lowered = promise_refusals_removed(_normal(sentence))
        confirmed = _record(lowered) or (_ON_RECORD.search(lowered) is not None and _AHEAD.search(lowered) is None)
        if theirs and not confirmed and _AGREED.search(_REPORTED_ASK.sub(" ", lowered)):
            return True
    return False


# The record confirmed ("Yes, the log shows…", 对，记录里是…): a fact looked up, not a figure agreed to.
_ON_RECORD: Final = re.compile(
    r"\b(?:record|records|log|booking|order|file|system|account)\b.{0,30}\b(?:shows?|says|has|lists?)\b"
    r"|\bon (?:the|your|our) (?:booking|order|record|file|account)\b|记录|登记信息|订单里|系统里|显示"
)
# What the customer asked, reported: "you asked whether we could do €300" agrees to nothing.
_REPORTED_ASK: Final = re.compile(r"\b(?:if|whether)\b[^.!?]*|(?:是否|能不能|可不可以|行不行)[^。！？]*")
