"""The building blocks the rule patterns share: numbers in both languages, time units, weekdays,
months, dates, clock times, amounts.  Plain strings, spliced into the rules' patterns."""

from __future__ import annotations

CJK = r"\u4e00-\u9fff"
ZH_NUMERALS = "零〇一二两三四五六七八九十百千万半几"
ZH_N = rf"(?:\d+(?:\.\d+)?|[{ZH_NUMERALS}]+)(?:\s?(?:-|~|到|至)\s?(?:\d+|[{ZH_NUMERALS}]+))?"
EN_NUMWORD = (
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen|fifteen|"
    r"twenty[- ]four|forty[- ]eight|seventy[- ]two|twenty|thirty|forty|a few|few|a couple of|couple of|several)"
)
EN_ONES = r"(?:one|two|three|four|five|six|seven|eight|nine)"
EN_UNDER_100 = (
    rf"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ]{EN_ONES})?|ten|eleven|twelve|thirteen|fourteen"
    rf"|fifteen|sixteen|seventeen|eighteen|nineteen|{EN_ONES})"
)
# "forty", "a hundred and twenty", "two thousand": an amount in words ("a" only before hundred/thousand).
EN_MONEY_WORDS = rf"(?:(?:a|{EN_UNDER_100}) (?:hundred|thousand)(?:(?: and)? {EN_UNDER_100})?|{EN_UNDER_100})"
EN_N = rf"(?:\d+(?:\.\d+)?|{EN_NUMWORD})(?:\s?(?:-|to|or)\s?(?:\d+|{EN_NUMWORD}))?"
EN_UNIT = r"(?:business |working |calendar )?(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|fortnight)"
WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
WEEKDAY_ANY = rf"(?:{WEEKDAY}|(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b)"
MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
ORD = r"(?:st|nd|rd|th)"
DATE = (
    rf"(?:\d{{1,2}}{ORD}?(?: of)? {MONTH}\b|{MONTH} \d{{1,2}}{ORD}?\b|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?"
    rf"|the \d{{1,2}}{ORD}\b)"
)
CLOCK = (
    r"(?:\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\d{1,2}:\d\d|noon|midnight|midday|lunch ?time"
    r"|(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) o'clock)"
)


AMOUNT = r"\d[\d,]*(?:\.\d+)?(?:\s?(?:k|万|千|百)\b)?"
ZH_AMOUNT = rf"(?:\d[\d,]*(?:\.\d+)?\s?[万千百]?|[{ZH_NUMERALS}]+)"
# 块 is money in "300块" but a piece in "一块蛋糕": count it only where the phrase ends.
KUAI = rf"块(?:钱|(?=$|[^{CJK}]|[吧啊呀哦呢了左右一起就包全都哈的之以搞够能]))"

OUTCOME_VERB = (
    r"(?:work|works|pass|succeed|win|hold|last|fix|solve|resolve|cure|heal|fit|clear|remove|improve|help|come out|"
    r"be (?:fine|ok|okay|approved|accepted|granted|fixed|solved|resolved|successful|perfect|returned|refunded|repaid"
    r"|paid back|covered)|"
    r"get (?:a |your |the |full |a full )*(?:refund|money|approval|visa|job|loan|deposit))"
)
