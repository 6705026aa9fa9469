"""The owner chat in plain words (issue 11, point 8): help and small talk, customers' requests and
unanswered questions, a stated fact turned into a draft the owner confirms, malformed commands
refused with the form that works — in the owner's language, without ids or statuses.

The offline model alone first (what it decides from a message), then whole turns through the
run loop on the database, then a model that tries to get round the checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.models import ChangeProposal
from facade.dialogue.models import Message
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply, ToolCall, ToolSpec
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.tools import registry
from facade.dialogue.services import request_submit, session_open
from facade.tenancy.models import AgentProfile, Customer
from facade.tenancy.rules import Audience
from knowledge.models import EntryVersion
from knowledge.services import knowledge_miss_record

OWNER_TOOLS = [ToolSpec(t.name, "", {"type": "object"}) for t in registry.for_audience(Audience.OWNER)]

HELP = {"en": "teach: title / text", "zh-hans": "知识：标题 / 内容"}
FORM = {"en": "To teach an entry, write: teach: title / text", "zh-hans": "要添加一条知识，请这样写：知识：标题 / 内容"}
FACT = {"en": "We now also sell gluten-free brownies.", "zh-hans": "我们现在也卖无麸质布朗尼。"}
TITLE = {"en": "Gluten-free brownies", "zh-hans": "无麸质布朗尼"}
DRAFT = {
    "en": "Here is a draft for the knowledge base:\n“Gluten-free brownies”: We now also sell gluten-free brownies.\n"
    "Shall I add this?",
    "zh-hans": "这是一条知识库草稿：\n“无麸质布朗尼”：我们现在也卖无麸质布朗尼。\n要我添加吗？",
}
# What a model wrote waits for the owner's decision on its card (issue 28 §1).
ADDED = {
    "en": "Saved “Gluten-free brownies”. It waits for your approval on its card (change {id}); customers are told "
    "it once you approve it there.",
    "zh-hans": "已保存“无麸质布朗尼”。它在卡片上等您批准（变更 {id}）；您在那里批准后才会告诉客户。",
}
YES = {"en": "yes", "zh-hans": "好的"}
NO = {"en": "no, don't", "zh-hans": "不用了"}


def offline(*messages: dict[str, Any]) -> ModelReply:
    agent = AgentProfile(name="Demo Shop", slug="demo-shop")
    return OfflineProvider(agent).complete(
        messages=list(messages), tools=OWNER_TOOLS, max_tokens=800, audience=Audience.OWNER
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool_names(reply: ModelReply) -> list[str]:
    return [c.name for c in reply.tool_calls]


# --- what the offline model decides --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Hello, what can you do?", "en"),
        ("help", "en"),
        ("Hi", "en"),
        ("你好，你能做什么？", "zh-hans"),
        ("帮助", "zh-hans"),
        ("怎么用", "zh-hans"),
    ],
)
def test_help_and_greetings_answer_what_the_owner_face_can_do(text: str, language: str) -> None:
    reply = offline(user(text))
    assert tool_names(reply) == []
    assert HELP[language] in reply.text and ("requests" in reply.text) == (language == "en")
    assert ("请求" in reply.text) == (language == "zh-hans")


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("requests", "read_customer_requests"),
        ("Show me the requests", "read_customer_requests"),
        ("请求", "read_customer_requests"),
        ("unanswered", "read_unanswered_questions"),
        ("未回答的问题", "read_unanswered_questions"),
        ("inbox", "read_owner_inbox"),
        ("What's new?", "read_owner_inbox"),
        ("收件箱", "read_owner_inbox"),
        ("有什么新消息？", "read_owner_inbox"),
    ],
)
def test_asking_for_requests_unanswered_questions_or_the_inbox_reads_them(text: str, tool: str) -> None:
    assert tool_names(offline(user(text))) == [tool]


@pytest.mark.parametrize(
    ("text", "language"),
    [("Thanks!", "en"), ("Bye", "en"), ("谢谢", "zh-hans"), ("再见", "zh-hans")],
)
def test_small_talk_is_answered_and_not_searched(text: str, language: str) -> None:
    reply = offline(user(text))
    assert tool_names(reply) == [] and reply.text
    assert "Nothing in the knowledge base" not in reply.text


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_stated_fact_becomes_a_draft_the_owner_is_asked_about(language: str) -> None:
    reply = offline(user(FACT[language]))
    assert tool_names(reply) == [] and reply.text == DRAFT[language] and reply.needs_input is True


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_yes_to_the_draft_adds_exactly_what_was_shown(language: str) -> None:
    reply = offline(user(FACT[language]), {"role": "assistant", "content": DRAFT[language]}, user(YES[language]))
    [call] = reply.tool_calls
    assert call.name == "add_confirmed_knowledge"
    assert json.loads(call.arguments) == {"title": TITLE[language], "text": FACT[language]}


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("teach: missing slash no title", "en"),
        ("teach:", "en"),
        ("teach: Brownies /", "en"),
        ("知识：没有斜杠也没有标题", "zh-hans"),
    ],
)
def test_a_malformed_teach_gets_the_right_form_and_no_tool(text: str, language: str) -> None:
    reply = offline(user(text))
    assert tool_names(reply) == [] and reply.text == FORM[language]


@pytest.mark.parametrize(
    ("text", "title", "body"),
    [
        ("teach: Opening hours / Monday to Saturday", "Opening hours", "Monday to Saturday"),
        ("teach: Opening hours\nMonday to Saturday", "Opening hours", "Monday to Saturday"),
        ("知识：营业时间/周一至周六", "营业时间", "周一至周六"),
        ("teach: Support / We answer 24/7", "Support", "We answer 24/7"),
    ],
)
def test_a_well_formed_teach_is_ingested(text: str, title: str, body: str) -> None:
    [call] = offline(user(text)).tool_calls
    assert call.name == "ingest_material" and json.loads(call.arguments) == {"title": title, "text": body}


def test_a_slash_between_digits_is_not_the_teach_separator() -> None:
    assert offline(user("teach: open 24/7")).text == FORM["en"]


# --- whole turns on the database ------------------------------------------------------------


def owner_session(world: Any) -> Any:
    return session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)


def customer_session(world: Any) -> Any:
    return session_open(
        agent=world.agent, audience=Audience.CUSTOMER, customer=Customer.objects.create(tenant=world.tenant)
    )


def say(session: Any, text: str) -> str:
    result = turn_handle(session=session, text=text, provider=OfflineProvider(session.agent))
    assert result.reply is not None
    return str(result.reply.text)


MARKER = "Quokka-4411-private"


def customers_left_something(world: Any) -> None:
    """A request and questions nobody could answer, with words only the customer wrote."""
    customer = customer_session(world)
    details = {"need": f"A cake for {MARKER}", "when": "Friday", "contact": f"{MARKER}@example.com"}
    request_submit(session=customer, summary=f"A cake for {MARKER}", details=details)
    # Three customers ask each (a topic reaches an owner page only once enough distinct customers
    # asked it: DESIGN.md, k-anonymous topics).
    for asker in (customer, customer_session(world), customer_session(world)):
        knowledge_miss_record(agent=world.agent, session_id=asker.pk, query="Do you sell gluten-free bread?")
        # A number may be a phone or order number: not shown, and a topic of nothing else goes.
        knowledge_miss_record(agent=world.agent, session_id=asker.pk, query="4411 2378")


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_sees_open_requests_and_who_acts_next(world_a: Any, language: str) -> None:
    customers_left_something(world_a)
    reply = say(owner_session(world_a), {"en": "requests", "zh-hans": "请求"}[language])
    expected = {
        "en": ["Open customer requests (1):", "Request #", "new, waiting for you", "next: you"],
        "zh-hans": ["未完成的客户请求（1 个）：", "请求 #", "新请求，等您处理", "下一步：您"],
    }[language]
    assert all(part in reply for part in expected), reply
    assert MARKER not in reply and "cake" not in reply.lower()


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_owner_sees_unanswered_topics_with_counts_never_the_question(world_a: Any, language: str) -> None:
    customers_left_something(world_a)
    reply = say(owner_session(world_a), {"en": "unanswered", "zh-hans": "未回答的问题"}[language])
    line = {"en": "• sell gluten free bread — 3", "zh-hans": "• sell gluten free bread——3 次"}[language]
    assert line in reply.splitlines(), reply
    assert "Do you sell" not in reply and "4411" not in reply and "2378" not in reply


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_inbox_counts_requests_and_unanswered_questions(world_a: Any, language: str) -> None:
    customers_left_something(world_a)
    reply = say(owner_session(world_a), {"en": "inbox", "zh-hans": "收件箱"}[language])
    expected = {
        "en": "Waiting for you: 1 open customer request(s), 1 unanswered question topic(s), 0 knowledge item(s)",
        "zh-hans": "等您处理：1 个未完成的客户请求，1 个未回答的问题主题，0 条待审核的知识。",
    }[language]
    assert reply.startswith(expected), reply
    assert MARKER not in reply


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_stated_fact_is_added_only_after_the_owners_yes(world_a: Any, language: str) -> None:
    session = owner_session(world_a)
    assert say(session, FACT[language]) == DRAFT[language]
    assert not EntryVersion.objects.exists()  # nothing before the owner's yes
    reply = turn_handle(session=session, text=YES[language], provider=OfflineProvider(session.agent)).reply
    assert reply is not None
    version = EntryVersion.objects.get()
    [change] = ChangeProposal.objects.filter(payload__version_id=version.pk, status="pending")
    assert reply.text == ADDED[language].format(id=change.pk)
    # The card to decide it is shown with the reply.
    assert [card["id"] for card in reply.metadata["cards"]] == [change.pk]
    assert (version.title, version.body, version.status, version.source_type) == (
        TITLE[language],
        FACT[language],
        "pending",
        "owner_dialogue",
    )
    assert version.entry.kind == "fact" and version.source_ref == f"session:{session.pk}"
    assert "written_by_model" in version.decision_reasons
    question = {"en": "gluten-free brownies?", "zh-hans": "无麸质布朗尼"}[language]
    assert FACT[language] not in say(customer_session(world_a), question)
    # The owner's click on the card (the one-time token) is what tells customers.
    approve_on_card(world_a, change)
    assert FACT[language] in say(customer_session(world_a), question)


def approve_on_card(world: Any, change: ChangeProposal) -> None:
    from rest_framework.test import APIClient

    owner = APIClient()
    owner.force_login(world.owner)
    base = f"/api/agents/{world.agent.slug}/changes/{change.pk}"
    token = owner.post(f"{base}/authorize", {"decision": "approve"}, format="json")
    assert token.status_code == 200, token.content
    body = {"token": token.json()["token"], "decision": "approve", "expected_version": change.version}
    decided = owner.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_no_to_the_draft_adds_nothing(world_a: Any, language: str) -> None:
    session = owner_session(world_a)
    say(session, FACT[language])
    assert (
        say(session, NO[language])
        == {"en": "All right, I haven't added it.", "zh-hans": "好的，我没有添加。"}[language]
    )
    assert not EntryVersion.objects.exists()


@pytest.mark.django_db
def test_a_regulated_fact_stays_pending_after_the_yes(world_a: Any) -> None:
    """The yes files it; it waits for the owner's card like everything a model wrote, with the L1
    rule's own reasons too."""
    session = owner_session(world_a)
    say(session, "We now offer tax advice on VAT returns.")
    reply = say(session, "yes")
    assert reply.startswith("Saved “Tax advice on VAT returns”. It waits for your approval on its card")
    version = EntryVersion.objects.get()
    assert version.status == "pending"
    assert {"regulated", "written_by_model"} <= set(version.decision_reasons)


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_malformed_teach_creates_nothing_and_shows_the_form(world_a: Any, language: str) -> None:
    text = {"en": "teach: missing slash no title", "zh-hans": "知识：没有斜杠也没有标题"}[language]
    assert say(owner_session(world_a), text) == FORM[language]
    assert not EntryVersion.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_replies_are_plain_words_in_the_owners_language(world_a: Any, language: str) -> None:
    session = owner_session(world_a)
    teach = {
        "en": "teach: Opening hours / Monday to Saturday, 9 to 18",
        "zh-hans": "知识：营业时间 / 周一至周六 9 点到 18 点",
    }
    reply = say(session, teach[language])
    [taught] = ChangeProposal.objects.filter(agent=world_a.agent, kind="knowledge_draft", status="pending")
    assert (
        reply
        == {
            "en": f"Saved “Opening hours”. It waits for your approval on its card (change {taught.pk}); customers "
            "are told it once you approve it there.",
            "zh-hans": f"已保存“营业时间”。它在卡片上等您批准（变更 {taught.pk}）；您在那里批准后才会告诉客户。",
        }[language]
    )
    again = say(session, teach[language])
    assert (
        again
        == {
            "en": "“Opening hours” is already in the knowledge base as written; nothing changed.",
            "zh-hans": "知识库里已有内容相同的“营业时间”，没有改动。",
        }[language]
    )
    lesson = say(
        session, {"en": "remember: never promise same-day delivery", "zh-hans": "记住：不要承诺当天送达"}[language]
    )
    # A lesson is never in effect at once: it waits for the owner's approval (issue 13).
    [change] = ChangeProposal.objects.filter(agent=world_a.agent, kind="lesson", status="pending")
    assert (
        lesson
        == {
            "en": f"I recorded the lesson “never promise same-day delivery”. It waits for your approval in your "
            f"inbox (change {change.pk}); nothing changes until you approve it.",
            "zh-hans": f"已记下经验“不要承诺当天送达”。它在您的收件箱里等您批准（变更 {change.pk}）；"
            "您批准之前什么都不会改变。",
        }[language]
    )
    for said in (reply, again, lesson):
        assert "#" not in said and "approved" not in said and " v1" not in said and "完成：" not in said


