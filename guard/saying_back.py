"""Saying back what the customer said is not committing.

A reply that repeats the customer's own figures ("so the garage quoted you $310", "you said under
80", 您说预算在八十以内) or quotes their words to ask about them ("you wrote 'free installation' —
which page said that?") states nothing of the business's: the figure or the promise is the
customer's, and the reply only shows it was read.  The checks would read such a sentence as the
business quoting a price or making the promise, and a customer who is asked back what they said
would get the boundary wording instead.  So, as with a quote of a cited entry (`quoting.py`), such
a sentence is taken out before the checks read the reply — only when all of this holds:

* it attributes the words to the customer, or to someone other than the business: "you said",
  "you mentioned", "you were quoted", "your budget of", "the garage quoted you", 您说, 您提到,
  对方给您报价; an agreement ("as you said", 按您说的) is no attribution;
* every figure in it stands in the customer's own messages (the same number, in digits, words or
  numerals), and every quoted passage in it is the customer's words, word for word;
* no clause of it, besides the one that says the customer's words back, makes anything firm or
  addresses the customer's case with a promise ("we'll do it for that", "that works", 可以,
  没问题, 给您), unless it leaves the decision to someone else ("the owner will confirm").

A quoted passage of the customer's words in a question ("you wrote 'free installation' — which
page said that?") is taken out of its sentence under the same conditions, the question left for
the checks.  Whatever else the reply says is read by every check as before; the nightly re-check
reads delivered replies with the customer's messages of their session, as a turn does.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal
from typing import Final

from .figures import read
from .grounding import numbers_in
from .restating import clauses, defers, promise_refusals_removed

__all__ = ["AHEAD", "ON_RECORD", "attributed", "blanked", "record", "said_back_removed", "sentences"]

_SENTENCE_END: Final = re.compile(r"[!?。！？;；\n]+\s*|\.(?!\d)\s*")
_QUOTED: Final = re.compile(
    r"[\"“”]([^\"“”]{1,120})[\"“”]|‘([^‘’]{1,120})’|「([^「」]{1,120})」|『([^『』]{1,120})』|'([^']{2,120})'"
)
_TOKEN: Final = re.compile(r"\d+(?:[.,]\d+)*|[a-z]+(?:'[a-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# The customer (or someone other than the business) as the one who said, asked, paid or was quoted.
_SAID_EN: Final = re.compile(
    r"\b(?:you|you've|you'd|you're)\s+(?:(?:just|also|already|originally|first|earlier|then|had|have|were|was|did)\s+)?"
    r"(?:said|say|saying|mention(?:ed|s)?|wrote|write|writing|told|tell|asked|ask|asking|quoted|were quoted|got quoted"
    r"|been quoted|paid|spent|budget(?:ed)?|received|got|saw|seen|found|heard|noted|put|entered|typed|listed"
    r"|described|reported|are looking at|were looking at|are hoping|were hoping|hoped|hope|want(?:ed)?|would like"
    r"|'d like|need(?:ed)?|expect(?:ed)?|estimated|measured|counted|booked|approved|accepted|okayed|signed)\b"
    # someone else's price: "the other shop's asking $220", "the other forge quoted £300"
    r"|\b(?:the other|another|the previous|the last|that|their|the)\s+(?:[a-z-]+\s+){0,2}"
    r"(?:shop|store|garage|forge|place|company|seller|guy|dealer|firm|business|workshop|vendor|site|website)(?:'s)?"
    r"\s+(?:is\s+|was\s+)?(?:asking|quoted|quotes|charges|charged|wants|wanted|offered|said)\b"
    r"|\b(?:you have|you had|you've got|you're thinking of|you were thinking of) in mind\b"
    r"|\byour (?:[$€£¥]\s?\d[\d,.]*\s*)?(?:budget|quote|quotation|estimate|figure|number|offer|receipt|invoice|bill"
    r"|message|note|email|request"
    r"|question|previous|last|original|earlier|order|ticket|limit|maximum|target|measurements?)\b"
    r"|\b(?:quoted|charged|offered|told|gave|sent|billed|asked)\s+you\b|\baccording to you\b"
    r"|\bfrom what you (?:said|wrote|describe[d]?|mentioned)\b|\bif i understood\b"
    r"|\bjust to (?:check|confirm|make sure)\b"
)
_SAID_ZH: Final = re.compile(
    r"(?<![按照依])(?:您|你)(?:刚才|刚刚|之前|上次|前面|也|说的|提到的)?(?:说|提到|讲|写|问|想要|想|希望|预算|打算|要求|报|付|花|收到"
    r"|看到|发来|填|问的|说的|提的|要的|计划|准备|考虑)"
    r"|(?:对方|别家|别的店|那边|那家|他们|之前的店|其他店|另一家|上一家|前一家|上家|之前那家)(?:给您|给你)?"
    r"(?:报价|报的|报了|收|要价|开价|说|要)"
    r"|(?:您|你)的(?:预算|报价|要求|问题|留言|消息|订单|上限|目标|尺寸)"
    r"|跟您确认一下|和您确认一下|确认一下您|我理解的是|如果我没理解错"
)
# An agreement is no attribution: "as you said, €80 it is", 按您说的八十算.
_AGREED: Final = re.compile(
    r"\bas you (?:said|asked|wanted|suggested)\b|\blike you (?:said|asked)\b|按(?:您|你)说|照(?:您|你)说|就按"
)
# What makes a sentence more than saying back: a promise, an agreement, an offer.
_FIRM: Final = re.compile(
    r"\b(?:will|won't|'ll|can|could do|guarantee\w*|promis\w*|deal|done|agreed|works|fine|ok|okay|sure thing|no problem"
    r"|confirmed|definitely|exactly|lock\w*|match\w*|honou?r\w*|waive\w*|free|discount\w*|off|for you|yours"
    r"|it is|accept\w*|offer|fair|happy to|glad to|let's|shall we|go ahead|book(?:ed)? (?:it|you)"
    r"|yes|yep|yeah|right|correct|then|that's it)\b|对的?|是的|没错|好的?|就这样"
    r"|保证|承诺|可以|没问题|行|好的|就这么|给您|给你|算您|算你|帮您|帮你|免|优惠|打折|一定|肯定|确定|包|成交"
    r"|不算|不收|就不|算了|不用付|不用交"
)
# What the customer asked is reported, not promised: "you asked whether we could do €300".
_REPORTED: Final = re.compile(r"\b(?:if|whether)\b.*$|(?:是否|能不能|能否|可不可以|行不行|可以吗|行吗).*$")
_CJK: Final = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_normal(text))


def _in_order(wanted: list[str], said: list[str]) -> bool:
    """Whether `wanted` stands in `said` as consecutive words."""
    n = len(wanted)
    return n > 0 and any(said[i : i + n] == wanted for i in range(len(said) - n + 1))


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each with the punctuation and space after it: together, the text."""
    found, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        found.append(text[start : end.end()])
        start = end.end()
    return [*found, text[start:]] if start < len(text) else found


