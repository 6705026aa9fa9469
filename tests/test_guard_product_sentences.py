"""The product's own sentences pass the outgoing check (issue 27 §2).

Every sentence the agent's code can send a customer or a peer — the run loop's honest answers and
the boundary wording with its offer, the offline model's answers and questions, the request flow's
summary, confirmations and status lines, the ways out of the flow, the strict composer's templates
and status lines, a quote of the published price list and delivery options, the stranded-run
reply — is run through `outgoing_check` in English and Chinese, with realistic values in its
placeholders and the citations and customer words a real turn gives it, and none is blocked.

The sentences are found in the code, not copied here: every module-level `Phrasebook` of the
project (read from the source, so a new book is checked without touching this file), the functions
that compose replies (`status_line`, `request_summary`, the strict composer's `compose` and
`templates`) and real turns of the offline model.  Only the owner face's books are left out, each
named below with why.  A session a publish ended (`session_continue`) says nothing of its own:
the page sends the refused message again in the session that continues it, so the continuation
has no sentence to check beyond the turn's reply, which is checked like any other.

One fix came out of it: the request summary the customer confirms ("- What you need: a birthday
cake for 8 people, under 80 euros") said the customer's own words back, and the rules read them as
the business's price, deadline or promise, so the customer was answered with the boundary wording
instead and could never register such a request.  The guard's `said_back` scope now leaves the
summary's rows out of the wording rules (their figures still go through the grounding check);
the same words outside a whole summary still block.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.utils import translation

from approvals.contract import contract_compile, live_terms
from approvals.published import found_in
from conftest import TenantWorld
from facade.dialogue.labels import STATE_LABELS
from facade.dialogue.models import CustomerRequest, DialogueSession, Run
from facade.dialogue.runtime.loop import HONEST, turn_handle
from facade.dialogue.runtime.providers.offline import TEXT
from facade.dialogue.runtime.request_status import status_line
from facade.dialogue.runtime.strict import STATUS_LINE, compose, templates
from facade.dialogue.runtime.summary import SUMMARY, request_summary
from facade.dialogue.services import session_open
from facade.i18n import Phrasebook
from facade.tenancy.models import AgentProfile, Customer, PeerCredential, default_request_flow
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from guard.engine import normalised
from guard.outgoing import outgoing_check
from guard.rules import SCOPES

LANGUAGES = ("en", "zh-hans")
ROOT = Path(__file__).resolve().parents[1]
# Where the product's code lives (tests and the virtualenv are not the product).
PACKAGES = ("facade", "approvals", "knowledge", "rsi", "guard", "ledger", "audit")

# The books whose sentences only the owner face says: the owner is not a customer, and the
# outgoing check does not read the owner face's replies (loop.reply_blocked).
OWNER_ONLY = {
    "facade.dialogue.runtime.providers.offline.OWNER": "the owner face's answers and help",
    "facade.dialogue.runtime.providers.offline.DRAFT_ENTRY": "a knowledge draft shown to the owner",
    "facade.dialogue.runtime.providers.offline.OWNER_STATES": "a request's state as the owner reads it",
    "facade.dialogue.runtime.providers.offline.OWNER_ACTORS": "who acts next, as the owner reads it",
}

PRICES = {
    "currency": "EUR",
    "items": [
        {"name": "Birthday cake (8 people)", "amount": "35.00", "names": {"zh-hans": "生日蛋糕（8人份）"}},
        {"name": "Cupcake", "amount": "3.50", "names": {"zh-hans": "纸杯蛋糕"}},
    ],
}
DELIVERY = [
    {"channel": "courier", "note": "within the city, 2 working days"},
    {"channel": "pickup", "note": "at the shop, Monday to Saturday 8:00-18:00"},
]
PRICE_QUESTION = {"en": "What are your prices?", "zh-hans": "你们的价格是多少？"}
DELIVERY_QUESTION = {"en": "Do you deliver?", "zh-hans": "可以送货吗？"}
# What customers write into a request, figures and all: said back in the summary, never ours.
CUSTOMER_FIELDS = {
    "en": [
        ("a birthday cake for 8 people, under 80 euros", "by Friday", "anna@example.com"),
        ("repair of my bike, the garage quoted me $310", "within 3 days please", "0170 1234567"),
        ("a wedding cake, free delivery", "Saturday 14 June at 3pm", "anna@example.com"),
        ("I need it guaranteed to arrive on time", "next Monday 9am", "anna@example.com"),
        ("20% discount on 10 cupcakes", "as soon as possible", "+49 170 1234567"),
        ("a new cake: the one delivered on Monday the 9th was damaged", "this Saturday", "anna@example.com"),
    ],
    "zh-hans": [
        ("8人份生日蛋糕，预算80欧元以内", "周五之前", "13812345678"),
        ("修自行车，车行报价310元", "三天内", "13812345678"),
        ("婚礼蛋糕，要免费送货", "6月14日周六下午3点", "13812345678"),
        ("保证准时送到", "下周一上午9点", "13812345678"),
        ("10个纸杯蛋糕打八折", "越快越好", "13812345678"),
        ("5号送到的蛋糕坏了，想换一个", "这周六", "13812345678"),
    ],
}


@dataclass(frozen=True)
class Sentence:
    """One thing the agent can say: where it comes from, and the context a real turn gives it."""

    source: str
    key: str
    language: str
    text: str
    given: tuple[str, ...] = ()
    citations: tuple[Mapping[str, Any], ...] = field(default=())

    def verdict(self) -> str | None:
        """None when the outgoing check lets it through, else what it said and about what."""
        verdict = outgoing_check(self.text, given=list(self.given), citations=list(self.citations))
        if not verdict.blocked:
            return None
        return f"{self.source}[{self.key}] ({self.language}) blocked {verdict.as_json()}: {self.text!r}"


def blocked_among(sentences: Sequence[Sentence]) -> list[str]:
    return [said for said in (s.verdict() for s in sentences) if said is not None]


def sources_per_language(sentences: Sequence[Sentence]) -> dict[str, set[str]]:
    return {language: {s.source for s in sentences if s.language == language} for language in LANGUAGES}


# --- the phrasebooks, found in the source -----------------------------------------------------

_BOOK = re.compile(r"^([A-Z][A-Z0-9_]*)(?:: [^=\n]+)? = Phrasebook\(", re.MULTILINE)


def phrasebooks() -> dict[str, Phrasebook]:
    """Every module-level Phrasebook of the product, by "module.NAME"."""
    books: dict[str, Phrasebook] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            names = _BOOK.findall(path.read_text(encoding="utf-8"))
            if not names:
                continue
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            loaded = importlib.import_module(module)
            for name in names:
                book = getattr(loaded, name)
                assert isinstance(book, Phrasebook), f"{module}.{name}"
                books[f"{module}.{name}"] = book
    return books


def placeholder_values(language: str, name: str) -> dict[str, list[str]]:
    """Realistic values for the placeholders the sentences take: a request number, every "next"
    the code says, the agent's name, an owner's own field and flow state, a contract version."""
    words = TEXT[language]
    return {
        "id": ["1042"],
        "next": [words["next_owner"], words["next_customer"], words["next_nobody"]],
        "name": [name],
        "field": ["budget"],
        "state": ["on hold"],
        "version": ["3"],
    }


def filled(template: str, values: Mapping[str, list[str]]) -> Iterator[str]:
    """`template` with each combination of values for its placeholders."""
    wanted = sorted({f for _text, f, _spec, _conv in string.Formatter().parse(template) if f is not None})
    unknown = [f for f in wanted if f not in values]
    assert not unknown, f"no realistic value for {unknown} in {template!r}: add one to placeholder_values"
    for combination in itertools.product(*(values[f] for f in wanted)):
        yield template.format(**dict(zip(wanted, combination, strict=True)))


def phrasebook_sentences(name: str = "Rosa's Bakery") -> list[Sentence]:
    sentences = []
    for source, book in phrasebooks().items():
        if source in OWNER_ONLY:
            continue
        for language in LANGUAGES:
            values = placeholder_values(language, name)
            for key, template in book[language].items():
                sentences += [Sentence(source, key, language, text) for text in filled(template, values)]
    return sentences


def test_the_owner_only_books_are_books_of_the_product() -> None:
    """Left out of the check only as long as they exist: a renamed book is checked again."""
    assert set(OWNER_ONLY) <= set(phrasebooks())


def test_every_sentence_of_every_customer_phrasebook_passes_in_both_languages() -> None:
    """Checked with nothing given and nothing cited — harder than any turn, where the prompt, the
    conversation and the tools' results are given: a sentence of the product needs none of them."""
    sentences = phrasebook_sentences()
    found = sources_per_language(sentences)
    for language in LANGUAGES:
        # Not vacuous: each book the run loop, the offline model, the request flow, the ways out,
        # the strict composer, the contract's default wording and the published titles say.
        assert {
            "facade.dialogue.runtime.loop.HONEST",
            "facade.dialogue.runtime.providers.offline.TEXT",
            "facade.dialogue.runtime.providers.offline.QUESTIONS",
            "facade.dialogue.runtime.ways_out.WAYS",
            "facade.dialogue.runtime.request_status.STATES",
            "facade.dialogue.runtime.request_status.NEXT",
            "facade.dialogue.runtime.summary.SUMMARY",
            "facade.dialogue.runtime.strict.STATUS_LINE",
            "facade.tenancy.models.DEFAULT_WORDING",
            "approvals.published.TITLES",
        } <= found[language], found[language]
    assert len({s.text for s in sentences if s.language == "en"}) > 60
    assert len({s.text for s in sentences if s.language == "zh-hans"}) > 60
    # The Chinese is Chinese: a sentence left untranslated would be checked as English twice.
    assert all(re.search(r"[\u4e00-\u9fff]", s.text) for s in sentences if s.language == "zh-hans" and s.key == "offer")
    assert blocked_among(sentences) == []


