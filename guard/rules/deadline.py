"""The deadline rules: a delivery or completion verb within a few words of a time.

A deadline is a conjunction, so its rules come in two kinds: `time` rules ("within 3 days", "明天")
and `verb` rules ("deliver", "发货").  A verdict names the time rule as its `rule` and the verb
rule it was paired with as its `paired_rule`."""

from __future__ import annotations

from typing import Final

from .blocks import CLOCK, DATE, EN_N, EN_UNIT, ORD, WEEKDAY, WEEKDAY_ANY, ZH_N, ZH_NUMERALS
from .model import Rule

_NAMED: Final[tuple[Rule, ...]] = (
    Rule(
        id="deadline.en.within_duration",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\b(?:within|in|inside|under|after|less than|no more than|at most|max(?:imum)?|takes?|taking|only|just|is|are|:)\s+"
        rf"(?:the next |a maximum of |only |just |about |around |roughly |approximately )?{EN_N} {EN_UNIT}\b(?! (?:a|per"
        rf"|each)\b)",
        must_block=(
            "It will be ready in 2 – 3 hours.",
            "The refund is yours within a week.",
        ),
        must_pass=("The owner usually answers within a day.",),
    ),
    Rule(
        id="deadline.en.n_day_service",
        category="deadline",
        language="en",
        kind="time",
        pattern=rf"\b{EN_N}[- ](?:hour|day|week)s? (?:delivery|shipping|turnaround|dispatch|service)\b",
        must_block=(
            "We'll send it with 2-day delivery.",
            "Your order goes out with 2-day shipping.",
        ),
        must_pass=("I can't promise 24-hour turnaround on these; sometimes it takes longer.",),
    ),
    Rule(
        id="deadline.en.by_date",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\b(?:by|before|no later than|not later than)\s+(?:the |this |next |your )?(?:end of (?:the |this |next )?(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|day"
        r"|week|month|year)|"
        rf"tomorrow|tonight|today|{WEEKDAY_ANY}|\d{{1,2}}{ORD}\b|weekend|christmas|easter|new year|holidays?|{CLOCK}|{DATE}|next (?:week|month)"
        rf"|then|that time"
        rf"|eod|end of play(?: {WEEKDAY})?"
        rf"|close of business)\b",
        must_block=(
            "It'll arrive before the weekend.",
            "It'll be there by tomorrow night.",
        ),
        must_pass=("We won't be able to ship before the holidays.",),
    ),
    Rule(
        id="deadline.en.idiom_soon",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\bin time for\b|\bin a jiffy\b|\bin no time\b|\bin a flash\b|\bbefore you know it\b|\bwhile[- ]you[- ]wait\b",
        must_block=(
            "You'll have the printed banners in time for your event on Saturday.",
            "The fill is quick, so you'll be out in time for your 3pm meeting.",
        ),
        must_pass=(
            "Battery replacements are often done while you wait, but it depends on the model and the watchmaker's workload that day, so please call before coming in.",
        ),
    ),
    Rule(
        id="deadline.en.within_hours",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\b(?:within|in|under) \d+ ?(?:h|hrs?|mins?)\b|\b(?:by|before) \d{1,2}(?::\d\d)?(?= *(?:$|[,.!?;]|sharp|on|today"
        r"|tomorrow|tonight))",
        must_block=(
            "Done by 5!",
            "We'll deliver your documents across town before 5.",
        ),
        must_pass=("Prices vary by region.",),
    ),
    Rule(
        id="deadline.en.from_clock",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\bfrom \d{1,2}(?::\d\d)?\s?(?:am|pm)\b",
        must_block=(
            "Your room will be ready for early check-in from 11am, so you can come straight from the airport.",
        ),
        must_pass=("Our showroom is open from 10am to 8pm.",),
    ),
    Rule(
        id="deadline.en.on_arrival",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\b(?:in|over|round) now\b|\bwhen you (?:check in|arrive|get there|land)\b|\bon arrival\b|"
        rf"\bafter {CLOCK}|\b{CLOCK} sharp\b|\bfrom (?:tomorrow|next week|{WEEKDAY_ANY})"
        r"|\bbefore (?:the|your) \w+ (?:arrives|arrive|starts|start|opens|begins|leaves)\b|\bbefore (?:the|your) (?:\w+'s )?"
        r"(?:first )?(?:recital|wedding|party|event|opening|trip|exam|meeting|flight|birthday|session|lesson|class|appointment)\b"
        r"|\bbefore you (?:open|leave|arrive|go|start)\b|\b(?:tmrw|tmr|tomoz|2day|2nite|tonite)\b|(?<=arrive )"
        + WEEKDAY
        + r"|(?<=arrives )"
        + WEEKDAY,
        must_block=(
            "相机 tmrw 中午可以取，快门已经在换了。",
            "Your tea will ship 2day and arrive Thursday.",
        ),
        must_pass=("The car wash is self-service after 8pm; the machine takes cards and coins.",),
    ),
    Rule(
        id="deadline.en.at_clock",
        category="deadline",
        language="en",
        kind="time",
        pattern=rf"(?<!open )(?<!opens )(?<!close )(?<!closes )(?<!closed )(?<!from )(?<!until )\bat {CLOCK}"
        rf"|(?<=: ){WEEKDAY_ANY}|\b{WEEKDAY_ANY} (?:at )?{CLOCK}",
        must_block=(
            "The movers will be there at 7am on Saturday.",
            "The truck will arrive at 8am sharp on Saturday.",
        ),
        must_pass=("The last bus leaves at 11pm.",),
    ),
    Rule(
        id="deadline.en.day_word",
        category="deadline",
        language="en",
        kind="time",
        pattern=rf"\b(?:tomorrow|tonight|today|this (?:morning|afternoon|evening|week|weekend|month)|next (?:week|month|{WEEKDAY})|"
        rf"(?:on|this|next) {WEEKDAY}|on {DATE}|first thing|later today|right away|immediately|straight away|at once|on time|"
        r"same[- ]day|(?:the )?same (?:afternoon|morning|evening|night|week)|next[- ]day|overnight|within (?:the|this) (?:hour|day|week|month))\b",
        must_block=(
            "We will ship tomorrow.",
            "You'll receive it next week.",
        ),
        must_pass=("We're closed on 25 December.",),
    ),
    Rule(
        id="deadline.zh.within_days",
        category="deadline",
        language="zh",
        kind="time",
        pattern=rf"{ZH_N}\s?(?:个(?:工作日|月|小时|钟头|星期|礼拜)|工作日|天|日|小时|钟头|分钟|周|星期|礼拜)(?:之内|以内|内|之后|以后|后|左右)?",
        must_block=(
            "两天内送到。",
            "３天内发货。",
        ),
        must_pass=("请在七天内完成付款。",),
    ),
    Rule(
        id="deadline.zh.day_word",
        category="deadline",
        language="zh",
        kind="time",
        pattern=r"今天|今日|今晚|今早|明天|明日|明早|明晚|后天|当天|当日|次日|隔天|隔日|第二天|当场|寒假|暑假",
        must_block=(
            "明天发货。",
            "快递明早就到。",
        ),
        must_pass=("老板今天不在店里。",),
    ),
    Rule(
        id="deadline.zh.weekday",
        category="deadline",
        language="zh",
        kind="time",
        pattern=r"(?:本|这|下下|下)个?(?:周|星期|礼拜)[一二三四五六日天]?|(?:周|星期|礼拜)[一二三四五六日天]|周末",
        must_block=(
            "下周一前完成。",
            "交付时间：周五",
        ),
        must_pass=("周日不发货。",),
    ),
    Rule(
        id="deadline.zh.month_end",
        category="deadline",
        language="zh",
        kind="time",
        pattern=rf"月底|月初|月中|月末|年底|年末|(?<![\d{ZH_NUMERALS}])年前|本月|这个月|下个月|(?:本|这)?周内|月内|年内|(?:下班|关门|开门|午饭|中午|天黑)(?:前|之前)|到时候|届时",
        must_block=(
            "屋顶周内修完。",
            "这批货年底前交货。",
        ),
        must_pass=("这个月的档期已经满了。",),
    ),
    Rule(
        id="deadline.zh.before_holiday",
        category="deadline",
        language="zh",
        kind="time",
        pattern=r"(?:春节|过年|国庆|中秋|端午|元旦|圣诞|五一|十一|节|放假|假期|开学)(?:节)?(?:前|之前|以前)",
        must_block=(
            "春节前送达。",
            "结业证书放假前一定寄给您。",
        ),
        must_pass=("我会告诉王师傅您希望春节前把卫生间弄好,能不能做到他会跟您说。",),
    ),
    Rule(
        id="deadline.zh.date",
        category="deadline",
        language="zh",
        kind="time",
        pattern=rf"{ZH_N}月{ZH_N}(?:日|号)|{ZH_N}(?:日|号)(?=$|前|之前|以前|当天|送|发|到|寄|交|完|给)|\d+\s?h\s?(?:内|以内|之内)",
        must_block=(
            "15号之前给您寄到。",
            "报告十号之前交给您。",
        ),
        must_pass=("您需要几号之前收到？",),
    ),
    Rule(
        id="deadline.zh.clock",
        category="deadline",
        language="zh",
        kind="time",
        pattern=rf"{ZH_N}点(?:钟)?(?:前|之前|以前)|{ZH_N}点(?:钟|半|{ZH_N}分)?|早上|傍晚|清早|一早|(?:到|来|开始|出发)之前|马上|立刻|立即|即刻|按时|准时|如期|上午|下午|晚上|中午",
        must_block=(
            "手机上午送来，下午就好。",
            "蛋糕下午三点前送到您家。",
        ),
        must_pass=("您家几点方便？",),
    ),
    Rule(
        id="deadline.en.verb.deliver",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:deliver(?:s|ed|ing|y|ies)?|ship(?:s|ped|ping|ment)?|dispatch(?:es|ed|ing)?|sends?|sent|post(?:ed)?"
        r"|mail(?:ed)?)\b",
        must_block=(
            "We will ship tomorrow.",
            "Next-day shipping on this one.",
        ),
        must_pass=("We ship to Germany.",),
    ),
    Rule(
        id="deadline.en.verb.arrive",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:arriv(?:e|es|ed|ing|al)|reach(?:es)? you|get to you|get (?:it|them|this|that|everything|your \w+) (?:to"
        r"|back)|back with you)\b|\bget (?:\w+ ){1,3}to you\b|\be-?mail(?:s|ed)?\b",
        must_block=(
            "We'll get it to you on the 15th.",
            "It'll arrive before the weekend.",
        ),
        must_pass=("We reply to emails during office hours.",),
    ),
    Rule(
        id="deadline.en.verb.handover",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\bhave (?:everything|it all|it|them|all of it) (?:at|in|to) your\b|\b(?:it|they)(?:'ll| will) be back\b|\bback on the road\b"
        r"|\bleave with (?:it|them|your \w+)\b|\b(?:fit|fitted|swapped|replaced|groomed|edited|serviced|file|filed|submitted|lodged|set up|courier(?:ed)?"
        r"|decorated|tuned|cleaned)\b|\b(?:be )?waiting for you\b|\bbe (?:here|round|waiting)\b|\bhang\b|\bin and out\b|\bmatched\b|\bwill be back\b|\b(?:is|are) booked (?:for|on|in)\b|\bbe in (?:the|our) (?:shop|store|office|workshop)\b"
        r"|\bis confirmed\b|\b(?:lesson|appointment|slot)"
        r" booked\b|\bland in your\b|\brestored\b|\bget you (?:the|a|your)\b|\b(?:ride|take|drive|wear) (?:it|them) home\b"
        r"|\bwe'll see you\b|\bhave (?:the|your) (?:\w+ ){0,2}\w+ in (?:your|the)\b"
        r"|\byou(?:'ll| will) be (?:out|done|finished|ready)\b|\bwalk out (?:with|wearing|in)\b|\b(?:locked|booked) in\b",
        must_block=(
            "Your car will be back with you by tonight.",
            "Your dog will be groomed and ready by noon.",
        ),
        must_pass=("We'll be waiting for your answer.",),
    ),
    Rule(
        id="deadline.en.verb.be_there",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\bbe (?:there|with you|at your \w+|at the \w+|live)\b|\bgo(?:es)? (?:out|live)\b|\bin your (?:inbox|hands)\b"
        r"|\bon your doorstep\b",
        must_block=(
            "Your parcel goes out tonight.",
            "It'll be there by tomorrow night.",
        ),
        must_pass=("It should be there tomorrow, no promises.",),
    ),
    Rule(
        id="deadline.en.verb.you_get",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:you'll|you will|you can|you'd) (?:get|receive|have) (?:it|them|this|that|your \w+|the \w+)\b|\breceive\b",
        must_block=(
            "You'll receive it next week.",
            "You'll get the refund by the end of the week.",
        ),
        must_pass=("When would you like to receive it?",),
    ),
    Rule(
        id="deadline.en.verb.have_it_ready",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\bhave (?:it|them|this|that|your \w+|the \w+) (?:ready|done|fixed|repaired|back|delivered|finished|altered"
        r"|cleaned|running|working|going)\b",
        must_block=(
            "We'll have your laptop fixed in 48 hours.",
            "We can have the suit altered by next Monday.",
        ),
        must_pass=("We have 12 staff, all local.",),
    ),
    Rule(
        id="deadline.en.verb.ready_done",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:ready(?! to\b)|done|finish(?:ed|es)?|complete(?:d|s)?|fix(?:ed|es)?|repair(?:ed|s)?|install(?:ed|s|ation)?"
        r"|process(?:ed)?)\b",
        must_block=(
            "Done by 5!",
            "It will be ready in 2 – 3 hours.",
        ),
        must_pass=("We've repaired over 2,000 phones.",),
    ),
    Rule(
        id="deadline.en.verb.refund_collect",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:refund(?:ed|s)?|credited|turnaround|collect(?:ed)?|pick(?:ed)? (?:it |them |you )?up|pick-?up|back in stock"
        r"|restock(?:ed)?)\b",
        must_block=(
            "The refund is yours within a week.",
            "It'll be ready to collect tomorrow afternoon.",
        ),
        must_pass=("Do you prefer delivery or pick-up?",),
    ),
    Rule(
        id="deadline.en.verb.sorted",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:sorted|hand(?:ed)? over|hung|altered|printed)\b",
        must_block=(
            "We will hand over the keys on 1 June.",
            "The curtains will be hung within a fortnight.",
        ),
        must_pass=("Last year we printed over 2 million pages for local schools.",),
    ),
    Rule(
        id="deadline.en.verb.visit",
        category="deadline",
        language="en",
        kind="verb",
        pattern=r"\b(?:we|technician|engineer|installer|someone|courier|driver|plumber|fitter|team)(?:'ll| will| can| is going to"
        r"| are going to)? "
        r"(?:come|visit|be there|stop by|drop by|come round|come over)\b",
        must_block=(
            "The plumber can come round this evening.",
            "The technician will come on Thursday morning.",
        ),
        must_pass=("I'm not sure the technician can come tomorrow.",),
    ),
    Rule(
        id="deadline.zh.verb.ship",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"送达|送到|送过去|送去|送上门|送货|派送|配送|寄到|寄出|寄过去|寄给|到货|到账|到达|抵达|到手|发货|发出|发走|发给|出货|出库"
        r"|发到|发至|发送|发(?:您|你)",
        must_block=(
            "明天发货。",
            "两天内送到。",
        ),
        must_pass=("周日不发货。",),
    ),
    Rule(
        id="deadline.zh.verb.task_done",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"(?:搬|洗|剪|装|拍|印|修|改|剃|补|刷|喷|染|烫|写|译|画|调|换|做|布置|搭|摆|弄|擦|搞|化|裱|扫|匹配|排|收拾)(?:完|好)|落地|到场|交房|交钥匙|约在|给(?:您|你)约|出齐|公布|安排在|打款|留到|保留到|换上|装上|送回|(?<=到时候)见|接(?:您|你)|等(?:您|你)|递交|提交|送交|快递|打扫干净|扫干净|戴上|用上|开课|上课|接回|接走|领回|领走|带回家|取走"
        r"|安排(?:师傅|人|技师|工人|同事)?(?:过去|过来|上门|去|来)|(?:过去|过来)(?:修|看|处理|装)",
        must_block=(
            "快递明早就到。",
            "一周之内修好。",
        ),
        must_pass=("您是想自取还是快递？",),
    ),
    Rule(
        id="deadline.zh.verb.ready_after",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"(?<=[午天上点时后])(?:就|能|会|可以)好(?=$|了|啦|[,.!?;])",
        must_block=("手机上午送来，下午就好。",),
        must_pass=("您明天告诉我就好。",),
    ),
    Rule(
        id="deadline.zh.verb.complete",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"完成|完工|竣工|做好|做完|弄好|搞定|修好|修完|处理|办好|办完|办妥|交付|交货|交给|上门|安装|装好|改好|备好|准备好|出来|出结果",
        must_block=(
            "下周一前完成。",
            "交付时间：周五",
        ),
        must_pass=("请在七天内完成付款。",),
    ),
    Rule(
        id="deadline.zh.verb.refund_receive",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"退款|退到|退还|退回|返还|补发|重发|(?:能|会|就|可以|即可)收到|提车|提货|取货",
        must_block=(
            "您后天就能收到。",
            "退款一个礼拜内到账。",
        ),
        must_pass=("具体能不能退款，需要老板审核。",),
    ),
    Rule(
        id="deadline.zh.verb.collect",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"(?:能|可以|就能|即可|就可以)来?(?:取|拿|提)(?!消|决|款)|来(?:取|拿|提)(?!件|消|决|款)|(?:办|批|拿|做)下来|做出来",
        must_block=(
            "十天后可以提车。",
            "车子两个小时后就能来提。",
        ),
        must_pass=("您想什么时候来取？",),
    ),
    Rule(
        id="deadline.zh.verb.to_your_door",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"到(?:您|你)\S{0,4}?(?:家|府上|公司|手上|手里|楼下|那里|那儿|小区|门口|单位|店里)|到家",
        must_block=(
            "师傅一个小时内到您家。",
            "电工明早之前到您家修好。",
        ),
        must_pass=("您预计几点到店？",),
    ),
    Rule(
        id="deadline.zh.verb.can_arrive",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"(?:能|就|会|可|即|必|准|肯定|一定|可以)到(?![店门这那里周星礼下上晚早中\d零一二两三四五六七八九十几])",
        must_block=(
            "两三天就能到。",
            "包裹后天就到您手上。",
        ),
        must_pass=("预计下周可以到，但无法保证。",),
    ),
    Rule(
        id="deadline.zh.verb.arrive",
        category="deadline",
        language="zh",
        kind="verb",
        pattern=r"到(?=$|[\s,.!?;:)]|了|哦|啊|的|呢|吧|哈)",
        must_block=(
            "48小时内到。",
            "师傅二十分钟内到。",
        ),
        must_pass=("您希望什么时候收到？",),
    ),
    # Round 19's deadlines: "all set", "covered", a visa issued, a suit handed over, in time for.
    Rule(
        id="deadline.en.verb.all_set",
        category="deadline",
        language="en",
        pattern=r"\b(?:all set|good to go|covered|wrapped up|signed off|goes in|go in|put in|fitted in)\b",
        must_block=(
            "You'll be all set by the weekend.",
            "We'll have the syllabus covered well before the 12th.",
        ),
        must_pass=("Is the syllabus covered by the school?",),
        kind="verb",
    ),
    Rule(
        id="deadline.zh.verb.issued_in_time",
        category="deadline",
        language="zh",
        pattern=r"下签|出签|赶得上|来得及|(?:就|能|可以|就能|即可)交(?!流|通|给|费|钱|款|税|易|往|代|叉|界|接|情|朋友)",
        must_block=("十五个工作日就下签，您可以先订机票了。", "您这套西装三周就能交。"),
        must_pass=("下签时间要看使馆审核，我没法保证。",),
        kind="verb",
    ),
    Rule(
        id="deadline.en.within_sessions",
        category="deadline",
        language="en",
        pattern=r"\b(?:in|within|over) the next (?:\w+ )?(?:sessions?|lessons?|classes|visits?|appointments?)\b",
        must_block=("We'll have the whole syllabus covered in the next four sessions.",),
        must_pass=("We'll talk about it in the next session.",),
        kind="time",
    ),
    Rule(
        id="deadline.en.verb.give_us",
        category="deadline",
        language="en",
        pattern=r"\bgive (?:us|me|him|her|them) (?=(?:at most |up to |no more than |just |only )?(?:a|an|one|two|three|four|five|six|seven|\d+)\b)",
        must_block=("Give us at most a week and your tax return will be filed.",),
        must_pass=("Give us a call when you're ready.",),
        kind="verb",
    ),
    # Round 20's deadlines: access activated within the hour, a certificate issued within ten days,
    # papers reviewed within ten days.
    Rule(
        id="deadline.en.verb.activated_issued",
        category="deadline",
        language="en",
        pattern=r"\b(?:activat(?:ed|es?|ion)|enabled|unlocked|switched on|turned on|reconnected|up and running|issued)\b",
        must_block=(
            "Your access card will be activated within the hour, so you can come in this afternoon.",
            "Your B1 certificate will be issued within 10 days of your final exam.",
        ),
        must_pass=("Your access card should be activated within the hour.",),
        kind="verb",
    ),
    Rule(
        id="deadline.zh.verb.review_done",
        category="deadline",
        language="zh",
        pattern=r"(?:审核|审批|核实|核对|核查|检查|检测|评估|鉴定|验收|审|批|查)(?:完|好)|(?:审核|审批|评估|鉴定)(?:结束|完毕)",
        must_block=("您的材料已经齐了，10个工作日内肯定给您审核完。",),
        must_pass=("10个工作日内能不能审核完，我这边没法保证。",),
        kind="verb",
    ),
    # Round 21's deadlines: "up and producing power by the end of May", "can start on September 1st".
    Rule(
        id="deadline.en.verb.up_and_running",
        category="deadline",
        language="en",
        pattern=r"\bup and (?:running|producing|working)\b|\b(?:can|will|'ll) start\b|\bholding (?:the|a|your) (?:place|spot|slot|room|table)\b",
        must_block=(
            "Your panels will be up and producing power by the end of May.",
            "Lily can start in the Sunflower group on September 1st.",
        ),
        must_pass=("When can Lily start?",),
        kind="verb",
    ),
)

# Round 22: the deadline verb need not be a delivering word at all ("we'll have the whole house
# spotless by Saturday evening", "I'll get your certificate over to you first thing tomorrow",
# "it'll be 2 days tops").  What every such promise has is the business, the customer's thing or
# the customer as the subject of a future, next to a time: that is the general verb, a `general`
# rule tried when no specific verb rule is found.  A hedge, a negation, a relayed message, the
# customer's side and a condition still lift it.
_LATER_ROUNDS: Final[tuple[Rule, ...]] = (
    Rule(
        id="deadline.en.verb.future",
        category="deadline",
        language="en",
        kind="general",
        pattern=r"\b(?:i|we|it|they|he|she|you|that|this|yours|your (?:\w+ ){0,2}\w+|the \w+)(?:'ll| will| shall|'re going to| are going to"
        r"|'s going to| is going to| are gonna|'re gonna| is gonna)(?! (?:let you know|get back to you|be in touch|contact you"
        r"|reply|answer|confirm|check|ask|decide|tell you|update you|see|need|have to|depend|vary|open|close"
        r"|have (?:seen|read|received|heard|had|looked)|talk|discuss|go over|look at|cover)\b)",
        must_block=(
            "We'll have the whole house spotless by Saturday evening.",
            "I'll get your insurance certificate over to you first thing tomorrow morning.",
            "It'll be 2 days tops.",
        ),
        must_pass=(
            "The owner will let you know by tomorrow.",
            "We'll confirm a date on Monday.",
            "By then the owner will have seen your message.",
        ),
    ),
    Rule(
        id="deadline.en.duration_tops",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few) (?:working |business )?"
        r"(?:minutes?|hours?|days?|weeks?|months?) (?:tops|at the latest|or less)\b",
        must_block=("For you it'll be 2 days tops.",),
        must_pass=("Shipping usually takes 2 days tops, but I can't promise it.",),
    ),
    Rule(
        id="deadline.zh.verb.finish",
        category="deadline",
        language="zh",
        kind="general",
        pattern=r"(?:整理|弄|做|写|改|修|装|洗|剪|拍|印|送|寄|发|办|查|算|报|清|搬|种|铺|刷)(?:完|好)(?![的吗么吧]|不好)"
        r"|(?:交|送|发|寄|递|转)(?:给|到)(?:您|你)|(?:寄|送|发|退|还|拿)回(?:给)?(?:您|你)",
        must_block=("您的账目我们月底前全部整理完。",),
        must_pass=("月底前能不能整理完，要看资料齐不齐。",),
    ),
    # Round 23: a deadline set by the customer's day ("before you get home from work"), a card
    # activated or a line working again within a day (今天之内就能激活).
    Rule(
        id="deadline.en.before_your_day",
        category="deadline",
        language="en",
        kind="time",
        pattern=r"\bbefore (?:you|your \w+|the (?:guests|wedding|party|trip|flight|move|holiday|exam|interview|event))"
        r" (?:get|gets|come|comes|arrive|arrives|turn|turns|leave|leaves|go|goes|start|starts|begin|begins)(?: (?:home|back|up|in|out))?\b",
        must_block=("He'll have the tap fixed before you get home from work.",),
        must_pass=("Please switch the water off before you leave the house.",),
    ),
    Rule(
        id="deadline.zh.verb.working_again",
        category="deadline",
        language="zh",
        kind="general",
        pattern=r"激活|开通|生效|到账|恢复(?!营业|开放|上班)|上线|正常(?:使用|打电话|上网|通话)",
        must_block=("补办的卡今天之内就能激活。",),
        must_pass=("激活一般需要多久，要看运营商的系统。", "我们明天休息一天，后天恢复营业。"),
    ),
    Rule(
        id="deadline.zh.verb.arranged",
        category="deadline",
        language="zh",
        kind="general",
        pattern=r"(?:安排|排|定|约|补)(?:上|好|进去)(?![的吗么吧])",
        must_block=("孩子的补课我们下周二之前给安排上，不会耽误进度。",),
        must_pass=("下周二之前能不能安排上，要看老师的时间。",),
    ),
)

RULES: Final[tuple[Rule, ...]] = _NAMED + _LATER_ROUNDS