def attributed(sentence: str) -> bool:
    lowered = _normal(sentence)
    if _AGREED.search(lowered):
        return False
    return bool(_SAID_EN.search(lowered) or _SAID_ZH.search(lowered))


def _firm(clause: str) -> bool:
    """Whether a clause makes something firm, other than by leaving it to someone else or by
    reporting what the customer asked ("you asked whether we could do €300")."""
    clause = promise_refusals_removed(clause)
    clause = _REPORTED.sub(" ", clause)
    own_word = re.search(r"\b(?:i'll|we'll|i will|we will|i can|we can|let me)\b|给您|给你|帮您|帮你", clause)
    return bool(_FIRM.search(clause)) and (own_word is not None or not defers(clause))


def _said_back(sentence: str, said: set[Decimal]) -> bool:
    """Whether the sentence only says the customer's figures back: each clause with a figure
    attributes it to the customer (or someone other than the business) and holds only figures
    the customer's messages hold, and no clause makes anything firm."""
    lowered = _normal(sentence)
    spans = clauses(lowered)
    with_figures = [(a, b) for a, b in spans if read(lowered[a:b])]
    if not with_figures:
        return False
    said_any = False
    for start, end in with_figures:
        clause = lowered[start:end]
        if not attributed(clause) or not _figures_said(clause, said):
            return False
        said_any = said_any or any(n > 1 for f in read(clause) for n in (f.low, f.high, f.value) if n is not None)
    if not said_any:
        return False  # "一个小时" says back nothing a rule would read as a price
    return not any(_firm(lowered[a:b]) for a, b in spans)


def _figures_said(sentence: str, said: set[Decimal]) -> bool:
    """Whether every figure of the sentence (0 and 1 aside) has its numbers among `said`."""
    for figure in read(sentence):
        ends = {end for end in (figure.low, figure.high) if end is not None} or {figure.value}
        if any(end > 1 and end not in said for end in ends):
            return False
    return True


_ROW_LEAD: Final = re.compile(r"^\s*(?:[-*•]\s*)?(?:[^\n:：]{1,40}[:：])?")


def blanked(sentence: str) -> str:
    """What stands in the place of a sentence taken out: its list mark and label ("- When:"), a
    space, and the line break after it — so the lines around it keep their shape (the request
    summary is read as a whole, `engine.py`)."""
    lead = _ROW_LEAD.match(sentence)
    head = lead.group() if lead and sentence.lstrip().startswith(("-", "*", "•")) else ""
    tail = sentence[len(sentence.rstrip()) :]
    return head + " " + tail if "\n" in tail else head + " "