# --- what the code composes -------------------------------------------------------------------


def _request(number: int, state: str, next_actor: str, acted: bool) -> dict[str, Any]:
    return {"id": number, "state": state, "next_actor": next_actor, "owner_acted": acted}


def composed_sentences(agent: AgentProfile, language: str) -> list[Sentence]:
    """What the code composes for `language`, with a real turn's citations and customer words."""
    terms = live_terms(agent)
    words = TEXT[language]
    sentences = [
        # What a blocked reply is replaced by (loop._finish): the boundary wording and the offer.
        Sentence(
            "loop.blocked_reply", "boundary+offer", language, f"{terms.boundary(language)} {HONEST[language]['offer']}"
        ),
    ]
    # Where a request stands, in every state of the flow an agent starts with and one of the owner's own.
    flow = default_request_flow()["states"]
    assert isinstance(flow, dict)
    states = {**{name: str(state["next_actor"]) for name, state in flow.items()}, "on_hold": "owner"}
    for (state, next_actor), acted in itertools.product(states.items(), (False, True)):
        line = status_line(_request(1042, state, next_actor, acted), language)
        sentences.append(Sentence("request_status.status_line", f"{state}/{acted}", language, line))
    # The strict composer's status line of a request the customer named, in every state.
    nexts = [words["next_owner"], words["next_customer"], words["next_nobody"]]
    for (state, label), following in itertools.product(STATE_LABELS.items(), nexts):
        with translation.override(language):
            text = STATUS_LINE[language]["line"].format(id=1042, state=str(label), next=following)
        sentences.append(Sentence("strict.STATUS_LINE", state, language, text))
    # The summary the customer confirms, with the customer's own words (and figures) in it.
    for need, when, contact in CUSTOMER_FIELDS[language]:
        summary = request_summary(summary=need, details={"when": when, "contact": contact}, language=language)
        sentences.append(Sentence("summary.request_summary", need, language, summary, given=(need, when, contact)))
    # The strict composer's published templates, each as it is sent.
    for key, text in templates(agent, terms, language).items():
        sentences.append(Sentence("strict.templates", key, language, text))
    sentences += strict_composed(agent, language)
    return sentences


