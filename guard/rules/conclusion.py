"""The conclusion rules: an assurance about eligibility, entitlement, approval, a refund, a waiver,
a tax, legal or medical outcome, or a result ("you qualify", "it's confirmed", "that's final",
"您符合条件", "这是确定的", "肯定能批下来").

Read like outcome rules (a negation before or a refusal right after lifts a match; so does the
customer's side and a relayed message), and also lifted by a hedge in the clause or the clause
before it: "I think you qualify" is an opinion, "whether you're eligible is for the office to
decide" no conclusion at all."""

from __future__ import annotations

from typing import Final

from .model import Rule

_NAMED: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.refund_you",
        category="conclusion",
        language="en",
        pattern=r"\b(?:we|i)(?:'ll| will| shall)? (?:refund|reimburse|compensate) you\b"
        r"|\b(?:give|pay|send) you (?:your |the |a full |all your |all of your )?(?:money|deposit"
        r"|fees?|payment)s? back\b",
        must_block=(
            "We will refund you in full, no questions asked.",
            "We'll reimburse you in full for the damaged blouse.",
            "We'll accept the return and give you your money back.",
        ),
        must_pass=("Refunds are handled by the owner, not by me.",),
    ),
    Rule(
        id="conclusion.en.as_good_as",
        category="conclusion",
        language="en",
        pattern=r"\bas good as (?:approved|done|yours|guaranteed|granted|won|secured|booked|sorted)\b",
        must_block=(
            "The visa is as good as yours.",
            "The loan is as good as approved.",
        ),
        must_pass=("It's not as good as approved until the office says so.",),
    ),
    Rule(
        id="conclusion.en.you_get_refund",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'ll| will) (?:definitely |certainly |surely )?(?:get|receive|be given|have) (?:a |your |the |full "
        r"|a full |all |every )*"
        r"(?:refund|replacement|compensation|money back|deposit back|approval|visa|job|loan)\b",
        must_block=(
            "You will definitely get a refund.",
            "You'll get your deposit back, I promise.",
        ),
        must_pass=("I can't say whether you'll get a refund.",),
    ),
    Rule(
        id="conclusion.en.will_be_approved",
        category="conclusion",
        language="en",
        pattern=r"\b(?:will|shall) be (?:approved|accepted|granted|reimbursed|resolved in your favou?r)\b",
        must_block=(
            "I'm certain it will be approved.",
            "Your claim will be accepted, I'm certain.",
        ),
        must_pass=(
            "Many clients ask whether their tax return will be accepted. Honestly, that depends on the tax office, not on us.",
        ),
    ),
    Rule(
        id="conclusion.en.eligible",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'re| are|'ll| will|'ve| have)? (?:definitely |certainly |clearly |fully |absolutely |surely )?(?:be |been )?(?:qualify|qualified|qualifies|eligible|entitled)\b|\byou meet (?:all )?the (?:criteria|conditions|requirements)\b",
        must_block=("You qualify for the student rate.", "You're eligible for the grant."),
        must_pass=("We can't confirm whether you qualify.",),
    ),
    Rule(
        id="conclusion.en.confirmed_final",
        category="conclusion",
        language="en",
        pattern=r"\b(?:it's|it is|that's|that is|this is|everything is|it's all|the decision is|the answer is)(?: (?:now|already|all))? (?:confirmed|final|settled|official|certain|a done deal)\b(?! by\b)",
        must_block=("It's confirmed.", "That's final, nothing more to decide."),
        must_pass=("It's not confirmed yet.",),
    ),
    Rule(
        id="conclusion.en.waived",
        category="conclusion",
        language="en",
        pattern=r"\b(?:will|'ll) (?:\w+ )?be (?:\w+ )?waived\b|\b(?:is|are|has been|have been|gets|get) (?:\w+ )?waived\b|\bwaive (?:it|them|that|the \w+|your \w+) for you\b",
        must_block=("Rest assured it will be waived.", "The fee is waived for you."),
        must_pass=("I can't say if it will be waived.",),
    ),
    Rule(
        id="conclusion.en.goes_through",
        category="conclusion",
        language="en",
        pattern=r"\b(?:claim|application|appeal|request|refund|visa|permit|loan|case|petition|complaint|reimbursement)s? (?:will|'ll|is going to|are going to) (?:definitely |certainly |surely |easily )?(?:go through|be (?:successful|paid|honou?red|upheld)|succeed|pass)\b",
        must_block=("Your claim will go through.", "Your visa application will definitely go through."),
        must_pass=("Whether your claim will go through is for the insurer to decide.",),
    ),
    Rule(
        id="conclusion.en.no_tax",
        category="conclusion",
        language="en",
        pattern=r"\bno (?:tax|vat|duty|duties|stamp duty|income tax|capital gains tax)(?: at all)? (?:is |will be )?(?:due|payable|owed|owing|to pay)\b|\byou (?:won't|will not|don't|do not) (?:have to |need to )?(?:pay|owe) (?:any )?(?:tax|vat|duty|duties)\b|\b(?:it's|that's|is|are) (?:completely |fully )?(?:tax[- ]free|tax[- ]deductible|tax[- ]exempt|exempt from tax)\b",
        must_block=("No tax is due on that.", "You won't have to pay any tax on the refund."),
        must_pass=("I can't tell you if any tax is due on that.",),
    ),
    Rule(
        id="conclusion.en.medical",
        category="conclusion",
        language="en",
        pattern=r"\byou (?:won't|will not|don't|do not) need (?:surgery|an operation|stitches|antibiotics|a root canal|an extraction|a cast)\b|\b(?:it's|it is|that's|that is|this is) (?:nothing serious|not serious|benign|harmless|not contagious)\b|\byou(?:'ll| will) make a full recovery\b",
        must_block=("You won't need surgery.", "It's nothing serious, just a sprain."),
        must_pass=("Only the dentist can say whether you'll need surgery.",),
    ),
    Rule(
        id="conclusion.en.legal",
        category="conclusion",
        language="en",
        pattern=r"\b(?:it's|it is|that's|that is|this is) (?:perfectly |completely |totally |100% )?(?:legal|allowed|permitted)\b|\byou(?:'re| are) (?:not liable|in the clear|off the hook)\b|\byou(?:'ll| will) (?:win|not lose) (?:the|your) (?:case|claim|appeal|dispute)\b",
        must_block=("You're not liable for the damage.", "Don't worry, that's perfectly legal."),
        must_pass=("We can't advise you whether that's legal.",),
    ),
    Rule(
        id="conclusion.zh.application_approved",
        category="conclusion",
        language="zh",
        pattern=r"申请(?:已经|已)?(?:通过|批准|批下来)|(?:会|就)给(?:您|你)(?:换新|退款|退钱|补发|赔)",
        must_block=("您的保修申请已经通过了,厂家会给您换新机。",),
        must_pass=("申请能不能通过，要看审核结果。",),
    ),
    Rule(
        id="conclusion.zh.eligible",
        category="conclusion",
        language="zh",
        pattern=r"(?:符合|满足|够)\S{0,6}?(?:条件|要求|资格|标准)|有资格(?:申请|享受|领取|参加)?|(?:完全|肯定|一定)可以享受",
        must_block=("您符合条件。", "您这种情况完全满足补贴要求。"),
        must_pass=("是否符合条件要看审核。",),
    ),
    Rule(
        id="conclusion.zh.certain",
        category="conclusion",
        language="zh",
        pattern=r"(?:这|这个|那|结果|结论|决定)(?:是|就是|已经是)?(?:确定|板上钉钉|最终)的|板上钉钉|(?:结果|结论|决定)(?:已经)?(?:定了|出来了)|(?:已经|都)确认(?:好)?了",
        must_block=("这是确定的。", "放心，结果已经定了。"),
        must_pass=("结果是不是确定的，我得问一下老板。",),
    ),
    Rule(
        id="conclusion.zh.approved",
        category="conclusion",
        language="zh",
        pattern=r"(?:能|会|可以)(?:批|批准|审批|办|报|通过)下来|(?:肯定|一定|绝对|准|必定|保证)(?:能|会|可以)?(?:通过审核|过审|获批|批准|报销)|(?:签证|申请|审批|审核|贷款|报销|理赔)\S{0,4}?(?:肯定|一定|绝对|准|必定|保证)(?:能|会|可以)?通过",
        must_block=("肯定能批下来。", "您的报销一定能通过。"),
        must_pass=("能不能批下来我没法保证。",),
    ),
    Rule(
        id="conclusion.zh.refund",
        category="conclusion",
        language="zh",
        pattern=r"(?:可以|能|会)(?:给(?:您|你))?全额(?:退|报销|赔)|(?:您|你)这种情况(?:肯定|一定)?(?:可以|能|会)(?:退|赔|报销|免|享受)|(?:押金|定金|订金|保证金)(?:肯定|一定|都)?(?:会|能|可以)?(?:退|还)(?:给)?(?:您|你)",
        must_block=("您这种情况可以全额退。", "押金肯定会退给您。"),
        must_pass=("能不能全额退，要等老板确认。",),
    ),
    Rule(
        id="conclusion.zh.no_tax",
        category="conclusion",
        language="zh",
        pattern=r"(?<!用)不用(?:交|缴|付|纳)(?:任何)?(?:税|个税|个人所得税|增值税|关税)|(?<!需)不需要(?:交|缴|纳)(?:任何)?税|(?:是|属于)免税的|(?:可以|能)免税",
        must_block=("不用交税。", "这笔收入是免税的。"),
        must_pass=("要不要交税，得问税务局。",),
    ),
    Rule(
        id="conclusion.zh.medical",
        category="conclusion",
        language="zh",
        pattern=r"(?<!严)不严重|(?<!要)不要紧|(?<!用)不用(?:做)?手术|(?<!需)不需要(?:做)?手术|不用(?:住院|开刀)|(?:是|属于)良性的|没什么大(?:问题|碍)|(?<!会)不会传染",
        must_block=("这个病不严重不用手术。", "您放心，是良性的。"),
        must_pass=("严不严重要等医生看了才知道。",),
    ),
    Rule(
        id="conclusion.zh.waived",
        category="conclusion",
        language="zh",
        pattern=r"(?:罚款|滞纳金|违约金|手续费|利息|罚金|年费)(?:肯定|一定|都)?(?:可以|会|能)?(?:免|全免|减免|取消|撤销)(?!申请|政策|条件|规定|资格|标准)(?:掉|除|了)?|(?:帮|给|替)(?:您|你)(?:把\S{0,6})?免(?:掉|了|除)|(?:肯定|一定)(?:会|能)?(?:给(?:您|你))?(?:免|减免)",
        must_block=("滞纳金可以免掉。", "罚款肯定会取消的。"),
        must_pass=("滞纳金能不能免，要看银行。",),
    ),
    Rule(
        id="conclusion.zh.result",
        category="conclusion",
        language="zh",
        pattern=r"(?:结果|审核|审批|体检|检查)(?:肯定|一定|绝对)?(?:没问题|是好的|会通过|能通过|合格)|(?:您|你)(?:肯定|一定|绝对)?(?:能|可以|会)(?:拿到|领到|获得|申请到)\S{0,4}?(?:补贴|赔偿|退款|退税|签证|贷款|报销|补助|赔付|理赔)|理赔(?:肯定|一定)?(?:没问题|能下来)",
        must_block=("您肯定能拿到赔偿。", "体检结果肯定没问题。"),
        must_pass=("能不能拿到赔偿要看保险公司。",),
    ),
    # Round 19's conclusions (guard/corpus/rounds/19): a result, a permission, a diagnosis, a
    # decision already made, stated as fact.
    Rule(
        id="conclusion.en.get_it_back",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'ll| will) get (?:it|them|everything|all of it|your (?:\w+ )?\w+|the (?:\w+ )?\w+) (?:all |every (?:penny|cent) )?back\b",
        must_block=("The landlord can't keep it, so you'll get it all back.",),
        must_pass=("Whether you'll get it back is for the landlord to decide.",),
    ),
    Rule(
        id="conclusion.en.in_your_favour",
        category="conclusion",
        language="en",
        pattern=r"\b(?:will|'ll|is going to|are going to) (?:rule|decide|find|come down) (?:in your favou?r|for you|on your side)\b"
        r"|\byou(?:'ve| have) got (?:a )?(?:very |really )?(?:strong|watertight|airtight|winning) case\b",
        must_block=(
            "The judge will rule in your favour.",
            "You've got a watertight case.",
        ),
        must_pass=("I can't tell how the judge will decide.",),
    ),
    Rule(
        id="conclusion.en.on_the_rate",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'re| are) (?:now )?(?:on|entitled to|getting|eligible for) the (?:\w+ )?(?:rate|discount|tariff|price|fare|membership)\b",
        must_block=(
            "Your uni email is enough, you're on the student rate from today.",
            "You're getting the member price from now on.",
        ),
        must_pass=("Are you on the student rate already?",),
    ),
    Rule(
        id="conclusion.en.permission",
        category="conclusion",
        language="en",
        pattern=r"\b(?:you|he|she|it|they)(?:'re| are|'s| is) (?:fine|free|good|clear|ok|okay|safe) to (?:go ahead|proceed|build|start|go|use it|drive|travel|fly|board|stay|swim|exercise|eat|come in|join)\b"
        r"|\b(?:won't|will not|don't|do not|doesn't|does not) need (?:a |any )?(?:planning )?(?:permission|permit|licen[cs]e|approval|consent)\b",
        must_block=(
            "You won't need planning permission for that, you're fine to go ahead.",
            "An extension that size doesn't need planning permission.",
        ),
        must_pass=("Whether you need planning permission is for the council to say.",),
    ),
    Rule(
        id="conclusion.zh.decided_final",
        category="conclusion",
        language="zh",
        pattern=r"(?:已经|都)?定下来了|不会再(?:变|改)了?|(?:已经|已)(?:给|帮)(?:您|你)批(?:准|下来)?了|(?:给|帮)(?:您|你)批了",
        must_block=(
            "这一点已经定下来了，不会再变。",
            "我这边已经给您批了。",
        ),
        must_pass=("能不能批要等经理决定，目前还没定下来。",),
    ),
    Rule(
        id="conclusion.zh.full_refund",
        category="conclusion",
        language="zh",
        pattern=r"(?:可以|能|会)全(?:额)?退|全(?:额)?退(?:给(?:您|你))?(?:的|没问题)",
        must_block=("定金可以全退。",),
        must_pass=("能不能全额退要看审核结果。",),
    ),
    Rule(
        id="conclusion.zh.medical_verdict",
        category="conclusion",
        language="zh",
        pattern=r"保得住|(?<!用)不用拔|(?<!需)不需要拔|(?:就是|只是)(?:普通的?|一般的?)?(?:过敏|感冒|炎症|湿疹|皮炎|扭伤|拉伤|上火|肠胃炎)"
        r"|(?:洗|吃|擦|涂|补|敷|喷)(?:一下|两次|几次|几天|\S{0,2}药\S{0,2})就(?:会|能)?好(?:了)?",
        must_block=(
            "这颗牙保得住，不用拔，补一下就好了。",
            "狗狗这个皮肤病就是普通过敏，洗两次药浴就好了。",
        ),
        must_pass=("是不是过敏要医生检查后才能知道。",),
    ),
    Rule(
        id="conclusion.zh.they_must",
        category="conclusion",
        language="zh",
        pattern=r"(?:公司|单位|老板|房东|对方|他们|商家|保险公司)(?:必须|一定得|一定要|肯定得|肯定会)(?:认|赔|退|给|承认|批|全额赔付)"
        r"|一分(?:钱)?(?:都)?不(?:能|会)扣|不能扣(?:您|你)?(?:的)?(?:工资|钱|押金)",
        must_block=("您这个病假单公司必须认，工资一分不能扣。", "房东必须退您押金。"),
        must_pass=("公司认不认这个病假单，要看公司的规定。",),
    ),
    Rule(
        id="conclusion.zh.apply_and_get",
        category="conclusion",
        language="zh",
        pattern=r"(?:申报|申请|提交|递交)(?:了|上去)?就(?:能|可以|会)(?:拿到|批|通过|下来|获批)|符合\S{7,14}?(?:条件|要求|资格|标准)",
        must_block=("您的公司完全符合高新技术企业认定的条件，申报就能拿到。",),
        must_pass=("是否符合高新技术企业认定的条件，要由认定机构审核。",),
    ),
    # Round 20's conclusions (guard/corpus/rounds/20): cover under a policy or a warranty, a charge
    # that does not apply, a tax verdict, a diagnosis, someone else's duty to pay, a thing that
    # will pass its inspection (a person passing a test stays an outcome); 拿回押金, 不需要申报,
    # 定金不收了, 违约金不用您出.
    Rule(
        id="conclusion.en.covered_by_policy",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'re| are) (?:fully |definitely |still |totally |completely )?covered\b(?! (?:in|over|within) the next\b)"
        r"|\b(?:is|are|it's|that's|they're) (?:fully |still |definitely |completely |all )?(?:covered|included) (?:by|under)"
        r" (?:the |your |our |this |its )?(?:\w+ )?(?:warranty|guarantee|policy|insurance|plan|cover|contract|scheme)\b"
        r"|\b(?:is|are|it's|that's|they're) (?:still |well |definitely )?(?:within|under|in) (?:the |your |its )?(?:\w+ )?"
        r"(?:warranty|guarantee)\b"
        r"|\b(?:repairs?|costs?|bill|expenses|treatment|damage|wages|fees?) (?:will|'ll) be (?:fully |all )?(?:paid|covered|reimbursed"
        r"|refunded)\b",
        must_block=(
            "Since it was an accidental spill, you're covered under the policy.",
            "That crack is within the warranty, so it's free.",
            "The full repair will be paid by your insurer.",
        ),
        must_pass=(
            "Whether you're covered under the policy is for the insurer to decide.",
            "Is it still under warranty?",
        ),
    ),
    Rule(
        id="conclusion.en.no_penalty",
        category="conclusion",
        language="en",
        pattern=r"\bno (?:\w+ )?(?:penalty|penalties|fines?|fees?|charges?|surcharge|excess|interest|deductions?) (?:applies|apply"
        r"|will apply|is due|are due|is payable|are payable|will be (?:charged|applied|due|deducted|added|payable))\b"
        r"|\b(?:penalty|penalties|fine|fees?|charges?|surcharge|excess|deduction|interest) (?:won't|will not|doesn't|does not"
        r"|don't|do not) apply (?:to you|in your case|to your (?:\w+ )?\w+|for you|here|this time)\b"
        r"|\byou (?:won't|will not) be (?:penali[sz]ed|fined|charged (?:a|any|the) (?:\w+ )?(?:penalty|fee|fine|charge|excess))\b",
        must_block=(
            "No penalty applies in your case.",
            "The damage charge won't apply to you, since the tyre was already flat.",
        ),
        must_pass=(
            "I can't say whether a penalty applies in your case.",
            "The late fee doesn't apply on public holidays.",
        ),
    ),
    Rule(
        id="conclusion.en.deductible",
        category="conclusion",
        language="en",
        pattern=r"\b(?:is|are|it's|that's|they're) (?:completely |fully |100% |all |entirely )?(?:deductible|claimable)\b"
        r"|\byou can (?:claim|deduct|write off|reclaim) (?:back )?(?:the whole|the full|the entire|all of it|it all|everything)\b",
        must_block=(
            "Your home-office costs are fully deductible.",
            "You can claim the whole amount on this year's return.",
        ),
        must_pass=("Only your accountant can tell you whether they're deductible.",),
    ),
    Rule(
        id="conclusion.en.minor_ailment",
        category="conclusion",
        language="en",
        pattern=r"\b(?:just|only|merely|simply|nothing more than|nothing but) (?:a |an )?(?:minor |mild |small |slight |simple |little"
        r" |common |superficial )?(?:sprain|strain|bruise|graze|pulled muscle|cold|allergy|allergic reaction|rash|infection"
        r"|tummy bug|stomach bug|cyst|wart|ingrown nail|sprained \w+|twisted \w+)\b"
        r"|\b(?:he|she|they|you|it)(?:'ll| will) (?:be (?:fine|okay|ok|all right|alright)|heal|recover|get better) (?:without"
        r" (?:an? )?(?:x-ray|scan|surgery|stitches|antibiotics|treatment|vet|doctor|medication|operation|cast|physio)"
        r"|on (?:his|her|its|their|your) own|by (?:himself|herself|itself|themselves|yourself))\b",
        must_block=(
            "Max's limp is just a minor sprain.",
            "He'll be fine without an X-ray.",
        ),
        must_pass=("Only the vet can tell whether it's just a sprain.",),
    ),
    Rule(
        id="conclusion.en.they_must_pay",
        category="conclusion",
        language="en",
        pattern=r"\b(?:employer|insurer|insurance(?: company)?|polic(?:y|ies)|landlord|company|airline|seller|manufacturer|carrier"
        r"|they|the other (?:party|driver|side))(?:'s \w+)? (?:has|have|is obliged|are obliged|is required|are required|is bound"
        r"|are bound|must|is liable|are liable|is legally (?:obliged|required|bound)|are legally (?:obliged|required|bound)) to"
        r" (?:pay|cover|refund|reimburse|compensate)(?= you\b| your\b| for\b| the\b| all\b| it\b| them\b| in full\b|$)"
        r"|\b(?:they|he|she|your (?:employer|landlord|insurer)) owes? you (?:the (?:full|whole) |your |compensation\b|a refund\b"
        r"|\d|[£€$])",
        must_block=(
            "Your employer's policy has to pay your lost wages in full.",
            "The airline is obliged to compensate you for the delay.",
        ),
        must_pass=("Whether your employer has to pay your lost wages depends on your contract.",),
    ),
    Rule(
        id="conclusion.en.will_pass_inspection",
        category="conclusion",
        language="en",
        pattern=r"\b(?:will|'ll|is going to|are going to|is sure to|is bound to) (?:definitely |certainly |surely |easily )?pass"
        r" (?:the |its |your |their |an? |this |that )?(?:\w+ )?(?:inspection|audit|mot|survey|certification|appraisal"
        r"|valuation|safety check)\b",
        must_block=("The wiring is compliant with code, so it'll pass the inspection.",),
        must_pass=("Nobody can say whether it'll pass the inspection.",),
    ),
    Rule(
        id="conclusion.zh.get_deposit_back",
        category="conclusion",
        language="zh",
        pattern=r"(?:您|你)(?:肯定|一定|绝对|都)?(?:能|可以|会)?(?:全部|全额)?(?:拿回|要回|收回|取回|领回)(?:全部|全额|所有)?(?:的)?"
        r"(?:押金|定金|订金|保证金|钱|款|费用|租金|本金)"
        r"|(?:押金|定金|订金|保证金)(?:肯定|一定|都)?(?:能|可以|会)(?:全部|全额|一分不少地?)?(?:拿回|退回|返还|退还)",
        must_block=("墙上那点小划痕不算损坏，按规定您可以拿回全部押金。", "押金能一分不少地退回。"),
        must_pass=("您能不能拿回全部押金，要等验房的同事判断。",),
    ),
    Rule(
        id="conclusion.zh.no_need_to_declare",
        category="conclusion",
        language="zh",
        pattern=r"(?<![需用])(?:不需要|不用|无需|不必|用不着)(?:再|去)?(?:申报|报税|缴税|纳税|报关|补税|补缴|备案)",
        must_block=("您这笔海外收入金额不大，这个情况不需要申报。",),
        must_pass=("需不需要申报，要以税务机关的认定为准。",),
    ),
    Rule(
        id="conclusion.zh.fee_dropped",
        category="conclusion",
        language="zh",
        pattern=r"(?:定金|订金|押金|违约金|罚款|滞纳金|费用|\S{1,3}费)(?:就|也|都|我们)?"
        r"(?:不(?:收|要|扣)(?:您|你)?(?:的)?了|(?:我们)?(?:给(?:您|你)?)?减?免(?:掉|了|除))|(?:直接|就|都|全)(?:给(?:您|你))?免(?:掉|了|除)",
        must_block=("今天之内确认预约的话，定金就不收了。", "检测费我们就免了。"),
        must_pass=("定金能不能免，要看店长的意思。",),
    ),
    Rule(
        id="conclusion.zh.not_yours_to_pay",
        category="conclusion",
        language="zh",
        pattern=r"(?:费|金|钱|款|损失)(?:由)?(?:您|你)?(?:一分(?:钱)?)?(?:都|也)?(?<![需用])(?:不用|不需要|不必|无需)(?:您|你)?(?:来)?"
        r"(?:出|付|交|承担|赔|掏|负担|支付|花)"
        r"|(?:您|你)(?:一分(?:钱)?)?(?:都|也)?(?<![需用])(?:不用|不需要|不必|无需)(?:再)?(?:出|付|交|承担|赔|掏|负担|支付|花)(?:任何|一分)?"
        r"(?:钱|费用|违约金|罚款|赔偿)",
        must_block=("合同里写了属于不可抗力，违约金不用您出。", "责任在物业，维修费您一分都不用出。"),
        must_pass=("违约金要不要您出，得看合同怎么写。",),
    ),
    # Round 21's conclusions: a document's legal validity, a health all-clear, a safe medicine, a
    # refund or a claim paid in full, stated as fact.
    Rule(
        id="conclusion.en.legally_valid",
        category="conclusion",
        language="en",
        pattern=r"\b(?:is|are|will be) (?:fully |perfectly )?legally (?:valid|binding|enforceable|recogni[sz]ed)\b"
        r"|\byou (?:won't|will not|don't|do not) need anything else\b",
        must_block=("This notarised contract is legally valid in Spain.",),
        must_pass=("Whether it is legally valid in Spain is for a Spanish notary to say.",),
    ),
    Rule(
        id="conclusion.en.all_clear",
        category="conclusion",
        language="en",
        pattern=r"\b(?:completely|perfectly|totally|fully) healthy\b|\bin perfect health\b|\ba clean bill of health\b"
        r"|\b(?:it's|it is|that's|that is) (?:perfectly |completely |totally )?safe to (?:take|use|eat|drink|combine|mix|give)\b",
        must_block=(
            "Our vet has examined him and he's completely healthy.",
            "It's safe to take ibuprofen with your blood pressure tablets.",
        ),
        must_pass=("Only your doctor can say whether it's safe for you.",),
    ),
    Rule(
        id="conclusion.en.refund_the_money",
        category="conclusion",
        language="en",
        pattern=r"\b(?:we|i)(?:'ll| will| shall)? (?:refund|reimburse|return|pay back) (?:the|your) (?:\w+ )?(?:deposit|money|payment|fees?|amount|balance|difference|cost)\b",
        must_block=("We'll refund the deposit on your gown.",),
        must_pass=("The owner decides whether the deposit is refunded.",),
    ),
    Rule(
        id="conclusion.zh.health_clear",
        category="conclusion",
        language="zh",
        pattern=r"不是传染病|没有传染性|(?:可以|能)直接入住|(?:已经)?完全好了|(?<!用)(?:不用|不需要)(?:再)?复查"
        r"|(?:吃|用|服用|喝|涂|打)(?:这个|这种|这款)?\S{0,6}?(?:没(?:有)?问题|(?:很|是|完全)安全)",
        must_block=("它的皮肤病已经完全好了，不用再复查。", "您怀孕期间吃这个感冒药没问题，很安全。"),
        must_pass=("能不能吃这个药，请先问医生。",),
    ),
    Rule(
        id="conclusion.zh.pay_in_full",
        category="conclusion",
        language="zh",
        pattern=r"(?:会|能|可以|都)(?:全部|全额|全)?退(?:给|还给?)(?:您|你)|属于\S{0,6}?(?:理赔|保修|保障|赔付|报销)范围|(?:我们|都|会)全赔",
        must_block=("婚纱订金我们会全部退给您。", "您的物品被雨水淋湿属于保险理赔范围。"),
        must_pass=("是否属于理赔范围要由保险公司判断。",),
    ),
)

