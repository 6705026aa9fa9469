"""Pure decisions about knowledge: which material is regulated, and what L1 approves by itself.

No ORM here.  Decisions are typed and fail closed: anything not positively allowed is pending.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from .personal import personal_data_removed


class Origin(StrEnum):
    OWNER = "owner"  # the owner wrote or uploaded it
    REVIEW = "review"  # proposed by the nightly review
    OBSERVE = "observe"  # found by the industry-feed job
    CUSTOMER = "customer"  # a candidate drawn from customer conversations


class L1Result(StrEnum):
    APPROVE = "approve"
    PENDING = "pending"


@dataclass(frozen=True)
class EntryFacts:
    origin: Origin
    has_source: bool
    has_source_version: bool
    confidence: Decimal
    threshold: Decimal
    regulated: bool
    contradicts_approved: bool
    # A lesson (preference, wording, taboo) changes how the agent behaves, not what it knows:
    # it takes effect only when the owner decides its L1 proposal (issue 13, "Learn").
    lesson: bool = False
    # A model wrote it (a tool the owner-face model called, issue 28 §1): whatever its source
    # says, only the owner's own act — their decision on its proposal — lets customers be told.
    model_written: bool = False


@dataclass(frozen=True)
class L1Decision:
    result: L1Result
    reasons: tuple[str, ...]


def l1_decide(facts: EntryFacts) -> L1Decision:
    """Approve automatically only owner material that has a source and a version, is confident
    enough, is not regulated and does not contradict what is already approved.  Everything
    else waits for the owner — customer material always, whatever its confidence, and a lesson
    always, whoever wrote it and whatever the agent's threshold.  What a model wrote always
    waits too, even in the owner's chat: L1 approves only what the owner did themselves (an
    upload, a form, the API)."""
    reasons: list[str] = []
    if facts.lesson:
        reasons.append("lesson")
    if facts.model_written:
        reasons.append("written_by_model")
    if facts.origin is not Origin.OWNER:
        reasons.append("customer_candidate" if facts.origin is Origin.CUSTOMER else f"from_{facts.origin.value}")
    if not facts.has_source:
        reasons.append("no_source")
    if not facts.has_source_version:
        reasons.append("no_source_version")
    if facts.confidence < facts.threshold:
        reasons.append("low_confidence")
    if facts.regulated:
        reasons.append("regulated")
    if facts.contradicts_approved:
        reasons.append("contradicts_approved")
    return L1Decision(L1Result.PENDING if reasons else L1Result.APPROVE, tuple(reasons))


class Category(StrEnum):
    LAW = "law"
    TAX = "tax"
    MEDICAL = "medical"
    FINANCE = "finance"
    SAFETY = "safety"


# Terms that put material under a regulated category.  English terms match whole words (any
# case); Chinese terms match anywhere.  Owners add their own per agent.
REGULATED_TERMS: dict[Category, tuple[str, ...]] = {
    Category.LAW: (
        "law",
        "laws",
        "legal",
        "lawyer",
        "regulation",
        "regulations",
        "statute",
        "compliance",
        "liability",
        "contract law",
        "packaging law",
        "verpackungsgesetz",
        "gdpr",
        "lawsuit",
        "court",
        "法律",
        "法规",
        "合规",
        "包装法",
        "诉讼",
        "法院",
        "律师",
        "条例",
        "责任",
    ),
    Category.TAX: (
        "tax",
        "taxes",
        "vat",
        "gst",
        "customs duty",
        "duty",
        "duties",
        "tariff",
        "tariffs",
        "invoice tax",
        "税",
        "增值税",
        "关税",
        "税率",
        "发票",
        "报税",
        "个税",
    ),
    Category.MEDICAL: (
        "medical",
        "medicine",
        "medication",
        "drug",
        "drugs",
        "diagnosis",
        "dosage",
        "dose",
        "symptom",
        "symptoms",
        "treatment",
        "prescription",
        "allergy",
        "allergic",
        "医疗",
        "药",
        "药品",
        "诊断",
        "剂量",
        "症状",
        "治疗",
        "处方",
        "过敏",
    ),
    Category.FINANCE: (
        "investment",
        "invest",
        "loan",
        "loans",
        "interest rate",
        "credit",
        "insurance",
        "securities",
        "stock",
        "stocks",
        "refund guarantee",
        "financial advice",
        "投资",
        "贷款",
        "利率",
        "信贷",
        "保险",
        "证券",
        "股票",
        "理财",
    ),
    Category.SAFETY: (
        "safety",
        "hazard",
        "hazardous",
        "flammable",
        "toxic",
        "battery",
        "batteries",
        "lithium",
        "recall",
        "choking",
        "electrical",
        "安全",
        "危险",
        "易燃",
        "有毒",
        "电池",
        "锂电",
        "召回",
        "窒息",
    ),
}


def _matcher(term: str) -> re.Pattern[str]:
    if term.isascii():
        return re.compile(r"(?<![a-z0-9])" + re.escape(term.lower()) + r"(?![a-z0-9])")
    return re.compile(re.escape(term))


_BUILTIN = [(category, _matcher(term)) for category, words in REGULATED_TERMS.items() for term in words]


def regulated_categories(text: str, extra: Iterable[tuple[str, str]] = ()) -> list[str]:
    """The regulated categories a text touches (sorted, distinct).  `extra` holds the agent's own
    (term, category) pairs."""
    lowered = text.lower()
    found = {category.value for category, pattern in _BUILTIN if pattern.search(lowered)}
    for term, category in extra:
        if term.strip() and _matcher(term.strip()).search(lowered):
            found.add(category)
    return sorted(found)


# A term with three or more digits in a row may be part of a phone number, an order or account
# number or a postcode: personal data rather than a topic.
_NUMBER_LIKE = re.compile(r"\d{3,}")


def topic_ref(topic_key: str) -> str:
    """How a topic is named where its words must not go (the daily review's aggregate key, a
    proposal's `topic`): a hash of its key, so the name itself carries no customer word."""
    return "topic." + hashlib.sha256(topic_key.encode()).hexdigest()[:16]


def topic_shown(label: str) -> str:
    """A topic label as an owner or the review may read it: personal data removed
    (`knowledge.personal`, again: topics recorded before it was applied at the source), then
    `topic_for_owner`; empty when nothing is left (such a topic is counted, never named)."""
    text = personal_data_removed(label)
    kept = [t for t in text.split() if "@" not in t and any(ch.isalnum() for ch in t)]
    return topic_for_owner(" ".join(kept))


def topic_for_owner(topic_key: str) -> str:
    """A miss's topic key as the owner may read it: its terms without number-like ones; empty
    when nothing is left (the "(empty)" key of a question with no terms included)."""
    kept = [t for t in topic_key.split() if not _NUMBER_LIKE.search(t) and t != "(empty)"]
    return " ".join(kept)


# A taboo's title names what is never said: "Never say ‘cheap’" / 不说‘便宜’ (the owner chat's own
# titles, facade/dialogue/runtime/providers/offline.py), also unquoted or with other quotes
# ("Never say cheap", "Don't say 'budget'", 不要说“便宜”).
_TABOO_TITLE = re.compile(
    r"^\s*(?:never|don[’']?t|do\s+not)\s+(?:ever\s+)?(?:say|use|call\s+it)\s*[:：]?\s*(?P<en>.+?)\s*[.!]?\s*$"
    r"|^\s*(?:从不|从来不|绝不|永远不要|永远不|不要|别|不能|不)说\s*[:：]?\s*(?P<zh>.+?)\s*[。！]?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_TABOO_QUOTES = "\"'“”‘’「」『』《》 "
MAX_TABOO_PHRASE = 150


def taboo_phrase(given: str, title: str) -> str:
    """The words a taboo forbids: `given` when the writer named them (the owner chat's
    `remember_lesson` does), else what its title says is never said; empty when neither shows
    it (such a taboo is knowledge only, and forbids nothing)."""
    phrase = " ".join(given.split())
    if not phrase:
        match = _TABOO_TITLE.match(title)
        if match is not None:
            phrase = (match.group("en") or match.group("zh") or "").strip(_TABOO_QUOTES)
    return phrase.strip(_TABOO_QUOTES)[:MAX_TABOO_PHRASE]