def strict_composed(agent: AgentProfile, language: str) -> list[Sentence]:
    """The strict composer's replies (`compose`, the server's own rendering): quotes of the
    published price list and delivery options, line by line and whole, status lines after each
    request tool, the templates that name a request, and the summary."""
    terms = live_terms(agent)
    content = {"pricing": PRICES, "delivery": DELIVERY}
    parts = [
        p
        for question in (PRICE_QUESTION[language], DELIVERY_QUESTION[language])
        for p in found_in(question, content=content, version=3, language=language)
    ]
    assert {p.part for p in parts} == {"pricing", "delivery"}, parts
    citations = [p.citation() for p in parts]
    need, when, contact = CUSTOMER_FIELDS[language][0]
    customer = [need, when, contact, "1042"]
    request = _request(1042, "submitted", "owner", False)
    choices: dict[str, tuple[list[dict[str, Any]], Sequence[str]]] = {}
    for number, cited in enumerate(citations, 1):
        choices[f"quote {number}"] = (
            [{"kind": "template", "id": "quoted"}, {"kind": "knowledge", "id": str(number)}],
            (),
        )
        for line in range(1, len(cited["units"]) + 1):
            choices[f"quote {number}.{line}"] = (
                [{"kind": "template", "id": "quoted"}, {"kind": "knowledge", "id": f"{number}.{line}"}],
                (),
            )
    for tool, status_id in (
        ("submit_request", "registered"),
        ("request_handoff", "handoff"),
        ("withdraw_request", "withdrawn"),
        ("amend_request", "amended"),
        ("read_request_status", "state"),
    ):
        choices[f"status {status_id}"] = ([{"kind": "status", "id": status_id}], (tool,))
    choices["status request"] = ([{"kind": "status", "id": "request", "slots": {"request": "1042"}}], ())
    for template_id in ("owner_has_acted", "already_withdrawn"):
        choices[template_id] = ([{"kind": "template", "id": template_id, "slots": {"request": "1042"}}], ())
    summary_slots = {"need": need, "when": when, "contact": contact}
    choices["summary"] = ([{"kind": "template", "id": "summary", "slots": summary_slots}], ())
    choices["boundary+offer"] = ([{"kind": "template", "id": "boundary"}, {"kind": "template", "id": "offer"}], ())
    sentences = []
    for key, (parts_chosen, tools_done) in choices.items():
        composed = compose(
            json.dumps(parts_chosen),
            agent=agent,
            terms=terms,
            language=language,
            citations=citations,
            customer_said=lambda: customer,
            request=request,
            tools_done=tools_done,
            session_request=lambda number: request if number == 1042 else None,
        )
        assert composed.text is not None, (key, composed.reason)
        cited = tuple(citations[i] for i in composed.cited)
        sentences.append(
            Sentence("strict.compose", key, language, composed.text, given=tuple(customer), citations=cited)
        )
    return sentences


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_sentence_the_code_composes_passes(world_a: TenantWorld, language: str) -> None:
    sentences = composed_sentences(world_a.agent, language)
    sources = {s.source for s in sentences}
    assert sources == {
        "loop.blocked_reply",
        "request_status.status_line",
        "strict.STATUS_LINE",
        "summary.request_summary",
        "strict.templates",
        "strict.compose",
    }
    quotes = [s.text for s in sentences if s.key.startswith("quote")]
    assert any(q.endswith(f"[1] {title(language)}{colon(language)}{item(language)}") for q in quotes), quotes
    assert blocked_among(sentences) == []