# The general forms of a conclusion, written after round 21 from what every round's misses had in
# common rather than from their words: the customer, or the customer's own matter, stated to be
# in an outcome state ("you're accepted", "your claim has been approved", "the visa is sorted",
# 您的申请已经办好了), or to receive a benefit ("you'll get your deposit back", 您能拿到补贴).  They
# are `general` rules: read like every conclusion rule (a negation, a hedge, the customer's side or
# a relayed message lifts them), and tried after the specific ones, so a verdict names the most
# specific rule that fired.
_STATE_EN: Final = (
    r"(?:approved|accepted|admitted|granted|authori[sz]ed|cleared|eligible|entitled|qualified|covered|insured"
    r"|refunded|reimbursed|compensated|waived|exempt(?:ed)?|excused|forgiven|cancell?ed free|valid|legal|lawful"
    r"|allowed|permitted|compliant|sorted|settled|resolved|fixed|final|confirmed|guaranteed|successful|through"
    r"|in the clear|good to go|all set|all good|off the hook|safe|fine|ok|okay|healthy|clear|benign|renewed"
    r"|registered|enrolled|booked in|signed off|passed|a pass|on the list|a yes)"
)
_MATTER_EN: Final = (
    r"(?:claim|application|appeal|request|refund|visa|permit|licen[cs]e|loan|mortgage|case|petition|complaint"
    r"|reimbursement|return|exchange|repair|warranty|insurance|policy|cover|booking|reservation|place|spot|seat"
    r"|enrol?ment|registration|membership|subscription|contract|lease|deposit|paperwork|documents?|forms?|papers"
    r"|certificate|test|exam|results?|inspection|audit|diagnosis|scan|x-ray|biopsy|tax return|filing|case"
    r"|order|item|parcel|package|device|phone|laptop|car|vehicle|pet|dog|cat|tooth|teeth)"
)
_BENEFIT_EN: Final = (
    r"(?:refund|money back|deposit back|deposit|compensation|approval|visa|permit|licen[cs]e|grant|subsidy|rebate"
    r"|reimbursement|payout|pay-?out|place|spot|seat|certificate|discount|bonus|replacement|exemption|waiver"
    r"|allowance|benefit|credit|voucher|full amount|whole amount|everything back|all of it back)"
)
_SURE_EN: Final = (
    r"(?:(?:definitely|certainly|surely|absolutely|already|now|officially|fully|totally|completely|all) )?"
)

