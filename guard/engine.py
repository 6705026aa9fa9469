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
* ``outcome`` - a promised result: guarantee / promise / assure / ensure, "100% sure", "will
  definitely work", "you will get a refund", "can't fail", "zero risk", 保证, 承诺, 确保, 担保,
  一定能, 肯定没问题, 绝对可以, 包过, 打包票, 稳过, 百分之百消失, 万无一失 ..., and lasting results
  ("it won't break again", "you won't have any more leaks", "the fix is permanent", "it will cure
  your back pain for good", "your grades will go up", "will look brand new", "..., no question",
  一辈子都不会再歪, 跟新的一模一样, 照价赔偿, 全额退款, 保一年).

How it decides.  The text is NFKC-normalised (full-width digits and punctuation become ASCII) and
lower-cased, cut into sentences, then at contrast words ("but", "however", 但是, 不过 ...), then
at commas and at "and/so/then" + a new subject into clauses.  Chinese numerals (三, 十五, 两百,
一万二) count as numbers.  A match counts unless, in its own clause:

* a negation or refusal comes before it ("can't / won't / unable to / nobody ... guarantee",
  无法/不能/没法/不敢 保证, 不一定, whether/是否/能不能 ...) or right after it ("a guarantee is
  not something we give", 保证不了, 这个承诺我不能替老板做);
* it is the customer's own figure ("your budget of €300", 您说的500元预算)  - price;
* it is hedged ("usually", "may", "estimated", 一般, 预计, 大概, 左右, also from an introductory
  "Usually, ..." or a trailing "..., usually" / "..., depending on the carrier" / "...，要看您的
  地址") - unless a guarantee sits next to it ("in about an hour, guaranteed") -, disclaimed
  later in the sentence ("..., but I can't guarantee that"), the customer's wish or task ("do you
  need it by Friday?", "please complete the form within 7 days", 您希望三天内收到吗,
  请在七天内完成付款), past ("already shipped", 已经发货) or a routine (每周三发货) - deadline;
* it is the agent promising to relay the message ("I promise I'll forward this to the owner",
  我肯定会转告老板) - deadline and outcome.

A negation in another clause does not hide a promise: "I can't talk long, but we guarantee
delivery" is blocked.  When several categories are found the verdict names the first of price,
deadline, outcome.

Known limits - it matches patterns, it does not understand the text:

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

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, NamedTuple

__all__ = ["GuardCategory", "GuardVerdict", "guard_check"]


class GuardCategory(StrEnum):
    PRICE = "price"
    DEADLINE = "deadline"
    OUTCOME = "outcome"


@dataclass(frozen=True)
class GuardVerdict:
    """What the guard decided about one message; `category` is set exactly when it is blocked."""

    blocked: bool
    category: GuardCategory | None

    def as_json(self) -> dict[str, bool | str | None]:
        return {"blocked": self.blocked, "category": None if self.category is None else self.category.value}


_PASS: Final = GuardVerdict(blocked=False, category=None)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # the text is lower-cased first; IGNORECASE would only slow sre down


_LATIN: Final = re.compile(r"[a-z$€£¥%]")


@dataclass(frozen=True, slots=True)
class _Patterns:
    """Alternatives split by script.  sre tries every alternative at every position of the text,
    so a clause pays only for the script(s) it contains."""

    latin: re.Pattern[str]
    chinese: re.Pattern[str]

    @classmethod
    def of(cls, *, latin: list[str], chinese: list[str]) -> _Patterns:
        return cls(_rx("|".join(latin)), _rx("|".join(chinese)))

    def finditer(self, text: str) -> list[re.Match[str]]:
        found = list(self.latin.finditer(text)) if _LATIN.search(text) else []
        if not text.isascii():
            found.extend(self.chinese.finditer(text))
        return found

    def search(self, text: str) -> bool:
        if _LATIN.search(text) and self.latin.search(text):
            return True
        return not text.isascii() and self.chinese.search(text) is not None

    def strip(self, text: str) -> str:
        if _LATIN.search(text):
            text = self.latin.sub(" ", text)
        return text if text.isascii() else self.chinese.sub(" ", text)


# --- building blocks -------------------------------------------------------------------------

_CJK = r"\u4e00-\u9fff"
_ZH_NUMERALS = "零〇一二两三四五六七八九十百千万半几"
_ZH_N = rf"(?:\d+(?:\.\d+)?|[{_ZH_NUMERALS}]+)(?:\s?(?:-|~|到|至)\s?(?:\d+|[{_ZH_NUMERALS}]+))?"
_EN_NUMWORD = (
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|fifteen|"
    r"twenty[- ]four|forty[- ]eight|seventy[- ]two|twenty|thirty|forty|a few|few|a couple of|couple of|several)"
)
_EN_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_EN_UNDER_100 = (
    rf"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ]{_EN_ONES})?|ten|eleven|twelve|thirteen|fourteen"
    rf"|fifteen|sixteen|seventeen|eighteen|nineteen|{_EN_ONES})"
)
# "forty", "a hundred and twenty", "two thousand": an amount in words ("a" only before hundred/thousand).
_EN_MONEY_WORDS = rf"(?:(?:a|{_EN_UNDER_100}) (?:hundred|thousand)(?:(?: and)? {_EN_UNDER_100})?|{_EN_UNDER_100})"
_EN_N = rf"(?:\d+(?:\.\d+)?|{_EN_NUMWORD})(?:\s?(?:-|to|or)\s?(?:\d+|{_EN_NUMWORD}))?"
_EN_UNIT = r"(?:business |working |calendar )?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|fortnight)"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_WEEKDAY_ANY = rf"(?:{_WEEKDAY}|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b)"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_ORD = r"(?:st|nd|rd|th)"
_DATE = (
    rf"(?:\d{{1,2}}{_ORD}?(?: of)? {_MONTH}\b|{_MONTH} \d{{1,2}}{_ORD}?\b|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?"
    rf"|the \d{{1,2}}{_ORD}\b)"
)
_CLOCK = (
    r"(?:\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\d{1,2}:\d\d|noon|midnight|midday|lunch ?time"
    r"|(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) o'clock)"
)

# --- price -----------------------------------------------------------------------------------

_AMOUNT = r"\d[\d,]*(?:\.\d+)?(?:\s?(?:k|万|千|百)\b)?"
_ZH_AMOUNT = rf"(?:\d[\d,]*(?:\.\d+)?\s?[万千百]?|[{_ZH_NUMERALS}]+)"
# 块 is money in "300块" but a piece in "一块蛋糕": count it only where the phrase ends.
_KUAI = rf"块(?:钱|(?=$|[^{_CJK}]|[吧啊呀哦呢了左右一起就包全都哈的之以搞够能]))"
_PRICE: Final = _Patterns.of(
    latin=[
        rf"[$€£¥]\s?{_AMOUNT}",
        rf"\b{_AMOUNT}\s?[$€£¥]",
        rf"\b(?:usd|eur|gbp|rmb|cny|jpy|hkd|chf|us\$)\s?{_AMOUNT}",
        rf"\b{_AMOUNT}\s?-?\s?(?:usd|eur|gbp|rmb|cny|jpy|hkd|chf|yuan|renminbi|dollars?|bucks|euros?|quid|pounds?|cents?"
        rf"|yen)\b",
        rf"\b{_EN_MONEY_WORDS}(?:[- ]odd)?[- ](?:dollars?|bucks|euros?|quid|pounds?|yuan|yen)\b",
        # "two grand" is money, "two grand pianos" is not.
        rf"\b(?:{_EN_MONEY_WORDS}|\d+(?:\.\d+)?)\s?grand(?=\s*(?:$|[,;:)]|for\b|all\b|in total|including|incl|plus|with\b|each\b))",
        # "charge you half a hundred", "will cost you two grand" - not "cost you two days".
        rf"\b(?:charge|charges|cost|costs|pay) (?:you |us )?(?:only |just |about |around )?(?:half a (?:hundred|thousand|grand)"
        rf"|{_EN_MONEY_WORDS})\b(?! (?:days?|hours?|weeks?|months?|minutes?|people|times|visits?|trips?))",
        # A price word and a bare figure ("for you, the price is 40"); the figure must end there,
        # so "the total is 3 items" is not a price.
        r"\b(?:price|prices|priced|cost|costs|fee|charge|rate|quote|total)\b(?: (?:is|are|will be|would be|comes to|of|at"
        r"|:))?\s?"
        rf"(?:only |just )?(?:\d[\d,]*(?:\.\d+)?|{_EN_MONEY_WORDS})(?=\s*(?:$|[,.!?;)]|each|per|a |an |flat|in total|for|plus"
        r"|incl|excl|with))",
        # A paying verb and a bare figure: "you'll only pay 30", "charged 25 per half hour", "yours for
        # 1,200", "set you back just a fiver", "settled at eight hundred", "at 40 a day".
        rf"\b(?:pay|paying|charge|charges|charged|billed|set you back|yours for|comes? to|settled at|priced at|for just|for only|at just"
        rf"|at only)\s(?:only |just |about |around |a flat |roughly )?(?:\d[\d,]*(?:\.\d+)?|{_EN_MONEY_WORDS}|a (?:tenner|fiver))"
        rf"(?![\d,]*\s*(?:%|days?|hours?|weeks?|months?|years?|minutes?|people|times|items?|pieces?|pages?))",
        r"\b(?:it's|is|for|at|only|just|costs?|pay|charge) \d[\d,]*(?:\.\d+)? (?:an?|per) (?:day|night|hour|week|month|person"
        r"|head|session|lesson|class|visit|table|guest|kid|child|room|couple)\b"
        r"|\b(?:is|are|it's) on us\b|\byou(?:'ll| will) pay the same\b|\b\d[\d,]*(?:\.\d+)? (?:total|in total|all in|all-in)\b"
        r"|\bdone deal\b|\bit's a deal\b|\bdiscount of \d+ ?(?:%|percent)"
        r"|\b(?:labou?r|parts|total|price|cost|fee|deposit|rate)s?\s?:\s?\d|^(?:at )?no (?:extra )?(?:charge|cost)$"
        r"|\b(?:rides?|stays?|travels?|eats?|gets? in|comes? along) (?:for )?free\b",
        r"\b(?:a|one|two|three|four|five) (?:tenner|fiver)s?\b|\b(?:tenner|fiver)s?\b",
        rf"\b{_EN_MONEY_WORDS}(?:[- ]odd)?(?: each| apiece| a (?:head|piece|person|cup))\b",
        r"\bis \d[\d,]*(?:\.\d+)?(?=,? (?:and that's|all in|flat|fixed|in total|including|included|each|per)\b)"
        r"|\b(?:that's|that is) (?:the |our |a )?(?:final |fixed |firm )?(?:figure|price|amount|cost|fee)\b(?! (?:is|will|depends|varies))",
        r"\bfor free\b|\bfree of charge\b|\bat no (?:extra |additional )?(?:cost|charge)\b",
        r"\b(?:get|gets) (?:one|1|another|the \w+(?: one)?) free\b|\bhalf[- ]price\b|\byou(?:'ll| will) get (?:it|them|this|one)"
        r" for \d",
        # Free extras and price matching: "on the house", "a free trim", "delivery is free for you".
        r"(?<!depending )(?<!depends )(?<!based )\bon the house\b(?! (?:roof|wall|front|side|next))|\bthrow in (?:a |an |one )?free\b|\b(?:is|are|will be) free (?:for you|of charge|this time|today)\b"
        r"|\b(?:a|one) free (?:trim|delivery|upgrade|session|check|refill|gift|wrap|wrapping|shipping|consultation|sample"
        r"|lesson|class|visit|wash|coffee|drink)\b|\b(?:\d+(?:st|nd|rd|th)|next|second|third|sixth) (?:lesson|session|class|visit"
        r"|night|one) is free\b|\bit's on us\b|\bno (?:\w+ )?(?:charge|fee) (?:this time|today|for you)\b|\bno charge for\b"
        r"|\bno (?:\w+ )?(?:charge|fee)\b(?: \S+){0,6} this time\b",
        rf"\blet's (?:say|call it|make it) (?:\d|{_EN_MONEY_WORDS}\b)",
        r"\bwaive\w*\b.{0,25}\bfee|\b\d+(?:\.\d+)?\s?(?:%|percent) (?:off|discount)\b|\bknock \w+ down to\b",
        r"\b\d+(?:\.\d+)? per (?:session|night|person|head|page|lesson|visit|class|ticket|guest)\b",
    ],
    chinese=[
        # Whole numbers only, and not pieces: "切12块" is twelve slices, not "2块".
        rf"(?<!\d[.,])(?<![\d{_ZH_NUMERALS}切分拼掰碎剪割成]){_ZH_AMOUNT}(?:来|多)?\s?"
        rf"(?:元(?![素化旦宵老首气件年月])|{_KUAI}|美元|美金|欧元|英镑|日元|港币|港元|澳元|人民币)",
        rf"(?:人民币|rmb)\s?{_ZH_AMOUNT}",
        # "五块五毛", "九块九": yuan and jiao.
        rf"(?<![切分拼掰碎剪割成])[\d{_ZH_NUMERALS}]+块[\d一二三四五六七八九](?:毛)?",
        # A bare figure in hundreds or thousands closing a clause: "换屏幕三百五", "给您算四百五".
        rf"(?<![\d{_ZH_NUMERALS}第])[一二两三四五六七八九十]+[百千万][零一二两三四五六七八九十百千]*$",
        r"\d[\d,]*(?:\.\d+)?\s?(?:rmb|usd|eur|gbp|cny|hkd|jpy)(?![a-z])",
        # A price word and a bare figure ("报价是三千五", "学费一学期是一万二"); the figure must end
        # there, so "价格是一样的" is not a price.
        r"(?:价格|价钱|价位|售价|定价|单价|总价|报价|收费|费用|学费|运费|上门费|服务费|手续费|工费|一口价|团购价|优惠价|特价|现价"
        r"|定金|订金|押金|尾款|首付|租金)"
        rf"(?:[^,.!?;:{_CJK}]?|[{_CJK}]{{0,4}}?(?:是|为|交|付|收|要))(?:就是|只要|只需|仅|才|都是|一共|总共|大概|大约|约)?\s?"
        rf"{_ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{_CJK}]|\s*[元块钱起吧呢啊哦了的哈]|左右|上下|每|一(?:个|位|件|次|斤|套|晚|份|人))",
        r"打?[一二三四五六七八九\d.]{1,3}折(?![叠腾旧返合])|半价|买[一二三\d]送[一二三\d]|满\s?\d+\s?减\s?\d+",
        rf"(?:优惠|降价|降|便宜|减价)(?:到|至)\s?{_ZH_AMOUNT}|便宜(?:整整|了)?\s?{_ZH_AMOUNT}|收(?:您|你)\s?{_ZH_AMOUNT}"
        rf"|按\s?{_ZH_AMOUNT}\s?(?:元|块)?算",
        # A rate with a bare figure: "每次一百二", "每人68".
        rf"每(?:次|个|位|人|件|小时|天|晚|平米|平方米|平|斤|公斤|页|套|节课|节)\s?{_ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{_CJK}]|\s*[元块钱起吧呢啊哦了的哈]|左右)",
        r"免费(?:为|给|帮|替)(?:您|你)|(?:为|给|帮|替)(?:您|你)免费|不收(?:您|你)?的?(?:任何)?(?:钱|费用?)",
        rf"(?:一共|总共|合计)\s?{_ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{_CJK}]|\s*[元块])|就这么定了|"
        r"(?<![切分拼掰碎剪割成\d])\d{3,}(?:,\d{3})*(?:\.\d+)?\s?块|最低价|给(?:您|你)包干|不会再加钱|不(?:再)?加钱|"
        r"免费(?:寄|送|发)给|费(?:用)?我们(?:来)?出|\d+(?:\.\d+)?万落地|不收\S{0,2}费|^免费(?:的)?$|差价我们(?:来)?出|照\S{0,4}价格?付|"
        r"免(?:运费|配送费|服务费|上门费|手续费|单|押金)|费也不收|费不收|买[一二三四五六七八九十\d]+\S{0,3}送[一二三四五六七八九十\d]+|第\S{1,3}免费|送(?:您|你)(?:一(?:次|个|份|张|杯|束))?免费|免费(?:护理|升级|赠送|配送|送货|上门|送)",
        rf"(?:原|学生|会员|折后|活动|内部|批发|友情|成本|落地|到手|成交|最低|底|全包|包)价\s?(?:是|为)?\s?{_ZH_AMOUNT}|立减\s?{_ZH_AMOUNT}"
        rf"|(?:给(?:您|你))?再?让\s?{_ZH_AMOUNT}|给(?:您|你)算\s?{_ZH_AMOUNT}|(?:给(?:您|你))免(?:了|掉)"
        rf"|(?:只要|只需|仅需)\s?{_ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{_CJK}]|\s*[元块])",
    ],
)
_PRICE_MATCH: Final = re.compile(r"\b(?:we can|we'll|we will|i can|i'll) match (?:the|that|their|this|your) price\b")
# A figure from the past: an old invoice, last year's repair.
_PAST_PRICE: Final = re.compile(
    r"\b(?:invoice|receipt)s? (?:from|showed|shows|said|says|dated|listed)\b|以往|以前|上个月|之前|已经收到|已收到|收到了|卖出去了|"
    r"\blast (?:year|time|month|visit|season|week)\b|\badvertised\b|\bin the past\b|\bused to\b|\bwe had\b|\bthere was\b|当时|那时|做过|那年|那会|刚开业|\bshowed\b|\b(?:19|20)\d\d (?:price|prices|list|rate|rates|menu|catalogue)\b"
    r"|\b(?:sent|emailed|issued) (?:you )?(?:an |the )?invoice\b|\b(?:app|website|site|menu|catalogue) (?:currently )?(?:lists|shows|says)\b"
    r"|\bcurrently lists\b|\bon (?:the|our) website\b|上一季|上季|往年|\bin (?:19|20)\d\d\b|\bfrom (?:19|20)\d\d\b|去年|上次|(?:发票|收据)(?:上|显示)|已\S{0,3}支付|(?:19|20)\d\d年(?:时|那时|的时候|的价格|的报价|的发票|\S{0,3}吊牌|\S{0,3}价目)|吊牌上"
)
# The figures are called an estimate, not a quote, anywhere in the sentence.
_ESTIMATE: Final = re.compile(
    r"\bnot (?:a|an official|a firm|a binding) quote\b|\b(?:only |just )?(?:an estimate|a rough estimate)\b|\bballpark\b"
    r"|只是(?:个)?估计|不是报价|仅供参考|作个参考|只能参考|只是参考|具体价格要|价格要.{0,12}(?:才能定|确定)|以.{0,8}报价为准"
    r"|\b(?:give you|gives|confirm|tell you) the (?:exact|final|actual) price\b|\b(?:exact|actual) price (?:once|after|when)\b"
    r"|\b(?:only )?a rough guide\b|\b(?:an|the) exact price\b|\bfinal (?:figure|price) depends\b|\bconfirmed by the owner\b"
    r"|差别很大|差异很大|具体得?由|不等|\bthe owner will confirm the (?:figure|price|amount|cost)\b|\b(?:prices?|rates?) start(?:s|ing)? (?:from|at)\b"
)
_NEXT_TIME: Final = re.compile(r"\bnext\b|\bthis time\b|下次|下回|这次|本次")
# The customer's own figure, not ours.
_CUSTOMER_FIGURE: Final = _Patterns.of(
    latin=[
        r"budget|\byou (?:paid|mentioned|said|spent|offered|suggested|picked|chose|saw|found|read|heard)\b"
        r"|\byour (?:offer|payment|receipt|balance|voucher)"
    ],
    chinese=[r"预算|(?:您|你)(?:提到|说的|付了|支付了|已付|已支付|出价|给的|看到的|支付的|付的|交的)"],
)

# --- deadline --------------------------------------------------------------------------------

_DL_TIME: Final = _Patterns.of(
    latin=[
        r"\b(?:within|in|inside|under|after|less than|no more than|at most|max(?:imum)?|takes?|taking|only|just|is|are|:)\s+"
        rf"(?:the next |a maximum of |only |just |about |around |roughly |approximately )?{_EN_N} {_EN_UNIT}\b(?! (?:a|per"
        rf"|each)\b)",
        rf"\b{_EN_N}[- ](?:hour|day|week)s? (?:delivery|shipping|turnaround|dispatch|service)\b",
        r"\b(?:by|before|no later than|not later than)\s+(?:the |this |next |your )?(?:end of (?:the |this |next )?(?:day"
        r"|week|month|year)|"
        rf"tomorrow|tonight|today|{_WEEKDAY_ANY}|\d{{1,2}}{_ORD}\b|weekend|christmas|easter|new year|holidays?|{_CLOCK}|{_DATE}|next (?:week|month)"
        rf"|then|that time"
        rf"|eod|end of play(?: {_WEEKDAY})?"
        rf"|close of business)\b",
        r"\bin time for\b|\bin a jiffy\b|\bin no time\b|\bin a flash\b|\bbefore you know it\b|\bwhile[- ]you[- ]wait\b",
        r"\b(?:within|in|under) \d+ ?(?:h|hrs?|mins?)\b|\b(?:by|before) \d{1,2}(?::\d\d)?(?= *(?:$|[,.!?;]|sharp|on|today"
        r"|tomorrow|tonight))",
        # A clock time or a weekday on its own: "at 7am", "at 12:30 sharp", "pickup: thursday".
        r"\bfrom \d{1,2}(?::\d\d)?\s?(?:am|pm)\b",
        r"\b(?:in|over|round) now\b|\bwhen you (?:check in|arrive|get there|land)\b|\bon arrival\b|"
        rf"\bafter {_CLOCK}|\b{_CLOCK} sharp\b|\bfrom (?:tomorrow|next week|{_WEEKDAY_ANY})"
        r"|\bbefore (?:the|your) \w+ (?:arrives|arrive|starts|start|opens|begins|leaves)\b|\bbefore (?:the|your) (?:\w+'s )?"
        r"(?:first )?(?:recital|wedding|party|event|opening|trip|exam|meeting|flight|birthday|session|lesson|class|appointment)\b"
        r"|\bbefore you (?:open|leave|arrive|go|start)\b|\b(?:tmrw|tmr|tomoz|2day|2nite|tonite)\b|(?<=arrive )"
        + _WEEKDAY
        + r"|(?<=arrives )"
        + _WEEKDAY,
        # Not opening hours ("we open at 9am").
        rf"(?<!open )(?<!opens )(?<!close )(?<!closes )(?<!closed )(?<!from )(?<!until )\bat {_CLOCK}"
        rf"|(?<=: ){_WEEKDAY_ANY}|\b{_WEEKDAY_ANY} (?:at )?{_CLOCK}",
        rf"\b(?:tomorrow|tonight|today|this (?:morning|afternoon|evening|week|weekend|month)|next (?:week|month|{_WEEKDAY})|"
        rf"(?:on|this|next) {_WEEKDAY}|on {_DATE}|first thing|later today|right away|immediately|straight away|at once|on time|"
        r"same[- ]day|(?:the )?same (?:afternoon|morning|evening|night|week)|next[- ]day|overnight|within (?:the|this) (?:hour|day|week|month))\b",
    ],
    chinese=[
        rf"{_ZH_N}\s?(?:个(?:工作日|月|小时|钟头|星期|礼拜)|工作日|天|日|小时|钟头|分钟|周|星期|礼拜)(?:之内|以内|内|之后|以后|后|左右)?",
        r"今天|今日|今晚|今早|明天|明日|明早|明晚|后天|当天|当日|次日|隔天|隔日|第二天|当场|寒假|暑假",
        r"(?:本|这|下下|下)个?(?:周|星期|礼拜)[一二三四五六日天]?|(?:周|星期|礼拜)[一二三四五六日天]|周末",
        rf"月底|月初|月中|月末|年底|年末|(?<![\d{_ZH_NUMERALS}])年前|本月|这个月|下个月|(?:本|这)?周内|月内|年内|(?:下班|关门|开门|午饭|中午|天黑)(?:前|之前)|到时候|届时",
        r"(?:春节|过年|国庆|中秋|端午|元旦|圣诞|五一|十一|节|放假|假期|开学)(?:节)?(?:前|之前|以前)",
        rf"{_ZH_N}月{_ZH_N}(?:日|号)|{_ZH_N}(?:日|号)(?=$|前|之前|以前|当天|送|发|到|寄|交|完|给)|\d+\s?h\s?(?:内|以内|之内)",
        rf"{_ZH_N}点(?:钟)?(?:前|之前|以前)|{_ZH_N}点(?:钟|半|{_ZH_N}分)?|早上|傍晚|清早|一早|(?:到|来|开始|出发)之前|马上|立刻|立即|即刻|按时|准时|如期|上午|下午|晚上|中午",
    ],
)
_DL_VERB: Final = _Patterns.of(
    latin=[
        r"\b(?:deliver(?:s|ed|ing|y|ies)?|ship(?:s|ped|ping|ment)?|dispatch(?:es|ed|ing)?|sends?|sent|post(?:ed)?"
        r"|mail(?:ed)?)\b",
        r"\b(?:arriv(?:e|es|ed|ing|al)|reach(?:es)? you|get to you|get (?:it|them|this|that|everything|your \w+) (?:to"
        r"|back)|back with you)\b|\bget (?:\w+ ){1,3}to you\b|\be-?mail(?:s|ed)?\b",
        r"\bhave (?:everything|it all|it|them|all of it) (?:at|in|to) your\b|\b(?:it|they)(?:'ll| will) be back\b|\bback on the road\b"
        r"|\bleave with (?:it|them|your \w+)\b|\b(?:fit|fitted|swapped|replaced|groomed|edited|serviced|file|filed|submitted|lodged|set up|courier(?:ed)?"
        r"|decorated|tuned|cleaned)\b|\b(?:be )?waiting for you\b|\bbe (?:here|round|waiting)\b|\bhang\b|\bin and out\b|\bmatched\b|\bwill be back\b|\b(?:is|are) booked (?:for|on|in)\b|\bbe in (?:the|our) (?:shop|store|office|workshop)\b"
        r"|\bis confirmed\b|\b(?:lesson|appointment|slot)"
        r" booked\b|\bland in your\b|\brestored\b|\bget you (?:the|a|your)\b|\b(?:ride|take|drive|wear) (?:it|them) home\b"
        r"|\bwe'll see you\b|\bhave (?:the|your) (?:\w+ ){0,2}\w+ in (?:your|the)\b"
        r"|\byou(?:'ll| will) be (?:out|done|finished|ready)\b|\bwalk out (?:with|wearing|in)\b|\b(?:locked|booked) in\b",
        r"\bbe (?:there|with you|at your \w+|at the \w+|live)\b|\bgo(?:es)? (?:out|live)\b|\bin your (?:inbox|hands)\b"
        r"|\bon your doorstep\b",
        r"\b(?:you'll|you will|you can|you'd) (?:get|receive|have) (?:it|them|this|that|your \w+|the \w+)\b|\breceive\b",
        r"\bhave (?:it|them|this|that|your \w+|the \w+) (?:ready|done|fixed|repaired|back|delivered|finished|altered"
        r"|cleaned|running|working|going)\b",
        r"\b(?:ready(?! to\b)|done|finish(?:ed|es)?|complete(?:d|s)?|fix(?:ed|es)?|repair(?:ed|s)?|install(?:ed|s|ation)?"
        r"|process(?:ed)?)\b",
        r"\b(?:refund(?:ed|s)?|credited|turnaround|collect(?:ed)?|pick(?:ed)? (?:it |them |you )?up|pick-?up|back in stock"
        r"|restock(?:ed)?)\b",
        r"\b(?:sorted|hand(?:ed)? over|hung|altered|printed)\b",
        r"\b(?:we|technician|engineer|installer|someone|courier|driver|plumber|fitter|team)(?:'ll| will| can| is going to"
        r"| are going to)? "
        r"(?:come|visit|be there|stop by|drop by|come round|come over)\b",
    ],
    chinese=[
        r"送达|送到|送过去|送去|送上门|送货|派送|配送|寄到|寄出|寄过去|寄给|到货|到账|到达|抵达|到手|发货|发出|发走|发给|出货|出库"
        r"|发到|发至|发送|发(?:您|你)",
        r"(?:搬|洗|剪|装|拍|印|修|改|剃|补|刷|喷|染|烫|写|译|画|调|换|做|布置|搭|摆|弄|擦|搞|化|裱|扫|匹配|排|收拾)(?:完|好)|落地|到场|交房|交钥匙|约在|给(?:您|你)约|出齐|公布|安排在|打款|留到|保留到|换上|装上|送回|(?<=到时候)见|接(?:您|你)|等(?:您|你)|递交|提交|送交|快递|打扫干净|扫干净|戴上|用上|开课|上课|接回|接走|领回|领走|带回家|取走",
        r"(?<=[午天上点时后])(?:就|能|会|可以)好(?=$|了|啦|[,.!?;])",
        r"完成|完工|竣工|做好|做完|弄好|搞定|修好|修完|处理|办好|办完|办妥|交付|交货|交给|上门|安装|装好|改好|备好|准备好|出来|出结果",
        r"退款|退到|退还|退回|返还|补发|重发|(?:能|会|就|可以|即可)收到|提车|提货|取货",
        r"(?:能|可以|就能|即可|就可以)来?(?:取|拿|提)(?!消|决|款)|来(?:取|拿|提)(?!件|消|决|款)|(?:办|批|拿|做)下来|做出来",
        r"到(?:您|你)\S{0,4}?(?:家|府上|公司|手上|手里|楼下|那里|那儿|小区|门口|单位|店里)|到家",
        # 到 is "arrive" only where it does not start a range or a place: not "周一到周五", "到店".
        r"(?:能|就|会|可|即|必|准|肯定|一定|可以)到(?![店门这那里周星礼下上晚早中\d零一二两三四五六七八九十几])",
        r"到(?=$|[\s,.!?;:)]|了|哦|啊|的|呢|吧|哈)",
    ],
)
_HEDGE: Final = _Patterns.of(
    latin=[
        r"\b(?:usually|typically|normally|generally|in most cases|mostly|often|might|could|probably|possibly|perhaps|maybe"
        r"|likely|most|"
        r"hopefully|estimated?|expected|try|trying|aim|aiming|hope|should|tends?|on average|depend\w*|vary|varies|subject to|"
        r"if possible|i think|i believe|i guess|not sure|as soon as possible|asap|ideally|chance|usual|predict\w*)\b"
        r"|(?<!\d )\bmay\b(?! ?\d)|\bsome (?:students|customers|clients|people|of our)\b",
        r"\b(?:about|around|approximately|approx|roughly) (?=\d|a |an |one|two|three|four|five|six|seven|ten|noon|midday"
        r"|the end|tomorrow|next|mid)",
    ],
    chinese=[
        r"一般|通常|正常情况|大概|大约|(?<!预)约(?![好了定见会过到在])|预计|预估|可能|也许|或许|估计|尽量|争取|尽快|应该|差不多|大多|多数|平均|参考",
        r"(?<!电)视(?!频)|取决于|看情况|要看|得看|以.{0,12}为准|希望|力争|左右|最快|具体(?:几|什么时候|哪天|多久)",
    ],
)
# A trailing clause that hedges the time or makes it depend on something else: "..., usually",
# "..., depending on the carrier", "...，要看您的地址", "...，一般来说".
_TRAILING_HEDGE: Final = _rx(
    r"(?:it |that |this )?(?:all )?(?:depends|depending|varies|subject to)\b|(?:具体)?(?:还)?(?:要|得|需要)?(?:看|取决于|视)|以.{0,12}为准"
    r"|(?:usually|typically|normally|generally|probably|possibly|hopefully|maybe|perhaps|ideally|in most cases|if possible|"
    r"if all goes well|all being well|i think|i hope|i believe|i guess|more or less|give or take)(?: at least| though"
    r"| anyway)?$"
    r"|(?:一般|通常|大概|可能|也许|应该|估计|差不多|顺利的话|如果顺利的话|正常情况下)(?:吧|的话|来说)?$"
)
# A clause that only takes back what came before it in the sentence.
_DISCLAIMER: Final = _rx(
    r"(?:i |we )?(?:honestly |really |simply )?(?:can't|cannot|can not|won't|couldn't|am not able to|'m not able to|are not able to"
    r"|'re not able to|'m unable to|am unable to) "
    r"(?:guarantee|promise|confirm|be sure of)(?: (?:it|that|this|anything|the date|the time))?(?: though)?"
    r"(?: (?:until|before|till|unless) .*)?$"
    r"|(?:the )?(?:owner|manager|team|shop)(?: will| can| must| has to| needs to)? confirms?\b.*$|no promises$|(?:that's|that is|it's|it is) not (?:guaranteed|a promise)$"
    r"|(?:我|我们)?(?:也|还|并)?(?:无法|不能|不敢|没法|没办法|不)(?:完全)?(?:保证|承诺|确定)(?:的)?$|不一定$"
)
_DISCLAIMER_HINTS: Final = re.compile("guarantee|promise|confirm|sure|保证|承诺|确定|一定")
# The customer's wish or task ("do you need it by Friday?", "请在七天内完成付款"), not our promise.
_CUSTOMER_SIDE: Final = _Patterns.of(
    latin=[
        r"\bplease\b(?! (?:note|rest assured|be assured|don't worry|do not worry|be aware|know|trust|bear in mind|expect))",
        r"\byou (?:need|must|have|will need|'ll need|ought) to\b|\b(?:do|does|did|will|would|can|could|are|were) you\b",
        r"\bwhen (?:do|would|will|should|can) you\b|\bif you (?:need|want|would like|prefer|require|wish|'d like)\b"
        r"|\byou(?:'d| would) like\b",
        r"\bhow (?:soon|quickly|fast) (?:do|would|will) you\b",
        r"\b(?:ask|asks|asked|asking) (?:about|for|whether|if)\b",
    ],
    chinese=[
        r"(?<![申邀宴聘提])请(?!放心|您放心|相信|注意|知悉|留意|假|客)|麻烦(?:您|你)|需要(?:您|你)|是否需要|需不需要|要不要",
        r"(?:您|你)(?:确定|真的)?(?:是否|是)?(?:需要|要|得|必须|希望|想要|想|打算|方便|计划|预计)(?!的)",
    ],
)
_PAST_OR_ROUTINE: Final = _Patterns.of(
    latin=[
        r"\b(?:already|has been|have been|was|were|had|last|yesterday|ago|every|each|daily|weekly|we sent|we shipped)\b"
        r"|(?<!be )\b(?:arrived|landed)\b"
    ],
    chinese=[r"已经|已|刚刚|刚才|昨天|上周|每"],
)
_CONDITION: Final = re.compile(r"如果|要是|假如|万一|假设")
_PAST_DONE: Final = re.compile(r"是[^，,。]{0,12}(?:发出|寄出|送到|送达|做好|完成|到账)的")
# "every morning at 7:30 sharp", "每天早上七点半准时": a routine with an exact time is still a promise.
_ON_THE_DOT: Final = re.compile(r"\bsharp\b|\bon the dot\b|\bwithout fail\b|准时|按时")
# Verb and time further apart than this are not read as one promise.
_MAX_DEADLINE_GAP_TOKENS: Final = 8
_TOKEN: Final = re.compile(rf"[a-z0-9']+|[{_CJK}]")

# --- outcome ---------------------------------------------------------------------------------

_OUTCOME_VERB = (
    r"(?:work|works|pass|succeed|win|hold|last|fix|solve|resolve|cure|heal|fit|clear|remove|improve|help|come out|"
    r"be (?:fine|ok|okay|approved|accepted|granted|fixed|solved|resolved|successful|perfect|returned|refunded|repaid"
    r"|paid back|covered)|"
    r"get (?:a |your |the |full |a full )*(?:refund|money|approval|visa|job|loan|deposit))"
)
_OUTCOME: Final = _Patterns.of(
    latin=[
        r"\bguarantee(?:s|d)?\b(?! (?:terms|conditions|policy|period|card|details|certificate|documents?|leaflet|questions?)|(?: on| for) (?:\w+ ){1,3}is (?:the manufacturer|theirs|provided))|\bguaranteeing\b|\bpromise[sd]?\b|\bassure you\b|\btrust me\b",
        r"\b(?:we|i)(?:'ll| will| can| shall| do)? (?:always )?(?:ensure|make sure|make certain)\b",
        r"\byou have my word\b|\bgive you my word\b|\bmy word (?:on|for) it\b|\btake my word\b|\bno questions asked\b",
        r"\b(?:we|i)(?:'ll| will| shall)? (?:refund|reimburse|compensate) you\b",
        r"\b(?:100|one hundred) ?(?:%|percent|per cent) (?:sure|certain|guaranteed|safe|effective|success)",
        r"\b(?:completely|absolutely|totally) (?:sure|certain)\b",
        rf"\b(?:definitely|certainly|surely|absolutely|undoubtedly) (?:will |going to |gonna |can )?{_OUTCOME_VERB}\b",
        rf"\b(?:will|'ll|going to|gonna|is|are|can) (?:definitely|certainly|surely|absolutely|undoubtedly) {_OUTCOME_VERB}\b",
        r"\b(?:is|are|be|you're) (?:certain|sure|bound) to\b|\bsuccess is (?:certain|assured|guaranteed)\b|\bfor sure\b",
        r"\bno doubt\b|\bwithout (?:a |any )?doubt\b|\bundoubtedly\b",
        r"\b(?:can't|cannot|can not|won't|will not|never) (?:fail|go wrong|lose)\b|\bnothing (?:can|will|could) go wrong\b",
        r"\b(?:zero|no) risk\b|\brisk[- ]free\b|\b(?:won't|will not) be disappointed\b",
        r"\bas good as (?:approved|done|yours|guaranteed|granted|won)\b",
        r"\byou(?:'ll| will) (?:definitely |certainly |surely )?(?:get|receive|be given|have) (?:a |your |the |full "
        r"|a full |all |every )*"
        r"(?:refund|replacement|compensation|money back|deposit back|approval|visa|job|loan)\b",
        r"\b(?:will|shall) be (?:approved|accepted|granted|reimbursed|resolved in your favou?r)\b",
        r"\byou(?:'ll| will) (?:pass|win|succeed|get the job|be approved|be accepted)\b|\bwill (?:rule|decide) (?:for"
        r"|in favou?r of) you\b",
        # Lasting results: "it won't break again", "you won't have any more leaks", "this fix is permanent",
        # "it will cure your back pain for good", "your grades will go up".
        r"\b(?:won't|will not|will never|never) (?:break|leak|crack|fail|fade|peel|rust|come off|fall off|come back|happen"
        r"|drip|squeak|stick) again\b",
        r"\b(?:you|he|she|it|they|your \w+)(?:'ll| will)? (?:won't|will not|will never|never) (?:have|get|see|notice|need)"
        r" (?:any more|anymore|another|any other|any further|a single)\b|\bno (?:\w+ )?problems whatsoever\b"
        r"|\b(?:hear|see|sleep|walk|run|feel) (?:\w+ ){0,2}(?:clearly|well|normally|properly) again\b|\bwill be fully (?:healed"
        r"|recovered|restored|cured|fixed)\b|\bwill (?:lift|come out|disappear|go) completely\b|\bwe'll keep coming back until\b"
        r"|\bthere(?:'ll| will) be no (?:complaints|problems|issues|leaks|delays)\b|\beveryone will (?:love|be)\b|\b(?:insurer"
        r"|insurance|warranty|manufacturer) will (?:cover|pay|replace|refund)\b"
        r"|\b(?:we'll|we will|i'll|i will) 100 ?%|\bworks every time\b|\b(?:will|'ll) absolutely\b|\bno way (?:it|that|this) (?:\w+s|will)\b|\bwill (?:\w+ ){1,2}perfectly\b"
        r"|\bwill keep (?:\w+ ){0,6}for (?:at least )?(?:\w+ )?(?:years|months|life)\b|\byour (?:child|son|daughter|kid|dog"
        r"|students?) will (?:reach|get|pass|learn|become|speak|read)\b|\bwill match (?:\w+ ){0,4}exactly\b"
        r"|\byou(?:'ll| will)? (?:won't|will not|never) need (?:a|another|any)\b|\bwill be completely (?:quiet|silent|dry|clean"
        r"|safe)\b|\byou won't hear\b|\bwill be (?:removed|fixed|repaired|cleared|restored) (?:completely|fully|entirely)\b",
        r"\b(?:the (?:fix|repair|result|solution|treatment|change)|it|this|that) (?:is|will be) permanent\b|\bit's permanent\b|\bpermanently (?:fix|solve|cure|remove)\w*\b",
        r"\b(?:will|'ll|going to) (?:cure|heal)\b|\bfor good\b(?! (?:reasons?|measure|causes?))",
        r"\byour (?:\w+ )?(?:grades?|marks?|scores?|results?|sales|revenue|rankings?|skin|hair|weight|pain|symptoms?|acne"
        r"|spots?|wrinkles|english|chinese|fluency|confidence|business) will (?:go up|improve|rise|increase|double|triple"
        r"|disappear|vanish|clear up|be gone)\b",
        r"^no (?:question|doubt)(?: about it)?$",
        r"\b(?:won't|will not|will never|never) (?:\w+ )?(?:break|leak|crack|fail|fade|peel|rust|come off|fall off|come back"
        r"|happen|drip|squeak|stick|slip|freeze|crash|get stuck|break down|go wrong|play up|wobble|tear|chip|split|hurt|bother you"
        r"|frizz|tangle|shrink|stain) again\b|\bnever (?:have|need) to (?:\w+ ){0,3}again\b|\b(?:leak|problem|crack|damp|pain|fault|noise)s? (?:won't|will not"
        r"|will never) (?:come back|return|recur)\b",
        r"\b(?:will|'ll) (?:stay|remain|keep|last)(?: \w+){0,2} (?:for (?:\w+ ){0,3}(?:days|weeks|months|years|decades|life)|forever"
        r"|a lifetime)\b|\bwill last (?:you )?(?:the life|a lifetime|forever)\b",
        r"\bwill (?:look|be|feel|seem|turn out|come out) (?:brand new|like new|as good as new|good as new|perfect|flawless)\b",
        r"\bwill come out (?:completely|fully|entirely|100)|\b(?:will be|is|are) (?:completely |totally )?gone (?:after|for good|in)\b"
        r"|\bwill (?:clear up|get rid of|remove|cure|fix|solve)\b.{0,30}\bcompletely\b|\byou(?:'re| are) safe\b"
        r"|\bwill find nothing\b|\bwill pass (?:the |your |its |first )?(?:\w+ ){0,2}(?:inspection|test|exam|audit|check|review)\b",
        r"\b(?:will|'ll) be (?:completely|totally|perfectly|absolutely) (?:fine|safe|ok|okay|healthy|normal|happy|comfortable)\b|\byou will too\b"
        r"|\b(?:completely|totally|100 ?%) [a-z]+-free\b|\bsafe for (?:your|him|her|them)\b|\bwill \w+ perfectly\b|\b(?:i've|we've|i have|we have) made sure\b|\byou(?:'ll| will) definitely get\b|\bperfect fit\b"
        r"|\bno (?:further|more) (?:adjustments?|repairs?|visits?|treatments?|fittings?) (?:will be )?needed\b",
        r"\bwill never (?:crack|break|leak|fail|fade|rust|tear|shrink|peel)\b|\bnothing will (?:be damaged|be broken|be lost|break"
        r"|get (?:damaged|broken|scratched|lost))\b|\btake full responsibility\b|\bwe(?:'ll| will) recover all\b|^100 ?%$"
        r"|\b(?:claim|application|request|refund|visa|appeal) (?:is|has been) (?:approved|accepted|granted)\b"
        r"|\byou(?:'ll| will) be (?:pain|symptom|debt|stress|worry|pest|damp)[- ]free\b|\bwhile[- ]you[- ]wait (?:job|service"
        r"|repair)\b",
        r"\b(?:returned|refunded|repaid|paid back) in full\b|\bevery single (?:visit|time|day|session)\b"
        r"|\b(?:that|the|this|your) (?:issue|problem) is (?:solved|fixed|gone|resolved)\b|\bevery (?:beginner|student|customer"
        r"|client|learner) does\b|\bwill keep (?:\w+ ){0,4}(?:for years|forever|for life)\b|\b[a-z]+-free for (?:years|life|ever)\b"
        r"|\bwill \w+ 100 ?%|\bit's definitely\b|\bdefinitely (?:the|a|your)\b|\bwill fix your (?:\w+ )?problem\b"
        r"|\bwill stop (?:leaking|smoking|squeaking|dripping|hurting|itching|rattling|creaking)\b"
        r"|\b(?:he|she|they|your \w+)(?:'ll| will) pass\b|\bwhatever the weather\b|\bwe never cancel\b|\bnobody will (?:ever )?"
        r"(?:know|notice|see|tell)\b|\bwill be (?:reading|speaking|swimming|playing|driving|writing) (?:fluently|confidently|well)\b"
        r"|\bwon't regret\b|\bfit (?:you )?like a glove\b|\b(?:keys?|noise|smell|stain|mould|mold|damp|crack|rash|symptoms?"
        r"|issue|fault)s? (?:won't|will not|will never) (?:come back|return|recur)\b|\bwill have the (?:best|greatest|time of)\b"
        r"|\b(?:get|give) you a (?:full )?refund\b|\bwon't show at all\b|\bwill grow back\b|(?<!choice )(?<!decision )(?<!call )\bis yours\b"
        r"|\b(?:embassy|consulate|bank|court|council|authorities|authority|university|insurer|examiner|inspector|tax office)"
        r" will (?:accept|approve|grant|pass|allow)\b",
        r"\bwill never (?:come back|return|recur)\b|\byou can (?:count|rely|depend) on (?:that|it|this|us)\b",
        r"\b(?:zero|0 ?%) chance (?:of|that) (?:it|its|the|this|that|your|them|they|anything)\b|\bstand (?:behind|by) (?:\w+ ){0,3}100 ?%|\bso will you\b|\byou(?:'ll| will) (?:be|become)"
        r" fluent\b",
    ],
    chinese=[
        # Not the purpose ("为了保证您的账户安全"), a deposit (保证金) or a request (请确保).
        r"(?<!为)(?<!为了)保证(?!金|书)|承诺(?!书)|(?<![请为])(?<!为了)确保|担保(?!金)|保(?:您|你)满意",
        # Not "must" (一定要), "some" (有一定难度, 一定的) or "please be sure to" (请一定).
        r"(?<!有)(?<![^申]请)(?<!^请)一定(?!要|的|程度|时间|范围|数量|比例|之)",
        r"包过|包(?:您|你)(?!的)|包满意|包成功|包通过|包退|包换|包赔|包治|包教包会|包在我身上|包票|稳过|稳赢|稳赚|稳拿|稳了|稳稳的|稳操胜券",
        r"(?:肯定|绝对|必定|必然|(?<![标水批精瞄对基])准|保准|准保|铁定|百分之百|百分百|100%)(?:就|都|也)?"
        r"(?:好了|没了|变清|变好|改善|提高|提升|见效|看不出|不留|没有任何|打不开|撬不开|弄不坏|不可能|不透光|不透|不漏|不掉色|合身|合适|安全|没事|不含|能|会|可以|没问题|行|成功|通过|过关|到|退|赔|满意|有效|治好|修好|不会|批|拿到|考上|消失|去除|去掉|见效|恢复|痊愈"
        r"|康复|解决|合格|达标)",
        r"(?:跟|和|像)新的一(?:模一)?样|焕然一新|(?:一辈子|永远|再也|终身|以后都)(?:都|也)?不会(?:再)?|不会再(?:坏|漏|歪|掉|裂|复发|反弹|出现|发生|感染|疼|痛|发绿|发黄|发霉|有)|绝不会",
        r"(?:能|会|可以)?完全(?:去掉|去除|清除|消失|恢复|修好|修复|解决)|看不出任何|不会换人|不换人|(?:几年|多年|终身)都?不会(?:有|再)?"
        r"|保(?:一|两|三|半|\d+)年|坏了(?:直接)?(?:给(?:您|你))?换新|问题已经解决|不会再让|(?:一点都|完全|根本)看不出|谁都看不出|没人看得出|就会长(?:齐|好|出来)|不管\S{0,6}都|从不取消"
        r"|照常(?:起飞|营业|进行)|就能流利|能流利地|(?:会|能)(?:明显|完全|彻底)(?:消失|改善|好转)|一次就能(?:彻底)?(?:去除|去掉|解决|修好|治好)"
        r"|至少能(?:升|降|省|提高)|[一二三四五六七八九十百千\d几多]+年都不会|绝对(?:纯天然|正品|正宗|原装)|(?:费用|损失|运费)(?:全部|都)?由我们(?:来)?(?:承担|负责|出)"
        r"|已经给(?:您|你)(?:撤销|取消|退|免|办好)|是(?:您|你)的了?$|不会被别人|就不会(?:再)?(?:往|漏|坏|倒|冒|卡|出|掉|疼|痛)",
        r"也不会(?:卡|坏|漏|掉|裂|生锈|褪色|变形)|彻底不(?:疼|痛|痒|漏)|彻底(?:好了|治好|根治|解决)|照价赔偿|原价赔偿|全额(?:退款|退还|退费|赔偿|抵扣)"
        rf"|(?:肯定|保证|绝对)(?:在|不超过|低于|少于)\s?{_ZH_N}|免费(?:重印|重做|重拍|重修|更换|补寄|重寄)",
        r"申请(?:已经|已)?(?:通过|批准|批下来)|(?:会|就)给(?:您|你)(?:换新|退款|退钱|补发|赔)",
        r"(?:一次|马上|立刻|很快)就?(?:能|会)好|全额退(?:给|还)?(?:您|你)|(?:绝对|肯定|保证)查不出",
        r"万无一失|零风险|没有(?:任何)?风险|毫无风险|可能性(?:是|为)?零|绝无问题|不会(?:有(?:任何)?)?问题|不会(?:再)?出(?:任何)?问题",
        r"不会失败|不会让(?:您|你)失望|放一百个心|跑不掉|跑不了|少不了(?:您|你)的|拍胸脯|拍着胸脯",
        r"(?:能|可以|会)(?:治好|治愈|根治)|药到病除|必(?:赢|胜|过|成|定)|无论如何(?:都|也)?(?:会|能|一定)",
        r"(?:我|我们)(?:很|非常)?确定(?:能|会|可以)|(?:准|肯定|绝对|铁定)成(?![本品员交为绩立])",
    ],
)
# The agent promising to pass a message on is its own job, not a commitment of the business.
_RELAY: Final = _Patterns.of(
    latin=[
        r"\b(?:pass|forward|relay|send|give|hand)\b(?: \w+){0,4} (?:on )?to (?:the |our )?(?:owner|manager|boss|team|staff"
        r"|shop)\b",
        r"\bpass (?:it|this|that|them|these|those|(?:the|your|this|that) (?:message|request|question|details|feedback|note"
        r"|comments?|information|info)) on\b|\blet (?:the owner|the team|the manager|them|him|her) know\b",
        r"\b(?:tell|inform|ask|remind|notify) (?:the owner|the manager|the team)\b|\bcheck with (?:the owner|the manager"
        r"|the team)\b",
        r"\bthe owner (?:sees|reads|gets|knows|receives|hears)\b",
    ],
    chinese=[r"转告|转达|反馈给|告诉老板|通知老板|问(?:一下|问)?老板|跟老板确认|请示老板|记下"],
)

# --- negation scope --------------------------------------------------------------------------

# Phrases that look negative but refuse nothing; removed before looking for a negation.
_NOT_A_NEGATION: Final = _Patterns.of(
    latin=[
        r"\b(?:don't|do not) (?:worry|hesitate)\b|\bno (?:worries|problem|question|doubt|matter)\b|\bnot (?:a problem"
        r"|to worry|only)\b",
        r"\bnever mind\b|\bwithout (?:fail|delay|a doubt|any doubt|question|exception)\b|\b(?:no|not) later than\b|\bwhy not\b",
        r"\bno (?:extra|additional) (?:cost|charge)\b|\b(?:can't|cannot|won't) (?:fail|go wrong|lose)\b|\b(?:zero|no) risk\b",
        r"\bwon't be disappointed\b|\b(?:won't|will not|never|not) (?:pay|cost|be charged|spend|be billed) (?:more|over|above)\b"
        r"|\b(?:no|not) more than\b",
    ],
    chinese=[
        r"不用担心|不要担心|别担心|不必担心|不用急|别急|不着急|不客气|不好意思|不过|不错|没关系|没问题|没错|不管|不论|无论|毫无疑问",
        r"不少|不同|不久|不仅|不但|不妨",
    ],
)
_NEGATION: Final = _Patterns.of(
    latin=[
        r"\b(?:not|no|never|nobody|no one|nothing|none|neither|nor|cannot|unable|impossible|hardly|refuse[sd]?"
        r"|decline[sd]?|without)\b",
        r"\b(?:whether|unsure|uncertain)\b|n't\b|\b(?:cant|wont|dont|doesnt|didnt|isnt|arent|couldnt|wouldnt|shouldnt"
        r"|hasnt|havent)\b",
        r"\b(?:hard|difficult|tricky) to\b|\b(?:wrong|irresponsible|unfair|misleading) (?:of (?:me|us) )?to\b",
        r"\b(?:confirm|check|ask|know|see|find out|tell)(?: \w+)? if\b",
    ],
    chinese=[
        r"不代表|并不代表|不是|并非|不算|不能|不可以|不可能|不会|不敢|不便|不好说|不确定|不一定|不保证|不承诺|不提供|不支持|不清楚|不知道|不了解|不太",
        r"无法|无权|没法|没办法|没有办法|没有|没|难以|很难|未必|不见得|说不准|说不好|做不到|给不了|从不|从来不|绝不|决不|并不",
        r"暂不|暂时不|未(?!来)|谁也|谁都|不(?=保证|承诺|包|确保|负责|担保|发|送|寄|到|退|收|完成|处理|上门|安装)",
        # Embedded questions ("能不能明天到，我得问一下") and a bare negator right before the match.
        r"能不能|会不会|可不可以|是不是|是否|能否|可否|有没有|行不行|(.)不\1|[不没未]$|不好打?$|不对\S{0,8}(?:作|做)(?:任何)?$|不[做作给打下](?:这种|这样的|这个|任何|[\u4e00-\u9fff]{1,3})?$|不了$|不起$",
    ],
)
# A refusal right after the promise word: "a guarantee is not something we give", "保证不了".
_NEGATION_AFTER: Final = _rx(
    r".{0,30}?(?:\b(?:is|are|was|were)(?: not|n't)\b|\bnot (?:something|possible)\b|\bimpossible\b)"
    r"|[^,.!?;]{0,8}?(?:不能|无法|没法|不敢|做不了|给不了|办不到|做不到|不是我能|说了不算|不行)|不了|不到|不起"
)

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
_NOT_WORD: Final = bytes(32 if chr(code) in '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~' else code for code in range(256))
_ASCII_WORD: Final = re.compile(r"[a-z0-9']+")


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


# Words someone else used, quoted as such: 您说的"保证学会", the so-called "guaranteed results".
_MENTION: Final = re.compile(
    r"(?:您说的|你说的|您提到的|你提到的|您看到的|你看到的|所谓的?|别家(?:说的|的)?|写的|印的|写着|印着|so-called"
    r"|you (?:mentioned|said|saw|quoted|read)(?: the)?|the (?:words?|phrase|slogan|claim|line|label|text)|(?:says|said|reads|read))"
    r'\s?"[^"]{1,60}"'
)


# A promise word the customer asked about, echoed as a question: "Guaranteed? I can't say that."
_ECHOED_QUESTION: Final = re.compile(
    r"(?:^|(?<=[.!?。！？]))\s*(?:guaranteed|a guarantee|guarantee|promise|保证|承诺|包过|包退包换|包退|包换|退款保证)(?: \w+){0,2}\s*[?？]"
)


# A word talked about as a word: "保证"这两个字我不能随便说.
_WORD_MENTION: Final = re.compile(r'"[^"]{1,10}"(?=\s?(?:这两个字|这个词|这几个字|两个字|这个说法|this word|the word))')


def _unquote_mentions(text: str) -> str:
    """Drop the quoted words of a mention, keeping who said them: a mention is not our promise.
    Quotation marks alone are not enough - an agent could put its own promise in quotes."""
    if "?" in text or "？" in text:
        text = _ECHOED_QUESTION.sub(" ", text)
    if '"' not in text:
        return text
    text = _WORD_MENTION.sub(" ", text)
    return _MENTION.sub(lambda m: m.group().split('"', 1)[0] + " ", text)


def _words(text: str) -> frozenset[str]:
    if text.isascii():
        return frozenset(text.encode("ascii").translate(_NOT_WORD).decode("ascii").split())
    return frozenset(_ASCII_WORD.findall(text))


def _clauses(sentence: str) -> list[_Clause]:
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
    for pieces in stretches:
        lead = ""
        for index, piece in enumerate(pieces):
            tail = pieces[index + 1] if index + 1 < len(pieces) else ""
            clauses.append(_Clause(piece, lead, tail, any(disclaimers[len(clauses) + 1 :]), estimate))
            lead = f"{lead} {piece}"
    return clauses


def _negated(text: str, start: int, end: int) -> bool:
    # A colon ends a negation's reach ("no, you won't pay more: the rate is 55 eur") but not the
    # clause, so "delivery: within 3 days" still reads as one promise.
    before = text[:start].rpartition(":")[2]
    if _NEGATION.search(_NOT_A_NEGATION.strip(before).rstrip()):
        return True
    return _NEGATION_AFTER.match(text[end:].lstrip()) is not None


# --- the three finders -----------------------------------------------------------------------


def _price_in(clause: _Clause) -> bool:
    text = clause.text
    if clause.estimate:
        return False
    matched = _PRICE_MATCH.search(text)
    if matched and not _negated(text, matched.start(), matched.end()):
        return True  # matching a figure the customer saw is quoting it
    for match in _PRICE.finditer(text):
        past = _PAST_PRICE.search(f"{clause.lead} {text}") and not _NEXT_TIME.search(text)
        if _CUSTOMER_FIGURE.search(text) or past:
            return False
        if not _negated(text, match.start(), match.end()):
            return True
    return False


def _deadline_in(clause: _Clause) -> bool:
    text = clause.text
    times = _DL_TIME.finditer(text)
    if not times:
        return False
    verbs = _DL_VERB.finditer(text)
    if not verbs or clause.disclaimed or _RELAY.search(text):
        return False
    if _PAST_DONE.search(text):
        return False  # "您的订单是5月12号发出的": done already, told as a fact
    if _CONDITION.search(text):
        return False  # "如果零件能按时到": a condition, not a promise (a condition in an earlier clause does not count)
    hedged = _HEDGE.search(text) or _HEDGE.search(clause.lead) or _TRAILING_HEDGE.match(clause.tail) is not None
    # "in about an hour, guaranteed": a guarantee next to the time makes it firm again.
    if hedged and not (_outcome_in(clause) or _outcome_in(_Clause(clause.tail))):
        return False
    for when in times:
        for what in verbs:
            first, second = (when, what) if when.start() <= what.start() else (what, when)
            if second.start() < first.end():
                continue  # the same words read as both verb and time
            gap = text[first.end() : second.start()]
            if len(_TOKEN.findall(gap)) > _MAX_DEADLINE_GAP_TOKENS:
                continue
            before = text[: first.start()]
            routine = _PAST_OR_ROUTINE.search(text[: second.start()]) and not _ON_THE_DOT.search(text)
            if _CUSTOMER_SIDE.search(before) or routine:
                continue
            if _negated(text, first.start(), second.end()) or _NEGATION.search(_NOT_A_NEGATION.strip(gap)):
                continue
            return True
    return False


def _outcome_in(clause: _Clause) -> bool:
    text = clause.text
    for match in _OUTCOME.finditer(text):
        if _RELAY.search(text):
            return False
        if _CUSTOMER_SIDE.search(text[: match.start()]) or _negated(text, match.start(), match.end()):
            continue
        return True
    return False


# --- gates -----------------------------------------------------------------------------------


def _literals(*words: str) -> re.Pattern[str]:
    # Every branch a literal, never a character class: only then does sre jump between candidate
    # first characters instead of trying each branch at each position (about 7x faster).
    return re.compile("|".join(re.escape(word) for word in words))


@dataclass(frozen=True, slots=True)
class _Gate:
    """A cheap necessary condition for a category, tried on each sentence before its clauses.

    The finders run long alternations with look-arounds; a set of English word forms, one
    character class and plain alternations are an order of magnitude cheaper, and most sentences
    open no gate.  Every alternative of the category's patterns needs one of these words or
    characters - keep them in step when a pattern changes; tests/test_guard.py checks on the
    corpus and the tables that the gates change no verdict."""

    words: frozenset[str]
    chars: re.Pattern[str] | None
    chinese: re.Pattern[str]
    # A figure glued to its unit ("30euros", "三天", "15号"): one token, so not in `words`.  Kept
    # apart from the alternations because sre scans fast only when every branch of an
    # alternation starts with a literal, and this pattern starts with a character class.
    numbered: re.Pattern[str] | None = None
    # Common words that matter only inside a phrase ("as good as", "you'll pass"): checked as
    # phrases so that every "good" and "pass" does not open the gate.
    phrases: tuple[str, ...] = ()
    # A second condition that must hold as well (a deadline needs a time and a verb).
    also: _Gate | None = None

    def opens(self, text: str, words: frozenset[str]) -> bool:
        return self._opens(text, words) and (self.also is None or self.also.opens(text, words))

    def _opens(self, text: str, words: frozenset[str]) -> bool:
        if not self.words.isdisjoint(words):
            return True
        if self.chars is not None and self.chars.search(text):
            return True
        if self.numbered is not None and self.numbered.search(text):
            return True
        if any(phrase in text for phrase in self.phrases):
            return True
        return not text.isascii() and self.chinese.search(text) is not None


_PRICE_GATE: Final = _Gate(
    words=frozenset(
        {
            "free",
            "half",
            "cost",
            "costs",
            "charge",
            "waive",
            "waived",
            "waives",
            "waiving",
            "knock",
            "usd",
            "eur",
            "gbp",
            "rmb",
            "cny",
            "jpy",
            "hkd",
            "chf",
            "yuan",
            "renminbi",
            "dollar",
            "dollars",
            "bucks",
            "euro",
            "euros",
            "quid",
            "pound",
            "pounds",
            "cent",
            "cents",
            "yen",
            "price",
            "prices",
            "priced",
            "fee",
            "rate",
            "quote",
            "total",
            "percent",
            "per",
            "grand",
            "pay",
            "paying",
            "charged",
            "billed",
            "yours",
            "tenner",
            "tenners",
            "fiver",
            "fivers",
            "settled",
            "each",
            "apiece",
            "final",
            "firm",
            "fixed",
            "house",
            "match",
            "say",
            "us",
            "get",
            "an",
            "labour",
            "labor",
            "parts",
            "ride",
            "rides",
            "stay",
            "stays",
            "travel",
            "travels",
            "eat",
            "eats",
            "along",
            "no",
            "charges",
        }
    ),
    phrases=("set you back", "comes to", "come to", "for just", "for only", "at just", "at only"),
    chars=re.compile(r"[$€£¥%]"),
    chinese=_literals(
        *"元块镑币价费折送减降每百千万",
        "美金",
        "免费",
        "不收",
        "优惠",
        "便宜",
        "rmb",
        "定金",
        "订金",
        "押金",
        "尾款",
        "首付",
        "租金",
        "免",
        "立减",
        "不收",
        "买",
        "免费",
        "让",
        "落地",
        "到手",
        "成交",
        "差价",
        "照",
        "按",
        "收您",
        "收你",
        "最低价",
        "包干",
        "加钱",
        "算",
        "我们出",
        "我们来出",
        "全包",
        "落地",
        "一共",
        "总共",
        "合计",
        "就这么定",
        "只要",
        "只需",
        "仅需",
    ),
    numbered=re.compile(
        r"\d(?:usd|eur|gbp|rmb|cny|jpy|hkd|chf|yuan|renminbi|dollar|buck|euro|quid|pound|cent|yen|percent)"
        r"|(?:usd|eur|gbp|rmb|cny|jpy|hkd|chf|us)\s?\d|\b(?:is|at) \d|\b(?:it's|for|only|just) \d+(?:\.\d+)? (?:an?|per) "
        r"|\bon us\b|\bpay the same\b|\d total\b|\d in total\b|\d all[- ]in\b|\bdone deal\b|\ba deal\b"
    ),
)
_DEADLINE_GATE: Final = _Gate(
    words=frozenset(
        {
            "min",
            "mins",
            "minute",
            "minutes",
            "hour",
            "hours",
            "hr",
            "hrs",
            "day",
            "days",
            "week",
            "weeks",
            "month",
            "months",
            "fortnight",
            "year",
            "today",
            "tomorrow",
            "tonight",
            "morning",
            "afternoon",
            "evening",
            "noon",
            "midnight",
            "midday",
            "lunch",
            "lunchtime",
            "christmas",
            "easter",
            "eod",
            "business",
            "time",
            "thing",
            "away",
            "immediately",
            "once",
            "overnight",
            "weekend",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "holiday",
            "holidays",
            "jiffy",
            "flash",
            "know",
            "wait",
            "o'clock",
            "play",
            "while-you-wait",
            "sharp",
            "now",
            "arrive",
            "arrival",
            "check",
            "land",
            "tmrw",
            "tmr",
            "tomoz",
            "2day",
            "2nite",
            "tonite",
            "recital",
            "wedding",
            "party",
            "event",
            "opening",
            "trip",
            "exam",
            "meeting",
            "flight",
            "birthday",
            "session",
            "lesson",
            "class",
            "appointment",
            "after",
            "from",
            "before",
            "mon",
            "tue",
            "tues",
            "wed",
            "thu",
            "thur",
            "thurs",
            "fri",
            "sat",
            "sun",
            "then",
        }
    ),
    chars=re.compile(r"[0-9]"),
    chinese=_literals(
        "今天",
        "今日",
        "今晚",
        "今早",
        "明天",
        "明日",
        "明早",
        "明晚",
        "后天",
        "当天",
        "当日",
        "次日",
        "隔天",
        "隔日",
        "第二天",
        "周",
        "星期",
        "礼拜",
        "月底",
        "月初",
        "月中",
        "月末",
        "年底",
        "年末",
        "年前",
        "本月",
        "这个月",
        "下个月",
        "节",
        "当场",
        "寒假",
        "暑假",
        "年内",
        "月内",
        "周内",
        "早上",
        "傍晚",
        "清早",
        "一早",
        "之前",
        "下班",
        "关门",
        "开门",
        "到时候",
        "届时",
        "午饭",
        "天黑",
        "放假",
        "假期",
        "开学",
        "过年",
        "国庆",
        "中秋",
        "端午",
        "元旦",
        "圣诞",
        "五一",
        "十一",
        "马上",
        "立刻",
        "立即",
        "即刻",
        "按时",
        "准时",
        "如期",
        "上午",
        "下午",
        "晚上",
        "中午",
    ),
    # A numeral and a unit: "三天", "48小时", "6月", "15号", "八点".
    numbered=re.compile(rf"[\d{_ZH_NUMERALS}]\s?个?(?:工作|天|日|小时|钟头|分钟|周|星期|礼拜|月|号|点)"),
    also=_Gate(
        words=frozenset(
            {
                "deliver",
                "delivers",
                "delivered",
                "delivering",
                "delivery",
                "deliveries",
                "ship",
                "ships",
                "shipped",
                "shipping",
                "shipment",
                "dispatch",
                "dispatches",
                "dispatched",
                "dispatching",
                "send",
                "sends",
                "sent",
                "post",
                "posted",
                "mail",
                "mailed",
                "arrive",
                "arrives",
                "arrived",
                "arriving",
                "arrival",
                "reach",
                "reaches",
                "get",
                "back",
                "be",
                "go",
                "goes",
                "inbox",
                "hands",
                "doorstep",
                "receive",
                "have",
                "ready",
                "done",
                "finish",
                "finished",
                "finishes",
                "complete",
                "completed",
                "completes",
                "fix",
                "fixed",
                "fixes",
                "repair",
                "repaired",
                "repairs",
                "install",
                "installed",
                "installs",
                "installation",
                "process",
                "processed",
                "refund",
                "refunded",
                "refunds",
                "credited",
                "turnaround",
                "collect",
                "collected",
                "pick",
                "picked",
                "pickup",
                "restock",
                "restocked",
                "sorted",
                "hand",
                "handed",
                "hung",
                "altered",
                "printed",
                "come",
                "visit",
                "stop",
                "drop",
                "fit",
                "fitted",
                "swapped",
                "replaced",
                "groomed",
                "edited",
                "serviced",
                "email",
                "emailed",
                "emails",
                "e",
                "leave",
                "it'll",
                "they'll",
                "filed",
                "submitted",
                "tuned",
                "cleaned",
                "lodged",
                "set",
                "decorated",
                "waiting",
                "here",
                "round",
                "out",
                "file",
                "courier",
                "walk",
                "locked",
                "booked",
                "ride",
                "take",
                "drive",
                "wear",
                "see",
                "running",
                "working",
                "going",
                "hang",
                "matched",
                "restored",
                "land",
                "confirmed",
                "shop",
                "store",
                "office",
                "workshop",
            }
        ),
        chars=None,
        chinese=_literals(
            *"送寄到发出完竣做弄搞修处办交上安装改备退返补重收提取拿批好戴用开课接领带等布搭摆递提扫匹排落场房钥约拾齐公排款留换见"
        ),
    ),
)
_OUTCOME_GATE: Final = _Gate(
    words=frozenset(
        {
            "guarantee",
            "guarantees",
            "guaranteed",
            "guaranteeing",
            "promise",
            "promises",
            "promised",
            "assure",
            "ensure",
            "sure",
            "certain",
            "refund",
            "reimburse",
            "compensate",
            "approved",
            "accepted",
            "granted",
            "reimbursed",
            "favour",
            "favor",
            "definitely",
            "certainly",
            "surely",
            "absolutely",
            "undoubtedly",
            "bound",
            "success",
            "doubt",
            "fail",
            "wrong",
            "lose",
            "risk",
            "disappointed",
            "hundred",
            "job",
            "replacement",
            "compensation",
            "money",
            "deposit",
            "approval",
            "visa",
            "loan",
            "again",
            "permanent",
            "permanently",
            "cure",
            "heal",
            "question",
            "last",
            "stay",
            "remain",
            "new",
            "perfect",
            "flawless",
            "chance",
            "fluent",
            "stand",
        }
    ),
    chars=None,
    numbered=re.compile(r"100 ?(?:%|per)"),
    phrases=(
        "as good as",
        "questions asked",
        "my word",
        "trust me",
        "will rule",
        "will decide",
        "you'll pass",
        "you will pass",
        "you'll win",
        "you will win",
        "you'll succeed",
        "you will succeed",
        "you won't",
        "you will not",
        "you will never",
        "you never",
        "for good",
        "will go up",
        "will improve",
        "will rise",
        "will increase",
        "will double",
        "will triple",
        "will disappear",
        "will vanish",
        "will clear up",
        "will be gone",
        "you'll never",
        "so will you",
        "won't have",
        "will not have",
        "never have",
        "whatsoever",
        "absolutely",
        "no way",
        "every time",
        "he'll pass",
        "she'll pass",
        "they'll pass",
        "clearly again",
        "well again",
        "normally again",
        "properly again",
        "fully",
        "keep coming back",
        "no complaints",
        "no problems",
        "no issues",
        "no leaks",
        "no delays",
        "everyone will",
        "will cover",
        "will pay",
        "will replace",
        "will refund",
        "'ll stay",
        "'ll remain",
        "'ll keep",
        "'ll last",
        "will keep",
        "will reach",
        "will get",
        "will learn",
        "will become",
        "will speak",
        "will read",
        "exactly",
        "won't need",
        "will not need",
        "never need",
        "won't hear",
        "be completely",
        "removed completely",
        "removed fully",
        "fixed completely",
        "repaired completely",
        "restored completely",
        "count on",
        "rely on",
        "depend on",
        "turn out",
        "come out",
        "gone",
        "completely",
        "safe",
        "find nothing",
        "will pass",
        "you will too",
        "totally",
        "perfectly",
        "made sure",
        "definitely",
        "in full",
        "every single",
        "is solved",
        "is fixed",
        "is resolved",
        "is gone",
        "does",
        "will keep",
        "will accept",
        "will approve",
        "will grant",
        "will allow",
        "while-you-wait",
        "while you wait",
        "will stop",
        "will fix",
        "will pass",
        "weather",
        "never cancel",
        "nobody will",
        "fluently",
        "confidently",
        "regret",
        "glove",
        "come back",
        "will have the",
        "you a refund",
        "you a full refund",
        "is yours",
        "show at all",
        "grow back",
        "perfect fit",
        "-free",
        "no further",
        "no more",
        "will never",
        "nothing will",
        "full responsibility",
        "recover all",
        "100%",
        "100 %",
        "is approved",
        "been approved",
        "is accepted",
        "been accepted",
        "is granted",
        "been granted",
        "come back",
        "return",
        "recur",
    ),
    chinese=_literals(
        *"保包稳必准拍治",
        "新的",
        "焕然",
        "一辈子",
        "永远",
        "再也",
        "终身",
        "以后都",
        "不会再",
        "绝不会",
        "申请",
        "给您",
        "给你",
        "也不会",
        "彻底",
        "完全",
        "换人",
        "几年",
        "多年",
        "保一",
        "保两",
        "保三",
        "保半",
        "换新",
        "问题已经",
        "不会再",
        "就不会",
        "明显",
        "一次就能",
        "至少能",
        "年都不会",
        "看不出",
        "看得出",
        "长齐",
        "长好",
        "不管",
        "取消",
        "照常",
        "流利",
        "由我们",
        "撤销",
        "是您的",
        "是你的",
        "被别人",
        "赔偿",
        "全额",
        "免费",
        "就能好",
        "就会好",
        "能好",
        "会好",
        "全额退",
        "查不出",
        "承诺",
        "一定",
        "肯定",
        "绝对",
        "铁定",
        "百分",
        "万无一失",
        "风险",
        "可能性",
        "绝无",
        "不会",
        "放一百",
        "跑不",
        "少不了",
        "药到",
        "无论如何",
        "确定",
        "100",
    ),
)

# Checked in this order, which is also the order of precedence in the verdict.
_CHECKS: Final = (
    (GuardCategory.PRICE, _PRICE_GATE, _price_in),
    (GuardCategory.DEADLINE, _DEADLINE_GATE, _deadline_in),
    (GuardCategory.OUTCOME, _OUTCOME_GATE, _outcome_in),
)


def guard_check(text: str) -> GuardVerdict:
    """Whether `text` commits the business to a price, a deadline or an outcome."""
    return _check(text, gated=True)


def _check(text: str, *, gated: bool) -> GuardVerdict:
    found: set[GuardCategory] = set()
    for sentence in _SENTENCE_END.split(_unquote_mentions(_normalise(text))):
        if not sentence or sentence.isspace():
            continue
        words = _words(sentence) if gated else frozenset()
        checks = [
            check for check in _CHECKS if check[0] not in found and (not gated or check[1].opens(sentence, words))
        ]
        if not checks:
            continue
        # Finders look at one clause at a time: a pattern anchored at a clause edge sees the same
        # text whatever the rest of the reply says.
        clauses = _clauses(sentence)
        for category, _gate, finder in checks:
            for clause in clauses:
                if finder(clause):
                    if category is GuardCategory.PRICE:
                        return GuardVerdict(blocked=True, category=category)  # nothing takes precedence over price
                    found.add(category)
                    break
    for category, _gate, _finder in _CHECKS:
        if category in found:
            return GuardVerdict(blocked=True, category=category)
    return _PASS