def title(language: str) -> str:
    return {"en": "Price list (version 3)", "zh-hans": "价目表（第3版）"}[language]


def colon(language: str) -> str:
    return "：" if language == "zh-hans" else ": "


def item(language: str) -> str:
    return {"en": "Birthday cake (8 people): 35.00 EUR", "zh-hans": "生日蛋糕（8人份）：35.00 EUR"}[language]


# --- the summary said back: the fix, and what it does not let through ---------------------------


def test_the_said_back_scope_reads_every_language_s_summary_whole() -> None:
    """The scope's wording is the summary's (summary.py): each row's words are left out of the
    rules, its labels and the intro and closing stay."""
    [scope] = [s for s in SCOPES if s.kind == "said_back"]
    assert scope.language == "any"
    for language in SUMMARY:
        rows = {"when": "SENTINEL-WHEN", "contact": "SENTINEL-CONTACT", "budget": "SENTINEL-BUDGET"}
        summary = request_summary(summary="SENTINEL-NEED", details=rows, language=language)
        read = normalised(summary)
        assert "sentinel" not in read, (language, read)
        assert normalised(SUMMARY[language]["closing"]) in read and normalised(SUMMARY[language]["intro"]) in read


SAID_BACK = {
    "en": (
        "a birthday cake for 8 people, under 80 euros",
        "friday",
        "anna@example.com",
    ),
    "zh-hans": ("8人份生日蛋糕，免费送货，80欧元", "周五之前送到", "13812345678"),
}
# The same words, not in a whole summary: the business's own, and blocked as before.
OUR_OWN = {
    "en": [
        "- What you need: a birthday cake for 8 people, 80 euros\n- When: delivered by Friday",
        "Please check your request before I register it:\n- What you need: cake\n- When: Friday\n"
        "Shall I register it for the owner? (yes / no)\nWe'll deliver it by Friday.",
        "Please check your request before I register it:\n- What you need: cake\n- Price: 80 euros, yours",
        "Shall I register it for the owner? (yes / no)\n- Price: 80 euros",
    ],
    "zh-hans": [
        "- 需求：8人份生日蛋糕，80欧元\n- 时间：周五之前送到",
        "登记之前，请核对您的请求：\n- 需求：蛋糕\n- 时间：周五\n要我为店主登记吗？（是 / 否）\n我们周五之前送到。",
        "登记之前，请核对您的请求：\n- 需求：蛋糕\n- 价格：80欧元，给您免掉运费",
        "要我为店主登记吗？（是 / 否）\n- 价格：80欧元",
    ],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_customer_s_words_in_the_summary_pass_and_the_same_words_of_ours_are_blocked(language: str) -> None:
    need, when, contact = SAID_BACK[language]
    summary = request_summary(summary=need, details={"when": when, "contact": contact}, language=language)
    assert not outgoing_check(summary, given=[need, when, contact]).blocked, summary
    for text in OUR_OWN[language]:
        assert outgoing_check(text, given=[need, when, contact]).blocked, text


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_figure_in_the_summary_the_customer_never_gave_is_still_stopped(language: str) -> None:
    """The rows are left out of the wording rules only: the grounding check reads their figures."""
    need, when, contact = SAID_BACK[language]
    made_up = {"en": "a birthday cake for 8 people, 65 euros", "zh-hans": "8人份生日蛋糕，65欧元"}[language]
    summary = request_summary(summary=made_up, details={"when": when, "contact": contact}, language=language)
    verdict = outgoing_check(summary, given=[need, when, contact])
    assert verdict.blocked and verdict.check == "grounding", summary


# --- real turns of the offline model ----------------------------------------------------------


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def _customer(world: TenantWorld) -> DialogueSession:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


def _published(world: TenantWorld, mode: str = "guarded") -> None:
    """Version 3 of the contract: the price list, the delivery options, the status skill and the
    composition `mode`."""
    actor = Actor.platform("tests")
    skills = [*live_terms(world.agent).skill_ids, "request_status"]
    contract_compile(agent=world.agent, changes={"skill_ids": skills, "composition_mode": mode}, actor=actor)
    contract_compile(agent=world.agent, changes={"pricing": PRICES, "delivery": DELIVERY}, actor=actor)
    assert live_terms(world.agent).version == 3


# A conversation that meets most of what the offline model says to a customer: small talk, the
# published price list and delivery options, a question nobody answered, a price not on the list,
# a discount asked for, the request flow with figures of the customer's (a price asked in the middle
# of it, a contact that is no contact, the summary, registered), its status, a handoff and a
# withdrawal.  "{id}" is the request the conversation registered.
CONVERSATION = {
    "en": [
        "Hello",
        "What are your prices?",
        "How much is the Birthday cake (8 people)?",
        "Do you deliver?",
        "Do you sell gluten-free bread?",
        "How much is a wedding cake?",
        "Give me 20% off",
        "no",
        "I'd like to order a birthday cake for 8 people, under 80 euros",
        "How much is the Birthday cake (8 people)?",
        "Saturday 14 June at 3pm",
        "tomorrow",
        "anna@example.com",
        "yes",
        "Is my request #{id} confirmed?",
        "change the contact of request #{id} to +49 170 1234567",
        "I'd like to talk to a person",
        "cancel my request #{id}",
        "Thanks, bye!",
    ],
    "zh-hans": [
        "你好",
        "你们的价格是多少？",
        "生日蛋糕多少钱？",
        "可以送货吗？",
        "你们卖无麸质面包吗？",
        "婚礼蛋糕多少钱？",
        "给我打八折",
        "不用了",
        "我想订一个8人份的生日蛋糕，不超过80欧元",
        "生日蛋糕多少钱？",
        "6月14日周六下午3点",
        "明天",
        "13812345678",
        "是的",
        "我的请求#{id}确认了吗？",
        "请求#{id}的联系方式改成13900000000",
        "转人工",
        "撤回请求#{id}",
        "谢谢，再见",
    ],
}


def _session(world: TenantWorld, audience: Audience) -> DialogueSession:
    if audience == Audience.PEER:
        issued = peer_key_create(agent=world.agent, name="partner", actor=Actor.human(world.owner.pk))
        return session_open(
            agent=world.agent, audience=audience, peer=PeerCredential.objects.get(pk=issued.credential_id)
        )
    return _customer(world)


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(
    "audience, mode",
    [(Audience.CUSTOMER, "guarded"), (Audience.CUSTOMER, "strict"), (Audience.PEER, "guarded")],
    ids=["customer", "customer-strict", "peer"],
)
def test_a_whole_conversation_with_the_offline_model_is_delivered_as_written(
    world_a: TenantWorld, language: str, audience: Audience, mode: str
) -> None:
    """The offline model's answers as a real turn sends them — guarded, and in strict composition
    (the server composes each reply from the model's choice) — to a customer and to a peer."""
    _published(world_a, mode)
    session = _session(world_a, audience)
    boundary = f"{live_terms(world_a.agent).boundary(language)} {HONEST[language]['offer']}"
    said: list[tuple[str, str]] = []
    for text in CONVERSATION[language]:
        registered = CustomerRequest.objects.filter(session=session).order_by("pk").first()
        result = turn_handle(session=session, text=text.format(id=registered.pk if registered else "?"))
        assert result.reply is not None
        said.append((text, str(result.reply.text)))
    blocked = [
        f"{asked!r} -> {run.guard_category}: {reply!r}"
        for (asked, reply), run in zip(said, Run.objects.filter(session=session).order_by("message_id"), strict=True)
        if run.guard_category
    ]
    assert blocked == []
    replies = [reply for _asked, reply in said]
    assert boundary not in replies  # the boundary is said only with the quote or mid-flow, never as a replacement
    joined = "\n".join(replies)
    # The product's sentences with figures were said, not replaced.
    assert f"[1] {title(language)}{colon(language)}" in joined and "35.00 EUR" in joined, joined
    request = CustomerRequest.objects.filter(session=session).order_by("pk").first()
    # and the handoff's, where the face has the tool (a peer's narrow subset has not)
    handoff = audience == Audience.CUSTOMER
    assert request is not None and CustomerRequest.objects.filter(session=session).count() == 1 + handoff
    assert SUMMARY[language]["closing"] in joined and f"#{request.pk}" in joined, joined
    assert TEXT[language]["registered"].split("{id}")[0] in joined, joined


# --- through the API ----------------------------------------------------------------------------

API_TURNS = {
    "en": [
        "How much is the Birthday cake (8 people)?",
        "I'd like to order a birthday cake for 8 people, under 80 euros",
        "Saturday 14 June at 3pm",
        "anna@example.com",
        "yes",
    ],
    "zh-hans": [
        "生日蛋糕多少钱？",
        "我想订一个8人份的生日蛋糕，不超过80欧元",
        "6月14日周六下午3点",
        "13812345678",
        "是的",
    ],
}


@pytest.mark.django_db
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_price_list_quote_and_a_registered_request_reach_the_customer_through_the_api(
    world_a: TenantWorld, api: Any, language: str
) -> None:
    _published(world_a)
    session = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()["id"]
    replies = []
    for text in API_TURNS[language]:
        sent = api.post(f"/api/sessions/{session}/messages", {"text": text}, format="json")
        assert sent.status_code == 201, sent.content
        replies.append(sent.json()["reply"])
    quote, *_, summary, registered = replies
    assert f"[1] {title(language)}{colon(language)}{item(language)}" in quote["text"], quote["text"]
    assert quote["citations"] == [{"entry_id": None, "version": 3, "title": title(language), "published": "pricing"}]
    assert SUMMARY[language]["closing"] in summary["text"] and "80" in summary["text"], summary["text"]
    request = CustomerRequest.objects.get()
    expected = TEXT[language]["registered"].format(id=request.pk, next=TEXT[language]["next_owner"])
    assert registered["text"] == expected
    assert not Run.objects.exclude(guard_category="").exists()