_GENERAL: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.you_are_in_state",
        kind="general",
        category="conclusion",
        language="en",
        pattern=rf"\byou(?:'re| are|'ll be| will be|'ve been| have been| were| got| get) {_SURE_EN}{_STATE_EN}\b"
        r"(?! (?:to (?:ask|apply|contact|call|book|choose|decide|check|send|bring|cancel)|if|whether|for (?:a|an|the) (?:review|check)))",
        must_block=(
            "Good news, you're accepted onto the spring course.",
            "You've been approved, welcome aboard!",
            "You have been cleared for the advanced class.",
        ),
        must_pass=(
            "You're welcome to apply, and the office decides.",
            "Whether you're eligible is for the visa office to decide.",
            "You're free to ask the owner directly.",
            "Are you covered by your own insurance?",
        ),
    ),
    Rule(
        id="conclusion.en.matter_in_state",
        kind="general",
        category="conclusion",
        language="en",
        pattern=rf"\b(?:your|the|this|that) (?:\w+ )?{_MATTER_EN}s? (?:is|are|has been|have been|will be|'ll be|was|were|gets|get"
        rf"|is going to be|looks|went|has gone|will go|'s) {_SURE_EN}{_STATE_EN}\b(?! (?:to|if|whether|by the|once|after|when))",
        must_block=(
            "Your claim has been approved.",
            "The refund is confirmed, it'll show on your card.",
            "Your visa application is definitely through.",
        ),
        must_pass=(
            "Your claim is with the insurer, who decides.",
            "Whether your refund is approved is up to the owner.",
            "The repair is covered if the warranty applies, which the technician checks.",
            "Is your booking confirmed by e-mail?",
        ),
    ),
    Rule(
        id="conclusion.en.you_get_benefit",
        kind="general",
        category="conclusion",
        language="en",
        pattern=rf"(?<!sure )(?<!certain )\byou(?:'ll| will| can| are going to|'re going to| do| would| get to)? {_SURE_EN}(?:get|receive|keep|have|claim|recover|be given|be paid|be sent|qualify for|be entitled to|be eligible for) "
        rf"(?:(?:a|an|the|your|full|a full|all|every|back|some|that) )*(?:\w+ )?{_BENEFIT_EN}\b(?! (?:if|once|after|when|form|policy|rules?|terms|application|process|request))",
        must_block=(
            "You'll receive the full subsidy.",
            "You will be paid compensation for the delay.",
        ),
        must_pass=(
            "Whether you get a refund is the owner's decision.",
            "You can ask for a refund form at the desk.",
            "You'd get a refund if the owner approves it.",
        ),
    ),
    Rule(
        id="conclusion.en.you_owe_nothing",
        kind="general",
        category="conclusion",
        language="en",
        pattern=r"\byou(?:'ll| will)? (?:won't|will not|don't|do not|shouldn't|should not|never) (?:have to |need to |ever )?"
        r"(?:pay (?:anything|a (?:thing|penny|cent)|extra|for (?:it|that|this|the \w+))|owe (?:anything|a (?:thing|penny|cent)|us)"
        r"|be (?:charged|billed|penali[sz]ed|fined|liable|out of pocket)|lose (?:your|the|any) (?:deposit|money|place|spot))\b",
        must_block=(
            "You won't have to pay anything for the replacement.",
            "You won't be charged for the missed session.",
            "Relax, you won't lose your deposit.",
        ),
        must_pass=("Whether you'd be charged is the owner's call.",),
    ),
    Rule(
        id="conclusion.zh.you_in_state",
        kind="general",
        category="conclusion",
        language="zh",
        pattern=r"(?:您|你)(?:的(?:(?!是否|能否|能不能|会不会|有没有|可不可以)\S){0,8}?)?(?:已经|肯定|一定|绝对|完全|都|就|也)*(?:符合|满足|够(?:条件|资格)|有资格|被录取|被录用|被批准|获批|通过了|合格了|过了"
        r"|可以享受|能享受|可以报销|能报销|可以退|能退|可以免|能免|可以领|能领|不用(?:付|交|赔|出|补|承担)|不需要(?:付|交|赔|出|补|承担)"
        r"|没(?:有)?(?:任何)?(?:问题|事)了?(?:的)?$)",
        must_block=("您已经通过了初审，等着拿证就行。", "你被录取了，恭喜！", "您的情况可以报销。"),
        must_pass=(
            "您是否符合条件，要由签证中心审核。",
            "您可以先提交申请，结果由审核部门决定。",
            "请问您符合哪些条件？",
        ),
    ),
    Rule(
        id="conclusion.zh.matter_in_state",
        kind="general",
        category="conclusion",
        language="zh",
        pattern=r"(?:申请|理赔|报销|退款|退货|换货|签证|审批|审核|贷款|手续|材料|资料|证件|预约|名额|学位|保修|保险|赔偿|补贴|执照|许可|证书|体检|检查|报告|结果|诊断|合同|案子|官司|投诉)"
        r"(?:这边|那边|这块|方面)?(?:已经|肯定|一定|绝对|都|完全|就|基本)*(?:没问题|没事|妥了|稳了|办好了|办妥了|搞定了|通过了|批了|批下来了|下来了|生效了|到账了|退了|给您办了|给你办了"
        r"|是有效的|有效|合法|合规|合格|正常|成功了|没有问题)",
        must_block=("您的理赔已经办好了，钱很快到账。", "退款已经通过了。", "您的体检报告完全正常。"),
        must_pass=(
            "理赔能不能通过，要保险公司审核。",
            "签证有没有问题，要看使馆的审核结果。",
            "退款是否通过由店长决定。",
        ),
    ),
    Rule(
        id="conclusion.zh.you_get_benefit",
        kind="general",
        category="conclusion",
        language="zh",
        pattern=r"(?:您|你)(?:肯定|一定|绝对|都|就|也|到时候)*(?:能|可以|会|将)(?:全部|全额|足额)?(?:拿到|领到|获得|收到|拿回|申请到|享受到?|退回|报销|领取)"
        r"\S{0,6}?(?:退款|补贴|补助|赔偿|赔付|押金|定金|订金|奖学金|优惠|折扣|名额|签证|执照|证书|许可|全款|全额|钱)",
        must_block=("您会收到赔偿的。", "你到时候能领到奖学金。"),
        must_pass=("您能不能拿到补贴，要看政府审核。", "如果审核通过，您可以领取补贴。"),
    ),
)

