"""The outgoing check with a turn's context (issue 27 §1): `manage.py guard_check --knowledge
--customer` gives a reply the verdict a real turn gives it.

The run loop builds what a reply is checked against from its messages and citations
(`guard.context.turn_context`); the command from what it is told (`stated_context`).  Held to the
same answers on every reply of the kept rounds through the function the run loop calls
(`reply_blocked`), and on a sample of them through real turns: a scripted model searches the
agent's approved knowledge (the row's published text, approved through the real service) and
answers with the row's reply, after the customer's messages of the row."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from conftest import TenantWorld
from facade.dialogue.models import Run
from facade.dialogue.runtime.loop import reply_blocked, turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from guard.context import knowledge_citation, stated_context, turn_context
from guard.rounds import RoundRow, round_read
from knowledge.models import Status
from knowledge.schemas import SourceIn
from knowledge.services import entry_approve, entry_propose
from ledger.models import LedgerEvent

ROUNDS = Path(__file__).resolve().parents[1] / "guard" / "corpus" / "rounds"
ACTOR = Actor.platform("tests")


def kept_rows() -> list[tuple[str, RoundRow]]:
    rows = []
    for directory in sorted(ROUNDS.iterdir()):
        commitments, harmless = round_read(directory)
        rows += [(f"{directory.name}:{i}", row) for i, row in enumerate(commitments + harmless)]
    return rows


ROWS = kept_rows()


def cli(text: str, context: Any, **options: Any) -> dict[str, Any]:
    out = io.StringIO()
    knowledge = [f"{c['title']}: {c['snippet']}" if c["title"] else c["snippet"] for c in context.citations]
    call_command("guard_check", text, knowledge=knowledge, customer=list(context.customer), stdout=out, **options)
    [line] = out.getvalue().splitlines()
    return json.loads(line)


def as_turn_messages(row: RoundRow, citations: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The messages a run holds when it answers with `row.text`: the prompt, the customer's
    messages (with the agent's replies between them), the search and what it returned."""
    context = row.context()
    others = [text for text in context.given if text not in context.customer]
    prompt = "\n".join(["You answer the shop's customers.", *others])
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}]
    for said in context.customer or ("你好" if row.language == "zh" else "Hello",):
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
    messages.pop()
    call = {"id": "c1", "type": "function", "function": {"name": "search_knowledge", "arguments": "{}"}}
    messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
    found = "\n".join(f"[{n}] {c['title']}: {c['snippet']}" for n, c in enumerate(citations, start=1))
    messages.append({"role": "tool", "tool_call_id": "c1", "content": found or "Nothing found."})
    return messages


def test_the_context_said_by_hand_is_the_context_of_the_turn() -> None:
    """Knowledge as `Title: text` is the citation the search gives; the customer's messages are the
    run's user messages; all of it counts as given."""
    assert knowledge_citation("Price list (version 3): Birthday cake (8 people): 35.00 EUR") == {
        "title": "Price list (version 3)",
        "snippet": "Birthday cake (8 people): 35.00 EUR",
    }
    assert knowledge_citation("  Open daily  ") == {"title": "", "snippet": "Open daily"}
    stated = stated_context(knowledge=["Fees: €5"], customer=["Is it 5?"], given=["x"])
    messages = [
        {"role": "system", "content": "x"},
        {"role": "user", "content": "Is it 5?"},
        {"role": "tool", "tool_call_id": "c1", "content": "Fees: €5"},
    ]
    turn = turn_context(messages, [{"title": "Fees", "snippet": "€5"}])
    assert stated.customer == turn.customer == ("Is it 5?",)
    assert [dict(c) for c in stated.citations] == [dict(c) for c in turn.citations]
    assert set(stated.given) == set(turn.given)


