"""Small talk is not a knowledge miss (issue 11, point 4): greetings, thanks, goodbyes and a bare
yes or no are answered politely, and nothing records them as a question nobody could answer —
neither the offline model nor the search tool, whichever model searched."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache

from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.small_talk import SmallTalk, small_talk
from facade.dialogue.services import session_open
from facade.tenancy.models import Customer
from facade.tenancy.rules import Audience
from knowledge.models import KnowledgeMiss


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Thanks, bye!", SmallTalk.GOODBYE),
        ("No thanks.", SmallTalk.NO),
        ("no, that's all, thanks", SmallTalk.NO),
        ("好的谢谢", SmallTalk.THANKS),
        ("谢谢", SmallTalk.THANKS),
        ("Thank you so much!", SmallTalk.THANKS),
        ("再见", SmallTalk.GOODBYE),
        ("bye 👋", SmallTalk.GOODBYE),
        ("ok", SmallTalk.YES),
        ("Okay then", SmallTalk.YES),
        ("yes", SmallTalk.YES),
        ("知道了", SmallTalk.YES),
        ("no", SmallTalk.NO),
        ("不用了", SmallTalk.NO),
        ("hello", SmallTalk.GREETING),
        ("Hi there!", SmallTalk.GREETING),
        ("您好", SmallTalk.GREETING),
        # More than small talk: a question or a wish.
        ("thanks, and do you deliver?", None),
        ("hi, when do you open?", None),
        ("好的，我想订蛋糕", None),
        ("你们几点开门?", None),
        ("no nuts in the cake please", None),
        ("不要辣", None),
        ("the shop", None),
        ("", None),
    ],
)
def test_what_is_small_talk(text: str, kind: SmallTalk | None) -> None:
    assert small_talk(text) == kind


# --- in a conversation --------------------------------------------------------------------


def customer_session(world: Any) -> Any:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text, reply",
    [
        ("Thanks, bye!", "Goodbye, and thank you for visiting Alpha Agent!"),
        ("No thanks.", "All right. If anything else comes up, just ask."),
        ("ok", "All right. What would you like to know?"),
        ("yes", "All right. What would you like to know?"),
        ("Thank you!", "You're welcome! Is there anything else I can help you with?"),
        ("hello", "Hello! I can answer questions from what Alpha Agent has taught me"),
        ("好的谢谢", "不客气！还有什么可以帮您的吗？"),
        ("谢谢", "不客气！还有什么可以帮您的吗？"),
        ("再见", "再见，感谢您光临Alpha Agent！"),
        ("不用了", "好的。如有其他问题，随时问我。"),
    ],
)
def test_small_talk_is_answered_and_never_a_miss(api: Any, world_a: Any, text: str, reply: str) -> None:
    cache.clear()
    session = api.post(f"/api/agents/{world_a.agent.slug}/sessions", {}, format="json").json()["id"]
    response = api.post(f"/api/sessions/{session}/messages", {"text": text}, format="json")
    assert response.status_code == 201, response.content
    answer = response.json()["reply"]
    assert answer["text"].startswith(reply) and answer["citations"] == []
    assert not KnowledgeMiss.objects.exists()


@pytest.mark.django_db
def test_no_thanks_after_the_offer_leaves_it_politely(world_a: Any) -> None:
    session = customer_session(world_a)
    offered = turn_handle(session=session, text="How much is a wedding cake?")
    assert offered.reply is not None and offered.reply.text.startswith(world_a.agent.boundary("en"))
    declined = turn_handle(session=session, text="No thanks.")
    assert declined.reply is not None and declined.reply.text == "All right. If anything else comes up, just ask."
    assert declined.request is None


def search(query: str) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(id="c1", name="search_knowledge", arguments=json.dumps({"query": query}))])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "message, query, missed",
    [
        ("Thanks, bye!", "thanks bye", False),  # a hosted model that searches small talk
        ("好的谢谢", "感谢 客户", False),  # whatever it searched for: the customer only said thanks
        ("Do you repair vintage typewriters?", "thanks", False),  # a query of small talk is no question
        ("Do you repair vintage typewriters?", "vintage typewriter repair", True),
    ],
)
def test_the_search_tool_records_no_miss_for_small_talk(world_a: Any, message: str, query: str, missed: bool) -> None:
    provider = ScriptedProvider.of(search(query), ModelReply(text="I don't know that yet."))
    turn_handle(session=customer_session(world_a), text=message, provider=provider)
    assert KnowledgeMiss.objects.exists() is missed