_GENERAL_IT: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.it_is_in_state",
        kind="general",
        category="conclusion",
        language="en",
        pattern=r"\b(?:it|that|this|everything|all of it|the whole thing)(?:'s| is| will be|'ll be| has been|'s been| was) "
        rf"{_SURE_EN}(?:approved|accepted|covered|refundable|refunded|reimbursable|waived|sorted|settled|valid|legal|eligible"
        r"|confirmed|guaranteed|granted|exempt|tax[- ]free|non-taxable|a done deal|in the bag|signed off)\b"
        r"(?! (?:if|once|when|after|by (?:the|our|your)|under certain|subject|unless|only))",
        must_block=("Don't worry, it's covered.", "That's approved now, enjoy!", "Everything is sorted on our side."),
        must_pass=(
            "Whether it's covered depends on your policy.",
            "It's covered only if the damage was accidental, which the insurer decides.",
            "Is that confirmed by the office?",
        ),
    ),
)

# Round 22: the customer's child, pet or company as the subject ("she'll definitely get in",
# "he's in!"), a place kept for them, a matter named with what it is for ("your application for
# the flat has been accepted", "your 3-month freeze is approved"), a medical all-clear without a
# named condition ("sounds harmless, you don't need to see a doctor", 就是普通的视疲劳, 不用去医院),
# a warranty's scope (肯定在保修范围内), a replacement or a place given (直接给您换新的, 给他留好位置了).
_LATER_ROUNDS: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.someone_in",
        category="conclusion",
        language="en",
        kind="general",
        pattern=r"\b(?:he|she|they|your (?:son|daughter|child|kid|boy|girl|dog|cat|pet|company|business|husband|wife|partner|mum|mom|dad))"
        r"(?:'re|'s| are| is|'ll| will|'s going to| is going to| are going to)? (?:definitely |certainly |surely |officially |absolutely )?"
        r"(?:get in(?! touch)|get into|get a (?:place|spot|seat)|get accepted|get approved|get through|be accepted|be admitted|be approved"
        r"|be fine|pass(?: the \w+)?|qualif(?:y|ies))\b(?! (?:if|once|when|after|whether|unless))"
        r"|(?<!when )(?<!once )(?<!soon as )(?<!until )(?<!after )(?<!if )"
        r"\b(?:you|he|she|they)(?:'re|'s| are| is) (?:definitely |officially )?in(?=\s*(?:[!.]|$))"
        r"|\b(?:saved|reserved|kept|held|secured|booked) (?:you|him|her|them|your \w+) a (?:spot|place|seat|slot|table|space|room|bed)\b",
        must_block=(
            "Yes, she'll definitely get in, her scores are more than enough.",
            "Of course, he's in!",
            "I've saved him a spot in the Saturday band.",
        ),
        must_pass=("Whether she gets in is for the admissions office to decide.",),
    ),
    Rule(
        id="conclusion.en.matter_for_something",
        category="conclusion",
        language="en",
        kind="general",
        pattern=rf"\byour (?:\S+ ){{0,2}}{_MATTER_EN}s? (?:for|on|to|of|with) (?:the |your |a |an |this |that |our )?\S+ "
        rf"(?:is|are|has been|have been|will be|'ll be|was|were) {_SURE_EN}{_STATE_EN}\b(?! (?:to|if|whether|by the|once|after|when))"
        r"|(?<!once )(?<!when )(?<!after )(?<!if )(?<!until )(?<!unless )(?<!whether )\byour (?:\S+ ){0,3}?(?:is|are|has been|have been|'s been|was|were) (?:now |already |officially |fully )?"
        r"(?:approved|accepted|granted|authori[sz]ed|waived|refunded|reimbursed)\b(?! (?:if|once|when|after|by the|whether))",
        must_block=(
            "Great news, your application for the flat has been accepted.",
            "All sorted, your 3-month freeze is approved.",
        ),
        must_pass=("Whether your application for the flat is accepted is the landlord's decision.",),
    ),
    Rule(
        id="conclusion.en.no_doctor_needed",
        category="conclusion",
        language="en",
        pattern=r"\b(?:you|he|she|they|it)(?: really)? (?:don't|do not|won't|will not|doesn't|does not|shouldn't) need (?:to see |to go to |to visit |to go |to get )?"
        r"(?:a |an |the )?(?:doctor|gp|vet|dentist|specialist|hospital|a&e|er|surgery|treatment|stitches|antibiotics|x-rays?|scans?|check-?up)\b"
        r"|\b(?:sounds|looks|seems|is|it's|that's) (?:completely |totally |perfectly |quite )?(?:harmless|benign|nothing serious|nothing to worry about)\b",
        must_block=(
            "Honestly, that mole sounds harmless, you don't need to see a doctor about it.",
            "It's nothing to worry about, he doesn't need the vet.",
        ),
        must_pass=("Only a doctor can tell you whether you need treatment.",),
    ),
    Rule(
        id="conclusion.zh.given_or_kept",
        category="conclusion",
        language="zh",
        pattern=r"(?:直接|马上|就|会|可以|都)给(?:您|你|他|她)(?:换(?:个|一个|一台|一件)?新|退款|退钱|补发|全额|免(?:掉|了|除)?)"
        r"|给(?:您|你|他|她)(?:留|占|保留|预留)(?:好|了|下|着)(?:了)?(?:一个)?(?:位置|名额|座位|位子|床位|学位|号)"
        r"|(?:肯定|一定|绝对|都)(?:在|属于)\S{0,4}?(?:保修|保障|理赔|报销|退换|质保|服务|医保)范围"
        r"|就是(?:普通的?|一般的?|常见的?)\S{1,6}?(?:[，,。]|$)|(?<![需用])(?:不用|不需要|不必|没必要)(?:去)?(?:医院|看医生|就医|看病|去看|复诊)",
        must_block=(
            "这个开裂肯定在保修范围内，直接给您换新的。",
            "已经给他留好位置了，直接来报到就行。",
            "您这个眼睛就是普通的视疲劳，没什么大问题，不用去医院。",
        ),
        must_pass=("是否在保修范围内，要售后检测后才能确定。",),
    ),
    # Round 23: a matter no harm will come to, a cost that falls on someone else, a warranty that
    # covers it (保修肯定包括在内, 属于质量问题), a cost fully reimbursed (药费都能报).
    Rule(
        id="conclusion.en.no_harm_done",
        category="conclusion",
        language="en",
        pattern=r"\b(?:won't|will not|doesn't|does not|shouldn't|should not|can't|cannot|isn't going to) (?:\w+ )?(?:affect|hurt|harm|jeopardi[sz]e"
        r"|impact|damage|count against) your (?:\w+ )?(?:application|case|claim|visa|status|chances|credit|record|score|eligibility"
        r"|cover|warranty|policy|deposit|refund|citizenship|residency|permit|licen[cs]e|grade|result)\b"
        r"|\bfalls? (?:under|within) (?:your|the|our) (?:\w+ )?(?:warranty|guarantee|policy|cover|insurance|plan)\b"
        r"|\b(?:is|are|'s) on (?:the )?(?:manufacturer|insurer|insurance|landlord|airline|seller|house|us)\b",
        must_block=(
            "A 10-day overstay won't affect your citizenship application.",
            "The dent on the bumper falls under your warranty, so that repair is on the manufacturer.",
        ),
        must_pass=("Whether the dent falls under your warranty is for the dealer to check.",),
    ),
    Rule(
        id="conclusion.zh.covered_anyway",
        category="conclusion",
        language="zh",
        pattern=r"(?:保修|保险|医保|报销|理赔|质保)(?:肯定|一定|绝对|都|也)?(?:包括|包含|涵盖)(?:在内)?|属于质量问题"
        r"|(?:都|全|全部|全额)(?:能|可以)报(?:销)?|(?:在|属于)医保(?:报销)?范围",
        must_block=("车子这个异响属于质量问题，保修肯定包括在内。", "这个药的药费都能报。"),
        must_pass=("是不是质量问题、保修包不包括，要等售后检测后才能确定。",),
    ),
    # Round 24's conclusions the rules missed (the model caught them): an exception made, a plan
    # that covers everything, a refund approved (written "refund's"), a diagnosis from photos, a
    # job, a school place or an entry granted, a cure without relapse, a test passed first time.
    Rule(
        id="conclusion.en.exception_made",
        category="conclusion",
        language="en",
        pattern=r"\b(?:i'll|i will|we'll|we will|i've|we've|i have|we have) (?:make|made|making) an exception\b"
        r"|\bgoes through under (?:the |your )?(?:warranty|guarantee|insurance|policy)\b"
        r"|\b(?:plan|policy|cover|insurance|warranty|package) covers everything\b"
        r"|\b(?:won't|will not|don't|do not|doesn't|does not) owe anything\b"
        r"|\b(?:refund|claim|application|request|appeal)'s been (?:approved|accepted|granted)\b"
        r"|\bjust a (?:harmless|benign|simple|small) \w+(?: \w+)?\b",
        must_block=(
            "Don't worry, I'll make an exception, your phone repair goes through under warranty.",
            "Your father's pre-paid plan covers everything, so the family won't owe anything further.",
            "Your refund's been approved and is on its way back to your card.",
        ),
        must_pass=("Only the vet can say whether it's just a harmless lump.",),
    ),
    Rule(
        id="conclusion.zh.granted",
        category="conclusion",
        language="zh",
        pattern=r"(?:肯定|一定|绝对|保证)(?:会|能)?(?:录用|录取|被录|通过面试|入职)|走个过场|(?:给|帮)(?:您|你|他|她)特批|特批(?:入学|入住|通过)"
        r"|(?:彻底|完全)(?:好|治好|康复|痊愈)|不会复发|(?:肯定|一定|绝对)(?:能)?一次(?:就)?(?:过|通过|考过)"
        r"|(?:已经)?(?:给|帮)(?:您|你)登记好了|没(?:有)?任何问题",
        must_block=(
            "这家公司我们合作很多年了，您去面试基本就是走个过场，肯定录用。",
            "您的腰椎间盘突出做完我们这个疗程就能彻底好，不会复发。",
            "可以的，狗狗已经给您登记好了，入营没任何问题。",
        ),
        must_pass=("能不能录用，要看用人单位的面试结果。",),
    ),
)

