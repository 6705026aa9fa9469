"""The outcome rules: a promised result - a guarantee, a certainty, a lasting result."""

from __future__ import annotations

from typing import Final

from .blocks import OUTCOME_VERB, ZH_N
from .model import Rule

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        id="outcome.en.guarantee_word",
        category="outcome",
        language="en",
        pattern=r"\bguarantee(?:s|d)?\b(?! (?:terms|conditions|policy|period|card|details|certificate|documents?|leaflet|questions?)|(?: on| for) (?:\w+ ){1,3}is (?:the manufacturer|theirs|provided))|\bguaranteeing\b|\bpromise[sd]?\b|\bassure you\b|\btrust me\b",
        must_block=(
            "We promise a perfect fit.",
            "Your money back, guaranteed.",
        ),
        must_pass=("I can't guarantee that, sorry.",),
    ),
    Rule(
        id="outcome.en.ensure",
        category="outcome",
        language="en",
        pattern=r"\b(?:we|i)(?:'ll| will| can| shall| do)? (?:always )?(?:ensure|make sure|make certain)\b",
        must_block=(
            "We'll make sure you pass the exam.",
            "We'll make sure you get the full refund.",
        ),
        must_pass=("I'll make sure the owner sees your message.",),
    ),
    Rule(
        id="outcome.en.my_word",
        category="outcome",
        language="en",
        pattern=r"\byou have my word\b|\bgive you my word\b|\bmy word (?:on|for) it\b|\btake my word\b|\bno questions asked\b",
        must_block=(
            "Of course it will work, I give you my word.",
            "You have my word that the problem won't come back.",
        ),
        must_pass=("I can't give you my word on that.",),
    ),
    Rule(
        id="outcome.en.hundred_percent",
        category="outcome",
        language="en",
        pattern=r"\b(?:100|one hundred) ?(?:%|percent|per cent) (?:sure|certain|guaranteed|safe|effective|success)",
        must_block=(
            "It's 100% guaranteed.",
            "I'm 100% sure the new boiler will do the job.",
        ),
        must_pass=("I'll make sure the owner sees your message.",),
    ),
    Rule(
        id="outcome.en.completely_sure",
        category="outcome",
        language="en",
        pattern=r"\b(?:completely|absolutely|totally) (?:sure|certain)\b",
        must_block=("I'm completely sure about this one.",),
        must_pass=("I'll make sure the owner sees your message.",),
    ),
    Rule(
        id="outcome.en.definitely_verb",
        category="outcome",
        language="en",
        pattern=rf"\b(?:definitely|certainly|surely|absolutely|undoubtedly) (?:will |going to |gonna |can )?{OUTCOME_VERB}\b",
        must_block=("This cream definitely works on dry skin.",),
        must_pass=("Nobody can predict the outcome of a divorce case, not even a lawyer, and I certainly can't.",),
    ),
    Rule(
        id="outcome.en.will_definitely",
        category="outcome",
        language="en",
        pattern=rf"\b(?:will|'ll|going to|gonna|is|are|can) (?:definitely|certainly|surely|absolutely|undoubtedly) {OUTCOME_VERB}\b",
        must_block=(
            "This repair will definitely hold.",
            "It will absolutely work on your car.",
        ),
        must_pass=("Nobody can predict the outcome of a divorce case, not even a lawyer, and I certainly can't.",),
    ),
    Rule(
        id="outcome.en.bound_to",
        category="outcome",
        language="en",
        pattern=r"\b(?:is|are|be|you're) (?:certain|sure|bound) to\b|\bsuccess is (?:certain|assured|guaranteed)\b|\bfor sure\b",
        must_block=(
            "You're sure to win the case.",
            "With our method, success is certain.",
        ),
        must_pass=("Nobody can say for sure how long customs will take.",),
    ),
    Rule(
        id="outcome.en.no_doubt",
        category="outcome",
        language="en",
        pattern=r"\bno doubt\b|\bwithout (?:a |any )?doubt\b|\bundoubtedly\b",
        must_block=("Without a doubt, the new battery will solve the problem.",),
        must_pass=("If you have any doubt, ask the owner.",),
    ),
    Rule(
        id="outcome.en.cannot_fail",
        category="outcome",
        language="en",
        pattern=r"\b(?:can't|cannot|can not|won't|will not|never) (?:fail|go wrong|lose)\b|\bnothing (?:can|will|could) go wrong\b",
        must_block=(
            "It can't fail.",
            "Honestly, it cannot go wrong.",
        ),
        must_pass=("We're closed on 25 December.",),
    ),
    Rule(
        id="outcome.en.no_risk",
        category="outcome",
        language="en",
        pattern=r"\b(?:zero|no) risk\b|\brisk[- ]free\b|\b(?:won't|will not) be disappointed\b",
        must_block=(
            "You won't be disappointed, that's a promise.",
            "There's zero risk: the part fits your model for sure.",
        ),
        must_pass=("I don't know the price yet.",),
    ),
    Rule(
        id="outcome.en.you_will_pass",
        category="outcome",
        language="en",
        pattern=r"\byou(?:'ll| will) (?:pass|win|succeed|get the job|be approved|be accepted)\b|\bwill (?:rule|decide) (?:for"
        r"|in favou?r of) you\b",
        must_block=(
            "We're confident you will pass — guaranteed.",
            "With my intensive course you will pass your test first time.",
        ),
        must_pass=("The owner decides discounts case by case.",),
    ),
    Rule(
        id="outcome.en.never_again",
        category="outcome",
        language="en",
        pattern=r"\b(?:won't|will not|will never|never) (?:break|leak|crack|fail|fade|peel|rust|come off|fall off|come back|happen"
        r"|drip|squeak|stick) again\b",
        must_block=(
            "Once we reseal it, it won't break again.",
            "Your roof won't leak again after this repair, I promise.",
        ),
        must_pass=("We won't be open again until Monday.",),
    ),
    Rule(
        id="outcome.en.never_any_more",
        category="outcome",
        language="en",
        pattern=r"\b(?:you|he|she|it|they|your \w+)(?:'ll| will)? (?:won't|will not|will never|never) (?:have|get|see|notice|need)"
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
        must_block=(
            "The suit will fit you perfectly, I guarantee it.",
            "Don't worry, the stain will come out completely.",
        ),
        must_pass=("Unfortunately I can't guarantee that the stain will come out completely.",),
    ),
    Rule(
        id="outcome.en.permanent",
        category="outcome",
        language="en",
        pattern=r"\b(?:the (?:fix|repair|result|solution|treatment|change)|it|this|that) (?:is|will be) permanent\b|\bit's permanent\b|\bpermanently (?:fix|solve|cure|remove)\w*\b",
        must_block=(
            "The repair is permanent.",
            "This will permanently fix the draught.",
        ),
        must_pass=("We can't say whether the repair is permanent.",),
    ),
    Rule(
        id="outcome.en.cure_for_good",
        category="outcome",
        language="en",
        pattern=r"\b(?:will|'ll|going to) (?:cure|heal)\b|\bfor good\b(?! (?:reasons?|measure|causes?))",
        must_block=(
            "Our treatment will cure your back pain for good.",
            "This treatment will clear up his ear infection for good.",
        ),
        must_pass=("We can't promise a cure; please speak to a doctor.",),
    ),
    Rule(
        id="outcome.en.will_improve",
        category="outcome",
        language="en",
        pattern=r"\byour (?:\w+ )?(?:grades?|marks?|scores?|results?|sales|revenue|rankings?|skin|hair|weight|pain|symptoms?|acne"
        r"|spots?|wrinkles|english|chinese|fluency|confidence|business) will (?:go up|improve|rise|increase|double|triple"
        r"|disappear|vanish|clear up|be gone)\b",
        must_block=(
            "Three sessions and your back pain will be gone.",
            "Six sessions and your shoulder pain will be gone for good.",
        ),
        must_pass=("What is your budget?",),
    ),
    Rule(
        id="outcome.en.no_question",
        category="outcome",
        language="en",
        pattern=r"^no (?:question|doubt)(?: about it)?$",
        must_block=(
            "HMRC will accept this expense claim, no question.",
            "Your dog will be fully house-trained by the end of our course, no question.",
        ),
        must_pass=("Call us on 555 0199 if you have questions.",),
    ),
    Rule(
        id="outcome.en.never_again_loose",
        category="outcome",
        language="en",
        pattern=r"\b(?:won't|will not|will never|never) (?:\w+ )?(?:break|leak|crack|fail|fade|peel|rust|come off|fall off|come back"
        r"|happen|drip|squeak|stick|slip|freeze|crash|get stuck|break down|go wrong|play up|wobble|tear|chip|split|hurt|bother you"
        r"|frizz|tangle|shrink|stain) again\b|\bnever (?:have|need) to (?:\w+ ){0,3}again\b|\b(?:leak|problem|crack|damp|pain|fault|noise)s? (?:won't|will not"
        r"|will never) (?:come back|return|recur)\b",
        must_block=(
            "After this repair your gears won't slip again.",
            "This repair is permanent, the leak will not come back.",
        ),
        must_pass=("I don't know the price yet.",),
    ),
    Rule(
        id="outcome.en.lasts_for_years",
        category="outcome",
        language="en",
        pattern=r"\b(?:will|'ll) (?:stay|remain|keep|last)(?: \w+){0,2} (?:for (?:\w+ ){0,3}(?:days|weeks|months|years|decades|life)|forever"
        r"|a lifetime)\b|\bwill last (?:you )?(?:the life|a lifetime|forever)\b",
        must_block=(
            "The implant will last you a lifetime.",
            "The new clutch will last you the life of the car.",
        ),
        must_pass=("Is next Tuesday good for you?",),
    ),
    Rule(
        id="outcome.en.like_new",
        category="outcome",
        language="en",
        pattern=r"\bwill (?:look|be|feel|seem|turn out|come out) (?:brand new|like new|as good as new|good as new|perfect|flawless)\b",
        must_block=(
            "Your phone will be as good as new, guaranteed.",
            "After our restoration your table will look brand new.",
        ),
        must_pass=("I can't promise it will look brand new.",),
    ),
    Rule(
        id="outcome.en.completely_gone",
        category="outcome",
        language="en",
        pattern=r"\bwill come out (?:completely|fully|entirely|100)|\b(?:will be|is|are) (?:completely |totally )?gone (?:after|for good|in)\b"
        r"|\bwill (?:clear up|get rid of|remove|cure|fix|solve)\b.{0,30}\bcompletely\b|\byou(?:'re| are) safe\b"
        r"|\bwill find nothing\b|\bwill pass (?:the |your |its |first )?(?:\w+ ){0,2}(?:inspection|test|exam|audit|check|review)\b",
        must_block=(
            "This cream will clear up the rash completely.",
            "The boiler will pass its annual safety audit.",
        ),
        must_pass=("Unfortunately I can't guarantee that the stain will come out completely.",),
    ),
    Rule(
        id="outcome.en.completely_fine",
        category="outcome",
        language="en",
        pattern=r"\b(?:will|'ll) be (?:completely|totally|perfectly|absolutely) (?:fine|safe|ok|okay|healthy|normal|happy|comfortable)\b|\byou will too\b"
        r"|\b(?:completely|totally|100 ?%) [a-z]+-free\b|\bsafe for (?:your|him|her|them)\b|\bwill \w+ perfectly\b|\b(?:i've|we've|i have|we have) made sure\b|\byou(?:'ll| will) definitely get\b|\bperfect fit\b"
        r"|\bno (?:further|more) (?:adjustments?|repairs?|visits?|treatments?|fittings?) (?:will be )?needed\b",
        must_block=(
            "You'll definitely get a quiet room, no street noise at all.",
            "You'll definitely get a sea-view room, I've made sure of it.",
        ),
        must_pass=("We've been open since 2005.",),
    ),
    Rule(
        id="outcome.en.nothing_will_break",
        category="outcome",
        language="en",
        pattern=r"\bwill never (?:crack|break|leak|fail|fade|rust|tear|shrink|peel)\b|\bnothing will (?:be damaged|be broken|be lost|break"
        r"|get (?:damaged|broken|scratched|lost))\b|\btake full responsibility\b|\bwe(?:'ll| will) recover all\b|^100 ?%$"
        r"|\b(?:claim|application|request|refund|visa|appeal) (?:is|has been) (?:approved|accepted|granted)\b"
        r"|\byou(?:'ll| will) be (?:pain|symptom|debt|stress|worry|pest|damp)[- ]free\b|\bwhile[- ]you[- ]wait (?:job|service"
        r"|repair)\b",
        must_block=(
            "We'll recover all your photos, nothing will be lost.",
            "The screen we fit will never crack from a normal drop.",
        ),
        must_pass=(
            "The frame warranty is handled by the manufacturer, so whether a claim is accepted is their decision, not ours.",
        ),
    ),
    Rule(
        id="outcome.en.in_full_every_time",
        category="outcome",
        language="en",
        pattern=r"\b(?:returned|refunded|repaid|paid back) in full\b|\bevery single (?:visit|time|day|session)\b"
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
        must_block=(
            "✅ Your deposit will be returned in full.",
            "It'll fit you like a glove, you won't regret it.",
        ),
        must_pass=("We accept cash and cards.",),
    ),
    Rule(
        id="outcome.en.count_on",
        category="outcome",
        language="en",
        pattern=r"\bwill never (?:come back|return|recur)\b|\byou can (?:count|rely|depend) on (?:that|it|this|us)\b",
        must_block=("The virus is completely removed and it will never come back, you can count on that.",),
        must_pass=("Delivery times depend on the carrier.",),
    ),
    Rule(
        id="outcome.en.zero_chance",
        category="outcome",
        language="en",
        pattern=r"\b(?:zero|0 ?%) chance (?:of|that) (?:it|its|the|this|that|your|them|they|anything)\b|\bstand (?:behind|by) (?:\w+ ){0,3}100 ?%|\bso will you\b|\byou(?:'ll| will) (?:be|become)"
        r" fluent\b",
        must_block=(
            "There's zero chance of the seal failing after we redo it.",
            "We stand behind this repair 100% — the leak won't come back.",
        ),
        must_pass=("Nobody can say there's zero chance of it happening again.",),
    ),
    Rule(
        id="outcome.zh.guarantee_word",
        category="outcome",
        language="zh",
        pattern=r"(?<!为)(?<!为了)保证(?!金|书)|承诺(?!书)|(?<![请为])(?<!为了)确保|担保(?!金)|保(?:您|你)满意",
        must_block=(
            "保您满意。",
            "签证保证下来。",
        ),
        must_pass=("我们无法保证。",),
    ),
    Rule(
        id="outcome.zh.yiding",
        category="outcome",
        language="zh",
        # "师傅们听了一定很高兴": a feeling guessed, in small talk, is no outcome.
        pattern=r"(?<!有)(?<![^申]请)(?<!^请)一定(?!要|的|程度|时间|范围|数量|比例|之|很?(?:开心|高兴|欣慰|感动|激动|乐))",
        must_block=(
            "一定给您办妥。",
            "退款一定能拿到。",
            "您一定会满意的。",
        ),
        must_pass=("不一定能在周五前到。", "谢谢夸奖！师傅们听了一定很高兴。"),
    ),
    Rule(
        id="outcome.zh.bao_guo",
        category="outcome",
        language="zh",
        pattern=r"包过|包(?:您|你)(?!的)|包满意|包成功|包通过|包退|包换|包赔|包治|包教包会|包在我身上|包票|稳过|稳赢|稳赚|稳拿|稳了|稳稳的|稳操胜券",
        must_block=(
            "包过。",
            "包您满意",
        ),
        must_pass=("这个我没法给您打包票。",),
    ),
    Rule(
        id="outcome.zh.certain_result",
        category="outcome",
        language="zh",
        pattern=r"(?:肯定|绝对|必定|必然|(?<![标水批精瞄对基])准|保准|准保|铁定|百分之百|百分百|100%)(?:就|都|也)?"
        r"(?:好了|没了|变清|变好|改善|提高|提升|见效|看不出|不留|没有任何|打不开|撬不开|弄不坏|不可能|不透光|不透|不漏|不掉色|合身|合适|安全|没事|不含|能|会|可以|没问题|行|成功|通过|过关|到|退|赔|满意|有效|治好|修好|不会|批|拿到|考上|消失|去除|去掉|见效|恢复|痊愈"
        r"|康复|解决|合格|达标)",
        must_block=(
            "肯定没问题。",
            "绝对可以修好。",
        ),
        must_pass=("不好意思，这个我说不准。",),
    ),
    Rule(
        id="outcome.zh.like_new_never_again",
        category="outcome",
        language="zh",
        pattern=r"(?:跟|和|像)新的一(?:模一)?样|焕然一新|(?:一辈子|永远|再也|终身|以后都)(?:都|也)?不会(?:再)?|不会再(?:坏|漏|歪|掉|裂|复发|反弹|出现|发生|感染|疼|痛|发绿|发黄|发霉|有)|绝不会",
        must_block=(
            "粘键调整好以后不会再出现。",
            "翻新之后您的皮靴会跟新的一样。",
        ),
        must_pass=("不能说以后再也不会坏。",),
    ),
    Rule(
        id="outcome.zh.completely_fixed",
        category="outcome",
        language="zh",
        pattern=r"(?:能|会|可以)?完全(?:去掉|去除|清除|消失|恢复|修好|修复|解决)|看不出任何|不会换人|不换人|(?:几年|多年|终身)都?不会(?:有|再)?"
        r"|保(?:一|两|三|半|\d+)年|坏了(?:直接)?(?:给(?:您|你))?换新|问题已经解决|不会再让|(?:一点都|完全|根本)看不出|谁都看不出|没人看得出|就会长(?:齐|好|出来)|不管\S{0,6}都|从不取消"
        r"|照常(?:起飞|营业|进行)|就能流利|能流利地|(?:会|能)(?:明显|完全|彻底)(?:消失|改善|好转)|一次就能(?:彻底)?(?:去除|去掉|解决|修好|治好)"
        r"|至少能(?:升|降|省|提高)|[一二三四五六七八九十百千\d几多]+年都不会|绝对(?:纯天然|正品|正宗|原装)|(?:费用|损失|运费)(?:全部|都)?由我们(?:来)?(?:承担|负责|出)"
        r"|已经给(?:您|你)(?:撤销|取消|退|免|办好)|是(?:您|你)的了?$|不会被别人|就不会(?:再)?(?:往|漏|坏|倒|冒|卡|出|掉|疼|痛)",
        must_block=(
            "画上的污渍修复时能完全去掉。",
            "做完这次治疗，牙就不会再疼了。",
        ),
        must_pass=("有些顽固污渍清洗后会变淡，但不一定能完全去掉。",),
    ),
    Rule(
        id="outcome.zh.full_refund",
        category="outcome",
        language="zh",
        pattern=r"也不会(?:卡|坏|漏|掉|裂|生锈|褪色|变形)|彻底不(?:疼|痛|痒|漏)|彻底(?:好了|治好|根治|解决)|照价赔偿|原价赔偿|全额(?:退款|退还|退费|赔偿|抵扣)"
        rf"|(?:肯定|保证|绝对)(?:在|不超过|低于|少于)\s?{ZH_N}|免费(?:重印|重做|重拍|重修|更换|补寄|重寄)",
        must_block=(
            "弄坏的那件衬衫我们照价赔偿。",
            "弄坏的那件衬衫我们照价赔偿。",
        ),
        must_pass=("这个问题能不能彻底解决，现在还不好说。",),
    ),
    Rule(
        id="outcome.zh.quick_heal",
        category="outcome",
        language="zh",
        pattern=r"(?:一次|马上|立刻|很快)就?(?:能|会)好|全额退(?:给|还)?(?:您|你)|(?:绝对|肯定|保证)查不出",
        must_block=(
            "这个药吃了一次就能好。",
            "租车押金全额退给您，这个没问题。",
        ),
        must_pass=("能不能马上就好，我说不准。",),
    ),
    Rule(
        id="outcome.zh.no_risk",
        category="outcome",
        language="zh",
        pattern=r"万无一失|零风险|没有(?:任何)?风险|毫无风险|可能性(?:是|为)?零|绝无问题|不会(?:有(?:任何)?)?问题|不会(?:再)?出(?:任何)?问题",
        must_block=(
            "零风险，不满意包退。",
            "万无一失，您就等好消息吧。",
        ),
        must_pass=("我不敢说不会有问题。",),
    ),
    Rule(
        id="outcome.zh.wont_fail",
        category="outcome",
        language="zh",
        pattern=r"不会失败|不会让(?:您|你)失望|放一百个心|跑不掉|跑不了|少不了(?:您|你)的|拍胸脯|拍着胸脯",
        must_block=(
            "我拍胸脯保证。",
            "您这种情况赔偿款是跑不掉的。",
        ),
        must_pass=("我们不敢说不会失败。",),
    ),
    Rule(
        id="outcome.zh.cure",
        category="outcome",
        language="zh",
        pattern=r"(?:能|可以|会)(?:治好|治愈|根治)|药到病除|必(?:赢|胜|过|成|定)|无论如何(?:都|也)?(?:会|能|一定)",
        must_block=(
            "这个官司我们必赢。",
            "这个病我们能治好，您尽管放心。",
        ),
        must_pass=("能不能治好要看医生的判断。",),
    ),
    Rule(
        id="outcome.zh.sure_success",
        category="outcome",
        language="zh",
        pattern=r"(?:我|我们)(?:很|非常)?确定(?:能|会|可以)|(?:准|肯定|绝对|铁定)成(?![本品员交为绩立])",
        must_block=("您就放心吧，这事儿准成。",),
        must_pass=("我不确定能不能成功。",),
    ),
)
