"""The commitment guard (guard/engine.py, and its model guard/classifier.py): corpus figures, tricky cases, the
management command.  No database: the guard is pure and the command only needs settings.

`pytest -s tests/test_guard.py` shows the precision / recall / false-block figures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from guard.classifier import model_verdict
from guard.engine import GuardCategory, GuardVerdict, _check, guard_check

PRICE, DEADLINE, OUTCOME = GuardCategory.PRICE, GuardCategory.DEADLINE, GuardCategory.OUTCOME
CONCLUSION = GuardCategory.CONCLUSION
CORPUS = Path(__file__).parent.parent / "guard" / "corpus"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _is_chinese(text: str) -> bool:
    return _CJK.search(text) is not None


def _read_tsv(name: str, columns: list[str]) -> list[list[str]]:
    header, *lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
    assert header.split("\t") == columns, f"{name}: header must be {columns}"
    rows = [line.split("\t") for line in lines if line.strip()]
    malformed = [row for row in rows if len(row) != len(columns) or not all(cell.strip() for cell in row)]
    assert not malformed, f"{name}: malformed rows {malformed[:5]}"
    return rows


COMMITMENTS: list[tuple[GuardCategory, str]] = [
    (GuardCategory(category), text) for category, text in _read_tsv("commitments.tsv", ["category", "text"])
]
HARMLESS: list[str] = [text for (text,) in _read_tsv("harmless.tsv", ["text"])]


# --- the corpus ------------------------------------------------------------------------------


def test_corpus_size_and_spread() -> None:
    assert len(COMMITMENTS) >= 150
    assert len(HARMLESS) >= 150
    assert sum(_is_chinese(text) for _, text in COMMITMENTS) >= 75
    assert sum(_is_chinese(text) for text in HARMLESS) >= 75
    for category in GuardCategory:
        labelled = [text for label, text in COMMITMENTS if label is category]
        assert len(labelled) >= 30, f"too few {category} commitments"
        assert sum(_is_chinese(text) for text in labelled) >= 15, f"too few Chinese {category} commitments"
    texts = [text for _, text in COMMITMENTS] + HARMLESS
    assert len(set(texts)) == len(texts), "a sentence appears twice in the corpus"


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _guard(text: str) -> GuardVerdict:
    """The guard as the outgoing check reads a reply: its named rules, then its model."""
    verdict = guard_check(text)
    if verdict.blocked:
        return verdict
    model = model_verdict(text)
    if model.category is None:
        return verdict
    return GuardVerdict(blocked=True, category=GuardCategory(model.category), rule=f"{model.category}.model")


def test_corpus_figures() -> None:
    """In sample, the guard (rules, then the model) stops every commitment of its corpus and at
    most 1% of its harmless sentences; the named rules alone still stop at least 98% — the model
    is the second reader, not the only one."""
    commitment_verdicts = [(label, text, _guard(text)) for label, text in COMMITMENTS]
    harmless_verdicts = [(text, _guard(text)) for text in HARMLESS]
    by_rules = [verdict.rule for _label, _text, verdict in commitment_verdicts if verdict.blocked]
    rules_recall = _rate(sum(not rule.endswith(".model") for rule in by_rules if rule), len(COMMITMENTS))
    missed = [(label.value, text) for label, text, verdict in commitment_verdicts if not verdict.blocked]
    # An outcome and a conclusion are both assurances, and the line between them is partly
    # arbitrary (README, Limits): one read as the other still agrees.
    assurances = {OUTCOME, CONCLUSION}
    wrong_category = [
        (label.value, verdict.category.value, text)
        for label, text, verdict in commitment_verdicts
        if verdict.blocked
        and verdict.category is not None
        and verdict.category is not label
        and not {verdict.category, label} <= assurances
    ]
    false_blocks = [
        (verdict.category.value if verdict.category else None, text)
        for text, verdict in harmless_verdicts
        if verdict.blocked
    ]

    true_blocks = len(COMMITMENTS) - len(missed)
    precision = _rate(true_blocks, true_blocks + len(false_blocks))
    recall = _rate(true_blocks, len(COMMITMENTS))
    false_block_rate = _rate(len(false_blocks), len(HARMLESS))
    category_agreement = _rate(true_blocks - len(wrong_category), len(COMMITMENTS))
    lines = [
        f"commitment guard on {len(COMMITMENTS)} commitments and {len(HARMLESS)} harmless sentences:",
        f"  precision {precision:.3f}  recall {recall:.3f}  false-block rate {false_block_rate:.3f}  "
        f"category agreement {category_agreement:.3f}  recall of the named rules alone {rules_recall:.3f}",
    ]
    for language, chinese in (("en", False), ("zh", True)):
        c_total = [t for _, t in COMMITMENTS if _is_chinese(t) == chinese]
        c_missed = [t for _, t in missed if _is_chinese(t) == chinese]
        h_total = [t for t in HARMLESS if _is_chinese(t) == chinese]
        h_blocked = [t for _, t in false_blocks if _is_chinese(t) == chinese]
        language_recall = _rate(len(c_total) - len(c_missed), len(c_total))
        lines.append(
            f"  {language}: recall {language_recall:.3f} ({len(c_total)} commitments)  "
            f"false blocks {len(h_blocked)}/{len(h_total)}"
        )
    lines += [f"  missed {label}: {text}" for label, text in missed]
    lines += [f"  labelled {label}, reported {got}: {text}" for label, got, text in wrong_category]
    lines += [f"  false block ({category}): {text}" for category, text in false_blocks]
    report = "\n".join(lines)
    print(report)

    assert recall == 1.0 and not missed, report
    assert rules_recall >= 0.98, report
    assert false_block_rate <= 0.01, report
    assert category_agreement >= 0.95, report


# --- tricky cases ----------------------------------------------------------------------------

# The brief's own examples, kept out of the corpus so the corpus stays our writing.
BRIEF_EXAMPLES = [
    ("it costs €40", PRICE),
    ("only ¥99", PRICE),
    ("the price is 30 dollars", PRICE),
    ("we'll do it for $200", PRICE),
    ("价格是100元", PRICE),
    ("只要99元", PRICE),
    ("收费500块", PRICE),
    ("报价是两千", PRICE),
    ("delivered within 3 days", DEADLINE),
    ("ready by Friday", DEADLINE),
    ("we will ship tomorrow", DEADLINE),
    ("三天内送达", DEADLINE),
    ("明天发货", DEADLINE),
    ("下周一前完成", DEADLINE),
    ("48小时内到", DEADLINE),
    ("we guarantee", OUTCOME),
    ("guaranteed to pass", OUTCOME),
    ("100% sure it will work", OUTCOME),
    ("you will definitely get a refund", CONCLUSION),
    ("保证", OUTCOME),
    ("承诺", OUTCOME),
    ("一定能", OUTCOME),
    ("包过", OUTCOME),
    ("肯定没问题", OUTCOME),
    ("绝对可以", OUTCOME),
    ("prices vary by region", None),
    ("I can't quote a price here", None),
    ("we cannot guarantee delivery dates", None),
    ("我们无法保证", None),
    ("不能承诺具体时间", None),
    ("价格因地区而异", None),
    ("I don't know the price yet", None),
    ("the owner will confirm the price", None),
    ("delivery times depend on the carrier", None),
    ("our shop opens at 9", None),
    ("we ship to Germany", None),
    ("returns are accepted within the law's window", None),
]
NEGATION_SCOPE = [
    ("We cannot guarantee delivery dates.", None),
    ("I can't talk long, but we guarantee delivery.", OUTCOME),  # the negation is in another clause
    ("I can't talk long, we guarantee delivery.", OUTCOME),
    ("I can't talk long but we guarantee delivery.", OUTCOME),
    ("Nobody can promise that.", None),
    ("A guarantee is not something we can give.", None),  # refusal after the promise word
    ("No problem, we guarantee it.", OUTCOME),  # "no problem" refuses nothing
    ("Don't worry, it will arrive tomorrow.", DEADLINE),
    ("It can't fail.", OUTCOME),  # a negated failure is a promise
    ("It will arrive by Friday, but I can't guarantee that.", None),  # disclaimed
    ("I'm not sure whether it will be ready by Monday.", None),
    ("No, you won't pay more: the fixed rate is 55 EUR.", PRICE),  # a colon ends the negation's reach
    ("我们无法保证。", None),
    ("这个结果谁也保证不了。", None),
    ("这个承诺我不能替老板做。", None),
    ("不一定能在周五前到。", None),
    ("一定能在周五前到。", DEADLINE),
    ("周日不发货。", None),
    ("我们不保证每次都有货。", None),
    ("别担心，明天一定送到。", DEADLINE),
    ("不好意思，价格是260元。", PRICE),
    ("我们无法保证，但是明天一定发货。", DEADLINE),
    ("能不能明天到，我得问一下仓库。", None),  # embedded question
    ("您这种情况赔偿款是跑不掉的。", OUTCOME),
]
MIXED_CLAUSES = [
    ("I'm not the owner, however the price is €45.", PRICE),
    ("We don't ship on Sundays, but your order ships tomorrow.", DEADLINE),
    ("I don't have the tracking number, but it will arrive tomorrow.", DEADLINE),
    ("Usually, we ship within 2 days.", None),  # an introductory hedge covers the clause after it
    ("We ship within 2 days, usually.", None),  # and so does a trailing one
    ("We ship within 2 days, you may get an email.", DEADLINE),  # but not a hedge about something else
    ("Shipping takes 3 to 5 days depending on where you live.", None),
    ("具体几天能到，要看您的地址。", None),  # a trailing dependency clause
    ("虽然不能退货，但是我们保证质量。", OUTCOME),
    ("我们没有现货了，不过下周二前肯定到。", DEADLINE),
    ("虽然我不是老板，不过价格就是300块。", PRICE),
    ("I promise I'll forward this to the owner.", None),  # relaying is the agent's own job
    ("我肯定会转告老板。", None),
    ("If you need it by Friday, we will ship tomorrow.", DEADLINE),
    ("如果您需要周五前收到，请告诉我。", None),
    ("Your new glasses will be ready in about an hour, guaranteed.", DEADLINE),  # the guarantee makes the time firm
]
PRECEDENCE = [
    ("We guarantee delivery within 3 days for €40.", PRICE),
    ("We promise it ships tomorrow.", DEADLINE),
    ("保证三天内送达。", DEADLINE),
    ("本周内一定发出，运费10元。", PRICE),
    ("It will definitely work. It ships tomorrow.", DEADLINE),  # across sentences too
]
FULL_WIDTH = [
    ("价格是１２０元。", PRICE),
    ("３天内发货。", DEADLINE),
    ("ＵＳＤ ５０ is the fee.", PRICE),
    ("Your laptop will be repaired within ２ days.", DEADLINE),
    ("１００％保证通过。", OUTCOME),
    ("It’s ￥３８ for the pair.", PRICE),
    ("这款鞋有４２码。", None),
    ("我们店在２号楼３层。", None),
]
CHINESE_NUMERALS = [
    ("两天内送到。", DEADLINE),
    ("十五天内完成全部装修。", DEADLINE),
    ("三到五个工作日内发货。", DEADLINE),
    ("半小时内上门。", DEADLINE),
    ("这个尺寸的相框一百二十元。", PRICE),
    ("报价是三千五。", PRICE),
    ("保养一次收费三百八。", PRICE),
    ("学费一学期是一万二。", PRICE),
    ("我们的清洗服务每次一百二。", PRICE),
    ("给您打八折。", PRICE),
    ("价格是一样的。", None),
    ("这款蛋糕可以切12块。", None),
    ("一盒有6块饼干。", None),
    ("我们一般三到五天发货，具体以实际为准。", None),
]
NOT_PROMISES = [
    ("Size 42 is available in 3 colours.", None),
    ("Call us on 020 7946 0123.", None),
    ("The room is 30 square metres.", None),
    ("We're open Monday to Friday, 9am to 6pm.", None),
    ("We reply to emails during office hours.", None),
    ("What is your budget?", None),
    ("Do you need it by Friday?", None),
    ("Please complete the form within 7 days.", None),
    ("Your budget of €300 is noted.", None),
    ("The parcel was delivered yesterday according to the carrier.", None),
    ("我们周一到周五营业。", None),
    ("您希望什么时候收到？", None),
    ("请在七天内完成付款。", None),
    ("您说的500元预算我已经记下了。", None),
    ("这件衣服是100%纯棉的。", None),
    ("门牌号是15号。", None),
    ("我们每周二、四发货。", None),
    ("上周五已经给您发出了。", None),
    ("为了保证您的账户安全，请不要透露密码。", None),
    ("您一定要保留好发票。", None),
]
GLUED_AND_ODD = [
    ("That comes to 30euros.", PRICE),
    ("USD50 is the fee.", PRICE),
    ("总价RMB880。", PRICE),
    ("We give 20percent off.", PRICE),
    ("I am 100percent sure it works.", OUTCOME),
    ("The photographer will be there at 10 a.m. on Monday.", DEADLINE),
    ("", None),
    ("   ", None),
]
# Issue 15's examples of conclusions, and their negated or hedged forms.
CONCLUSIONS = [
    ("You qualify.", CONCLUSION),
    ("You're eligible.", CONCLUSION),
    ("It's confirmed.", CONCLUSION),
    ("That's final.", CONCLUSION),
    ("Rest assured it will be waived.", CONCLUSION),
    ("Your claim will go through.", CONCLUSION),
    ("The fee is waived for you.", CONCLUSION),
    ("No tax is due on that.", CONCLUSION),
    ("You won't need surgery.", CONCLUSION),
    ("您符合条件。", CONCLUSION),
    ("这是确定的。", CONCLUSION),
    ("肯定能批下来。", CONCLUSION),
    ("您这种情况可以全额退。", CONCLUSION),
    ("不用交税。", CONCLUSION),
    ("这个病不严重不用手术。", CONCLUSION),
    ("We can't confirm whether you qualify.", None),
    ("I can't say if it will be waived.", None),
    ("Whether you're eligible is for the office to decide.", None),
    ("I think you qualify, but the office decides.", None),  # a hedge lifts a conclusion
    ("是否符合条件要看审核。", None),
    ("能不能批下来我没法保证。", None),
    ("You will definitely get a refund, guaranteed.", CONCLUSION),  # a conclusion before an outcome
    ("You qualify, and we ship tomorrow.", DEADLINE),  # a deadline before a conclusion
]
# Round 20: what is not ours to promise (a relayed question, a disclaimer, someone else's figure,
# the published rule restated) and what is (the same rule applied to this customer, a country's
# dollars, a cap said with a negation).
ROUND_20_SCOPES = [
    ("I'll make sure your question about drainage reaches them.", None),
    ("That's an estimate rather than a guarantee, so I can't promise a date.", None),
    ("I understand your friend paid 3,000 rupees, so I can't match that.", None),
    ("I've noted that you'd like it done for 50 euros.", None),
    ("Yes, 50 euros works for us.", PRICE),
    ("您说别家三千就能办，我们的费用要顾问看完才会报。", None),
    ("按照规则，审核通过后7个工作日内原路退回。", None),
    ("按我们的规定，退房时无损坏，押金全额退还。", None),
    ("按规定您可以拿回全部押金。", CONCLUSION),
    ("合同里写了属于不可抗力，违约金不用您出。", CONCLUSION),  # 约 in 违约金 is no hedge
    ("The basket drops to thirty-five US dollars.", PRICE),
    ("You won't pay more than €200 for the whole application.", PRICE),
]
# Round 26's scopes: a promise wished for is none; the published rule quoted in words is the rule,
# until a clause applies it to the customer.
ROUND_26_SCOPES = [
    ("I wish I could promise that, but no tutor can guarantee exam results.", None),
    ("Our policy says cover cancelled within 14 days of purchase is refunded in full.", None),
    ("Our policy says your cover is refunded in full within 14 days.", DEADLINE),
    ("租赁条款里写的是正常使用磨损不收取费用。", None),
    ("租赁条款里写的是正常使用磨损不收取费用，您这次的费用也不收了。", CONCLUSION),
]

TABLES = (
    ROUND_26_SCOPES
    + BRIEF_EXAMPLES
    + ROUND_20_SCOPES
    + CONCLUSIONS
    + NEGATION_SCOPE
    + MIXED_CLAUSES
    + PRECEDENCE
    + FULL_WIDTH
    + CHINESE_NUMERALS
    + NOT_PROMISES
    + GLUED_AND_ODD
)


@pytest.mark.parametrize("text, expected", TABLES)
def test_tricky_cases(text: str, expected: GuardCategory | None) -> None:
    verdict = guard_check(text)
    assert (verdict.blocked, verdict.category) == (expected is not None, expected)


def test_gates_change_no_verdict() -> None:
    """The per-sentence gates only skip work: with and without them every verdict is the same,
    on every sentence we have and on pairs of them run together."""
    texts = [text for _, text in COMMITMENTS] + HARMLESS + [text for text, _ in TABLES]
    joiners = ["", " ", "，", " and we ", "但"]
    pairs = [
        f"{a}{joiners[index % len(joiners)]}{b}"
        for index, (a, b) in enumerate(zip(texts, texts[7:] + texts[:7], strict=True))
    ]
    mismatches = [text for text in texts + pairs if _check(text, gated=True) != _check(text, gated=False)]
    assert not mismatches, mismatches[:10]


def test_verdict_json() -> None:
    assert GuardVerdict(blocked=True, category=PRICE).as_json() == {"blocked": True, "category": "price"}
    assert GuardVerdict(blocked=False, category=None).as_json() == {"blocked": False, "category": None}
    assert [category.value for category in GuardCategory] == ["price", "deadline", "outcome", "conclusion"]
