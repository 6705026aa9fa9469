"""Issue 26 §2 over the chat WebSocket (the real ASGI application and channel layer): a change
that takes nothing away from a conversation is answered in the same session from its next
message; one that takes away what it relies on answers the next message with `session_continued`
naming the session that continues it, whose history holds the earlier messages and the request,
and the same message sent there again is answered."""

from __future__ import annotations

from typing import Any

import pytest
from test_consumer import (  # noqa: F401  (the autouse fixtures are used by name)
    Chat,
    _own_ip_limit,
    _site_origin,
    customer_session,
    run,
)

from approvals.contract import contract_compile
from conftest import TenantWorld
from facade.dialogue.models import CustomerRequest, DialogueSession
from facade.tenancy.schemas import Actor

pytestmark = pytest.mark.django_db(transaction=True)

GREETING = "Welcome back to Alpha — ask me anything."


def publish(world: TenantWorld, change: dict[str, Any]) -> None:
    contract_compile(agent=world.agent, changes=change, actor=Actor.human(world.owner.pk))


def test_after_a_greeting_change_the_next_message_is_answered_in_the_same_session(world_a: TenantWorld) -> None:
    session, cookie = customer_session(world_a)

    async def scenario() -> None:
        from channels.db import database_sync_to_async

        chat = Chat(session.pk, cookie)
        assert (await chat.open())["type"] == "history"
        first = (await chat.ask("I'd like to order a birthday cake", "m-1"))[-1]
        assert "By when would you like it?" in first["reply"]["text"]
        await database_sync_to_async(publish)(world_a, {"wording": {"en": {"greeting": GREETING}}})
        frames = await chat.ask("next Friday", "m-2")
        assert [f["type"] for f in frames if f["type"] == "error"] == []
        assert "How can the owner reach you" in frames[-1]["reply"]["text"]
        await chat.ask("ana@example.com", "m-3")
        await chat.ask("yes", "m-4")
        assert (await chat.ask("hello", "m-5"))[-1]["reply"]["text"] == GREETING
        await chat.close()

    run(scenario)
    session.refresh_from_db()
    assert (session.status, session.contract_version) == ("open", 2)


def test_after_a_skill_is_removed_the_conversation_goes_on_in_the_session_that_continues_it(
    world_a: TenantWorld,
) -> None:
    session, cookie = customer_session(world_a)
    found: dict[str, Any] = {}

    async def scenario() -> None:
        from channels.db import database_sync_to_async

        chat = Chat(session.pk, cookie)
        await chat.open()
        for n, text in enumerate(("I'd like to order a birthday cake", "next Friday", "ana@example.com", "yes")):
            await chat.ask(text, f"m-{n}")
        await database_sync_to_async(publish)(world_a, {"skill_ids": ["knowledge_answers", "request_intake"]})
        await chat.send({"type": "message", "text": "I'd also like to order cupcakes", "client_message_id": "m-9"})
        refused = await chat.until("error")
        assert refused[-1]["code"] == "session_continued" and refused[-1]["client_message_id"] == "m-9"
        found["session"] = refused[-1]["session"]
        await chat.close()

        # The page connects to the session named: the same messages and the request are there …
        moved = Chat(found["session"], cookie)
        history = await moved.open()
        assert history["type"] == "history" and history["status"] == "open"
        assert [m["text"] for m in history["messages"] if m["role"] == "principal"] == [
            "I'd like to order a birthday cake",
            "next Friday",
            "ana@example.com",
            "yes",
        ]
        assert [r["state"] for r in history["requests"]] == ["submitted"]
        # … and the message refused is sent again there by its id, and answered.
        answered = (await moved.ask("I'd also like to order cupcakes", "m-9"))[-1]
        assert "By when would you like it?" in answered["reply"]["text"]
        await moved.close()

    run(scenario)
    successor = DialogueSession.objects.get(pk=found["session"])
    assert successor.continues_id == session.pk
    assert CustomerRequest.objects.get().session_id == successor.pk
