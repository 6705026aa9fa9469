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

import snowballstemmer

from .currencies import ISO_4217, WORD_CODES
from .engine import GuardCategory, guard_check
from .figures import Figure, read
from .grounding import _same as same_numbers
from .grounding import numbers_in
from .restating import _LISTING_EN, _LISTING_ZH, clauses, defers, greeting_removed, promise_refusals_removed
from .saying_back import AHEAD, ON_RECORD, attributed, blanked, record, sentences

__all__ = ["agrees_to_customer", "context_figures_masked", "context_restated_removed"]

_CHECKED: Final = frozenset({"money", "duration", "time", "date", "percent"})
_DIGITS: Final = re.compile(r"(?<![a-z0-9.])[0-9]+(?:[.,][0-9]+)*(?![a-z0-9])")
_YOU: Final = re.compile(r"\b(?:you|your|yours|you'll|you're|you'd|you've|yourself)\b|您|你")
# A condition stated for everyone: "if you'd like one", "when you book", 如果您需要…的话 — or an
# invitation: "you're welcome to bring it in", 您方便的时候带过来.
_CONDITION: Final = re.compile(
    r"\b(?:if|when|whenever|unless|in case|should|once)\s+(?:you|your)\b.*$"
    r"|\byou(?:'re| are) (?:welcome|free) to\b.*$|\b(?:whenever|when) (?:it )?suits you\b|\bat your convenience\b"
    # a condition on something else ("if there are still no pins after 4 weeks, you can send us
    # photos"), a time counted from the customer's step ("from the day your pen reaches us"), what
    # the customer picks ("1% of the value you declare"), an instruction everyone gets ("please
    # allow three weeks", "you should bring the receipt")
    r"|\bif (?:there|it|they|the|any|anything|something)\b.*$"
    r"|\b(?:from|after|before|until) (?:the (?:day|date|moment|time) )?(?:you|your)\b.*$"
    r"|\b(?:the|a|any|each|whatever|whichever) [a-z-]+ (?:that )?you"
    r" (?:declare|choose|pick|book|select|order|bring|send|buy)\b"
    r"|\b(?:please|you (?:should|may want to|might want to|need to))"
    r" (?:allow|bring|book|note|call|send|check|plan|keep in mind|bear in mind)\b"
    r"|(?:您|你)(?:方便|有空)的?(?:时候|话)|(?:要)?看(?:您|你)(?:选|要|想|需要)"
    r"|(?:如果|假如|要是|若|万一|如需|如要)[^，,。]*?(?:的话|$)|(?:您|你)(?:如果|要是|若)[^，,。]*?(?:的话|$)"
)
# Words that make a figure firm, special or this customer's (a word the entry says itself aside).
_FIRM: Final = re.compile(
    r"\b(?:will|won't|'ll|i can(?!'t|not)|we can(?!'t|not)|i could(?!n't)|we could(?!n't)|i'd|we'd|all in|all-in"
    r"|exact(?:ly)?|guarantee\w*|promis\w*|lock\w*|fixed|total|totals|altogether|in all|comes? to|final"
    r"|definitely|for sure|certainly|special|deal|discount\w*|waive\w*|free|no charge|on the house"
    r"|%\s?off|off (?:the|your) (?:price|bill|total|fee)"
    r"|today|tonight|tomorrow|right away|this time|this week|just for|for you|match\w*|hold|held|reserved|keep"
    r"|on time|sharp|promptly)\b"
    r"|保证|承诺|一共|总共|合计|总价|给您|给你|算您|算你|帮您|帮你|替您|便宜|优惠|打折|折扣|特价|锁定|只收|只要(?=\s?[0-9一二两三四五六七八九十百千万])|最多|封顶"
    r"|不超过|确定|肯定|一定|全包|免|今天|明天|今晚|马上|立刻|这次|就不|不收|不算|照旧|老价格|原价|按老"
    r"|准时|按时|包邮|就行|就好|一起算|不另外?收|不额外收|不再收|(?<![另再])算(?:您|你)?\s?[0-9一二两三四五六七八九十百千]"
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
            word for text in customer for word in _item_words(_normal(text), shortest=4) if word not in _QUESTION_STEMS
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
        (number, _clause_of(lowered, m.span()))
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
        if figure.kind in ("date", "time") and record(_clause_of(lowered, figure.span)):
            said_again = True  # "记录里是12月1号上门检测的": a past date is not a deadline
            continue
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
    for number, clause in bare:
        if record(clause):
            continue  # "4 boxes collected on 9 October": a count of what already happened
        if number in context.entry_numbers:
            if not _BOUND_WORD.search(lowered) and any(
                f.kind == "money" and f.bound != "exact" and number in _ends(f) for f, _unit in context.entry_figures
            ):
                return False, False  # "一共就350" of "350元起": the bound dropped
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


# Numbers in words, and what measures an amount rather than naming it ("€7 a pair").
_NUMBER_WORDS: Final = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand half "
    "quarter dozen pair pairs couple".split()
)
_STEMMER: Final = snowballstemmer.stemmer("english")
_CODES: Final = ISO_4217 - WORD_CODES
_CJK_RUN: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