@pytest.mark.parametrize("name, row", ROWS, ids=[name for name, _row in ROWS])
def test_guard_check_and_the_run_loop_agree_on_every_kept_reply(name: str, row: RoundRow) -> None:
    context = row.context()
    citations = [dict(c) for c in context.citations]
    turn = turn_context(as_turn_messages(row, citations), citations)
    blocked = reply_blocked(row.text, Audience.CUSTOMER, (), citations, list(turn.given), list(turn.customer))
    by_hand = cli(row.text, context, given=[g for g in context.given if g not in context.customer])
    assert by_hand["blocked"] == (blocked is not None), (name, row.text, by_hand, blocked)
    if blocked is not None:
        assert (by_hand["category"], by_hand["check"], by_hand["rule"]) == (
            blocked.category,
            blocked.check,
            blocked.rule,
        )


# --- through real turns ---------------------------------------------------------------------


def _sample() -> list[tuple[str, RoundRow]]:
    """From each kept round, the first reply of each file and language that relies on one cited
    entry, and the first that relies on the customer's message: blocked and sent ones both."""
    picked: dict[tuple[str, bool, str, str], tuple[str, RoundRow]] = {}
    for name, row in ROWS:
        context = row.context()
        if len(context.citations) == 1 and context.citations[0]["title"]:
            kind = "knowledge"
        elif context.customer and not context.citations:
            kind = "customer"
        else:
            continue
        picked.setdefault((name.split(":")[0], row.category is None, row.language, kind), (name, row))
    return list(picked.values())


SAMPLE = _sample()


def approved(world: TenantWorld, title: str, body: str) -> None:
    source = SourceIn(type="owner_dialogue", ref=f"chat:{title}", version="1")
    version = entry_propose(agent=world.agent, title=title, body=body, source=source, actor=ACTOR)
    if version.status != Status.APPROVED:
        version = entry_approve(version=version, actor=ACTOR)


def test_the_sample_covers_both_languages_and_both_verdicts() -> None:
    assert len(SAMPLE) >= 40
    kinds = {(row.language, row.category is None, bool(row.context().customer)) for _name, row in SAMPLE}
    assert kinds == {
        (lang, harmless, said) for lang in ("en", "zh") for harmless in (True, False) for said in (True, False)
    }


@pytest.mark.django_db
@pytest.mark.parametrize("name, row", SAMPLE, ids=[name for name, _row in SAMPLE])
def test_a_real_turn_gives_the_verdict_guard_check_gives(world_a: TenantWorld, name: str, row: RoundRow) -> None:
    context = row.context()
    customer = Customer.objects.create(tenant=world_a.tenant)
    session = session_open(agent=world_a.agent, audience=Audience.CUSTOMER, customer=customer)
    said = list(context.customer) or ["你好" if row.language == "zh" else "Hello"]  # the reply's language
    for earlier in said[:-1]:
        turn_handle(session=session, text=earlier, provider=ScriptedProvider.of(ModelReply(text="Noted.")))
    steps: list[Any] = []
    if context.citations:
        [entry] = context.citations
        approved(world_a, entry["title"], entry["snippet"])
        query = json.dumps({"query": entry["title"]})
        steps.append(ModelReply(tool_calls=[ToolCall(id="c1", name="search_knowledge", arguments=query)]))
    provider = ScriptedProvider(steps=[*steps, ModelReply(text=row.text)], rewrites=False)
    result = turn_handle(session=session, text=said[-1], provider=provider)
    run = Run.objects.get(pk=result.run.pk)
    knowledge = [f"{c['title']}: {c['snippet']}" for c in context.citations]
    by_hand = cli(row.text, stated_context(knowledge=knowledge, customer=said), agent=world_a.agent.slug)
    assert by_hand["blocked"] == bool(run.guard_category), (row.text, by_hand, run.guard_category)
    assert (by_hand["category"] or "") == run.guard_category
    blocks = LedgerEvent.objects.of_type("guard.blocked")  # one session, one turn with this reply
    assert [(e.payload["category"], e.payload.get("rule") or None) for e in blocks] == (
        [(by_hand["category"], by_hand["rule"])] if by_hand["blocked"] else []
    )
    if not by_hand["blocked"]:
        assert result.reply.text == row.text
        # The search found the row's entry: the verdict was reached with it cited.
        assert [c["title"] for c in result.reply.citations] == [c["title"] for c in context.citations]