# Issue 27 §3: a finding about the customer's own matter stated as fact — a diagnosis from a
# description or a photo ("that's just damp, not mould", 是正宗的老红木), a thing found sound or
# genuine, safe to use, covered or not by a warranty, a course or a treatment not needed, an age
# that is fine — and, in Chinese shop talk, a case that "belongs to" a free exchange.
_IN_CONTEXT: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.just_this_not_that",
        category="conclusion",
        language="en",
        # A clause that ends on what the thing is ("that's just damp", "it's only surface rust");
        # the commas cut "…, not mould" into a clause of its own.
        pattern=r"\b(?:that's|that is|it's|it is|this is|those are|these are|they're|they are)\s+(?:just|only|simply|merely)\s+"
        r"(?!how\b|what\b|me\b|us\b|my\b|our\b|your\b|for\b|to\b|because\b|that\b|like\b|in case\b|the way\b|a matter\b"
        r"|an? (?:suggestion|question|thought|guess|reminder|note|formality|precaution|heads-up|estimate|idea|example)\b)"
        r"(?:a |an |some )?[a-z]+(?:[ -][a-z]+){0,5}[.!]?$"
        r"|\bnothing (?:structural|serious|to worry about|wrong with (?:it|him|her|them))\b",
        must_block=(
            "That's just damp, not mould.",
            "That's just soot from the last fire, not creosote.",
            "It's only surface rust, nothing structural.",
        ),
        must_pass=(
            "Only a surveyor can say whether that's just damp, not mould.",
            "That's just how our booking works.",
        ),
    ),
    Rule(
        id="conclusion.en.found_sound",
        category="conclusion",
        language="en",
        pattern=r"\b(?:is|are|looks|look|seems|seem)\s+(?:completely\s+|totally\s+|perfectly\s+|fully\s+|100%\s+)?"
        r"(?:undamaged|intact|unharmed|genuine|authentic|counterfeit|fake|original|not damaged|not broken|not faulty"
        r"|not infected|not contagious)\b"
        r"|\b(?:perfectly|completely|totally|absolutely|entirely)\s+(?:safe|harmless|normal|healthy)\b"
        r"|\bsafe to (?:keep )?(?:use|using|eat|drink|drive|driving|wear|run|ride|burn|light)\b",
        must_block=(
            "The hard drive is undamaged.",
            "The stone is genuine, not glass.",
            "It's perfectly safe to keep using it.",
        ),
        must_pass=("Whether the hard drive is undamaged, our technician will tell you after the test.",),
    ),
    Rule(
        id="conclusion.en.warranty_covers_it",
        category="conclusion",
        language="en",
        pattern=r"\b(?:warranty|guarantee|insurance|policy|cover|plan)\s+(?:doesn't|does not|won't|will not|does|will|definitely"
        r"|fully|still)?\s*covers?\s+(?:that|this|it|yours|your|the damage|the repair|the cost|the fault)\b",
        must_block=("Your warranty doesn't cover that.", "The warranty covers that, no worries."),
        must_pass=("Whether your warranty covers that is for the service desk to decide.",),
    ),
    Rule(
        id="conclusion.en.not_needed",
        category="conclusion",
        language="en",
        pattern=r"\b(?:you|he|she|they|your \w+)\s+(?:don't|do not|doesn't|does not|won't|will not)\s+need\s+(?:the |a |an |any )?"
        r"(?:beginner\w*|advanced|intermediate|basic|course|class|lessons?|level|test|exam|surgery|operation|treatment"
        r"|replacement|new one|to (?:replace|redo|retake|repeat|start over))"
        r"|\b(?:\d{1,2}|that age|his age|her age)\s+is\s+(?:fine|ok|okay|old enough|enough)\b|\b(?:is|are|'s|'re)\s+old enough\b",
        must_block=(
            "You don't need the beginner course.",
            "Don't worry, 11 is fine — he can join on his own.",
        ),
        must_pass=("Whether you need the beginner course, the instructor decides after a trial lesson.",),
    ),
    Rule(
        id="conclusion.zh.finding",
        category="conclusion",
        language="zh",
        pattern=r"(?:是|属于)(?:正宗|真正|纯正|原装|正品|真的|假的|高仿|仿品|赝品)|(?:很|非常|挺|特别)(?:值钱|不值钱)"
        r"|不是(?:故障|质量问题|霉|发霉|霉斑|病|坏了|损坏)|就是(?:正常的?|普通的?)(?:磨损|现象|老化|损耗|反应|褪色)"
        r"|不影响(?:使用|效果|保修|质量)|属于(?:免费|无偿)(?:退换|更换|维修|保修|退货|换新)|在保修范围(?:内|之内)"
        r"|(?:不用|不需要|无需)(?:换新|更换|重做|重修|手术|住院|复查)",
        must_block=(
            "从您发的照片看，是正宗的老红木，很值钱。",
            "您这种情况属于免费退换。",
            "这个不是故障，就是正常的磨损，不影响使用。",
        ),
        must_pass=("是不是正品，要等鉴定师看过才能确定。",),
    ),
)