_QUESTION_WORDS: Final = frozenset(
    "take takes long much many what when where which does have need want like will would could there here this that "
    "your with from about come going know tell please thank thanks hello".split()
)
_QUESTION_STEMS: Final = _QUESTION_WORDS | {_STEMMER.stemWord(word) for word in _QUESTION_WORDS}


def _item_words(text: str, shortest: int = 2) -> set[str]:
    """The words that name what a price or a time is of: not the listing words ("price", "our",
    "per", 价格, 每 …), not the words of a condition, not the figures' own words (numbers in words,
    currency codes).  English words by their stem ("shipping" is "ship"); Chinese by its pairs of
    characters, since one character names nothing ("时" is in 营业时间 and in 您方便的时候)."""
    skipped = _STOP | _LISTING_EN | _CONDITION_WORDS | _NUMBER_WORDS
    latin = {
        _STEMMER.stemWord(w)
        for w in re.findall(r"[a-z]+", text)
        if len(w) >= shortest and w not in skipped and w.removesuffix("s") not in skipped and w.upper() not in _CODES
    }
    cjk = {run[i : i + 2] for run in _CJK_RUN.findall(_LISTING_ZH.sub(" ", text)) for i in range(max(len(run) - 1, 1))}
    return latin | cjk


def _covered(word: str, own: set[str]) -> bool:
    """Whether one of an item's own words is `word`, or a longer or shorter form of it ("nuc" for
    "nucleus"): the customer's word for the item may be short for the entry's."""
    return word in own or len(word) >= 3 and any(o.startswith(word) or len(o) >= 3 and word.startswith(o) for o in own)


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
    # A clause that holds no figure and goes on from another ("and it's deducted if you go ahead
    # with the repair", "if you'd rather use the main pools") does not give a price to another
    # item, unless it names what the customer asked about.
    naming = set().union(
        *(
            named
            for start, end in clauses(_MARK.sub(" ", said))
            if (named := _item_words(_MARK.sub(" ", said)[start:end]))
            and not (
                _GOES_ON.match(said[start:end])
                and not _figures(sentence[start:end])
                and not named & context.customer_words
            )
        )
    )
    # Its own items: the units whose figures it says, and those whose numbers it says in words
    # the figure reader did not take for an amount ("成人票一百六十八，…孩子九十八").
    stated = {n for n in numbers_in(sentence) if n > 1}
    units = [*units, *(unit for _index, unit in context.units if stated & numbers_in(unit))]
    own = set().union(*(_item_words(unit) for unit in units))
    indices = {context.index_of[unit] for unit in units if unit in context.index_of}
    own |= set().union(*(_item_words(context.titles[index]) for index in indices))
    # Another item is another unit with a figure of its own; a unit without one states a condition
    # ("Parts extra.").
    # of the kind the sentence says: a duration's sentence ("Custom pieces take 2–3 weeks.") does not
    # make another item of the price after it.
    kinds = {figure.kind for figure in figures if figure.kind in _CHECKED}
    others = (
        set().union(*(_item_words(unit) for _index, unit in context.units if {f.kind for f in _figures(unit)} & kinds))
        - own
    )
    if naming & others:
        return False
    # Where the entry names its item only in listing words ("1-hour session 25 GBP"), there is no
    # item to name.
    # A sentence that names no item answers for the customer's: "It's $80 labour" to "How much is a
    # service?" when every word the customer named is the item's own.
    if priced and own and not words & own:
        if words or not context.customer_words or not all(_covered(w, own) for w in context.customer_words):
            return False
    # The customer's own item given another item's price: asked for a wedding cake, told "A wedding
    # cake is €35" off the birthday cake's line.
    for figure in figures:
        if figure.kind == "money":
            named = _item_words(_MARK.sub(" ", _clause_of(said, figure.span)))
            if any(not _covered(word, own) for word in named & context.customer_words):
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


# Words that add up: firm only when they add up money, and not when hedged ("typically comes to
# between $40 and $70"); 一共, 总共 and 共 are one word to an entry that says one of them.
_TOTAL: Final = re.compile(r"total|totals|altogether|in all|comes? to|一共|总共|合计|共计")
_HEDGE: Final = re.compile(
    r"\b(?:typically|usually|generally|normally|about|around|roughly|approximately)\b|一般|通常|大概|大约|左右"
)


