"""The scope patterns: what lifts a match (a negation, a hedge, the customer's side, the past, an
estimate, a disclaimer, a relayed message, a quoted mention).  The engine decides how each kind is
applied; see guard/engine.py."""

from __future__ import annotations

from typing import Final

from .model import Scope

SCOPES: Final[tuple[Scope, ...]] = (
    Scope(
        id="customer_figure.en.1",
        kind="customer_figure",
        language="en",
        pattern=r"budget|\byou (?:paid|mentioned|said|spent|offered|suggested|picked|chose|saw|found|read|heard)\b"
        r"|\byour (?:offer|payment|receipt|balance|voucher)",
    ),
    # Round 20: someone else's figure the customer reports, a price the customer would like.
    Scope(
        id="customer_figure.en.2",
        kind="customer_figure",
        language="en",
        pattern=r"\byour (?:friend|neighbou?r|colleague|sister|brother|mum|mom|dad|mother|father|partner|wife|husband|cousin"
        r"|relative|family)s? (?:paid|was charged|were charged|got|spent|was quoted|were quoted)\b"
        r"|\byou(?:'re| are) (?:asking|hoping|looking) (?:for|to pay)\b|\byou(?:'ve| have)? asked (?:for|about|if|whether)\b"
        r"|\byou(?:'d| would) like (?:us to (?:hold|keep|match|honou?r|give|do)\b|to pay\b|(?:it|this|that|them|the \w+) (?:(?:done|fixed|made|repaired|cleaned|altered"
        r"|serviced) )?for\b)|\byou(?:'re| are) hoping (?:to pay|for)\b",
    ),
    Scope(
        id="customer_figure.zh.1",
        kind="customer_figure",
        language="zh",
        pattern=r"预算|(?:您|你)(?:提到|说的|付了|支付了|已付|已支付|出价|给的|看到的|支付的|付的|交的)"
        r"|(?:您|你)(?:希望|想要|要求|提出|问能不能|问能否)",
    ),
    Scope(
        id="customer_figure.zh.2",
        kind="customer_figure",
        language="zh",
        pattern=r"(?<![跟和对给向同])(?:您|你)(?:说|讲|提)(?:过)?(?:别家|别的|其他|外面|朋友|之前|那边|人家)"
        r"|(?:您|你)(?:的)?(?:朋友|家人|同事|邻居)(?:付|花|交|给)了?",
    ),
    Scope(
        id="hedge.en.1",
        kind="hedge",
        language="en",
        pattern=r"\b(?:usually|typically|normally|generally|in most cases|mostly|often|might|could|if (?:everything|all) goes (?:well|to plan)|probably|possibly|perhaps|maybe"
        r"|likely|(?<!at )most|typical|standard turnaround|standard (?:delivery|lead|processing|installation) time|"
        r"hopefully|estimated?|expected|try|trying|aim|aiming|hope|should|tends?|on average|depend\w*|vary|varies|subject to|"
        r"if possible|i think|i believe|i guess|not sure|as soon as possible|asap|ideally|chance|usual|predict\w*)\b"
        r"|(?<!\d )(?<!of )(?<!in )(?<!by )(?<!early )(?<!late )(?<!mid-)\bmay\b(?! ?\d)|\bsome (?:students|customers|clients|people|of our)\b",
    ),
    Scope(
        id="hedge.en.2",
        kind="hedge",
        language="en",
        pattern=r"\b(?:about|around|approximately|approx|roughly) (?=\d|a |an |one|two|three|four|five|six|seven|ten|noon|midday"
        r"|the end|tomorrow|next|mid)",
    ),
    Scope(
        id="hedge.zh.1",
        kind="hedge",
        language="zh",
        pattern=r"一般|通常|正常情况|大概|大约|(?<![预违合签契条履毁解])约(?![好了定见会过到在束])|预计|预估|可能|也许|或许|估计|尽量|争取|尽快|应该|差不多|大多|多数|平均|参考",
    ),
    Scope(
        id="hedge.zh.2",
        kind="hedge",
        language="zh",
        pattern=r"(?<!电)视(?!频)|取决于|看情况|要看|得看|以.{0,12}为准|希望|力争|左右|最快|具体(?:几|什么时候|哪天|多久)",
    ),
    Scope(
        id="customer_side.en.1",
        kind="customer_side",
        language="en",
        pattern=r"\bplease\b(?! (?:note|rest assured|be assured|don't worry|do not worry|be aware|know|trust|bear in mind|expect))",
    ),
    Scope(
        id="customer_side.en.2",
        kind="customer_side",
        language="en",
        pattern=r"\byou (?:need|must|have|will need|'ll need|ought) to\b|\b(?:do|does|did|will|would|can|could|are|were) you\b",
    ),
    Scope(
        id="customer_side.en.3",
        kind="customer_side",
        language="en",
        pattern=r"\bwhen (?:do|would|will|should|can) you\b|\bif you (?:need|want|would like|prefer|require|wish|'d like)\b"
        r"|\byou(?:'d| would) like\b",
    ),
    Scope(
        id="customer_side.en.4",
        kind="customer_side",
        language="en",
        pattern=r"\bhow (?:soon|quickly|fast) (?:do|would|will) you\b",
    ),
    Scope(
        id="customer_side.en.5",
        kind="customer_side",
        language="en",
        pattern=r"\b(?:ask|asks|asked|asking) (?:about|for|whether|if)\b",
    ),
    Scope(
        id="customer_side.zh.1",
        kind="customer_side",
        language="zh",
        pattern=r"(?<![申邀宴聘提])请(?!放心|您放心|相信|注意|知悉|留意|假|客)|麻烦(?:您|你)|需要(?:您|你)|是否需要|需不需要|要不要",
    ),
    Scope(
        id="customer_side.zh.2",
        kind="customer_side",
        language="zh",
        pattern=r"(?:您|你)(?:确定|真的)?(?:是否|是)?(?:需要|要|得|必须|希望|想要|想|打算|方便|计划|预计)(?!的)",
    ),
    Scope(
        id="past_or_routine.en.1",
        kind="past_or_routine",
        language="en",
        pattern=r"\b(?:already|has been|have been|was|were|had|last|yesterday|ago|every|each|daily|weekly|we sent|we shipped)\b"
        r"|(?<!be )\b(?:arrived|landed)\b",
    ),
    Scope(id="past_or_routine.zh.1", kind="past_or_routine", language="zh", pattern=r"已经|已|刚刚|刚才|昨天|上周|每"),
    Scope(
        id="relay.en.1",
        kind="relay",
        language="en",
        pattern=r"\b(?:pass|forward|relay|send|give|hand)\b(?: \w+){0,4} (?:on )?to (?:the |our )?(?:owner|manager|boss|team|staff"
        r"|shop)\b",
    ),
    Scope(
        id="relay.en.2",
        kind="relay",
        language="en",
        pattern=r"\bpass (?:it|this|that|them|these|those|(?:the|your|this|that) (?:message|request|question|details|feedback|note"
        r"|comments?|information|info)) on\b|\blet (?:the owner|the team|the manager|them|him|her) know\b",
    ),
    Scope(
        id="relay.en.3",
        kind="relay",
        language="en",
        pattern=r"\b(?:tell|inform|ask|remind|notify) (?:the owner|the manager|the team)\b|\bcheck with (?:the owner|the manager"
        r"|the team)\b",
    ),
    Scope(
        id="relay.en.4", kind="relay", language="en", pattern=r"\bthe owner (?:sees|reads|gets|knows|receives|hears)\b"
    ),
    Scope(
        id="relay.en.5",
        kind="relay",
        language="en",
        pattern=r"\b(?:message|question|request|query|enquiry|inquiry|feedback|note|complaint|details|comments?)\b(?: \w+){0,4}"
        r" (?:reaches|gets to|goes to|is passed to|is seen by) (?:them|him|her|the (?:owner|manager|team|right person)|our \w+)\b",
    ),
    Scope(
        id="relay.zh.1",
        kind="relay",
        language="zh",
        pattern=r"转告|转达|反馈给|告诉老板|通知老板|问(?:一下|问)?老板|跟老板确认|请示老板|记下",
    ),
    Scope(
        id="not_a_negation.en.1",
        kind="not_a_negation",
        language="en",
        pattern=r"\b(?:don't|do not) (?:worry|hesitate)\b|\bno (?:worries|problem|question|doubt|matter)\b|\bnot (?:a problem"
        r"|to worry|only)\b",
    ),
    Scope(
        id="not_a_negation.en.2",
        kind="not_a_negation",
        language="en",
        pattern=r"\bnever mind\b|\bwithout (?:fail|delay|a doubt|any doubt|question|exception)\b|\b(?:no|not) later than\b|\bwhy not\b",
    ),
    Scope(
        id="not_a_negation.en.3",
        kind="not_a_negation",
        language="en",
        pattern=r"\bno (?:extra|additional) (?:cost|charge)\b|\b(?:can't|cannot|won't) (?:fail|go wrong|lose)\b|\b(?:zero|no) risk\b",
    ),
    Scope(
        id="not_a_negation.en.4",
        kind="not_a_negation",
        language="en",
        pattern=r"\bwon't be disappointed\b|\b(?:won't|will not|never|not) (?:pay|cost|be charged|spend|be billed) (?:more|over|above)\b"
        r"|\b(?:no|not) more than\b",
    ),
    Scope(
        id="not_a_negation.zh.1",
        kind="not_a_negation",
        language="zh",
        pattern=r"不用担心|不要担心|别担心|不必担心|不用急|别急|不着急|不客气|不好意思|不过|不错|没关系|没问题|没错|不管|不论|无论|毫无疑问",
    ),
    Scope(id="not_a_negation.zh.2", kind="not_a_negation", language="zh", pattern=r"不少|不同|不久|不仅|不但|不妨"),
    Scope(
        id="negation.en.1",
        kind="negation",
        language="en",
        pattern=r"\b(?:not|no|never|nobody|no one|nothing|none|neither|nor|cannot|unable|impossible|hardly|refuse[sd]?"
        r"|decline[sd]?|without)\b",
    ),
    Scope(
        id="negation.en.2",
        kind="negation",
        language="en",
        pattern=r"\b(?:whether|unsure|uncertain)\b|n't\b|\b(?:cant|wont|dont|doesnt|didnt|isnt|arent|couldnt|wouldnt|shouldnt"
        r"|hasnt|havent)\b",
    ),
    Scope(
        id="negation.en.3",
        kind="negation",
        language="en",
        pattern=r"\b(?:hard|difficult|tricky) to\b|\b(?:wrong|irresponsible|unfair|misleading) (?:of (?:me|us) )?to\b"
        r"|\b(?:an? )?(?:estimate|guide|indication|approximation|ballpark) rather than\b"
        r"|\b(?:i|we) wish (?:i|we) could\b",
    ),
    Scope(
        id="negation.en.4",
        kind="negation",
        language="en",
        pattern=r"\b(?:confirm|check|ask|know|see|find out|tell|say)(?: \w+)? if\b",
    ),
    Scope(
        id="negation.zh.1",
        kind="negation",
        language="zh",
        pattern=r"不代表|并不代表|不是|并非|不算|不能|不可以|不可能|不会|不敢|不便|不好说|不确定|不一定|不保证|不承诺|不提供|不支持|不清楚|不知道|不了解|不太",
    ),
    Scope(
        id="negation.zh.2",
        kind="negation",
        language="zh",
        pattern=r"无法|无权|没法|没办法|没有办法|没有|没|难以|很难|未必|不见得|说不准|说不好|做不到|给不了|从不|从来不|绝不|决不|并不|谈不上|算不上|说不上",
    ),
    Scope(
        id="negation.zh.3",
        kind="negation",
        language="zh",
        pattern=r"暂不|暂时不|未(?!来)|谁也|谁都|不(?=保证|承诺|包|确保|负责|担保|发|送|寄|到|退|收|完成|处理|上门|安装)",
    ),
    Scope(
        id="negation.zh.4",
        kind="negation",
        language="zh",
        pattern=r"能不能|会不会|可不可以|是不是|是否|能否|可否|有没有|行不行|(.)不\1|[不没未]$|不好打?$|不对\S{0,8}(?:作|做)(?:任何)?$|不[做作给打下](?:这种|这样的|这个|任何|[\u4e00-\u9fff]{1,3})?$|不了$|不起$",
    ),
    Scope(
        id="past_price",
        kind="past_price",
        language="any",
        pattern=r"\b(?:invoice|receipt)s? (?:from|showed|shows|said|says|dated|listed)\b|以往|以前|上个月|之前|已经收到|已收到|收到了|卖出去了|"
        r"\blast (?:year|time|month|visit|season|week)\b|\badvertised\b|\bin the past\b|\bused to\b|\bwe had\b|\bthere was\b|当时|那时|做过|那年|那会|刚开业|\bshowed\b|\b(?:19|20)\d\d (?:price|prices|list|rate|rates|menu|catalogue)\b"
        r"|\b(?:sent|emailed|issued) (?:you )?(?:an |the )?invoice\b|\b(?:app|website|site|menu|catalogue) (?:currently )?(?:lists|shows|says)\b"
        r"|\bcurrently lists\b|\bon (?:the|our) website\b|上一季|上季|往年|\bin (?:19|20)\d\d\b|\bfrom (?:19|20)\d\d\b|去年|上次|(?:发票|收据)(?:上|显示)|已\S{0,3}支付|(?:19|20)\d\d年(?:时|那时|的时候|的价格|的报价|的发票|\S{0,3}吊牌|\S{0,3}价目)|吊牌上",
    ),
    Scope(
        id="estimate",
        kind="estimate",
        language="any",
        pattern=r"\bnot (?:a|an official|a firm|a binding) quote\b|\b(?:only |just )?(?:an estimate|a rough estimate)\b|\bballpark\b"
        r"|只是(?:个)?估计|不是报价|仅供参考|作个参考|只能参考|只是参考|具体价格要|价格要.{0,12}(?:才能定|确定)|以.{0,8}报价为准"
        r"|\b(?:give you|gives|confirm|tell you) the (?:exact|final|actual) price\b|\b(?:exact|actual) price (?:once|after|when)\b"
        r"|\b(?:only )?a rough guide\b|\b(?:an|the) exact price\b|\bfinal (?:figure|price) depends\b|\bconfirmed by the owner\b"
        r"|差别很大|差异很大|具体得?由|不等|\bthe owner will confirm the (?:figure|price|amount|cost)\b|\b(?:prices?|rates?) start(?:s|ing)? (?:from|at)\b"
        # Round 19: what it comes to depends on the case ("typically £80–£120 depending on the
        # model", 最终多少要看, 按实际时长计费, 具体要看, 另外商量).
        r"|\btypically\b.{0,40}\bdepending on\b|最终(?:多少|费用|价格|金额)?要看|按实际\S{0,4}计费|具体要看|另外(?:商量|算|报价)",
    ),
    Scope(
        id="next_time",
        kind="next_time",
        language="any",
        pattern=r"\bnext\b|\bthis time\b|下次|下回|这次|本次"
        # A past price given again is a price now: "I'll give you last month's rate".
        r"|\b(?:i'll|i will|we'll|we will|let me)\s+(?:give|keep|honou?r|charge|do|let|leave)\b"
        r"|(?:按|照).{0,10}(?:给|帮)(?:您|你)(?:算|收)",
    ),
    Scope(
        id="trailing_hedge",
        kind="trailing_hedge",
        language="any",
        pattern=r"(?:it |that |this )?(?:all )?(?:depends|depending|varies|subject to)\b|(?:具体)?(?:还)?(?:要|得|需要)?(?:看|取决于|视)|以.{0,12}为准"
        r"|(?:usually|typically|normally|generally|probably|possibly|hopefully|maybe|perhaps|ideally|in most cases|if possible|"
        r"if all goes well|all being well|i think|i hope|i believe|i guess|more or less|give or take)(?: at least| though"
        r"| anyway)?$"
        r"|(?:一般|通常|大概|可能|也许|应该|估计|差不多|顺利的话|如果顺利的话|正常情况下)(?:吧|的话|来说)?$",
    ),
    Scope(
        id="disclaimer",
        kind="disclaimer",
        language="any",
        pattern=r"(?:i |we )?(?:honestly |really |simply )?(?:can't|cannot|can not|won't|couldn't|am not able to|'m not able to|are not able to"
        r"|'re not able to|'m unable to|am unable to) "
        r"(?:guarantee|promise|confirm|be sure of)(?: (?:it|that|this|anything|the date|the time))?(?: though)?"
        r"(?: (?:until|before|till|unless) .*)?$"
        r"|(?:the )?(?:owner|manager|team|shop)(?: will| can| must| has to| needs to)? confirms?\b.*$|no promises$|(?:that's|that is|it's|it is) not (?:guaranteed|a promise)$"
        r"|(?:我|我们)?(?:也|还|并)?(?:无法|不能|不敢|没法|没办法|不)(?:完全)?(?:保证|承诺|确定)(?:的)?$|不一定$",
    ),
    Scope(
        id="disclaimer_hint",
        kind="disclaimer_hint",
        language="any",
        pattern="guarantee|promise|confirm|sure|保证|承诺|确定|一定",
    ),
    Scope(id="condition", kind="condition", language="any", pattern=r"如果|要是|假如|万一|假设"),
    # Round 20: the published rule restated ("按照规则，审核通过后7个工作日内原路退回", "按我们的规定，
    # 退房时无损坏，押金全额退还") is the business's rule, not a promise to this customer - unless
    # the clause applies it to the customer (按规定您可以拿回全部押金).
    Scope(
        id="policy",
        kind="policy",
        language="any",
        pattern=r"按(?:照)?(?:我们|我们的|公司|公司的|店里|店里的|本店|平台|平台的|店铺|店铺的)?(?:规定|规则|政策|流程|条款)"
        r"|根据(?:我们的|公司的|店里的|本店|平台的)?(?:规定|规则|政策)"
        # Round 26: the published rule quoted in words ("our policy says …", 租赁条款里写的是 …).
        r"|\b(?:our|the) (?:\w+ )?(?:policy|policies|terms|terms and conditions|rules|conditions|fee schedule)"
        r"(?: page)? (?:says?|states?|reads|is that|sets out)\b"
        r"|(?:条款|规定|政策|说明|须知|合同)(?:里|上|中)?(?:写的是|写着|写明|规定|注明)",
    ),
    Scope(id="addressed", kind="addressed", language="any", pattern=r"您|你|\byou|\byour"),
    Scope(
        id="past_done",
        kind="past_done",
        language="any",
        pattern=r"是[^，,。]{0,12}(?:发出|寄出|送到|送达|做好|完成|到账)的",
    ),
    Scope(
        id="on_the_dot",
        kind="on_the_dot",
        language="any",
        pattern=r"\bsharp\b|\bon the dot\b|\bwithout fail\b|准时|按时",
    ),
    Scope(
        id="negation_after",
        kind="negation_after",
        language="any",
        pattern=r".{0,30}?(?:\b(?:is|are|was|were)(?: not|n't)\b|\bnot (?:something|possible)\b|\bimpossible\b)"
        r"|[^,.!?;]{0,8}?(?:不能|无法|没法|不敢|做不了|给不了|办不到|做不到|不是我能|说了不算|不行)|不了|不到|不起",
    ),
    Scope(
        id="mention",
        kind="mention",
        language="any",
        pattern=r"(?:您说的|你说的|您提到的|你提到的|您看到的|你看到的|所谓的?|别家(?:说的|的)?|写的|印的|写着|印着|so-called"
        r"|you (?:mentioned|said|saw|quoted|read)(?: the)?|the (?:words?|phrase|slogan|claim|line|label|text)|(?:says|said|reads|read))"
        r'\s?"[^"]{1,60}"',
    ),
    Scope(
        id="echoed_question",
        kind="echoed_question",
        language="any",
        pattern=r"(?:^|(?<=[.!?。！？]))\s*(?:guaranteed|a guarantee|guarantee|promise|保证|承诺|包过|包退包换|包退|包换|退款保证)(?: \w+){0,2}\s*[?？]",
    ),
    # The summary of a request the customer confirms before anything is registered
    # (facade/dialogue/runtime/summary.py, as the rules read it): each row after its label is the
    # customer's own words said back ("- What you need: a cake for 8 people, under 80 euros",
    # "- 时间：周五之前"), not the business's.  Only a whole summary, from its first line to its
    # yes/no question, is read so; its figures still go through the grounding check (they must be
    # the customer's).  tests/test_guard_product_sentences.py holds it to the summary's wording.
    Scope(
        id="said_back",
        kind="said_back",
        language="any",
        pattern=r"(?:^|(?<=\n))(?:please check your request before i register it:|登记之前,请核对您的请求:)"
        r"(?:\n- [^\n:]{1,40}:[^\n]*){1,12}"
        r"\n(?:shall i register it for the owner\? \(yes / no\)|要我为店主登记吗\?\(是 / 否\))(?=\n|$)",
    ),
    Scope(
        id="word_mention",
        kind="word_mention",
        language="any",
        pattern=r'"[^"]{1,10}"(?=\s?(?:这两个字|这个词|这几个字|两个字|这个说法|this word|the word))',
    ),
)