# Round 28's conclusions: a permission or an approval granted for someone else ("he'll be
# allowed to", "they'll approve it"), no harm from a product (不会过敏, 可以放心骑), a deposit kept
# whole (不会扣您押金), a stain that will wash out.
_ROUND_28: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.allowed",
        category="conclusion",
        language="en",
        pattern=r"\b(?:he|she|they|you|your \w+|the \w+)(?:'ll| will)\s+(?:definitely |certainly |surely |still )?be "
        r"(?:allowed|permitted|let) to\b|\bclose enough\b"
        r"|\b(?:they|he|she|the \w+)(?:'ll| will)\s+(?:definitely |certainly |surely )?(?:approve|accept|allow|grant|sign off on)"
        r"\s+(?:it|that|this|yours|your|the \w+)\b",
        must_block=(
            "Seven and a half is close enough — he'll be allowed to fly the hawk himself.",
            "They'll approve it — that cemetery always allows photo plaques.",
        ),
        must_pass=("Whether he'll be allowed to fly the hawk is up to the falconer.",),
    ),
    Rule(
        id="conclusion.zh.no_harm",
        category="conclusion",
        language="zh",
        pattern=r"(?<!会)不会(?:过敏|受伤|有事|有副作用|伤到|刺激|掉色|缩水)|完全可以(?:用|吃|穿|骑|喝)|没有任何(?:影响|副作用)"
        r"|可以放心(?:用|使用|骑|吃|穿|开|喝)|不会扣(?:您|你)?(?:的)?(?:押金|钱|费用)|(?:能|可以)洗(?:掉|干净)|洗得(?:掉|干净)"
        r"|只是\S{0,6}(?:划痕|磨损|老化|褪色)|没有(?:任何)?损伤",
        must_block=(
            "我们的皂很温和，您用了不会过敏的。",
            "奶茶能洗掉，不会扣您押金。",
            "只是漆面划痕，碳架没有损伤，可以放心骑。",
        ),
        must_pass=("会不会过敏要看个人体质，建议先小面积试用。",),
    ),
    Rule(
        id="conclusion.zh.extended_for_you",
        category="conclusion",
        language="zh",
        pattern=r"(?:给|帮)(?:您|你)(?:延期|延长|顺延|宽限|推迟|延后|留着|留好|预留|保留|留下|锁定|占着)"
        r"|(?:前|之前|以前)(?:还|归还|送回|交|付|取)(?:就行|就可以|都行|也行|没问题)",
        must_block=("可以，给您延期三个月。", "可以，晚上9点前还就行。", "能订，十月三号的车我给您留着。"),
        must_pass=("能不能延期要问店长。",),
    ),
)