# --- a model that tries to get round the checks ---------------------------------------------


def call(name: str, arguments: dict[str, Any]) -> ModelReply:
    return ModelReply(
        tool_calls=[ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))],
        prompt_tokens=10,
        completion_tokens=5,
    )


def results_of(provider: ScriptedProvider) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in provider.calls[-1].messages if m["role"] == "tool"]


@pytest.mark.django_db
def test_a_model_cannot_teach_a_malformed_entry(world_a: Any) -> None:
    line = "teach: missing slash no title"
    provider = ScriptedProvider.of(
        call("ingest_material", {"title": line, "text": line}),
        call("ingest_material", {"title": "missing slash no title", "text": "missing slash no title"}),
        call("ingest_material", {"title": "Brownies", "text": "teach: Brownies"}),
        call("add_confirmed_knowledge", {"title": line, "text": line}),
        ModelReply(text="Done: #13 v1 approved", prompt_tokens=1, completion_tokens=1),
    )
    turn_handle(session=owner_session(world_a), text=line, provider=provider)
    outcomes = [(r["outcome"], r.get("error")) for r in results_of(provider)]
    assert outcomes == [("failed", "malformed_teach")] * 4
    assert all("teach: title / text" in r["detail"] for r in results_of(provider))
    assert not EntryVersion.objects.exists()


