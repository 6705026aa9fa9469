"""Strict composition (issue 15 §4): the mode as a contract term and an L2 change, and the server
composing a strict-mode reply from the model's structured choice — refusing everything else."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_server import text_reply, tool_call, tool_call_reply

from approvals.contract import ContractInvalid, contract_compile, live_content, live_terms
from approvals.contract_rules import content_hash, contract_problems, default_content
from approvals.models import ProposalStatus
from approvals.rules import Level, Origin, Requires
from approvals.services import ProposalError, proposal_create, proposal_rollback
from facade.dialogue.models import CustomerRequest, Run, RunStatus
from facade.dialogue.runtime.loop import HONEST, turn_handle
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.openai import OpenAICompatibleProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.strict import Choices, composition_mode, response_schema, sentences
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from ledger.models import LedgerEvent
from ledger.selectors import ledger_verify
from tests.test_runtime import call, customer_session, events, peer_session, say, teach

pytestmark = pytest.mark.django_db

HOURS = "The shop is open Monday to Saturday, 9 to 18. Closed on public holidays."
CAKES = "Birthday cakes: from €35. Custom decorations are quoted by the owner."


def strict(world: Any) -> None:
    contract_compile(agent=world.agent, changes={"composition_mode": "strict"}, actor=Actor.platform("t"))


def boundary(world: Any, language: str = "en") -> str:
    return f"{live_terms(world.agent).boundary(language)} {HONEST[language]['offer']}"


def choice(*parts: dict[str, Any]) -> Any:
    return say(json.dumps(list(parts)))


def refused(world: Any, result: Any, reason: str) -> None:
    """The reply is the boundary wording and the refusal is recorded with its reason (no text)."""
    assert result.reply.text == boundary(world)
    assert result.reply.citations == []
    run = Run.objects.get(message=result.message)
    assert run.guard_category == "strict_refused"
    [blocked] = [e for e in events("guard.blocked") if e.entity_id == str(run.pk)]
    assert blocked.payload == {
        "category": "strict_refused",
        "audience": "customer",
        "entry_id": None,
        "rule": "",
        "reason": reason,
    }
    # A refusal is final: the model chose parts, so it is not asked for a rewrite.
    assert run.llm_call_count == 1 + run.tool_call_count
    assert [e for e in events("guard.rewrite_requested") if e.entity_id == str(run.pk)] == []


# --- the mode as a contract term, and an L2 change ------------------------------------------------


def test_the_default_is_guarded_and_leaves_the_hash_as_it_was(world_a: Any) -> None:
    terms = live_terms(world_a.agent)
    assert terms.composition_mode == "guarded" and composition_mode(world_a.agent, terms) == "guarded"
    content = live_content(world_a.agent)
    assert content["composition_mode"] == "guarded"
    # A version written before the mode existed hashes the same: the default is left out.
    before = {k: v for k, v in content.items() if k != "composition_mode"}
    assert content_hash(content) == content_hash(before) == terms.content_hash
    assert content_hash({**content, "composition_mode": "strict"}) != terms.content_hash


@pytest.mark.parametrize("mode", ["lenient", "", None, "STRICT", ["strict"]])
def test_an_invalid_mode_does_not_compile(world_a: Any, mode: Any) -> None:
    problems = contract_problems({**live_content(world_a.agent), "composition_mode": mode})
    assert problems == ["composition_mode: must be one of guarded, strict"]
    with pytest.raises(ContractInvalid, match="composition_mode: must be one of guarded, strict"):
        contract_compile(agent=world_a.agent, changes={"composition_mode": mode}, actor=Actor.platform("t"))
    assert live_terms(world_a.agent).composition_mode == "guarded"
    assert default_content()["composition_mode"] == "guarded"


def test_the_owner_switches_to_strict_as_an_l2_change_and_rolls_it_back(world_a: Any) -> None:
    proposal = proposal_create(
        agent=world_a.agent,
        kind="composition_mode",
        payload={"mode": "strict"},
        summary="Only published sentences",
        origin=Origin.OWNER_DIRECT,
        actor=Actor.human(world_a.owner.pk),
        owner=world_a.owner,
    )
    assert (proposal.level, proposal.requires, proposal.status) == (
        Level.L2,
        Requires.OWNER_DIRECT,
        ProposalStatus.APPLIED,
    )
    assert proposal.target == {"field": "composition_mode", "path": []}
    assert proposal.diff == {"before": "guarded", "after": "strict"}
    terms = live_terms(world_a.agent)
    assert terms.composition_mode == "strict" and composition_mode(world_a.agent, terms) == "strict"
    [published] = [e for e in events("contract.published") if e.payload["caused_by"] == proposal.pk]
    assert published.payload["changed"] == ["composition_mode"]
    back = proposal_rollback(
        agent=world_a.agent, proposal_id=proposal.pk, actor=Actor.human(world_a.owner.pk), owner=world_a.owner
    )
    assert back.status == ProposalStatus.APPLIED
    assert live_terms(world_a.agent).composition_mode == "guarded"
    proposal.refresh_from_db()
    assert proposal.status == ProposalStatus.ROLLED_BACK
    assert ledger_verify(chain_id=world_a.tenant.pk).ok


def test_a_model_proposal_of_the_mode_waits_for_the_owner(world_a: Any) -> None:
    proposal = proposal_create(
        agent=world_a.agent,
        kind="composition_mode",
        payload={"mode": "guarded"},
        summary="Back to free text",
        origin=Origin.REVIEW_REPORT,
        actor=Actor.platform("review"),
    )
    assert (proposal.level, proposal.requires, proposal.status) == (2, "owner_approval", ProposalStatus.PENDING)


@pytest.mark.parametrize("payload", [{"mode": "lenient"}, {}, {"mode": "strict", "why": "x"}, {"mode": 1}], ids=str)
def test_an_invalid_mode_proposal_is_refused_with_a_clear_error(world_a: Any, payload: Any) -> None:
    with pytest.raises(ProposalError) as refused_:
        proposal_create(
            agent=world_a.agent,
            kind="composition_mode",
            payload=payload,
            summary="x",
            origin=Origin.OWNER_DIRECT,
            actor=Actor.human(world_a.owner.pk),
            owner=world_a.owner,
        )
    assert refused_.value.code == "invalid_payload"
    assert refused_.value.detail.startswith(("mode:", "why:"))
    assert live_terms(world_a.agent).composition_mode == "guarded"


# --- the structured choice ------------------------------------------------------------------------


def test_the_choice_schema_forbids_extra_keys_and_unknown_kinds() -> None:
    assert Choices.model_validate([{"kind": "template", "id": "greeting"}]).root[0].slots == {}
    for bad in (
        [],
        [{"kind": "template", "id": "greeting", "text": "Hi!"}],
        [{"kind": "free", "id": "x"}],
        [{"kind": "template"}],
        [{"kind": "template", "id": "summary", "slots": {"need": 5}}],
    ):
        with pytest.raises(ValueError):
            Choices.model_validate(bad)


def test_sentences_end_where_the_quoting_rule_ends_them() -> None:
    assert sentences("From €3.50 a slice. Ask us!  Open 9-18; closed Sundays") == [
        "From €3.50 a slice.",
        "Ask us!",
        "Open 9-18;",
        "closed Sundays",
    ]
    assert sentences("营业时间：周一至周六。周日休息。") == ["营业时间：周一至周六。", "周日休息。"]


# --- a scripted model in strict mode --------------------------------------------------------------


def test_free_text_is_refused_in_strict_mode_and_sent_in_guarded_mode(world_a: Any) -> None:
    teach(world_a, "Opening hours", HOURS)
    text = "We are open Monday to Saturday."
    guarded = turn_handle(
        session=customer_session(world_a),
        text="When are you open?",
        provider=ScriptedProvider.of(call("search_knowledge", {"query": "open"}), say(text)),
    )
    assert guarded.reply is not None and guarded.reply.text == text  # the same words pass in guarded mode
    strict(world_a)
    provider = ScriptedProvider.of(call("search_knowledge", {"query": "open"}), say(text))
    result = turn_handle(session=customer_session(world_a), text="When are you open?", provider=provider)
    refused(world_a, result, "not_structured")
    assert [seen.composition for seen in provider.calls] == ["strict", "strict"]
    assert "STRICT MODE" in provider.calls[0].messages[0]["content"]
    run = Run.objects.get(message=result.message)
    assert run.status == RunStatus.WAITING_INPUT and result.reply.text not in json.dumps(
        [e.payload for e in LedgerEvent.objects.all()]
    )


def test_an_invented_template_id_is_refused(world_a: Any) -> None:
    strict(world_a)
    for parts, reason in (
        ([{"kind": "template", "id": "free_delivery"}], "unknown_template"),
        ([{"kind": "template", "id": "greeting", "slots": {"name": "Bob"}}], "unknown_slot"),
        ([{"kind": "status", "id": "approved"}], "unknown_status"),
        ([{"kind": "status", "id": "registered"}], "unknown_status"),  # no request registered this run
        ([{"kind": "template", "id": "greeting", "note": "hi"}], "invalid_choice"),
    ):
        result = turn_handle(
            session=customer_session(world_a), text="Hello there", provider=ScriptedProvider.of(choice(*parts))
        )
        refused(world_a, result, reason)
    ok = turn_handle(
        session=customer_session(world_a),
        text="Hello there",
        provider=ScriptedProvider.of(choice({"kind": "template", "id": "greeting"})),
    )
    assert ok.reply is not None and ok.reply.text.startswith("Hello! I can answer questions from what")


def test_a_price_in_a_slot_the_customer_did_not_give_is_refused(world_a: Any) -> None:
    strict(world_a)
    session = customer_session(world_a)
    said = "I'd like a birthday cake by Friday"
    slots = {"need": "a birthday cake", "when": "Friday, for €40"}
    result = turn_handle(
        session=session,
        text=said,
        provider=ScriptedProvider.of(choice({"kind": "template", "id": "summary", "slots": slots})),
    )
    refused(world_a, result, "slot_not_given")
    # The same summary with the customer's own words is composed (from this session's messages).
    slots = {"need": "a Birthday  cake", "when": "Friday"}
    ok = turn_handle(
        session=session,
        text="yes, that",
        provider=ScriptedProvider.of(choice({"kind": "template", "id": "summary", "slots": slots})),
    )
    assert ok.reply is not None and ok.reply.text == (
        "Please check your request before I register it:\n- What you need: a Birthday cake\n- When: Friday\n"
        "Shall I register it for the owner? (yes / no)"
    )
    assert Run.objects.get(message=ok.message).status == RunStatus.WAITING_INPUT
    # Another session's customer said "€40": it is not this customer's.
    other = customer_session(world_a)
    turn_handle(session=other, text="my budget is €40", provider=ScriptedProvider.of(say("[]")))
    slots = {"need": "a birthday cake", "when": "€40"}
    again = turn_handle(
        session=session,
        text="again",
        provider=ScriptedProvider.of(choice({"kind": "template", "id": "summary", "slots": slots})),
    )
    refused(world_a, again, "slot_not_given")


def test_knowledge_not_retrieved_in_the_run_is_refused(world_a: Any) -> None:
    teach(world_a, "Opening hours", HOURS)
    strict(world_a)
    session = customer_session(world_a)
    quote = {"kind": "knowledge", "id": "1"}
    # No search in this run: nothing was retrieved.
    alone = turn_handle(session=session, text="Hours?", provider=ScriptedProvider.of(choice(quote)))
    refused(world_a, alone, "unknown_knowledge")
    # Searched: one result, so citation 2 and sentence 1.5 are not there.
    for parts in ([{"kind": "knowledge", "id": "2"}], [{"kind": "knowledge", "id": "1.5"}]):
        provider = ScriptedProvider.of(call("search_knowledge", {"query": "open"}), choice(*parts))
        refused(world_a, turn_handle(session=session, text="Hours?", provider=provider), "unknown_knowledge")
    # Cited in an earlier run of the session is not cited in this one.
    first = turn_handle(
        session=session,
        text="When are you open?",
        provider=ScriptedProvider.of(call("search_knowledge", {"query": "open"}), choice(quote)),
    )
    assert first.reply is not None and first.reply.citations != []
    later = turn_handle(session=session, text="And again?", provider=ScriptedProvider.of(choice(quote)))
    refused(world_a, later, "unknown_knowledge")


def test_a_valid_choice_is_composed_with_its_citations(world_a: Any) -> None:
    hours = teach(world_a, "Opening hours", HOURS)
    teach(world_a, "Cakes", CAKES, ref="chat:2")
    strict(world_a)
    provider = ScriptedProvider.of(
        call("search_knowledge", {"query": "open hours"}),
        choice(
            {"kind": "template", "id": "found"},
            {"kind": "knowledge", "id": "1.1"},
            {"kind": "template", "id": "offer"},
        ),
    )
    result = turn_handle(session=customer_session(world_a), text="When are you open?", provider=provider)
    assert result.reply is not None
    assert result.reply.text == (
        "Here is what I found:\n"
        "[1] Opening hours: The shop is open Monday to Saturday, 9 to 18.\n"
        "Shall I register a request so that the owner can confirm it with you?"
    )
    # Only the entry the reply quoted is its citation.
    assert result.reply.citations == [{"entry_id": hours.entry_id, "version": hours.number, "title": "Opening hours"}]
    run = Run.objects.get(message=result.message)
    assert (run.guard_category, run.status) == ("", RunStatus.WAITING_INPUT)
    assert not [e for e in events("guard.blocked") if e.entity_id == str(run.pk)]


def test_a_quote_of_the_second_result_alone_is_numbered_as_the_replys_first_citation(world_a: Any) -> None:
    """The number in the text is the quote's place among the reply's citations: the check finds
    the entry it quotes (an approved price quoted as it stands passes), and the stored citations
    say the same."""
    hours = teach(world_a, "Opening hours", HOURS)
    cakes = teach(world_a, "Cakes", CAKES, ref="chat:2")
    strict(world_a)
    search = call("search_knowledge", {"query": "birthday cakes open hours"})
    provider = ScriptedProvider.of(search, choice({"kind": "knowledge", "id": "2.1"}))
    result = turn_handle(session=customer_session(world_a), text="How much is a birthday cake?", provider=provider)
    assert result.reply is not None
    [cited] = result.reply.citations  # the second search result, and only it
    quoted = {"Opening hours": (hours, HOURS), "Cakes": (cakes, CAKES)}[cited["title"]]
    assert cited == {"entry_id": quoted[0].entry_id, "version": quoted[0].number, "title": cited["title"]}
    assert result.reply.text == f"[1] {cited['title']}: {quoted[1].split('. ')[0].rstrip('.')}."
    assert Run.objects.get(message=result.message).guard_category == ""


def test_a_whole_entry_quoted_as_it_stands_and_a_status_line_of_the_run(world_a: Any) -> None:
    cakes = teach(world_a, "Cakes", CAKES)
    strict(world_a)
    session = peer_session(world_a)
    provider = ScriptedProvider.of(
        call("search_knowledge", {"query": "birthday cakes"}),
        say(json.dumps({"reply": [{"kind": "knowledge", "id": "1"}, {"kind": "template", "id": "boundary"}]})),
    )
    result = turn_handle(session=session, text="How much is a birthday cake?", provider=provider)
    assert result.reply is not None
    assert result.reply.text == f"[1] Cakes: {CAKES}\n{live_terms(world_a.agent).boundary('en')}"
    assert result.reply.citations == [{"entry_id": cakes.entry_id, "version": cakes.number, "title": "Cakes"}]
    handoff = ScriptedProvider.of(
        call("request_handoff", {"reason": "asked"}), choice({"kind": "status", "id": "handoff"})
    )
    result = turn_handle(session=customer_session(world_a), text="A person please", provider=handoff)
    assert result.reply is not None
    assert result.reply.text.startswith("I've asked a person to follow up with you (request #")
    number = result.request["id"]
    status = choice({"kind": "status", "id": "request", "slots": {"request": str(number)}})
    asked = f"Where is request {number}?"
    where = turn_handle(session=result.message.session, text=asked, provider=ScriptedProvider.of(status))
    assert where.reply is not None and where.reply.text == (
        f"Request #{number}: Submitted. Next: the owner reviews it and gets back to you."
    )


# --- the offline model in strict mode -------------------------------------------------------------


def test_the_offline_model_answers_with_the_structured_choice(world_a: Any) -> None:
    strict(world_a)
    provider = OfflineProvider(world_a.agent)
    hello = [{"role": "user", "content": "Hello"}]
    reply = provider.complete(
        messages=hello, tools=[], max_tokens=800, audience=Audience.CUSTOMER, composition="strict"
    )
    assert json.loads(reply.text) == [{"kind": "template", "id": "greeting"}]
    guarded = provider.complete(messages=hello, tools=[], max_tokens=800, audience=Audience.CUSTOMER)
    assert guarded.text.startswith("Hello! I can answer questions")


def test_the_offline_model_in_strict_mode_answers_with_a_citation_and_refuses_a_price(world_a: Any) -> None:
    hours = teach(world_a, "Opening hours", HOURS)
    strict(world_a)
    session = customer_session(world_a)
    result = turn_handle(session=session, text="When is the shop open?")
    assert result.reply is not None
    assert result.reply.text == f"Here is what I found:\n[1] Opening hours: {HOURS}"
    assert result.reply.citations == [{"entry_id": hours.entry_id, "version": hours.number, "title": "Opening hours"}]
    assert Run.objects.get(message=result.message).guard_category == ""
    price = turn_handle(session=session, text="How much does a wedding cake cost?")
    assert price.reply is not None
    assert price.reply.text == f"{live_terms(world_a.agent).boundary('en')}\n{HONEST['en']['offer']}"
    assert "€" not in price.reply.text and price.reply.citations == []
    run = Run.objects.get(message=price.message)
    assert (run.guard_category, run.status) == ("", RunStatus.WAITING_INPUT)  # its own choice, not a refusal


def test_a_request_is_registered_in_strict_mode_from_the_customers_own_words(world_a: Any) -> None:
    strict(world_a)
    session = customer_session(world_a)
    said = ["I'd like a birthday cake with roses", "next Friday", "anna@example.com"]
    replies = [turn_handle(session=session, text=text).reply for text in said]
    summary = replies[-1]
    assert summary is not None and summary.text.startswith("Please check your request before I register it:")
    assert "- When: next Friday" in summary.text and summary.text.endswith("(yes / no)")
    done = turn_handle(session=session, text="yes")
    assert done.reply is not None and done.reply.text.startswith("I've registered your request #")
    request = CustomerRequest.objects.get(session=session)
    assert request.details["when"] == "next Friday"
    assert not [e for e in events("guard.blocked")]


# --- the OpenAI-compatible provider in strict mode, against a real local server -------------------


def test_the_openai_compatible_provider_asks_for_the_schema_and_the_answer_is_composed_or_refused(
    world_a: Any, llm_server: Any
) -> None:
    hours = teach(world_a, "Opening hours", HOURS)
    session = customer_session(world_a)
    with OpenAICompatibleProvider(llm_server.url, "test-model", max_retries=0, timeout=5.0) as provider:
        llm_server.push(text_reply("We are open Monday to Saturday."))
        guarded = turn_handle(session=session, text="When are you open?", provider=provider)
        assert guarded.reply is not None and guarded.reply.text == "We are open Monday to Saturday."
        assert "response_format" not in llm_server.requests[-1].json  # guarded: free text, as before
        strict(world_a)
        session = customer_session(world_a)
        answer = {"reply": [{"kind": "knowledge", "id": "1.1"}, {"kind": "template", "id": "offer"}]}
        llm_server.push(
            tool_call_reply(tool_call("call_1", "search_knowledge", {"query": "open"})),
            text_reply(json.dumps(answer)),
        )
        result = turn_handle(session=session, text="When are you open?", provider=provider)
        sent = llm_server.requests[-1].json
        assert sent["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "strict_reply", "schema": response_schema(), "strict": False},
        }
        assert sent["response_format"]["json_schema"]["schema"]["properties"]["reply"]["items"]["required"] == [
            "kind",
            "id",
        ]
        assert "STRICT MODE" in sent["messages"][0]["content"]
        assert result.reply is not None and result.reply.text == (
            "[1] Opening hours: The shop is open Monday to Saturday, 9 to 18.\n"
            "Shall I register a request so that the owner can confirm it with you?"
        )
        assert result.reply.citations == [
            {"entry_id": hours.entry_id, "version": hours.number, "title": "Opening hours"}
        ]
        # An answer that does not validate (a key the schema does not have) is refused.
        bad = {"reply": [{"kind": "template", "id": "offer", "text": "Your cake is €20."}]}
        llm_server.push(text_reply(json.dumps(bad)))
        refused(world_a, turn_handle(session=session, text="And the price?", provider=provider), "invalid_choice")
        llm_server.push(text_reply("Your cake is €20 and ready Friday."))
        refused(world_a, turn_handle(session=session, text="And the price?", provider=provider), "not_structured")


# --- the owner's contract page --------------------------------------------------------------------


def test_the_contract_page_shows_the_mode_and_switches_it(world_a: Any) -> None:
    from django.test import Client

    client = Client()
    client.force_login(world_a.owner)
    url = f"/owner/{world_a.agent.slug}/contract"
    html = client.get(url).content.decode()
    assert 'id="composition_mode-h"' in html and "Guarded (the default) <strong>(in effect)</strong>" in html
    assert "replies are stiffer" in html  # the trade-off is explained
    assert 'value="strict" checked' in html  # the form offers the other mode
    bad = client.post(url + "/change", {"kind": "composition_mode", "mode": "lenient", "summary": "x"})
    assert bad.status_code == 400 and "Not proposed: mode:" in bad.content.decode()
    assert live_terms(world_a.agent).composition_mode == "guarded"
    done = client.post(url + "/change", {"kind": "composition_mode", "mode": "strict", "summary": "Strict please"})
    assert done.status_code == 302 and done["Location"].endswith("#composition_mode-outcome")
    assert live_terms(world_a.agent).composition_mode == "strict"
    html = client.get(url).content.decode()
    assert "Applied: customers hear it from their next message." in html
    assert "Strict <strong>(in effect)</strong>" in html
    zh = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-Hans").content.decode()
    assert "回复的组成方式" in zh and "严格模式 <strong>（当前生效）</strong>" in zh