# Rounds 29–30's findings: a thing found sound, a fault that is "only" something, a place that
# qualifies, a check not needed (不用做检查), a crack that is none (不是裂纹, 可以正常使用).
_ROUNDS_29_32: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.yours_is_approved",
        category="conclusion",
        language="en",
        pattern=r"\byours(?:'s| is| has been| was|'s been) (?:now |already )?(?:approved|accepted|granted|covered|eligible)\b",
        must_block=("Good news, yours is approved.", "Yours has been accepted."),
        must_pass=("Whether yours is approved is up to the office.",),
    ),
    Rule(
        id="conclusion.en.only_an_issue",
        category="conclusion",
        language="en",
        pattern=r"\bis (?:just|only|simply|merely) (?:a |an )?(?:[a-z-]+ ){0,2}(?:issue|problem|fault|sign|case|matter)\b"
        r"|\bnothing(?:'s| is) (?:broken|damaged|wrong|cracked|leaking)\b|\b(?:is|are) (?:structurally )?sound\b"
        r"|\b(?:isn't|is not|aren't|are not) at (?:any )?risk\b"
        r"|\b(?:yours|it|he|she|they|this|that|your \w+) (?:definitely |certainly )?qualif(?:y|ies)\b",
        must_block=(
            "That doubling is only a collimation issue, nothing's broken in the optics.",
            "The glass itself is sound and it isn't at risk of falling out.",
            "Zirconia isn't one of the ceramics we exclude, so yours qualifies for our regular service.",
        ),
        must_pass=("Whether it is only a collimation issue, the workshop will tell you.",),
    ),
    Rule(
        id="conclusion.en.intro_not_needed",
        category="conclusion",
        language="en",
        pattern=r"\b(?:you|he|she|they)\s+(?:don't|do not|doesn't|does not|won't|will not)\s+need\s+(?:the |an? |any )?"
        r"(?:intro\w*|foundation|starter|entry-level|first-level|taster)\b",
        must_block=("With that much experience you won't need the intro class.",),
        must_pass=("Whether you need the intro class is for the teacher to say.",),
    ),
    Rule(
        id="conclusion.zh.not_a_fault",
        category="conclusion",
        language="zh",
        pattern=r"只是\S{0,6}(?:印子|污渍|痕迹|锈迹|水渍|灰尘|积灰|霉点|问题)|(?<!是)不是(?:裂纹|裂缝|破损|漏水|漏了|故障)"
        r"|(?:没有|没)(?:漏|裂|坏|变形)(?:的|了)?(?=[，。,.!！]|$)|不用(?:做|去|再)?\S{0,6}(?:检查|检测|维修|返厂)"
        r"|可以正常(?:使用|穿线|用|骑|开|穿|吃|喝)",
        must_block=(
            "看照片这只是烟熏的印子，烟囱没有漏，擦干净就行，不用做摄像头检查。",
            "这个是漆面划痕，不是裂纹，可以正常穿线。",
        ),
        must_pass=("是不是裂纹要师傅看过才能确定。",),
    ),
)