@pytest.mark.django_db
def test_a_model_cannot_add_a_fact_the_owner_did_not_confirm(world_a: Any) -> None:
    session = owner_session(world_a)
    # Nothing shown yet: the model adds a fact straight from the owner's statement.
    provider = ScriptedProvider.of(
        call("add_confirmed_knowledge", {"title": TITLE["en"], "text": FACT["en"]}),
        ModelReply(text="Added.", prompt_tokens=1, completion_tokens=1),
    )
    turn_handle(session=session, text=FACT["en"], provider=provider)
    assert results_of(provider)[0]["error"] == "draft_not_shown"
    # The draft shown, but the owner said no; then something other than what was shown.
    say(session, FACT["en"])
    provider = ScriptedProvider.of(
        call("add_confirmed_knowledge", {"title": TITLE["en"], "text": FACT["en"]}),
        call("add_confirmed_knowledge", {"title": TITLE["en"], "text": "We sell everything for free."}),
        ModelReply(text="Added.", prompt_tokens=1, completion_tokens=1),
    )
    turn_handle(session=session, text="no, not like that", provider=provider)
    assert [r["error"] for r in results_of(provider)] == ["not_confirmed", "draft_not_shown"]
    assert not EntryVersion.objects.exists()
    assert Message.objects.filter(session=session, role="agent").count() == 3
