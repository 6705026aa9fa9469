"""What a customer's message asks of the request flow, in English and Chinese (issue 26 §3): a
question (answered, then the flow's open question is asked again), a decision only the business
can make (a discount, a special price, a promise: passed on, never a knowledge gap), the wish to
pass the request on to the owner (a way out), or where a registered request stands.

Pure: plain text in, the named rule that fired out (None when none did).  Each rule carries the
sentences it must and must not match; tests/test_intents.py checks every one, so a rule is changed
together with its examples — the way the commitment guard's rules are (guard/rules/model.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal

from . import rules


class Intent(StrEnum):
    QUESTION = "question"  # asks something: answered, then the open question again
    DECISION = "decision"  # a discount, a special price or a promise: only the business decides
    PASS_ON = "pass_on"  # the customer wants the owner to take it from here
    STATUS = "status"  # where a request already registered stands
    ORDER = "order"  # wants something made or booked: what is needed, said again


# The stop reason of a turn that asked for a decision only the business can make: the run and its
# `run.finished` event carry it (facade/dialogue/runtime/loop.py); it is no knowledge miss.
OWNER_DECISION: Final = "owner_decision"


@dataclass(frozen=True)
class IntentRule:
    """One named way of saying something, in one language (`any`: both)."""

    id: str
    intent: Intent
    language: Literal["en", "zh", "any"]
    pattern: str
    must_match: tuple[str, ...]
    must_not_match: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_regex", re.compile(self.pattern, re.IGNORECASE))

    def search(self, text: str) -> bool:
        regex: re.Pattern[str] = getattr(self, "_regex")  # noqa: B009 (set in __post_init__)
        return regex.search(text) is not None


RULES: Final[tuple[IntentRule, ...]] = (
    # --- questions: a question is a question, whatever else its words look like ----------------
    IntentRule(
        id="question.zh.particle",
        intent=Intent.QUESTION,
        language="zh",
        pattern=r"[吗嘛呢][\s。.!！]*[?？]?\s*$",
        must_match=("可以礼品包装吗？", "可以送货吗", "我的订单确认了吗？", "你们周日开门吗"),
        must_not_match=("可以", "好的，请找人联系我", "我想订一个生日蛋糕"),
    ),
    IntentRule(
        id="question.zh.either_or",
        intent=Intent.QUESTION,
        language="zh",
        pattern=r"能不能|可不可以|是不是|有没有|会不会|要不要|行不行|好不好|对不对|是否|[几多]少钱|什么|怎么|为什么|哪[里儿个天些]",
        must_match=("能不能便宜点", "可不可以礼品包装", "是不是已经确认了", "有没有无麸质面包", "蛋糕多少钱"),
        must_not_match=("可以", "明天下午三点", "给我打八折"),
    ),
    IntentRule(
        id="question.en.verb_first",
        intent=Intent.QUESTION,
        language="en",
        pattern=r"^\s*(?:(?:and|so|but|also|ok|okay|oh)[,\s]+)?(?:is|are|am|was|were|can|could|do|does|did|will|would"
        r"|should|shall|may|might|has|have|had|isn't|aren't|can't|don't|doesn't|won't)\s+\w[^.!]*\?\s*$",
        must_match=(
            "Is my order confirmed?",
            "Can you gift wrap it?",
            "Do you deliver on Sundays?",
            "Are cakes gluten-free?",
            "ok, does it come with candles?",
        ),
        must_not_match=("Is Friday ok", "I can do Friday.", "Do it"),
    ),
    IntentRule(
        id="question.en.wh_word",
        intent=Intent.QUESTION,
        language="en",
        pattern=r"^\s*(?:what|when|where|how|why|which|who|whom|whose)\b",
        must_match=("What flavours do you have?", "how long does it keep", "Where do I pick it up?"),
        must_not_match=("Whenever suits the owner", "Friday at noon"),
    ),
    IntentRule(
        id="question.any.mark",
        intent=Intent.QUESTION,
        language="any",
        pattern=r"[?？]\s*$",
        must_match=("Gift wrapping?", "礼品包装？", "and candles?"),
        must_not_match=("Friday.", "No idea!", "ana@example.com"),
    ),
    # --- decisions only the business can make -----------------------------------------------
    IntentRule(
        id="decision.en.discount",
        intent=Intent.DECISION,
        language="en",
        pattern=r"\b\d{1,3}\s*(?:%|per ?cent)\s*(?:off|discount|cheaper|less)\b"
        r"|\b(?:give|get|offer|do|make|cut|let)\s+(?:me|us)\b[^.?!]{0,30}?\b(?:discount|deal|reduction|price cut"
        r"|cheaper|better price|lower price|special price|(?:good|best|friends?) price|money off|\d+\s*(?:%|per ?cent))"
        r"|\b(?:i|we)\s*(?:want|need|would like|'d like|demand|expect)\s+(?:a|an|some|your)?\s*(?:discount|deal"
        r"|reduction|price cut|better price|lower price|special price)"
        r"|\b(?:lower|reduce|drop|cut)\s+(?:the|your|my|its)\s+price\b|\bmatch\s+(?:the|their|that|this)\s+price\b"
        r"|\bknock\s+(?:\S+\s+){1,2}off\b|\bmake\s+it\s+cheaper\b",
        must_match=(
            "Give me 20% off",
            "give me a discount",
            "Can you give me a better price?",
            "I want a discount",
            "20 percent off please",
            "Could you lower the price?",
            "Knock ten euros off and I'll take it",
            "make it cheaper for me",
        ),
        must_not_match=(
            "Do you have a student discount?",
            "What are your prices?",
            "How much is a birthday cake?",
            "I'd like to order a birthday cake",
        ),
    ),
    IntentRule(
        id="decision.en.special_price",
        intent=Intent.DECISION,
        language="en",
        pattern=r"\b(?:special|custom|friends?|mates'?|family|loyalty)\s+(?:price|rate|deal)\s+for\s+(?:me|us)\b"
        r"|\b(?:have|get|give\s+(?:me|us)|let\s+(?:me|us)\s+have)\s+(?:it|this|that|one|them)\s+for\s+free\b|\bwaive\s+(?:the|your)\s+(?:fee|charge)\b",
        must_match=("a special price for me", "Can I have it for free?", "waive the fee please"),
        must_not_match=("What is the price for a cake?", "Is delivery free of charge?"),
    ),
    IntentRule(
        id="decision.en.promise",
        intent=Intent.DECISION,
        language="en",
        pattern=r"\b(?:promise|guarantee|swear)\s+(?:me|us)\b|\bgive\s+(?:me|us)\s+(?:your\s+word|a\s+guarantee)\b"
        r"|\b(?:promise|guarantee)\s+(?:that\s+)?(?:it|you|the)\b[^?]*[.!]?\s*$",
        must_match=(
            "Promise me it will be ready on Friday",
            "guarantee me it arrives on time",
            "Give me your word it'll be done",
            "promise that it is fresh.",
        ),
        must_not_match=("Is there a guarantee on cakes?", "What do you promise customers?"),
    ),
    IntentRule(
        id="decision.zh.discount",
        intent=Intent.DECISION,
        language="zh",
        pattern=r"打\s*[一二三四五六七八九\d.]{1,3}\s*折|(?:给|帮|替)我.{0,6}(?:打折|折扣|优惠|便宜|减|少收|少算|特价)"
        r"|(?:便宜|优惠|实惠)(?:一)?[点些]|少(?:收|算)(?:一)?[点些]?(?:钱)?|降(?:个|点)?价|减价|抹(?:个)?零|砍价"
        r"|(?:能|可以)(?:不能)?(?:打折|打个折|给个折扣)",
        must_match=("给我打八折", "打九折吧", "便宜点", "能不能便宜一点", "给我优惠一下", "少收点钱", "可以打折吗"),
        must_not_match=("我想订一个生日蛋糕", "蛋糕多少钱？", "你们有学生折扣吗", "可以礼品包装吗？"),
    ),
    IntentRule(
        id="decision.zh.special_price",
        intent=Intent.DECISION,
        language="zh",
        pattern=r"(?:给|算)我.{0,4}(?:特价|友情价|内部价|成本价|批发价|最低价)|免费(?:给我|送我)|(?:不|别)收(?:我)?(?:钱|费)",
        must_match=("给我算个友情价", "免费送我一个吧", "这次别收钱了"),
        must_not_match=("你们有特价吗？", "配送免费吗？"),
    ),
    IntentRule(
        id="decision.zh.promise",
        intent=Intent.DECISION,
        language="zh",
        pattern=r"(?:你|您|你们)?(?:向|跟|给)我(?:保证|承诺)|(?:答应|保证)我|(?:你|您|你们)(?:得|要|必须)(?:保证|承诺)",
        must_match=("你跟我保证周五能做好", "答应我一定准时", "你们必须保证新鲜"),
        must_not_match=("你们有质量保证吗？", "保证金是多少？"),
    ),
    # --- a way out: the owner takes it from here -----------------------------------------------
    IntentRule(
        id="pass_on.en",
        intent=Intent.PASS_ON,
        language="en",
        pattern=r"\bpass\s+(?:it|this|that|them|my\s+(?:request|order|question))\s+(?:on|along|to\s+the\s+(?:owner|shop|business))\b"
        r"|\bpass\s+(?:it\s+)?on\b|\b(?:send|forward|give)\s+(?:it|this|that)\s+to\s+the\s+(?:owner|shop|business)\b"
        r"|\blet\s+the\s+owner\s+(?:decide|handle|deal|sort|look)|\bask\s+the\s+owner\b",
        must_match=("pass it on", "Please pass this to the owner", "let the owner decide", "just ask the owner"),
        must_not_match=("Who is the owner?", "I passed by yesterday", "pass the salt"),
    ),
    IntentRule(
        id="pass_on.zh",
        intent=Intent.PASS_ON,
        language="zh",
        pattern=r"(?:转|交|发|递)给(?:店主|老板|商家|店家|人工|负责人)|转交|让(?:店主|老板|商家|店家)(?:来)?(?:决定|定|处理|看|联系)"
        r"|问(?:一下|问)?(?:店主|老板)",
        must_match=("转给店主吧", "交给老板决定", "让店主来处理", "问一下老板"),
        must_not_match=("店主是谁？", "我想订一个生日蛋糕"),
    ),
    # --- where a request stands -------------------------------------------------------------
    IntentRule(
        id="status.en",
        intent=Intent.STATUS,
        language="en",
        pattern=r"\b(?:is|has|was)\s+(?:my|our|the)\s+(?:order|request|booking|reservation)\b[^?]{0,30}?"
        r"\b(?:confirmed|accepted|approved|registered|received|seen|ready|done|through|ok|okay|going|shipped|sent"
        r"|delivered|made|baked|started|finished|processed|cancell?ed|declined|rejected)\b"
        r"|\b(?:status|progress|news|update)\s+(?:of|on|about)\s+(?:my|our|the)\s+(?:order|request|booking)\b"
        r"|\b(?:where|how)\s+(?:is|are)\s+(?:my|our)\s+(?:order|request|booking)\b"
        r"|\b(?:what'?s|what\s+is)\s+happening\s+with\s+(?:my|our)\s+(?:order|request|booking)\b"
        r"|\bdid\s+(?:the\s+owner|you|they|anyone)\s+(?:see|get|receive|accept|confirm|read)\s+(?:my|our|it)\b"
        r"|\brequest\s*#\s*\d+\s*\?",
        must_match=(
            "Is my order confirmed?",
            "has my request been accepted yet?",
            "What's the status of my order?",
            "Where is my request?",
            "Did the owner see my request?",
            "request #1?",
            "Has my order been shipped?",
        ),
        must_not_match=("I'd like to order a birthday cake", "Is the shop open?", "How do I order?"),
    ),
    IntentRule(
        id="status.zh",
        intent=Intent.STATUS,
        language="zh",
        pattern=r"(?:我的|我们的|这个|那个)?(?:订单|请求|预订|预约|申请)\s*(?:#?\s*\d+\s*)?(?:号)?.{0,6}?"
        r"(?:确认了|受理了|接受了|通过了|收到了|处理了|好了|怎么样|到哪|进度|进展|状态|有消息|看到了|发货了|做好了|取消了|拒绝了)"
        r"|(?:店主|老板|商家)(?:看到|收到|确认|同意|接受)了?(?:我的)?(?:订单|请求|预订)?(?:吗|没)",
        must_match=("我的订单确认了吗？", "请求1号怎么样了", "订单进度如何", "店主看到了吗？", "我的订单做好了吗"),
        must_not_match=("我想订一个生日蛋糕", "怎么下订单？"),
    ),
    # --- what is needed, said again in the middle of the flow ----------------------------------
    IntentRule(
        id="order.en",
        intent=Intent.ORDER,
        language="en",
        pattern=r"\b(?:order|book|reserve|buy|purchase)\b",
        must_match=("I'd like to order a birthday cake", "I want to book a cake tasting", "can I buy two?"),
        must_not_match=("I want it soon", "Friday", "give me 20% off"),
    ),
    IntentRule(
        id="order.zh",
        intent=Intent.ORDER,
        language="zh",
        pattern=r"订|预约|定制|下单|购买|买",
        must_match=("我想订一个生日蛋糕", "我要定制一个蛋糕", "买两个"),
        must_not_match=("尽快", "给我打八折", "越快越好"),
    ),
)

_BY_INTENT: Final[dict[Intent, tuple[IntentRule, ...]]] = {
    intent: tuple(rule for rule in RULES if rule.intent == intent) for intent in Intent
}


def fired(text: str, intent: Intent) -> IntentRule | None:
    """The first rule of `intent` that matches `text`, or None."""
    return next((rule for rule in _BY_INTENT[intent] if rule.search(text)), None)


def asks(text: str) -> bool:
    """Whether `text` asks something: the dialogue's question rule (rules.QUESTION, which a date
    such as "Friday?" does not trip) or any question rule here (a question mark at the end
    included).  Read only once a message is known not to answer the open field."""
    return bool(text.strip()) and (rules.is_question(text) or fired(text, Intent.QUESTION) is not None)


def decision_asked(text: str) -> IntentRule | None:
    """The rule by which `text` asks for a discount, a special price or a promise, or None."""
    return fired(text, Intent.DECISION)


def passes_on(text: str) -> bool:
    return fired(text, Intent.PASS_ON) is not None


def orders(text: str) -> bool:
    return fired(text, Intent.ORDER) is not None


def status_asked(text: str) -> bool:
    return fired(text, Intent.STATUS) is not None


_NUMBER: Final = re.compile(
    r"#\s*(\d{1,9})|(?:request|order|请求|订单)\s*(?:#|no\.?|number)?\s*(\d{1,9})", re.IGNORECASE
)


def request_number(text: str) -> int | None:
    """The request number a message names ("request #3", "订单3"), or None."""
    found = _NUMBER.search(text)
    if found is None:
        return None
    return int(found.group(1) or found.group(2))