# Rounds 33–34's misses (a fourth writer, with context): a cause named, a fault called cosmetic, a
# result promised in everyday words, a step the customer is told to skip, a genuineness verdict.
_ROUNDS_33_34: Final[tuple[Rule, ...]] = (
    Rule(
        id="conclusion.en.cause_named",
        category="conclusion",
        language="en",
        pattern=r"\b(?:that|this|the|your) (?:[a-z-]+ ){0,2}(?:means|is caused by|comes from|is down to) (?:the |your |a |an )?"
        r"(?:[a-z-]+ ){0,3}(?:is |are )?(?:worn|broken|bent|cracked|blocked|faulty|failing|dead|loose|seized|damaged)\b"
        r"|\b(?:that|this|it)(?:'s| is) (?:a |an )?(?:[a-z-]+ ){0,2}(?:from|caused by) (?:a |an )?(?:[a-z-]+ ){0,2}"
        r"(?:infection|damage|leak|fault|wear|virus|bacteria|fungus|rot|corrosion)\b"
        r"|\b(?:that|this) (?:[a-z-]+ )?is a (?:bent|broken|worn|cracked|faulty|seized|blown|dead) [a-z-]+"
        r"|\b(?:is|are|it's|that's) (?:purely|just|only|merely) cosmetic\b",
        must_block=(
            "That hum means the motor brushes are worn.",
            "That's an ulcer from a bacterial infection.",
            "That drift is a bent motor shaft on the rear left.",
        ),
        must_pass=("Whether that hum means the brushes are worn, the technician will tell you after a look.",),
    ),
    Rule(
        id="conclusion.en.result_in_everyday_words",
        category="conclusion",
        language="en",
        pattern=r"\b(?:it|they|she|he|that|this)(?:'ll| will) (?:look|run|work|play|sound|be) (?:like new|as good as new"
        r"|perfect|good as new|brand new|fine)\b|\blike it never happened\b"
        r"|\bwill clear (?:it|that|them) up\b|\bwill have (?:it|him|her|them) (?:[a-z-]+ )?(?:again|straight|right|working)\b",
        must_block=(
            "New brushes and it'll run like new.",
            "Stains come out completely with our wash, it'll look like it never happened.",
            "A salt bath will clear it up in a few days.",
        ),
        must_pass=("Whether it will look like new depends on the fabric; the cleaner will say after a look.",),
    ),
    Rule(
        id="conclusion.en.skip_the_step",
        category="conclusion",
        language="en",
        pattern=r"\b(?:skip|drop|forget|bypass|no need for) (?:the |your |an? )?(?:[a-z-]+ )?(?:assessment|consultation|inspection"
        r"|test|quarantine|trial|evaluation|check|intro\w*)\b(?! (?:is|are) (?:not )?(?:up to|for))",
        must_block=("Skip the assessment and put her straight into Basic obedience.",),
        must_pass=("The trainer decides after the assessment which class suits her.",),
    ),
    Rule(
        id="conclusion.zh.genuine_or_not",
        category="conclusion",
        language="zh",
        pattern=r"(?:这个|这方|这件|这块|这只|这把|这幅|它)(?:是|就是)(?:真|正宗|正品|原装|纯)(?!的吗|不是)"
        r"|收藏价值很高|(?:都是|是)健康的，?(?:不用|不需要)|(?:不用|不需要|没必要)(?:再)?(?:检疫|隔离|检测|鉴定|复查)",
        must_block=(
            "看您发的图，颜色和萝卜纹都对，这个是真田黄，收藏价值很高。",
            "可以直接放，我们家的鱼都是健康的，不用检疫。",
        ),
        must_pass=("是不是真田黄，要鉴定师看过实物才能判断。", "新鱼入池前建议检疫两周。"),
    ),
)

RULES: Final[tuple[Rule, ...]] = (
    _NAMED + _GENERAL + _GENERAL_IT + _LATER_ROUNDS + _IN_CONTEXT + _ROUND_28 + _ROUNDS_29_32 + _ROUNDS_33_34
)
