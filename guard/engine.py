"""The commitment guard: a deterministic check that an outgoing message promises nothing.

Facade speaks for a business but may never commit it.  Every reply the agent sends to a customer
or a peer passes through `guard_check` first, and a blocked reply is not sent.  The guard is plain
pattern matching over normalised text (no model, no ORM, no network): the same text always gets
the same verdict, and every verdict can be traced to a pattern and tested.

What it blocks, in English and Simplified Chinese:

* ``price`` - an amount given as the price of something: a number with a currency ("€40",
  "30 dollars", "forty bucks", "a hundred and twenty dollars", "RMB 880", "1200 RMB", "99元",
  "两百块", "15欧元"), a price or deposit word with a bare figure ("the price is 40", "报价是三千五",
  "收费三百八", "定金交两百"), a paying verb with a bare figure ("you'll only pay 30", "yours for
  1,200", "a tenner", "只要两百"), discounts ("20% off", "打八折", "满200减30", "半价", "立减500",
  "buy one, get one free", 买五送一) and free offers ("for free", "at no extra cost", "on the house",
  "the 6th lesson is free", "免费给您换", "不收您钱", 免运费, 免押金).
* ``deadline`` - a delivery or completion verb (deliver, ship, ready, fixed, arrive, 送达, 发货,
  做好, 到账, 上门, 到 ...) within a few words of a time (within 3 days, by Friday, tomorrow, the
  same day, next week, at 5pm, 8am sharp, in a jiffy, before the holidays, 三天内, 明天, 下周一前,
  月底前, 48小时内, 6月18日前, 下班前, 当场 ...).
* ``conclusion`` - an assurance about eligibility, entitlement, approval, a refund, a waiver, a
  tax, legal or medical outcome or a result ("you qualify", "you're eligible", "it's confirmed",
  "that's final", "the fee is waived for you", "your claim will go through", "you will get a
  refund", "no tax is due on that", "you won't need surgery", "we'll refund you", "you're covered
  under the policy", "no penalty applies", "it'll pass the inspection", 您符合条件, 这是确定的,
  肯定能批下来, 您这种情况可以全额退, 不用交税, 不严重不用手术, 滞纳金可以免掉, 违约金不用您出).  Read
  like an outcome, and a hedge lifts it too ("I think you qualify", 一般来说您符合条件).
* ``outcome`` - a promised result: guarantee / promise / assure / ensure, "100% sure", "will
  definitely work", "you will get a refund", "can't fail", "zero risk", 保证, 承诺, 确保, 担保,
  一定能, 肯定没问题, 绝对可以, 包过, 打包票, 稳过, 百分之百消失, 万无一失 ..., and lasting results
  ("it won't break again", "you won't have any more leaks", "the fix is permanent", "it will cure
  your back pain for good", "your grades will go up", "will look brand new", "..., no question",
  一辈子都不会再歪, 跟新的一模一样, 照价赔偿, 全额退款, 保一年).

How it is built.  The rules are data (guard/rules/: one `Rule` per way of committing, with its
id, category, language, pattern and example sentences; one `Scope` per pattern that lifts a
match).  This module is the engine: normalise -> sentences -> clauses -> per clause, the
prefilter (guard/prefilter.py, derived from the rules' literals: a rule none of whose literals is
in a clause is not tried there) -> the rules, a category's rules of one language read as one
alternation in order -> the scopes below -> the verdict, which names the rule that fired and the
span of its clause in `normalised(text)`.  A deadline is a conjunction: a `time` rule and a `verb`
rule at most 8 tokens apart; its verdict's `rule` is the time rule and `paired_rule` the verb
rule.  `price.en.money` / `price.zh.money` are the "number with a currency" rules.

How it decides.  The text is NFKC-normalised (full-width digits and punctuation become ASCII) and
lower-cased, cut into sentences, then at contrast words ("but", "however", 但是, 不过 ...), then
at commas and at "and/so/then" + a new subject into clauses.  Chinese numerals (三, 十五, 两百,
一万二) count as numbers.  A match counts unless, in its own clause:

* a negation or refusal comes before it ("can't / won't / unable to / nobody ... guarantee",
  无法/不能/没法/不敢 保证, 不一定, whether/是否/能不能 ...) or right after it ("a guarantee is
  not something we give", 保证不了, 这个承诺我不能替老板做);
* it is the customer's own figure ("your budget of €300", 您说的500元预算, "you'd like it done for
  50 euros", "your friend paid 3,000 rupees", 您说别家三千就能办)  - price;
* it is hedged ("usually", "may", "estimated", 一般, 预计, 大概, 左右, also from an introductory
  "Usually, ..." or a trailing "..., usually" / "..., depending on the carrier" / "...，要看您的
  地址") - unless a guarantee sits next to it ("in about an hour, guaranteed") -, disclaimed
  later in the sentence ("..., but I can't guarantee that"), the customer's wish or task ("do you
  need it by Friday?", "please complete the form within 7 days", 您希望三天内收到吗,
  请在七天内完成付款), past ("already shipped", 已经发货) or a routine (每周三发货) - deadline;
* it is a row of the request summary the customer confirms ("- What you need: a cake for 8
  people, under 80 euros", "- 时间：周五之前"): the customer's own words said back, read so only
  within a whole summary, from its first line to its yes/no question - every category (its
  figures still go through the grounding check);
* it is the agent promising to relay the message ("I promise I'll forward this to the owner",
  我肯定会转告老板, "I'll make sure your question reaches them") - deadline, conclusion and outcome;
* it restates the business's rule in a clause that does not apply it to the customer
  ("按照规则，审核通过后7个工作日内原路退回", "按我们的规定，退房时无损坏，押金全额退还"; but
  按规定您可以拿回全部押金 blocks) - deadline, conclusion and outcome.  Its figures still go
  through the grounding check.

A negation in another clause does not hide a promise: "I can't talk long, but we guarantee
delivery" is blocked.  When several categories are found the verdict names the first of price,
deadline, conclusion, outcome: the most specific promise first, a general assurance last ("you
will definitely get a refund, guaranteed" is a conclusion).

Known limits - it matches patterns, it does not understand the text:

* Conclusions are recognised by their wording (qualify, eligible, confirmed, final, waived, go
  through, tax-free, 符合条件, 批下来, 免税, 良性 ...); "rest assured" alone is not one, and an
  approval or a guarantee inside the older outcome rules ("the embassy will approve", "申请已经通过")
  stays an outcome or moved to conclusion only where it was its own rule.  A hedge word that is
  part of another word lifts a conclusion (约 in 违约金, 合约, 签约 is not a hedge, but others
  may hide).

* Promises worded without any known word or time pass ("you'll be delighted with the result");
  so do time promises about replies rather than deliveries ("the owner will call you tomorrow").
* Hedged deadlines pass on purpose ("it should arrive by Friday", "we could have it ready by
  Monday", 预计明天到); hedged prices do not ("around €90" is still a quote).
* A question about the customer's wishes passes even when it is really an offer ("would you like
  it delivered tomorrow?").
* A negation earlier in the same clause counts even when it is about something else; only a
  comma, a colon, a contrast word or "and/so/then" + subject ends its reach ("we don't charge
  extra and delivery is tomorrow" passes).
* Past tense is recognised by its helpers ("was shipped", "already", 已经), not by the verb form:
  "your order shipped today" blocks.
* A promise word used as a noun about something else blocks ("our promise to you is honest
  advice, not guarantees").
* Ambiguous units are read as money ("5 pounds" of flour is a price); "块" counts as money only
  at the end of a phrase ("一块蛋糕" and "切12块" are pieces).
* Amounts are recognised, not evaluated: the guard cannot tell a plausible price from a typo.
* A clock time alone ("ready at 5pm") or a weekday after a label ("Pickup: Thursday") counts as
  a time, except after open/close/from/until ("we open at 9am").
* A cap is a price ("you won't pay more than €200"); a Chinese condition in the same clause
  (如果零件能按时到) is not a deadline, one in an earlier clause (如果您今天下单，明天就发货) does
  not lift the promise that follows; English "if" lifts nothing.
* Figures the same sentence calls an estimate ("..., but that's an estimate, not a quote",
  只是估计，不是报价), figures from the past (an old invoice, last year, 以往, 上个月卖出) and
  payments received pass; a routine with an exact time ("every morning at 7:30 sharp",
  每天准时) is still a promise.
* Words quoted as someone else's (您说的"保证学会", the so-called "guaranteed results", 传单上写的
  "保证送达", the words "guaranteed delivery") and a promise word echoed as the customer's
  question ("Guaranteed? I can't say that.") are dropped before the check; a promise in quotes
  without such a lead-in still blocks.
* A bare Chinese figure in hundreds or thousands closing a clause ("换屏幕三百五") is read as a
  price; so is "... cost you two" unless a time or count follows.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, NamedTuple

from .figures import money_spans
from .prefilter import Prefilter, required_literals
from .rules import RULES, SCOPES, Rule

__all__ = ["GuardCategory", "GuardVerdict", "guard_check", "normalised"]


class GuardCategory(StrEnum):
    PRICE = "price"
    DEADLINE = "deadline"
    OUTCOME = "outcome"
    CONCLUSION = "conclusion"


@dataclass(frozen=True)
class GuardVerdict:
    """What the guard decided about one message; `category` is set exactly when it is blocked.

    `rule` is the id of the rule that fired (for a deadline, the time rule; `paired_rule` is the
    verb rule it was read with) and `clause` the span, in `normalised(text)`, of the clause it
    fired on - the span, never the text."""

    blocked: bool
    category: GuardCategory | None
    rule: str | None = None
    clause: tuple[int, int] | None = None
    paired_rule: str | None = None

    def as_json(self) -> dict[str, bool | str | None]:
        return {"blocked": self.blocked, "category": None if self.category is None else self.category.value}


_PASS: Final = GuardVerdict(blocked=False, category=None)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # the text is lower-cased first; IGNORECASE would only slow sre down


# Latin letters, or a currency symbol (the money rule reads "₩45,000" in a Chinese sentence too).
_LATIN: Final = re.compile(r"[a-z$€£¥%₩₹₽₺₫฿₱₪₴₦]")


@dataclass(frozen=True, slots=True)
class _Patterns:
    """A scope's alternatives split by script.  sre tries every alternative at every position of
    the text, so a clause pays only for the script(s) it contains."""

    latin: re.Pattern[str]
    chinese: re.Pattern[str]

    @classmethod
    def of(cls, kind: str) -> _Patterns:
        latin = [scope.pattern for scope in SCOPES if scope.kind == kind and scope.language == "en"]
        chinese = [scope.pattern for scope in SCOPES if scope.kind == kind and scope.language == "zh"]
        return cls(_rx("|".join(latin)), _rx("|".join(chinese)))

    def search(self, text: str) -> bool:
        if _LATIN.search(text) and self.latin.search(text):
            return True
        return not text.isascii() and self.chinese.search(text) is not None

    def strip(self, text: str) -> str:
        if _LATIN.search(text):
            text = self.latin.sub(" ", text)
        return text if text.isascii() else self.chinese.sub(" ", text)


def _scope(kind: str) -> re.Pattern[str]:
    """The one pattern of a scope read over the whole text, whatever its script."""
    return _rx("|".join(scope.pattern for scope in SCOPES if scope.kind == kind and scope.language == "any"))


# --- scopes (guard/rules/scopes.py) ------------------------------------------------------------

_CUSTOMER_FIGURE: Final = _Patterns.of("customer_figure")  # the customer's own figure, not ours
_HEDGE: Final = _Patterns.of("hedge")
_CUSTOMER_SIDE: Final = _Patterns.of("customer_side")  # the customer's wish or task
_PAST_OR_ROUTINE: Final = _Patterns.of("past_or_routine")
_RELAY: Final = _Patterns.of("relay")  # passing a message on is the agent's own job
_NOT_A_NEGATION: Final = _Patterns.of("not_a_negation")  # removed before looking for a negation
_NEGATION: Final = _Patterns.of("negation")
_PAST_PRICE: Final = _scope("past_price")
_ESTIMATE: Final = _scope("estimate")
_NEXT_TIME: Final = _scope("next_time")
_TRAILING_HEDGE: Final = _scope("trailing_hedge")
_DISCLAIMER: Final = _scope("disclaimer")
_DISCLAIMER_HINTS: Final = _scope("disclaimer_hint")
_CONDITION: Final = _scope("condition")
_POLICY: Final = _scope("policy")  # "按照规则，…": the published rule restated
_ADDRESSED: Final = _scope("addressed")  # ... unless the clause applies it to the customer
_PAST_DONE: Final = _scope("past_done")
_ON_THE_DOT: Final = _scope("on_the_dot")
_NEGATION_AFTER: Final = _scope("negation_after")
_MENTION: Final = _scope("mention")
_ECHOED_QUESTION: Final = _scope("echoed_question")
_WORD_MENTION: Final = _scope("word_mention")
_SAID_BACK: Final = _scope("said_back")
# A row of the request summary, up to its label's colon: what follows is the customer's.
_SUMMARY_ROW: Final = re.compile(r"(?<=\n)(- [^\n:]{1,40}:)[^\n]*")
# Verb and time further apart than this are not read as one promise.
_MAX_DEADLINE_GAP_TOKENS: Final = 8
# A future and its time may stand further apart: "we'll get the reviewed statement back to your son
# by the 12th" names the thing in between.
_MAX_FUTURE_GAP_TOKENS: Final = 12
_LINKING_OVERLAP: Final = re.compile(r"(?:\s*\b(?:in|on|at|by|the|a|an|within)\b)+\s*")
_TOKEN: Final = re.compile(r"[a-z0-9']+|[\u4e00-\u9fff]")

# --- rules (guard/rules/) ----------------------------------------------------------------------


class _Span(NamedTuple):
    """A match of a `figure` rule: where an amount of money stands in the clause."""

    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish


_CJK_CHAR: Final = re.compile(r"[\u4e00-\u9fff]")


class _MoneyFigures:
    """A `figure` rule read as a pattern: its matches are the amounts of money the figure reader
    finds in the text (guard/figures.py, the reader the grounding check uses too) — those written
    with a Chinese character for a `zh` rule, the others for an `en` rule — once the rule's cue
    (a digit or a number word) is there."""

    def __init__(self, rule: Rule) -> None:
        self.cue = _rx(rule.pattern)
        self.chinese = rule.language == "zh"

    def finditer(self, text: str) -> list[_Span]:
        if not self.cue.search(text):
            return []
        return [
            _Span(start, end)
            for start, end in _money_spans(text)
            if (_CJK_CHAR.search(text, start, end) is not None) is self.chinese
        ]

    def search(self, text: str, pos: int = 0) -> _Span | None:
        return next((span for span in self.finditer(text) if span.begin >= pos), None)


@functools.lru_cache(maxsize=64)
def _money_spans(text: str) -> tuple[tuple[int, int], ...]:
    # A clause is read once however many rules and positions ask (the text is already
    # normalised, so the reader's spans point into it).
    return tuple(money_spans(text))


class _Compiled(NamedTuple):
    number: int  # the rule's position in RULES, as the prefilter numbers it
    rule: Rule
    pattern: re.Pattern[str] | _MoneyFigures


_COMPILED: Final = tuple(
    _Compiled(index, rule, _MoneyFigures(rule) if rule.kind == "figure" else _rx(rule.pattern))
    for index, rule in enumerate(RULES)
)
_PREFILTER: Final = Prefilter([required_literals(rule.pattern) for rule in RULES])
_EVERY_RULE: Final = frozenset(range(len(RULES)))


def _group(category: str, language: str, kind: str = "") -> tuple[_Compiled, ...]:
    # A `figure` rule is read with the plain rules of its category, in its place among them.
    kinds = ("", "figure") if kind == "" else (kind,)
    return tuple(
        c for c in _COMPILED if (c.rule.category, c.rule.language) == (category, language) and c.rule.kind in kinds
    )


_PRICE_MATCH: Final = _group("price", "en", "match")
_PRICE_EN: Final = _group("price", "en")
_PRICE_ZH: Final = _group("price", "zh")
_TIME_EN: Final = _group("deadline", "en", "time")
_TIME_ZH: Final = _group("deadline", "zh", "time")
_VERB_EN: Final = _group("deadline", "en", "verb")
_VERB_ZH: Final = _group("deadline", "zh", "verb")
_OUTCOME_EN: Final = _group("outcome", "en")
_OUTCOME_ZH: Final = _group("outcome", "zh")
_CONCLUSION_EN: Final = _group("conclusion", "en")
_CONCLUSION_ZH: Final = _group("conclusion", "zh")
_GENERAL_EN: Final = _group("conclusion", "en", "general")
_GENERAL_ZH: Final = _group("conclusion", "zh", "general")
_GENERAL_VERB_EN: Final = _group("deadline", "en", "general")
_GENERAL_VERB_ZH: Final = _group("deadline", "zh", "general")


def _indices(*groups: tuple[_Compiled, ...]) -> frozenset[int]:
    return frozenset(c.number for group in groups for c in group)


_PRICE_RULES: Final = _indices(_PRICE_MATCH, _PRICE_EN, _PRICE_ZH)
_TIME_RULES: Final = _indices(_TIME_EN, _TIME_ZH)
_VERB_RULES: Final = _indices(_VERB_EN, _VERB_ZH, _GENERAL_VERB_EN, _GENERAL_VERB_ZH)
_OUTCOME_RULES: Final = _indices(_OUTCOME_EN, _OUTCOME_ZH)
_CONCLUSION_RULES: Final = _indices(_CONCLUSION_EN, _CONCLUSION_ZH, _GENERAL_EN, _GENERAL_ZH)


class _Hit(NamedTuple):
    rule: Rule
    match: re.Match[str] | _Span


def _leftmost(group: Sequence[_Compiled], text: str, active: frozenset[int]) -> list[_Hit]:
    """The matches of a group's rules in `text` exactly as one alternation of them, in order, would
    find them (leftmost first; at one position the earlier rule wins; no overlaps) - skipping the
    rules the prefilter ruled out, which could not match anywhere in `text` anyway."""
    live = [c for c in group if c.number in active]
    if not live:
        return []
    if len(live) == 1:
        return [_Hit(live[0].rule, match) for match in live[0].pattern.finditer(text)]
    pending = [c.pattern.search(text) for c in live]
    hits: list[_Hit] = []
    position = 0
    while True:
        best = -1
        for at, c in enumerate(live):
            match = pending[at]
            if match is not None and match.start() < position:
                match = pending[at] = c.pattern.search(text, position)
            if match is not None and (best < 0 or match.start() < pending[best].start()):  # type: ignore[union-attr]
                best = at
        if best < 0:
            return hits
        won = pending[best]
        assert won is not None
        hits.append(_Hit(live[best].rule, won))
        position = won.end() if won.end() > won.start() else won.start() + 1


def _find(latin: Sequence[_Compiled], chinese: Sequence[_Compiled], text: str, active: frozenset[int]) -> list[_Hit]:
    """A category's matches: its `en` rules where the text has Latin letters, then its `zh` rules
    where it has anything beyond ASCII."""
    found = _leftmost(latin, text, active) if _LATIN.search(text) else []
    if not text.isascii():
        found.extend(_leftmost(chinese, text, active))
    return found


# --- text structure --------------------------------------------------------------------------

# Curly quotes become straight ones, and an en dash a hyphen ("3–5 days" is a range).
_QUOTES: Final = (("\u2019", "'"), ("\u2018", "'"), ("`", "'"), ("\u201c", '"'), ("\u201d", '"'), ("\u2013", "-"))
_FULL_WIDTH: Final = re.compile(r"[\uff01-\uff5e]")
_WIDE_PUNCTUATION: Final = tuple((chr(ord(narrow) + 0xFEE0), narrow) for narrow in ",!?:;()%")
_AM_PM: Final = re.compile(r"\b([ap])\.m\.")
_BLANKS: Final = re.compile(r"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_SENTENCE_END: Final = re.compile(r"[!?。；;\n…]+|\.(?!\d)")
_CONTRAST_LATIN = r"\b(?:but|however|although|though|yet|whereas|except that)\b"
_CONTRAST: Final = _rx(_CONTRAST_LATIN)
_CONTRAST_ANY: Final = _rx(_CONTRAST_LATIN + r"|但是|但|不过|可是|然而|只是|虽然")
# Commas (except the thousands separator in "1,200"), brackets, quotes and dashes; a spaced
# hyphen between figures is a range ("3 - 5 days"), not a break.
_COMMA: Final = re.compile(
    r"(?<!\d),(?! starting (?:on|from)\b)|,(?!\d{3}| starting (?:on|from)\b)|[()\"\u2014]|(?<!\d) - |(?<=\d) - (?!\d)"
)
# "..., and we ...": a new subject starts a new clause; "price and delivery" does not.
_NEW_SUBJECT: Final = _rx(r"\b(?:and|so|then)\s+(?=(?:we|i|it|they|you|he|she|your|our|this|that)\b)")


class _Clause(NamedTuple):
    """One clause of a sentence (a NamedTuple: a reply makes dozens, and a frozen dataclass is
    several times slower to build)."""

    text: str
    # The earlier clauses of the same contrast-free stretch: an introductory hedge ("Usually, ...",
    # "一般来说，...") covers what follows, a negation there does not.
    lead: str = ""
    # The next clause of the same stretch: "..., usually" / "..., depending on the carrier" /
    # "...，要看您的地址" hedge the clause before them.
    tail: str = ""
    # A later clause of the sentence takes the time back: "..., but I can't guarantee that".
    disclaimed: bool = False
    # The sentence says its figures are an estimate, not a quote ("..., but that's an estimate,
    # not a quote", "...只是估计，不是报价").
    estimate: bool = False
    # Where the clause starts in the normalised text.
    start: int = 0


def _half_width(match: re.Match[str]) -> str:
    # U+FF01..U+FF5E are NFKC-equivalent to ASCII 0x21..0x7E, in the same order.
    return chr(ord(match.group()) - 0xFEE0)


def _normalise(text: str) -> str:
    folded = text
    if not folded.isascii():
        # NFKC over a whole Chinese reply costs more than the rest of the check.  Full-width ASCII
        # is the usual reason a Chinese reply is not NFKC already: fold it (the common punctuation
        # by C-level replaces, the rest through a callback), then run NFKC only if anything else
        # is left to normalise.
        for wide, narrow in _WIDE_PUNCTUATION:
            if wide in folded:
                folded = folded.replace(wide, narrow)
        if _FULL_WIDTH.search(folded):
            folded = _FULL_WIDTH.sub(_half_width, folded)
        if not unicodedata.is_normalized("NFKC", folded):
            folded = unicodedata.normalize("NFKC", folded)
    folded = folded.lower()
    for curly, plain in _QUOTES:
        if curly in folded:
            folded = folded.replace(curly, plain)
    if ".m." in folded:
        folded = _AM_PM.sub(r"\1m", folded)
    return _BLANKS.sub(" ", folded)


def _unquote_mentions(text: str) -> str:
    """Drop the quoted words of a mention, keeping who said them: a mention is not our promise.
    Quotation marks alone are not enough - an agent could put its own promise in quotes."""
    if "\n- " in text:
        # The request summary: its rows are the customer's words said back for a yes or a no.
        text = _SAID_BACK.sub(lambda m: _SUMMARY_ROW.sub(r"\1 ", m.group()), text)
    if "?" in text or "？" in text:
        text = _ECHOED_QUESTION.sub(" ", text)
    if '"' not in text:
        return text
    text = _WORD_MENTION.sub(" ", text)
    return _MENTION.sub(lambda m: m.group().split('"', 1)[0] + " ", text)


def _clauses(sentence: str, offset: int) -> list[_Clause]:
    estimate = _ESTIMATE.search(sentence) is not None
    stretches: list[list[str]] = []
    for stretch in (_CONTRAST if sentence.isascii() else _CONTRAST_ANY).split(sentence):
        pieces: list[str] = []
        for piece in _COMMA.split(stretch):
            if " and " in piece or " so " in piece or " then " in piece:
                pieces.extend(_NEW_SUBJECT.split(piece))
            else:
                pieces.append(piece)
        stretches.append([piece.strip() for piece in pieces if piece and not piece.isspace()])
    if _DISCLAIMER_HINTS.search(sentence):
        disclaimers = [bool(_DISCLAIMER.match(piece)) for pieces in stretches for piece in pieces]
    else:
        disclaimers = []
    clauses: list[_Clause] = []
    cursor = 0
    for pieces in stretches:
        lead = ""
        for index, piece in enumerate(pieces):
            tail = pieces[index + 1] if index + 1 < len(pieces) else ""
            # The pieces come in order, so each is found after the one before it.
            found = sentence.find(piece, cursor)
            cursor = found + len(piece) if found >= 0 else cursor
            start = offset + max(found, 0)
            clauses.append(_Clause(piece, lead, tail, any(disclaimers[len(clauses) + 1 :]), estimate, start))
            lead = f"{lead} {piece}"
    return clauses


def _stated_as_policy(clause: _Clause) -> bool:
    """The clause restates the business's rule ("按我们的规定，退房时无损坏，押金全额退还"): a rule
    is not a promise to this customer until a clause applies it to them (按规定您可以拿回全部押金)."""
    if _POLICY.search(clause.text) is None and _POLICY.search(clause.lead) is None:
        return False
    return _ADDRESSED.search(clause.text) is None


def _negated(text: str, start: int, end: int) -> bool:
    # A colon ends a negation's reach ("no, you won't pay more: the rate is 55 eur") but not the
    # clause, so "delivery: within 3 days" still reads as one promise.
    before = text[:start].rpartition(":")[2]
    if _NEGATION.search(_NOT_A_NEGATION.strip(before).rstrip()):
        return True
    return _NEGATION_AFTER.match(text[end:].lstrip()) is not None


# --- the three finders -----------------------------------------------------------------------
# Each returns the rule that fired in one clause (a deadline: the time rule and the verb rule),
# or None.  `active` is what the prefilter left of the rules for the clause's text.


def _price_in(clause: _Clause, active: frozenset[int]) -> str | None:
    text = clause.text
    if clause.estimate:
        return None
    matched = _find(_PRICE_MATCH, (), text, active)
    if matched and not _negated(text, matched[0].match.start(), matched[0].match.end()):
        return matched[0].rule.id  # matching a figure the customer saw is quoting it
    for hit in _find(_PRICE_EN, _PRICE_ZH, text, active):
        past = _PAST_PRICE.search(f"{clause.lead} {text}") and not _NEXT_TIME.search(text)
        if _CUSTOMER_FIGURE.search(text) or past or _stated_as_policy(clause):
            return None  # the customer's figure, a past price, the published rule restated
        if not _negated(text, hit.match.start(), hit.match.end()):
            return hit.rule.id
    return None


def _deadline_in(clause: _Clause, active: frozenset[int], gated: bool) -> tuple[str, str] | None:
    text = clause.text
    times = _find(_TIME_EN, _TIME_ZH, text, active)
    if not times:
        return None
    verbs = _find(_VERB_EN, _VERB_ZH, text, active) or _find(_GENERAL_VERB_EN, _GENERAL_VERB_ZH, text, active)
    if not verbs or clause.disclaimed or _RELAY.search(text) or _stated_as_policy(clause):
        return None
    if _PAST_DONE.search(text):
        return None  # "您的订单是5月12号发出的": done already, told as a fact
    if _CONDITION.search(text):
        return None  # "如果零件能按时到": a condition, not a promise (a condition in an earlier clause does not count)
    hedged = _HEDGE.search(text) or _HEDGE.search(clause.lead) or _TRAILING_HEDGE.match(clause.tail) is not None
    # "in about an hour, guaranteed": a guarantee next to the time makes it firm again.
    if hedged and not (_outcome_in(clause, active) or _outcome_in(_Clause(clause.tail), _active(clause.tail, gated))):
        return None
    for when in times:
        for what in verbs:
            first, second = (
                (when.match, what.match) if when.match.start() <= what.match.start() else (what.match, when.match)
            )
            if second.start() < first.end() and not _LINKING_OVERLAP.fullmatch(text[second.start() : first.end()]):
                # The same words read as both verb and time; a verb phrase may only run into the
                # time's linking words ("have the syllabus covered in the | in the next four sessions").
                continue
            gap = text[first.end() : second.start()]
            if len(_TOKEN.findall(gap)) > (
                _MAX_FUTURE_GAP_TOKENS if what.rule.kind == "general" else _MAX_DEADLINE_GAP_TOKENS
            ):
                continue
            before = text[: first.start()]
            routine = _PAST_OR_ROUTINE.search(text[: second.start()]) and not _ON_THE_DOT.search(text)
            if _CUSTOMER_SIDE.search(before) or routine:
                continue
            if _negated(text, first.start(), second.end()) or _NEGATION.search(_NOT_A_NEGATION.strip(gap)):
                continue
            return when.rule.id, what.rule.id
    return None


def _outcome_in(clause: _Clause, active: frozenset[int]) -> str | None:
    text = clause.text
    for hit in _find(_OUTCOME_EN, _OUTCOME_ZH, text, active):
        if _RELAY.search(text) or _stated_as_policy(clause):
            return None
        if _CUSTOMER_SIDE.search(text[: hit.match.start()]) or _negated(text, hit.match.start(), hit.match.end()):
            continue
        return hit.rule.id
    return None


def _conclusion_in(clause: _Clause, active: frozenset[int]) -> str | None:
    """Like an outcome, and a hedge lifts it too: "I think you qualify" is an opinion."""
    text = clause.text
    hits = _find(_CONCLUSION_EN, _CONCLUSION_ZH, text, active) + _find(_GENERAL_EN, _GENERAL_ZH, text, active)
    for hit in hits:
        if _RELAY.search(text) or _stated_as_policy(clause):
            return None
        before = text[: hit.match.start()]
        if _CUSTOMER_SIDE.search(text[: hit.match.end()]) or _negated(text, hit.match.start(), hit.match.end()):
            continue  # "are you eligible", "we can't confirm whether you qualify"
        if _HEDGE.search(before) or _HEDGE.search(clause.lead) or _TRAILING_HEDGE.match(clause.tail):
            continue  # "you probably qualify", "一般来说，您符合条件", "you qualify, I think"
        return hit.rule.id
    return None


# --- the check -------------------------------------------------------------------------------


def _active(text: str, gated: bool, found: Sequence[str] | None = None) -> frozenset[int]:
    return _PREFILTER.active(text, found) if gated else _EVERY_RULE


def _sentences(text: str) -> Iterator[tuple[int, str]]:
    """The sentences of `text` with where each starts."""
    position = 0
    for end in _SENTENCE_END.finditer(text):
        yield position, text[position : end.start()]
        position = end.end()
    yield position, text[position:]


def hedged(text: str) -> bool:
    """Whether `text` holds one of the hedge scopes ("usually", 一般): the restating rule keeps
    that much of a clause it takes out, since a hedge reaches the clauses after it."""
    return _HEDGE.search(_normalise(text))


def normalised(text: str) -> str:
    """The text the rules read: NFKC, lower case, straight quotes, mentions of others' words left
    out.  A verdict's `clause` span points into it."""
    return _unquote_mentions(_normalise(text))


