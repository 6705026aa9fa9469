"""The price rules: an amount given as the price of something, a discount, a free offer.

One `Rule` per kind of wording; `price.en.money` and `price.zh.money` are the amounts of money
the figure reader finds (`guard/figures.py`, the reader the grounding check uses too): every
ISO 4217 code and the common symbols, amounts in words, 元/块/万/千."""

from __future__ import annotations

from typing import Final

from ..figures import NUMBER_CUE_EN, NUMBER_CUE_ZH
from .blocks import CJK, EN_MONEY_WORDS, ZH_AMOUNT, ZH_NUMERALS
from .model import Rule

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        id="price.en.grand",
        category="price",
        language="en",
        pattern=rf"\b(?:{EN_MONEY_WORDS}|\d+(?:\.\d+)?)\s?grand(?=\s*(?:$|[,;:)]|for\b|all\b|in total|including|incl|plus|with\b|each\b))",
        must_block=(
            "The whole kitchen refit is two grand, all in.",
            "That comes out at 3 grand for the lot.",
        ),
        must_pass=("We have two grand pianos in the showroom.",),
    ),
    Rule(
        id="price.en.charge_words",
        category="price",
        language="en",
        pattern=rf"\b(?:charge|charges|cost|costs|pay) (?:you |us )?(?:only |just |about |around )?(?:half a (?:hundred|thousand|grand)"
        rf"|{EN_MONEY_WORDS})\b(?! (?:days?|hours?|weeks?|months?|minutes?|people|times|visits?|trips?))",
        must_block=(
            "We'll charge you half a hundred for the callout, nothing more.",
            "Rewiring the kitchen will cost you four hundred and fifty pounds flat.",
        ),
        must_pass=("It costs you nothing to ask for a quote.",),
    ),
    Rule(
        id="price.en.price_word_figure",
        category="price",
        language="en",
        pattern=r"\b(?:price|prices|priced|cost|costs|fee|charge|rate|quote|total)\b(?: (?:is|are|will be|would be|comes to|of|at"
        r"|:))?\s?"
        rf"(?:only |just )?(?:\d[\d,]*(?:\.\d+)?|{EN_MONEY_WORDS})(?=\s*(?:$|[,.!?;)]|each|per|a |an |flat|in total|for|plus"
        r"|incl|excl|with))",
        must_block=(
            "For you, the price is 40.",
            "The quote is 2,500 USD for the whole kitchen.",
        ),
        must_pass=("Prices vary by region.",),
    ),
    Rule(
        id="price.en.paying_verb_figure",
        category="price",
        language="en",
        pattern=rf"\b(?:pay|paying|charge|charges|charged|billed|set you back|yours for|comes? to|settled at|priced at|for just|for only|at just"
        rf"|at only)\s(?:only |just |about |around |a flat |roughly )?(?:\d[\d,]*(?:\.\d+)?|{EN_MONEY_WORDS}|a (?:tenner|fiver))"
        rf"(?![\d,]*\s*(?:%|days?|hours?|weeks?|months?|years?|minutes?|people|times|items?|pieces?|pages?))",
        must_block=(
            "We charge 25 euros an hour.",
            "A full service comes to 180 euros.",
        ),
        must_pass=("We accept cash, card and Apple Pay.",),
    ),
    Rule(
        id="price.en.rate_per_unit",
        category="price",
        language="en",
        pattern=r"\b(?:it's|is|for|at|only|just|costs?|pay|charge) \d[\d,]*(?:\.\d+)? (?:an?|per) (?:day|night|hour|week|month|person"
        r"|head|session|lesson|class|visit|table|guest|kid|child|room|couple)\b"
        r"|\b(?:is|are|it's) on us\b|\byou(?:'ll| will) pay the same\b|\b\d[\d,]*(?:\.\d+)? (?:total|in total|all in|all-in)\b"
        r"|\bdone deal\b|\bit's a deal\b|\bdiscount of \d+ ?(?:%|percent)"
        r"|\b(?:labou?r|parts|total|price|cost|fee|deposit|rate)s?\s?:\s?\d|^(?:at )?no (?:extra )?(?:charge|cost)$"
        r"|\b(?:rides?|stays?|travels?|eats?|gets? in|comes? along) (?:for )?free\b",
        must_block=(
            "Price: 60 EUR for the gel manicure with nail art. Booked!",
            "Book the coastal ride this week and your partner rides free.",
        ),
        must_pass=("Prices vary by region.",),
    ),
    Rule(
        id="price.en.tenner_fiver",
        category="price",
        language="en",
        pattern=r"\b(?:a|one|two|three|four|five) (?:tenner|fiver)s?\b|\b(?:tenner|fiver)s?\b",
        must_block=("A tenner covers the extra dog-training session, nothing more.",),
        must_pass=("We can't do it for a tenner.",),
    ),
    Rule(
        id="price.en.words_each",
        category="price",
        language="en",
        pattern=rf"\b{EN_MONEY_WORDS}(?:[- ]odd)?(?: each| apiece| a (?:head|piece|person|cup))\b",
        must_block=("Good news: the cappuccinos for your meeting are two fifty each, done.",),
        must_pass=("Each box contains 24 pieces.",),
    ),
    Rule(
        id="price.en.final_figure",
        category="price",
        language="en",
        pattern=r"\bis \d[\d,]*(?:\.\d+)?(?=,? (?:and that's|all in|flat|fixed|in total|including|included|each|per)\b)"
        r"|\b(?:that's|that is) (?:the |our |a )?(?:final |fixed |firm )?(?:figure|price|amount|cost|fee)\b(?! (?:is|will|depends|varies))",
        must_block=("Your tax return filing is 150, and that's the final figure.",),
        must_pass=("What is your budget?",),
    ),
    Rule(
        id="price.en.free_of_charge",
        category="price",
        language="en",
        pattern=r"\bfor free\b|\bfree of charge\b|\bat no (?:extra |additional )?(?:cost|charge)\b",
        must_block=(
            "Free of charge, of course.",
            "We'll fix the screen for free.",
        ),
        must_pass=("We can't do it for free, sorry.",),
    ),
    Rule(
        id="price.en.get_free",
        category="price",
        language="en",
        pattern=r"\b(?:get|gets) (?:one|1|another|the \w+(?: one)?) free\b|\bhalf[- ]price\b|\byou(?:'ll| will) get (?:it|them|this|one)"
        r" for \d",
        must_block=(
            "Buy one, get one free this week.",
            "Half price for students on Tuesdays.",
        ),
        must_pass=("Parking is free behind the building.",),
    ),
    Rule(
        id="price.en.free_extra",
        category="price",
        language="en",
        pattern=r"(?<!depending )(?<!depends )(?<!based )\bon the house\b(?! (?:roof|wall|front|side|next))|\bthrow in (?:a |an |one )?free\b|\b(?:is|are|will be) free (?:for you|of charge|this time|today|on your (?:\w+ )?(?:order|booking|purchase|basket))\b"
        r"|\b(?:a|one) free (?:trim|delivery|upgrade|session|check|refill|gift|wrap|wrapping|shipping|consultation|sample"
        r"|lesson|class|visit|wash|coffee|drink)\b|\b(?:\d+(?:st|nd|rd|th)|next|second|third|sixth) (?:lesson|session|class|visit"
        r"|night|one) is free\b|\bit's on us\b|\bno (?:\w+ )?(?:charge|fee) (?:this time|today|for you)\b|\bno charge for\b"
        r"|\bno (?:\w+ )?(?:charge|fee)\b(?: \S+){0,6} this time\b",
        must_block=(
            "Book the 5-lesson pack and the 6th lesson is free.",
            "No charge for the nail trim this time, it's on us 🐾",
        ),
        must_pass=("Lessons last 45 minutes.",),
    ),
    Rule(
        id="price.en.lets_say",
        category="price",
        language="en",
        pattern=rf"\blet's (?:say|call it|make it) (?:\d|{EN_MONEY_WORDS}\b)",
        must_block=(
            "Let's say 60 bucks and it's yours.",
            "Let's say 25 for the dozen croissants, I'll round it down for you.",
        ),
        must_pass=("Let's say you come in on Monday, we can look at it together.",),
    ),
    Rule(
        id="price.en.waiver_discount",
        category="price",
        language="en",
        pattern=r"\bwaive\w*\b.{0,25}\bfee|\b\d+(?:\.\d+)?\s?(?:%|percent) (?:off|discount)\b|\bknock \w+ down to\b",
        must_block=(
            "I'll knock it down to $150 for you.",
            "I can offer you 20% off the second pair.",
        ),
        must_pass=("We had a 20% off sale in December, but it's not running now.",),
    ),
    Rule(
        id="price.en.per_unit_figure",
        category="price",
        language="en",
        pattern=r"\b\d+(?:\.\d+)? per (?:session|night|person|head|page|lesson|visit|class|ticket|guest)\b",
        must_block=("Group classes run 25 per person.",),
        must_pass=("Lessons last 45 minutes.",),
    ),
    # Matching a price the customer saw is quoting it: not lifted by the customer's figure or a past price.
    Rule(
        id="price.en.match_price",
        category="price",
        language="en",
        kind="match",
        pattern=r"\b(?:we can|we'll|we will|i can|i'll) match (?:the|that|their|this|your) price\b",
        must_block=("Sure, we can match the price you saw online: £349 for the laptop.",),
        must_pass=("I can't quote a price here.",),
    ),
    Rule(
        id="price.zh.bare_hundreds",
        category="price",
        language="zh",
        pattern=rf"(?<![\d{ZH_NUMERALS}第])[一二两三四五六七八九十]+[百千万][零一二两三四五六七八九十百千]*$",
        must_block=(
            "您放心，洗牙你只需要付两百。",
            "换屏幕三百五，用的是原装配件。",
        ),
        must_pass=("我们去年修了两百多个屋顶。",),
    ),
    Rule(
        id="price.zh.price_word_figure",
        category="price",
        language="zh",
        pattern=r"(?:价格|价钱|价位|售价|定价|单价|总价|报价|收费|费用|学费|运费|上门费|服务费|手续费|工费|一口价|团购价|优惠价|特价|现价"
        r"|定金|订金|押金|尾款|首付|租金)"
        rf"(?:[^,.!?;:{CJK}]?|[{CJK}]{{0,4}}?(?:是|为|交|付|收|要))(?:就是|只要|只需|仅|才|都是|一共|总共|大概|大约|约)?\s?"
        rf"{ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{CJK}]|\s*[元块钱起吧呢啊哦了的哈]|左右|上下|每|一(?:个|位|件|次|斤|套|晚|份|人))",
        must_block=(
            "收费500块。",
            "报价是三千五。",
        ),
        must_pass=("网上显示的预估费用（800-1100元）只是参考，不是正式报价。",),
    ),
    Rule(
        id="price.zh.discount",
        category="price",
        language="zh",
        pattern=r"打?[一二三四五六七八九\d.]{1,3}折(?![叠腾旧返合])|半价|买[一二三\d]送[一二三\d]|满\s?\d+\s?减\s?\d+",
        must_block=(
            "第二件半价。",
            "给您打八折。",
        ),
        must_pass=("上个月我们有过八折春季活动，现在已经结束了。",),
    ),
    Rule(
        id="price.zh.reduced_to",
        category="price",
        language="zh",
        pattern=rf"(?:优惠|降价|降|便宜|减价)(?:到|至)\s?{ZH_AMOUNT}|便宜(?:整整|了)?\s?{ZH_AMOUNT}|收(?:您|你)\s?{ZH_AMOUNT}"
        rf"|按\s?{ZH_AMOUNT}\s?(?:元|块)?算",
        must_block=(
            "给您便宜50块。",
            "一次深度清洁收您300块钱。",
        ),
        must_pass=("退货按照法律规定的期限办理。",),
    ),
    Rule(
        id="price.zh.rate_per_unit",
        category="price",
        language="zh",
        pattern=rf"每(?:次|个|位|人|件|小时|天|晚|平米|平方米|平|斤|公斤|页|套|节课|节)\s?{ZH_AMOUNT}(?![\d,.:：])(?=\s*$|\s*[^\s{CJK}]|\s*[元块钱起吧呢啊哦了的哈]|左右)",
        must_block=(
            "团购价每人68元。",
            "我们按每平方米45元收。",
        ),
        must_pass=("网站上去年写的是每晚100元，今年价格可能有调整，我帮您问问老板。",),
    ),
    Rule(
        id="price.zh.free_for_you",
        category="price",
        language="zh",
        pattern=r"免费(?:为|给|帮|替)(?:您|你)|(?:为|给|帮|替)(?:您|你)免费|不收(?:您|你)?的?(?:任何)?(?:钱|费用?)",
        must_block=(
            "我们这边维修不收您钱。",
            "我们可以免费给您换电池。",
        ),
        must_pass=("我们不能免费给您换，需要老板确认。",),
    ),
    Rule(
        id="price.zh.total_or_free_extra",
        category="price",
        language="zh",
        pattern=rf"(?:一共|总共|合计)\s?{ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{CJK}]|\s*[元块])|就这么定了|"
        r"(?<![切分拼掰碎剪割成\d])\d{3,}(?:,\d{3})*(?:\.\d+)?\s?块|最低价|给(?:您|你)包干|不会再加钱|不(?:再)?加钱|"
        r"免费(?:寄|送|发)给|费(?:用)?我们(?:来)?出|\d+(?:\.\d+)?万落地|不收\S{0,2}费|^免费(?:的)?$|差价我们(?:来)?出|照\S{0,4}价格?付|"
        r"免(?:运费|配送费|服务费|上门费|手续费|单|押金)|费也不收|费不收|买[一二三四五六七八九十\d]+\S{0,3}送[一二三四五六七八九十\d]+|第\S{1,3}免费|送(?:您|你)(?:一(?:次|个|份|张|杯|束))?免费|免费(?:护理|升级|赠送|配送|送货|上门|送)",
        must_block=(
            "免费的，放心！",
            "一共二百五十元整。",
        ),
        must_pass=("这么远的地址免费配送可能不行哦，要老板决定呢。",),
    ),
    Rule(
        id="price.zh.special_price",
        category="price",
        language="zh",
        pattern=rf"(?:原|学生|会员|折后|活动|内部|批发|友情|成本|落地|到手|成交|最低|底|全包|包)价\s?(?:是|为)?\s?{ZH_AMOUNT}|立减\s?{ZH_AMOUNT}"
        rf"|(?:给(?:您|你))?再?让\s?{ZH_AMOUNT}|给(?:您|你)算\s?{ZH_AMOUNT}|(?:给(?:您|你))免(?:了|掉)"
        rf"|(?:只要|只需|仅需)\s?{ZH_AMOUNT}(?![\d,.])(?=\s*$|\s*[^\s{CJK}]|\s*[元块])",
        must_block=(
            "上门勘察费给您免了😊",
            "老客户给您算七五折。",
        ),
        must_pass=("您提到预算是三百，我会转告老板让她报价。",),
    ),
    # The amounts of money the figure reader finds; last, so a rule that names the wording
    # ("two grand", "a tenner", "换屏幕三百五") is named when both fire at one place.
    # An amount with a currency in Latin letters or a symbol: every ISO 4217 code before or after
    # ("JPY 5000", "40 chf"), the symbols, words ("forty bucks", "two grand", "a tenner").
    Rule(
        id="price.en.money",
        category="price",
        language="en",
        kind="figure",
        pattern=NUMBER_CUE_EN,
        must_block=(
            "亲，这个套餐只要¥99哦。",
            "That is JPY 5000.",
            "It's 40 CHF for the lot.",
        ),
        must_pass=("Your invoice from 3 May shows €120 paid by card.",),
    ),
    # An amount with a Chinese currency word: 元/块/美元/欧元..., 人民币 before or after, 来/多
    # ("99元", "两百块", "人民币880", "三十来块").
    Rule(
        id="price.zh.money",
        category="price",
        language="zh",
        kind="figure",
        pattern=NUMBER_CUE_ZH,
        must_block=(
            "修一双鞋二十块。",
            "翻译一页80元。",
            "同城急送三十来块就行。",
        ),
        must_pass=("您说的500元预算我已经记下了。", "价格是一样的。"),
    ),
    # Round 19's prices: a figure set down for the customer, a free first hour, a cap.
    Rule(
        id="price.en.put_down_at",
        category="price",
        language="en",
        pattern=r"\b(?:put|mark|write|book|pencil) (?:it|you|that|this|the \w+(?: \w+)?) (?:down|in) (?:at|for) (?:\d|a |an |one|two|three|four|five|six|seven|eight|nine|ten)",
        must_block=("I'll just put the tax return down at 450 instead of the usual rate.",),
        must_pass=("Please put the date down for me.",),
    ),
    Rule(
        id="price.en.on_us",
        category="price",
        language="en",
        pattern=r"\b(?:consider|call) (?:it|this|that|the \w+) on us\b|\b(?:won't|will not|are not going to|aren't going to) (?:bill|charge) you (?:for|a)\b",
        must_block=("Consider the consultation on us.", "We won't bill you for the first hour."),
        must_pass=("The owner decides what we bill for.",),
    ),
    Rule(
        id="price.en.not_a_cent_more",
        category="price",
        language="en",
        kind="match",
        pattern=r"\b(?:won't|will not|never) (?:pay|be charged) (?:a (?:cent|penny|dime|thing)|anything|any) (?:more|extra)\b",
        must_block=("You won't pay a cent more than what you paid last year.",),
        must_pass=("I can't say whether you'll pay more than last year.",),
    ),
    Rule(
        id="price.zh.count_it_at",
        category="price",
        language="zh",
        pattern=rf"按\s?{ZH_AMOUNT}\s?(?:元|块)?(?:给(?:您|你))算|(?<!会)不会(?:再)?加(?:您|你)?钱",
        must_block=("您这个长度就按三百给您算，不会加钱的。",),
        must_pass=("会不会加钱要看老板怎么定。",),
    ),
    # Round 23: a competitor's price matched for the customer.
    Rule(
        id="price.en.match_it",
        category="price",
        language="en",
        pattern=r"\b(?:we|i)(?:'ll| will| can| could| are happy to|'re happy to)? (?:price[- ])?match (?:it|that|their (?:price|offer|quote)|the (?:price|offer|quote|ad))\b",
        must_block=("Absolutely, we'll match it for you.",),
        must_pass=("Whether we can match a competitor's price is the owner's decision.",),
    ),
    # Round 24: a price locked in for the customer.
    Rule(
        id="price.zh.lock_price",
        category="price",
        language="zh",
        pattern=r"锁定(?:现在的|目前的|这个|当前的|原来的)?(?:价格|价钱|费用|优惠)|(?:价格|价钱)(?:给(?:您|你)|帮(?:您|你))?锁定"
        r"|(?:保持|维持)(?:现在的|原来的|目前的)?(?:价格|价钱)不变|涨价也不影响(?:您|你)",
        must_block=("您续订一年的话，我给您锁定现在的价格，以后涨价也不影响您。",),
        must_pass=("能不能锁定价格，要由店长决定。",),
    ),
    Rule(
        id="price.en.lock_in",
        category="price",
        language="en",
        pattern=r"\b(?:lock|locked|locking|freeze|hold|keep) (?:in )?(?:that|the|this|your|today's|current|the current|our current) (?:\w+ )?(?:price|rate|fee|quote|discount)\b(?! (?:for you )?(?:is|isn't|can't|until the owner))",
        must_block=("I'll lock in today's rate for you if you sign this week.",),
        must_pass=("I can't lock in the rate; the owner decides on prices.",),
    ),
    # Round 24's prices the rules missed (the model caught them): a charge dropped or made free for
    # the customer, half the fee agreed, a total set for them (算您800), "yours is 2999".
    Rule(
        id="price.en.free_for_you",
        category="price",
        language="en",
        pattern=r"\bis (?:free|free of charge|on the house|complimentary) for (?:you|your \w+)\b"
        r"|\b(?:we'll|we will|i'll|i will) (?:just |only )?charge you (?:the |for the |just the )?(?:\w+ )?(?:visit|call-?out|fee|rate|price)\b"
        r"|\bnothing extra for\b",
        must_block=(
            "Since the seats you booked were obstructed, the upgrade to the balcony is free for your group.",
            "It's a small nest, so we'll just charge you the base visit, nothing extra for the removal.",
        ),
        must_pass=("Whether the upgrade is free for your group is the box office's decision.",),
    ),
    Rule(
        id="price.zh.set_for_you",
        category="price",
        language="zh",
        pattern=r"(?:学费|费用|价格|房费|租金)减半|(?:直接)?给(?:您|你)定下来|算(?:您|你)\s?\d+|(?:您|你)\S{0,4}的话就\s?\d+"
        r"|不(?:额外|另外|再)收(?:费|钱)|(?:包含|包括)在(?:里面|里头|内)了",
        must_block=(
            "两个孩子一起报的话，第二个孩子学费减半，这个我可以直接给您定下来。",
            "您家院子不大，草坪加修剪一起算您800，材料费包含在里面了。",
            "这款鱼尾婚纱您租的话就2999，改尺寸不额外收费。",
        ),
        must_pass=("第二个孩子学费能不能减半，要看校长的决定。",),
    ),
    # Issue 27 §3: a price kept or a charge dropped for this customer — "I'll give you last
    # month's rate", 还按老价格给您算, 超时一个小时就不跟您算了, 这次的运费就算了.
    Rule(
        id="price.en.kept_rate",
        category="price",
        language="en",
        pattern=r"\b(?:i'll|i will|we'll|we will|i can|we can|let me|happy to)\s+(?:give|keep|honou?r|charge|do|let|leave)\s+"
        r"(?:you\s+|it\s+(?:at\s+)?)?(?:(?:last|the)\s+(?:month|year|week|season)'s|the old|the previous|the original|the same"
        r"|your old|the earlier|the former|the regular|the pre-\w+)\s+(?:rate|price|fee|tariff|deal|pricing)\b"
        r"|\b(?:keep|hold|honou?r)\s+(?:the |your |that )?(?:old|previous|original|earlier|current|same)\s+(?:rate|price|fee|deal)"
        r"\s+for (?:you|your \w+)\b",
        must_block=("I'll give you last month's rate.", "I'll keep the old price for you."),
        must_pass=("Whether we can keep last month's rate for you is the owner's decision.",),
    ),
    Rule(
        id="price.zh.kept_or_dropped",
        category="price",
        language="zh",
        pattern=r"(?:按|照)(?:老|原来的?|之前的?|上(?:个)?月的?|去年的?|以前的?|原)(?:价格?|价钱|标准|费用)(?:给(?:您|你))?(?:算|收|来)"
        r"|给(?:您|你)按.{0,12}?(?:价|标准|费)\S{0,8}算|按\s?\d+\S{0,3}给(?:您|你)(?:做|算|收|办)"
        r"|给(?:您|你)\s?\d{2,}(?![\d.]*\s?(?:号|点|天|个|人|位|小时|分钟|月|年|周|件|张|次))"
        r"|(?:就|都|也)?不(?:跟|和|给|收)?(?:您|你)(?:算|收|计)(?:了|钱)"
        r"|(?:费|钱|时|部分|差价|零头)(?:就|也|都)?(?:算了|抹了|抹掉|去掉)",
        must_block=("还按老价格给您算。", "国庆7天给您按平日价880一天算。", "三群给您1500，包邮。"),
        must_pass=("能不能按老价格算，要问店长。",),
    ),
    Rule(
        id="price.en.skip_the_fee",
        category="price",
        language="en",
        pattern=r"\b(?:i'll|we'll|i will|we will|i can|we can|let me|happy to)\s+(?:just\s+)?(?:skip|drop|waive|scrap|forget"
        r"|knock off|take off|cancel|cover|absorb)\s+(?:the |your |that |this )?(?:[$€£]\s?\d+(?:\.\d+)?\s+)?(?:[a-z-]+\s+)?"
        r"(?:fee|charge|assessment|call-?out|deposit|surcharge|delivery|postage|cost|visit)\b"
        r"|\b(?:i|we)\s+(?:won't|will not|don't|do not|shan't)\s+charge\s+you\b",
        must_block=(
            "Send the photos and I'll skip the $60 assessment for you.",
            "No worries, then I won't charge you the €20 assessment fee.",
        ),
        must_pass=("Whether we can skip the assessment is the owner's call.",),
    ),
    Rule(
        id="price.zh.included_free",
        category="price",
        language="zh",
        pattern=r"(?<![不别没可])(?<!可以)包(?:安装|邮|送货|送上门|运费|上门|配送)(?![吗么?？])",
        must_block=("对，包安装。", "三群1500，包邮。"),
        must_pass=("包不包邮要看您的地址，我问一下店长。",),
    ),
    # Rounds 33–34's misses: an amount offered for the job, a fee let off in the same breath, all included.
    Rule(
        id="price.en.do_it_for",
        category="price",
        language="en",
        pattern=r"\b(?:we'll|i'll|we will|i will|we can|i can)\s+(?:do|fix|make|sort|repair|service|clean|handle)\b[^.!?]{0,60}"
        r"\bfor\s+(?:just\s+|only\s+)?[$€£]?\d"
        r"|\b(?:and|then|plus)\s+(?:we'll\s+|i'll\s+)?(?:skip|drop|waive|scrap|forget)\s+(?:the|your|that)\s+(?:[a-z-]+\s+)?"
        r"(?:fee|charge|call-?out|deposit|surcharge|postage)\b"
        r"|\b\d+(?:\.\d+)?\s+(?:covers|includes)\s+(?:everything|it all|all of it)\b",
        must_block=(
            "We'll do the gimbal and the arm together for 170 and skip the diagnostic fee.",
            "Sure! Bring it in, 55 covers everything including any parts.",
        ),
        must_pass=("We'll do our best to look at it this week; the price is for the workshop to say.",),
    ),
    Rule(
        id="price.zh.amount_for_you",
        category="price",
        language="zh",
        pattern=r"(?:就|算|收)\s?[\d一二两三四五六七八九十百千万]+(?:块|元)?\s?给(?:您|你)(?:做|弄|办|修|算|装)",
        must_block=("0.5平米的话就1400给您做了。",),
        must_pass=("彩绘玻璃每平方米2800元起，具体要看图案。",),
    ),
)