def said_back_removed(text: str, customer: Sequence[str]) -> str:
    """`text` without the sentences that only say back the customer's own figures, and without the
    customer's words quoted in a question, as the module docstring describes: what the checks read."""
    if not customer:
        return text
    said_numbers: set[Decimal] = set()
    for message in customer:
        said_numbers |= numbers_in(message)
    said_words = [_tokens(message) for message in customer]
    kept: list[str] = []
    for sentence in sentences(text):
        quotes = [m for m in _QUOTED.finditer(sentence) if _tokens(next(g for g in m.groups() if g is not None))]
        theirs = [m for m in quotes if any(_in_order(_tokens(m.group()), words) for words in said_words)]
        question = sentence.rstrip().endswith(("?", "？"))
        asked_back = question or attributed(sentence)
        # Firm in the reply's own words, the customer's quoted words aside ("您提到“包安装”，…？").
        rest = sentence
        for match in sorted(theirs, key=lambda m: m.start(), reverse=True):
            rest = rest[: match.start()] + " " + rest[match.end() :]
        firm = any(_firm(_normal(rest)[a:b]) for a, b in clauses(_normal(rest)))
        if theirs and len(theirs) == len(quotes) and asked_back and not firm:
            # "You wrote 'free installation' — which page said that?": the words are theirs.
            for match in sorted(theirs, key=lambda m: m.start(), reverse=True):
                sentence = sentence[: match.start()] + " " + sentence[match.end() :]
            kept.append(sentence)
            continue
        if _said_back(sentence, said_numbers):
            # "So the garage quoted you $310.": the figure is the customer's, said back.
            kept.append(blanked(sentence))
            continue
        kept.append(sentence)
    return "".join(kept)


# What the record says happened: "your parcel left us on Monday the 9th", "we received your $150
# deposit on 5 September", 您的500元定金是3月2号到账的, 您订的是6月15号下午3点 — a past fact, not a promise.
PAST: Final = re.compile(
    r"\b(?:was|were|did|had|has been|have been|received|arrived|came|left|shipped|sent|emailed|posted|paid|booked"
    r"|returned|refunded|collected|picked up|dropped off|delivered|ordered|placed|declared|confirmed|took|signed"
    r"|reached|got|dispatched|issued|settled|registered)\b"
    r"|已经|已|过了|到账|收到了|寄到|发给|发到|交付|付了|交了|退回|退还|(?:订|约|买|取|付|交|寄|拍|选|定)的是"
    r"|是.{1,16}(?:收到|收|寄出|寄到|到账|付|交|取|拍|订|约|发|送|到)的"
    # 是 + a date + a deed + 的: "您第一次是9月20号做的", "订单是昨天下的"
    r"|是.{0,12}(?:号|日|昨天|前天|上周.?|上个?月|去年).{0,6}的(?:[,，。!！~～\s]|$)"
)
AHEAD: Final = re.compile(
    r"\b(?:will|won't|'ll|going to|can|could|shall|would|tomorrow|next|soon|by then|from now|tonight"
    r"|this (?:afternoon|evening|week)|later|right away|straight away)\b"
    r"|\b(?:by|before|until)\s+(?:mon|tue|wed|thu|fri|sat|sun|the|end|next|noon|midday|\d)"
    r"|(?:号|点|周[一二三四五六日天]|星期[一二三四五六日天]|晚上|上午|下午|中午|月底|周末)(?:之前|以前|前)|就把"
    r"|\b(?:guarantee\w*|promis\w*|definitely|certainly|within)\b"
    r"|会|能|可以|将|明天|后天|下周|下个月|马上|尽快|之后|以后|一定|保证|肯定|承诺|确保|以内|之内|内(?:完成|审完|做好|送到|给)|今晚|待会|稍后|一会|这就|就给|立刻|立即"
)


# The record confirmed ("Yes, the log shows…", 对，记录里是…): a fact looked up, not a figure agreed to.
ON_RECORD: Final = re.compile(
    r"\b(?:record|records|log|booking|order|file|system|account)\b.{0,30}\b(?:shows?|says|has|lists?)\b"
    r"|\bon (?:the|your|our) (?:booking|order|record|file|account)\b|记录|登记信息|订单里|系统里|显示"
)


def record(clause: str) -> bool:
    """Whether a clause tells what already happened or what the record shows, and nothing to come."""
    return (PAST.search(clause) is not None or ON_RECORD.search(clause) is not None) and AHEAD.search(clause) is None