def _adds_money(clause: str, context: _Context) -> bool:
    """Whether a clause says an amount: a money figure, or a bare number an entry gives as one."""
    if any(f.kind == "money" for f in _figures(clause)):
        return True
    entry_money = {n for f, _unit in context.entry_figures if f.kind == "money" for n in _ends(f)}
    return any(_number(m.group()) in entry_money for m in _DIGITS.finditer(clause))


# A charge let off, wherever the clauses break ("配件费不另外收了").
_HANDOFF: Final = re.compile(r"\s*(?:问|查|确认|转|登记|联系|约|预约|记下|提交|留意|反馈|催)")
_WAIVED: Final = re.compile(r"不另外?收|不额外收|不再收|免收|不收(?:您|你)?的?")


def _firm(clause: str, context: _Context) -> bool:
    for m in _FIRM.finditer(clause):
        word = m.group()
        if context.said_by_entry(word):
            continue
        if word in ("帮您", "帮你", "给您", "给你") and _HANDOFF.match(clause, m.end()):
            continue  # "我帮您问一下老板", "帮您登记": asking, booking, passing on
        if word in ("就行", "就好") and not numbers_in(clause):
            continue  # "您方便的时候带过来就行": an invitation, no price let go
        if _TOTAL.fullmatch(word) and (
            _HEDGE.search(clause)
            or not _adds_money(clause, context)
            # "8节课一共1600" of "基础服从班（8节）1600元": the unit's own total
            or (stated := {n for n in numbers_in(clause) if n > 1})
            and any(stated <= numbers_in(unit) for _index, unit in context.units)
        ):
            continue
        return True
    return False


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
_GOES_ON: Final = re.compile(
    r"\s*(?:and|but|so|or|if|when|once|unless|after|before|while|which|whichever|as|because)\b"
    r"|\s*(?:如果|要是|然后|之后|以后|等|因为|所以|或者|并且|而且)"
)
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


_BARE_YES: Final = re.compile(r"\s*(?:yes|yep|yeah|right|that's right|correct|对|是的|对的|没错)[\s,，.。!！]*")
# Looking the record up: "I can see your booking" promises nothing.
_LOOKUP: Final = re.compile(r"\b(?:i|we) (?:can|could) (?:see|find)\b", re.I)
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
    sentence = _LOOKUP.sub("i see", sentence)
    sourced, from_customer = _sourced(sentence, context)
    if not sourced:
        sourced = not read(_MARK.sub(" ", sentence)) and _cited_words(sentence, context)
    if not sourced or _concludes(sentence, context):
        return False
    if any(not context.said_by_entry(m.group()) for m in _WAIVED.finditer(_normal(sentence))):
        return False
    lowered = greeting_removed(_normal(sentence))
    # "Yes, the record shows…": a yes to a fact looked up.
    record_said = any(record(lowered[start:end]) for start, end in clauses(lowered))
    if from_customer and _customer_money(sentence, context):
        # The customer's amount said back must be said as theirs ("you mentioned 7 euros", a record
        # of what they paid): stated plainly ("The cupcake is 7.00 EUR.") it is the business's price.
        spans = clauses(lowered)
        if not any(attributed(lowered[a:b]) or record(lowered[a:b]) or _NOTED.search(lowered[a:b]) for a, b in spans):
            return False
    for start, end in clauses(lowered):
        clause = promise_refusals_removed(lowered[start:end])
        if defers(clause) and not _OWN_WORD.search(clause):
            continue
        past = record(clause)
        reported = attributed(clause) or past
        if _YOU.search(_CONDITION.sub(" ", clause)) and not reported:
            return False
        if _firm(clause, context) and not past:
            return False  # a record's "sent to you" (发给您了), "in all" (一共) make nothing firm
        if (
            from_customer
            and _AGREEING.search(clause)
            and not reported
            and not (_BARE_YES.fullmatch(clause) and record_said)
        ):
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
        lowered = _LOOKUP.sub("i see", promise_refusals_removed(_normal(sentence)))
        confirmed = record(lowered) or (ON_RECORD.search(lowered) is not None and AHEAD.search(lowered) is None)
        if theirs and not confirmed and _AGREED.search(_REPORTED_ASK.sub(" ", lowered)):
            return True
    return False


# What the customer asked, reported: "you asked whether we could do €300" agrees to nothing.
_REPORTED_ASK: Final = re.compile(r"\b(?:if|whether)\b[^.!?]*|(?:是否|能不能|可不可以|行不行)[^。！？]*")