def guard_check(text: str) -> GuardVerdict:
    """Whether `text` commits the business to a price, a deadline, a conclusion or an outcome."""
    return _check(text, gated=True)


# Checked in this order, which is also the order of precedence in the verdict: the most specific
# promise first, a general assurance ("guaranteed") last.
_ORDER: Final = (GuardCategory.PRICE, GuardCategory.DEADLINE, GuardCategory.CONCLUSION, GuardCategory.OUTCOME)
_FINDERS: Final = {
    GuardCategory.PRICE: _price_in,
    GuardCategory.CONCLUSION: _conclusion_in,
    GuardCategory.OUTCOME: _outcome_in,
}


def _check(text: str, *, gated: bool) -> GuardVerdict:
    """The verdict; `gated=False` tries every rule on every clause (the prefilter only skips work,
    and a test holds it to that)."""
    found: dict[GuardCategory, GuardVerdict] = {}
    for offset, sentence in _sentences(normalised(text)):
        if not sentence or sentence.isspace():
            continue
        found_here = _PREFILTER.found(sentence) if gated else []
        opened = _active(sentence, gated, found_here)
        wanted = [
            category
            for category, rules in (
                (GuardCategory.PRICE, _PRICE_RULES),
                (GuardCategory.DEADLINE, _TIME_RULES),
                (GuardCategory.CONCLUSION, _CONCLUSION_RULES),
                (GuardCategory.OUTCOME, _OUTCOME_RULES),
            )
            if category not in found and not opened.isdisjoint(rules)
        ]
        if GuardCategory.DEADLINE in wanted and opened.isdisjoint(_VERB_RULES):
            wanted.remove(GuardCategory.DEADLINE)
        if not wanted:
            continue
        # Finders look at one clause at a time: a pattern anchored at a clause edge sees the same
        # text whatever the rest of the reply says.
        clauses = _clauses(sentence, offset)
        actives = [_active(clause.text, gated, found_here) for clause in clauses]
        for category in wanted:
            for clause, active in zip(clauses, actives, strict=True):
                span = (clause.start, clause.start + len(clause.text))
                if category is GuardCategory.DEADLINE:
                    pair = _deadline_in(clause, active, gated)
                    if pair is None:
                        continue
                    verdict = GuardVerdict(True, category, rule=pair[0], clause=span, paired_rule=pair[1])
                else:
                    rule = _FINDERS[category](clause, active)
                    if rule is None:
                        continue
                    verdict = GuardVerdict(True, category, rule=rule, clause=span)
                if category is GuardCategory.PRICE:
                    return verdict  # nothing takes precedence over price
                found[category] = verdict
                break
    for category in _ORDER:
        if category in found:
            return found[category]
    return _PASS
