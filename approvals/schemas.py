"""The payload of a change proposal, one pydantic model per kind, and the evidence pointers.

Unknown keys are refused everywhere.  Two shapes are fixed by issue 12 and must stay exactly so:
`boundary_wording` `{"language": "en"|"zh-hans", "text": "…"}` and `pricing`
`{"currency": "EUR", "items": [{"name": "…", "amount": "35.00"}]}` (amounts as decimal strings,
non-negative, ISO 4217 currency); an item may also give its name per language (`names`, issue 26),
so an item of the fixed shape stays valid and is written as it was."""

from __future__ import annotations

import uuid
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    field_validator,
    model_serializer,
    model_validator,
)

# ISO 4217 active codes (the list is short and does not change often; a code outside it is refused).
ISO_4217 = frozenset(
    """AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
    CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF
    GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP
    LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB
    PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL
    THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW
    ZWL""".split()
)

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=5000)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Ident = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
# Knowledge drafts and lessons carry what a knowledge version holds, so the knowledge services'
# limits (knowledge/services.py MAX_TITLE, MAX_BODY; a test holds them equal): a pending version
# of any length the knowledge step accepts has its proposal.
KnowledgeTitle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]
KnowledgeText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20_000)]
VersionId = Annotated[
    int | None,
    Field(
        default=None,
        ge=1,
        description="the pending knowledge version this proposal decides (filed by the platform when the "
        "knowledge step's L1 rule holds a version): approving approves exactly that version",
    ),
]


# The text of a knowledge draft the daily review proposes for a topic nothing answered: the review
# does not know the answer, so the owner writes it; approving the draft as it is is refused
# (`proposal_authorize`, `draft_unwritten`).
REVIEW_DRAFT_PLACEHOLDER = (
    "The daily review found this question unanswered and does not know the answer: write the answer here "
    "before you approve."
)


class Kind(StrEnum):
    KNOWLEDGE_DRAFT = "knowledge_draft"
    LESSON = "lesson"
    WORDING = "wording"
    CLARIFICATION_ORDER = "clarification_order"
    BOUNDARY_WORDING = "boundary_wording"
    SKILL_IDS = "skill_ids"
    DELIVERY = "delivery"
    PRICING = "pricing"
    STATE_CONTRACT = "state_contract"
    COMPOSITION_MODE = "composition_mode"
    ROLLBACK = "rollback"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


TopicRef = Annotated[str, StringConstraints(pattern=r"^topic\.[0-9a-f]{16}$")]
Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
OptionalTitle = Annotated[str, StringConstraints(strip_whitespace=True, max_length=300)]
OptionalText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=20_000)]


class Translation(Strict):
    """The same answer in the site's other language (issue 26 §4): empty text is no translation."""

    title: OptionalTitle = ""
    text: OptionalText = ""

    @model_validator(mode="after")
    def _text_with_title(self) -> Translation:
        if self.title and not self.text:
            raise ValueError("a translation needs the text customers are told, not only a title")
        return self


class KnowledgeDraft(Strict):
    """A new entry (no `entry_id`) or a new version of an existing entry; or, with `version_id`,
    the decision on a version of `entry_id` that waits (its title and text are that version's,
    and an owner's edit of them approves the edited text instead, as a newer version).

    `translations` holds the answer in the other language (one entry answers both); `questions`,
    when given, are the questions the new version answers (the review's "already answered by
    entry …" adds its topic's to the entry's own); `topic` names the unanswered topic it answers
    (`knowledge.rules.topic_ref`, a hash): approving it resolves that topic's open misses."""

    entry_id: int | None = Field(default=None, ge=1)
    version_id: VersionId = None
    title: KnowledgeTitle
    text: KnowledgeText
    translations: dict[Literal["en", "zh-hans"], Translation] = Field(default_factory=dict, max_length=2)
    questions: list[Question] | None = Field(default=None, max_length=20)
    topic: TopicRef | None = None

    @model_serializer(mode="wrap")
    def _without_empty_extras(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A draft without a translation, questions or topic is stored as it always was.
        data: dict[str, Any] = handler(self)
        for key in ("translations", "questions", "topic"):
            if not data.get(key):
                data.pop(key, None)
        return data

    @model_validator(mode="after")
    def _version_of_entry(self) -> KnowledgeDraft:
        if self.version_id is not None and self.entry_id is None:
            raise ValueError("a draft that names a version_id names its entry_id too")
        return self


class Lesson(Strict):
    """A preference, wording or taboo; with `version_id`, the decision on a lesson version that
    waits (as for a knowledge draft)."""

    kind: Literal["preference", "wording", "taboo"]
    version_id: VersionId = None
    title: KnowledgeTitle
    text: KnowledgeText


class Wording(Strict):
    """A sentence the agent says in a given situation, in one language."""

    language: Literal["en", "zh-hans"]
    situation: Literal["greeting", "unknown", "handoff", "request_registered"]
    text: Text


class ClarificationOrder(Strict):
    """What the agent asks for, in this order, before it registers a request."""

    fields: list[Ident] = Field(min_length=1, max_length=20)

    @field_validator("fields")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a field is named twice")
        return value


class BoundaryWording(Strict):
    language: Literal["en", "zh-hans"]
    text: Text


class SkillIds(Strict):
    skill_ids: list[Ident] = Field(max_length=50)


class DeliveryOption(Strict):
    channel: Literal["pickup", "post", "courier", "email", "onsite"]
    note: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)] = ""


class Delivery(Strict):
    options: list[DeliveryOption] = Field(min_length=1, max_length=20)


class PriceItem(Strict):
    """One listed item: its `name`, optionally its name in each language (`names`, e.g.
    `{"en": "Birthday cake (8 people)", "zh-hans": "生日蛋糕（8人份）"}`: a customer asking in either
    is answered in theirs), and its amount.  An item without `names` is written without the key."""

    name: Name
    names: dict[Literal["en", "zh-hans"], Name] = Field(default_factory=dict, max_length=2, exclude_if=lambda v: not v)
    amount: str = Field(pattern=r"^[0-9]{1,12}(\.[0-9]{1,4})?$", examples=["35.00"])  # a decimal string, never a float

    @field_validator("amount")
    @classmethod
    def _decimal(cls, value: str) -> str:
        try:
            amount = Decimal(value)
        except InvalidOperation as exc:
            raise ValueError("amount must be a decimal string such as 35.00") from exc
        if not amount.is_finite() or amount < 0 or amount.as_tuple().exponent < -4 or len(value) > 20:  # type: ignore[operator]
            raise ValueError("amount must be a non-negative decimal string such as 35.00")
        return value


class Pricing(Strict):
    currency: str
    items: list[PriceItem] = Field(min_length=1, max_length=200)

    @field_validator("currency")
    @classmethod
    def _iso(cls, value: str) -> str:
        if value not in ISO_4217:
            raise ValueError("currency must be an ISO 4217 code such as EUR")
        return value


class FlowState(Strict):
    next_actor: Literal["owner", "customer", "nobody"]
    to: list[Ident] = Field(default_factory=list, max_length=30)


class StateContract(Strict):
    """The request state machine in the contract's own shape (`AgentContract.request_flow`):
    the initial state and, for each state, who acts next and where it may go.  The contract
    compiler checks its semantics (initial known, all reachable, a terminal state, known targets)."""

    initial: Ident
    states: dict[Ident, FlowState] = Field(min_length=1, max_length=30)


class CompositionMode(Strict):
    """How the agent's customer and peer replies are put together: `guarded` (the model's own
    words, behind the commitment guard and the grounding check) or `strict` (only approved
    knowledge the run cited, published templates and request status lines, composed by the
    server from the model's structured choice)."""

    mode: Literal["guarded", "strict"]


class RollbackOf(Strict):
    """Undo an applied L2/L3 change: what it set goes back to what it replaced."""

    change_id: Annotated[str, StringConstraints(pattern=r"^chg_[A-Za-z0-9_-]{1,28}$")]


PAYLOADS: dict[Kind, type[Strict]] = {
    Kind.KNOWLEDGE_DRAFT: KnowledgeDraft,
    Kind.LESSON: Lesson,
    Kind.WORDING: Wording,
    Kind.CLARIFICATION_ORDER: ClarificationOrder,
    Kind.BOUNDARY_WORDING: BoundaryWording,
    Kind.SKILL_IDS: SkillIds,
    Kind.DELIVERY: Delivery,
    Kind.PRICING: Pricing,
    Kind.STATE_CONTRACT: StateContract,
    Kind.COMPOSITION_MODE: CompositionMode,
    Kind.ROLLBACK: RollbackOf,
}


class PointerType(StrEnum):
    """The evidence a proposal may point at, kept small: a conversation of the same agent (the
    owner sees its summary, never the customer's words) and a knowledge version of the same agent."""

    SESSION = "session"
    KNOWLEDGE_VERSION = "knowledge_version"


class Pointer(Strict):
    """`{"type": "session", "id": "<uuid>"}` or `{"type": "knowledge_version", "id": <int>}`."""

    type: PointerType
    id: Annotated[int, Field(ge=1)] | uuid.UUID

    @model_validator(mode="after")
    def _matching(self) -> Pointer:
        wanted = uuid.UUID if self.type == PointerType.SESSION else int
        if not isinstance(self.id, wanted):
            raise ValueError(f"a {self.type.value} pointer's id is {'a UUID' if wanted is uuid.UUID else 'a number'}")
        return self


def payload_parse(kind: str, payload: object) -> Strict:
    """The typed payload of `kind`; raises ValueError / pydantic.ValidationError."""
    model = PAYLOADS[Kind(kind)]
    return model.model_validate(payload)
