"""Issue 33: the peer face speaks A2A 1.0 — proven with a client nobody here wrote.

A real daphne serves the product on the test database; the official Python SDK (`a2a-sdk`,
pinned in the test extras) discovers each agent's card at its well-known address, picks the
JSON-RPC interface and its tenant from the card, puts the owner-issued key where the card's
security scheme says and runs the round trips: a question, a request flow through
INPUT_REQUIRED to a registered request (English and Chinese), GetTask, ListTasks, CancelTask.
Every error case of the binding is sent as raw JSON-RPC, and an adversarial peer tries to claim
another audience, reach owner tools and read another peer's tasks."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.client.client import ClientCallContext
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError
from google.protobuf.json_format import MessageToDict
from test_chat_browser import daphne, demo_seeded

from facade.tenancy.schemas import Actor

SLUG = "demo-shop"
_CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def server(django_db_setup: Any, tmp_path_factory: Any) -> Iterator[str]:
    with daphne(tmp_path_factory.mktemp("a2a"), FACADE_RATE_PEER="1000/60", FACADE_RATE_SESSION="1000/60") as url:
        yield url


@pytest.fixture
def shop(server: str, transactional_db: Any) -> dict[str, Any]:
    """The seeded demo shop (committed, so that the server process sees it) and two peer keys
    its owner issued."""
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.services import peer_key_create

    demo_seeded()
    agent = AgentProfile.objects.get(slug=SLUG)
    owner = agent.owners.first()
    keys = {
        name: peer_key_create(agent=agent, name=name, actor=Actor.human(owner.pk)) for name in ("supplier", "market")
    }
    return {"site": server, "agent": agent, "keys": keys}


class OwnerIssuedKey(CredentialService):
    """The peer's side of the card's security scheme: the key its owner was given."""

    def __init__(self, key: str) -> None:
        self.key = key

    async def get_credentials(self, security_scheme_name: str, context: ClientCallContext | None) -> str | None:
        return self.key if security_scheme_name == "peerKey" else None


async def _card(site: str, slug: str = SLUG) -> AgentCard:
    async with httpx.AsyncClient(timeout=30) as http:
        return await A2ACardResolver(http, base_url=f"{site}/a2a/{slug}").get_agent_card()


def _message(text: str, *, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        message.task_id = task_id
    if context_id:
        message.context_id = context_id
    return SendMessageRequest(message=message)


class Peer:
    """A peer agent driving the SDK's client, as any A2A implementation would."""

    def __init__(self, site: str, key: str, *, streaming: bool = False) -> None:
        self.site, self.key, self.streaming = site, key, streaming

    async def __aenter__(self) -> Peer:
        self.http = httpx.AsyncClient(timeout=60)
        card = await A2ACardResolver(self.http, base_url=f"{self.site}/a2a/{SLUG}").get_agent_card()
        factory = ClientFactory(ClientConfig(httpx_client=self.http, streaming=self.streaming))
        self.client = factory.create(card, interceptors=[AuthInterceptor(OwnerIssuedKey(self.key))])
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.close()
        await self.http.aclose()

    async def send(self, text: str, *, task_id: str = "", context_id: str = "") -> Task:
        events = [e async for e in self.client.send_message(_message(text, task_id=task_id, context_id=context_id))]
        assert len(events) == 1 and events[0].HasField("task"), events
        return events[0].task

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        request = GetTaskRequest(id=task_id)
        if history_length is not None:
            request.history_length = history_length
        return await self.client.get_task(request)


def reply_text(task: Task) -> str:
    return " ".join(part.text for part in task.status.message.parts)


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# --- 1. Discovery -----------------------------------------------------------------------------


def test_each_agent_has_its_card_built_from_the_live_contract(shop: dict[str, Any]) -> None:
    from approvals.contract import live_terms

    card = _run(_card(shop["site"]))
    terms = live_terms(shop["agent"])
    assert card.name == shop["agent"].name
    assert card.description == (terms.mission or f"The agent of {shop['agent'].tenant.name}.")
    assert card.version == str(terms.version)
    [interface] = card.supported_interfaces
    assert (interface.url, interface.protocol_binding, interface.protocol_version, interface.tenant) == (
        f"{shop['site']}/a2a/{SLUG}/jsonrpc",
        "JSONRPC",
        "1.0",
        SLUG,
    )
    # The contract's skills the peer face serves; each with an example in both languages.
    assert [s.id for s in card.skills] == [s for s in terms.skill_ids if s in ("knowledge_answers", "request_intake")]
    assert card.skills, "the demo contract grants answers and request intake"
    for skill in card.skills:
        assert any(_CJK.search(e) for e in skill.examples) and any(not _CJK.search(e) for e in skill.examples)
        assert list(skill.input_modes) == ["text/plain"]
    assert list(card.default_input_modes) == ["text/plain"]
    assert "application/json" in card.default_output_modes
    scheme = card.security_schemes["peerKey"].api_key_security_scheme
    assert (scheme.location, scheme.name) == ("header", "X-API-Key")
    assert [list(r.schemes) for r in card.security_requirements] == [["peerKey"]]
    assert card.capabilities.streaming is True and card.capabilities.push_notifications is False


def test_the_card_is_cacheable_and_an_unknown_agent_has_none(shop: dict[str, Any]) -> None:
    url = f"{shop['site']}/a2a/{SLUG}/.well-known/agent-card.json"
    first = httpx.get(url, timeout=30)
    assert first.status_code == 200 and first.headers["content-type"].startswith("application/json")
    assert "max-age=" in first.headers["cache-control"]
    again = httpx.get(url, headers={"If-None-Match": first.headers["etag"]}, timeout=30)
    assert again.status_code == 304
    missing = httpx.get(f"{shop['site']}/a2a/no-such-shop/.well-known/agent-card.json", timeout=30)
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_a_republished_contract_changes_the_card(shop: dict[str, Any]) -> None:
    from approvals.contract import contract_compile

    before = _run(_card(shop["site"]))
    contract_compile(
        agent=shop["agent"],
        changes={"mission": "Custom cakes for every celebration.", "skill_ids": ["knowledge_answers", "handoff"]},
        actor=Actor.platform("tests"),
    )
    after = _run(_card(shop["site"]))
    assert int(after.version) == int(before.version) + 1
    assert after.description == "Custom cakes for every celebration."
    # Request intake left the contract; the hand-off is no skill the peer face is offered.
    assert [s.id for s in after.skills] == ["knowledge_answers"]


# --- 2. The JSON-RPC binding through the SDK ----------------------------------------------------

FLOW = {
    "en": {
        "question": "When is the shop open?",
        "answer": "Monday to Saturday",
        "price": "How much does a custom cake cost?",
        "yes": "yes",
        "when": "next month",
        "contact": "ana@example.com",
        "confirm": "yes",
        "registered": "I've registered your request #",
    },
    "zh": {
        "question": "营业时间是几点？",
        "answer": "周一至周六营业",
        "price": "定制蛋糕多少钱？",
        "yes": "好的",
        "when": "下个月",
        "contact": "电话 13800000000",
        "confirm": "是的",
        "registered": "已为您登记请求 #",
    },
}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_peer_asks_and_registers_a_request_through_input_required(shop: dict[str, Any], language: str) -> None:
    from facade.dialogue.models import CustomerRequest, DialogueSession

    words = FLOW[language]

    async def talk() -> tuple[Task, Task, list[Task]]:
        async with Peer(shop["site"], shop["keys"]["supplier"].key) as peer:
            answered = await peer.send(words["question"])
            assert words["answer"] in reply_text(answered)
            task = await peer.send(words["price"], context_id=answered.context_id)
            assert task.context_id == answered.context_id and task.id != answered.id
            states = [task.status.state]
            for text in (words["yes"], words["when"], words["contact"], words["confirm"]):
                assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, (text, reply_text(task))
                task = await peer.send(text, task_id=task.id, context_id=task.context_id)
                states.append(task.status.state)
            fetched = await peer.get(task.id)
            listed = await peer.client.list_tasks(ListTasksRequest(include_artifacts=True))
            return task, fetched, [*listed.tasks]

    task, fetched, listed = _run(talk())
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, reply_text(task)
    assert words["registered"] in reply_text(task)
    [artifact] = task.artifacts
    data = MessageToDict(artifact.parts[0].data)
    request = CustomerRequest.objects.get(pk=int(data["requestId"]))
    assert data["state"] == request.state == "submitted"
    assert data["nextActor"] == "owner"
    # The task is the peer's session and the runs that answered it.
    session = DialogueSession.objects.get(pk=task.context_id)
    assert (session.audience, session.peer_id) == ("peer", shop["keys"]["supplier"].credential_id and session.peer_id)
    assert str(session.peer_id) == shop["keys"]["supplier"].credential_id
    assert request.session_id == session.pk
    # GetTask returns the same task, its history the conversation of the task in order.
    assert fetched.id == task.id and fetched.status.state == task.status.state
    roles = [m.role for m in fetched.history]
    assert roles == [Role.ROLE_USER, Role.ROLE_AGENT] * 5
    assert fetched.history[0].parts[0].text == words["price"]
    # ListTasks: the peer's own tasks, the latest first.
    assert [t.id for t in listed] == [task.id, listed[1].id] and listed[1].context_id == task.context_id


def test_cancel_get_and_the_spec_errors_through_the_sdk(shop: dict[str, Any]) -> None:
    async def talk() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Peer(shop["site"], shop["keys"]["supplier"].key) as peer:
            task = await peer.send(FLOW["en"]["price"])
            out["asked"] = task.status.state
            canceled = await peer.client.cancel_task(CancelTaskRequest(id=task.id))
            out["canceled"] = canceled.status.state
            with pytest.raises(TaskNotCancelableError):
                await peer.client.cancel_task(CancelTaskRequest(id=task.id))
            with pytest.raises(UnsupportedOperationError):
                await peer.send("yes", task_id=task.id)
            with pytest.raises(TaskNotFoundError):
                await peer.get(str(uuid.uuid4()))
            out["history0"] = len((await peer.get(task.id, history_length=0)).history)
            out["history1"] = len((await peer.get(task.id, history_length=1)).history)
            out["task"] = task.id
        async with Peer(shop["site"], shop["keys"]["market"].key) as other:
            with pytest.raises(TaskNotFoundError):  # another peer's task is no task of this one
                await other.get(out["task"])
            with pytest.raises(TaskNotFoundError):
                await other.client.cancel_task(CancelTaskRequest(id=out["task"]))
            out["other_list"] = list((await other.client.list_tasks(ListTasksRequest())).tasks)
        return out

    out = _run(talk())
    assert out["asked"] == TaskState.TASK_STATE_INPUT_REQUIRED
    assert out["canceled"] == TaskState.TASK_STATE_CANCELED
    assert (out["history0"], out["history1"]) == (0, 1)
    assert out["other_list"] == []


@pytest.mark.parametrize("language", ["en", "zh"])
def test_streaming_sends_the_chats_progress_the_reply_and_the_request(shop: dict[str, Any], language: str) -> None:
    words = FLOW[language]

    async def talk() -> tuple[list[Any], list[Any], Task, list[Any]]:
        async with Peer(shop["site"], shop["keys"]["supplier"].key, streaming=True) as peer:
            asked = [e async for e in peer.client.send_message(_message(words["question"]))]
            task_id = asked[0].task.id
            flow = [e async for e in peer.client.send_message(_message(words["price"]))]
            flow_task = flow[0].task
            for text in (words["yes"], words["when"], words["contact"], words["confirm"]):
                flow = [
                    e
                    async for e in peer.client.send_message(
                        _message(text, task_id=flow_task.id, context_id=flow_task.context_id)
                    )
                ]
            fetched = await peer.get(task_id)
            # A task that waits for input: SubscribeToTask answers the task as it stands.
            waiting = [e async for e in peer.client.send_message(_message(words["price"]))]
            resumed = [e async for e in peer.client.subscribe(SubscribeToTaskRequest(id=waiting[0].task.id))]
            with pytest.raises(UnsupportedOperationError):  # an ended task has nothing to stream
                [e async for e in peer.client.subscribe(SubscribeToTaskRequest(id=task_id))]
        return asked, flow, fetched, resumed

    asked, flow, fetched, resumed = _run(talk())
    kinds = [e.WhichOneof("payload") for e in asked]
    assert kinds[0] == "task" and kinds[-1] == "status_update" and set(kinds[1:]) == {"status_update"}
    progress = [e.status_update for e in asked[1:-1]]
    assert progress and {p.status.state for p in progress} == {TaskState.TASK_STATE_WORKING}
    searching = "Searching knowledge…" if language == "en" else "正在查找知识…"
    assert searching in [p.status.message.parts[0].text for p in progress]
    final = asked[-1].status_update.status
    assert words["answer"] in final.message.parts[0].text
    # The stream's reply is the task's: GetTask returns it (a dropped stream loses nothing).
    assert fetched.status.state == final.state and fetched.status.message.parts[0].text == final.message.parts[0].text
    # The request the last turn registered comes as an artifact, then the closing status.
    assert [e.WhichOneof("payload") for e in flow[-2:]] == ["artifact_update", "status_update"]
    data = MessageToDict(flow[-2].artifact_update.artifact.parts[0].data)
    assert data["state"] == "submitted" and flow[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert [e.WhichOneof("payload") for e in resumed] == ["task"]
    assert resumed[0].task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED


# --- 2b. Raw JSON-RPC: every error case, always JSON, never a 500 ------------------------------


def _post(
    shop: dict[str, Any], body: Any, *, key: str | None = "supplier", version: str | None = "1.0"
) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["X-API-Key"] = shop["keys"][key].key
    if version is not None:
        headers["A2A-Version"] = version
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return httpx.post(f"{shop['site']}/a2a/{SLUG}/jsonrpc", content=content, headers=headers, timeout=60)


def _rpc(method: str, params: Any, request_id: Any = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def _send_params(*parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": list(parts or [{"text": "hello"}])}
    message.update(extra.pop("message", {}))
    return {"message": message, **extra}


def _error(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    assert body["error"]["data"][0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    return dict(body["error"]) | {"id": body["id"]}


def test_every_error_case_is_a_jsonrpc_error_with_the_specs_code(shop: dict[str, Any]) -> None:
    from facade.dialogue.models import DialogueSession
    from facade.dialogue.models import Message as Said

    before = (DialogueSession.objects.count(), Said.objects.count())
    cases = {
        "parse": (_post(shop, b"{not json"), -32700, None),
        "batch": (_post(shop, [_rpc("GetTask", {"id": "x"})]), -32600, None),
        "no_jsonrpc": (_post(shop, {"id": 3, "method": "GetTask", "params": {}}), -32600, 3),
        "no_method": (_post(shop, {"jsonrpc": "2.0", "id": 4}), -32600, 4),
        "unknown_method": (_post(shop, _rpc("tasks/get", {"id": "x"})), -32601, 7),
        "bad_params": (_post(shop, _rpc("GetTask", {"historyLength": -1})), -32602, 7),
        "no_parts": (_post(shop, _rpc("SendMessage", {"message": {"messageId": "m", "parts": []}})), -32602, 7),
        "task_not_found": (_post(shop, _rpc("GetTask", {"id": str(uuid.uuid4())})), -32001, 7),
        "subscribe_unknown": (_post(shop, _rpc("SubscribeToTask", {"id": str(uuid.uuid4())})), -32001, 7),
        "stream_file_part": (
            _post(shop, _rpc("SendStreamingMessage", _send_params({"url": "https://x.test/a"}))),
            -32005,
            7,
        ),
        "extended_card": (_post(shop, _rpc("GetExtendedAgentCard", {})), -32004, 7),
        "push": (_post(shop, _rpc("CreateTaskPushNotificationConfig", {})), -32003, 7),
        "file_part": (
            _post(
                shop, _rpc("SendMessage", _send_params({"url": "https://x.test/a.pdf", "mediaType": "application/pdf"}))
            ),
            -32005,
            7,
        ),
        "data_part": (_post(shop, _rpc("SendMessage", _send_params({"data": {"q": 1}}))), -32005, 7),
        "html_text": (
            _post(shop, _rpc("SendMessage", _send_params({"text": "<b>", "mediaType": "text/html"}))),
            -32005,
            7,
        ),
        "no_version": (_post(shop, _rpc("GetTask", {"id": "x"}), version=None), -32009, 7),
        "old_version": (_post(shop, _rpc("GetTask", {"id": "x"}), version="0.3"), -32009, 7),
        "next_major": (_post(shop, _rpc("GetTask", {"id": "x"}), version="2.0"), -32009, 7),
        "other_tenant": (_post(shop, _rpc("GetTask", {"id": "x", "tenant": "another-shop"})), -32602, 7),
        "too_long": (
            _post(shop, _rpc("SendMessage", _send_params({"text": "x" * 20_000}))),
            -32602,
            7,
        ),
        "too_large": (_post(shop, _rpc("SendMessage", _send_params({"text": "y" * 200_000}))), -32600, None),
    }
    for name, (response, code, request_id) in cases.items():
        error = _error(response)
        assert (name, error["code"]) == (name, code), error
        assert error["id"] == request_id, (name, error)
    # A 1.x version is served as 1.0 (a2a-sdk compares the major version).
    assert _post(shop, _rpc("ListTasks", {}), version="1.1").json()["result"]["tasks"] == []
    # Nothing was created by any refusal.
    assert (DialogueSession.objects.count(), Said.objects.count()) == before


def test_without_a_key_of_this_agent_the_answer_is_401_with_a_challenge(shop: dict[str, Any]) -> None:
    from facade.tenancy.models import AgentProfile
    from facade.tenancy.services import agent_create, peer_key_create

    other_agent = agent_create(tenant=shop["agent"].tenant, slug="other-shop", name="Other", actor=Actor.platform("t"))
    foreign = peer_key_create(agent=other_agent, name="theirs", actor=Actor.platform("t")).key
    for headers in (
        {},
        {"X-API-Key": "fpk_000000000000_nope"},
        {"Authorization": f"Bearer {foreign}"},
        {"X-API-Key": foreign},
    ):
        response = httpx.post(
            f"{shop['site']}/a2a/{SLUG}/jsonrpc",
            json=_rpc("ListTasks", {}),
            headers={"A2A-Version": "1.0", **headers},
            timeout=30,
        )
        error = _error(response, 401)
        assert error["code"] == -32000
        assert response.headers["www-authenticate"] == 'ApiKey header="X-API-Key"'
    # The Bearer form of the same key, as over the peer HTTP API, is the same peer.
    bearer = httpx.post(
        f"{shop['site']}/a2a/{SLUG}/jsonrpc",
        json=_rpc("ListTasks", {}),
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {shop['keys']['supplier'].key}"},
        timeout=30,
    )
    assert bearer.status_code == 200 and bearer.json()["result"]["tasks"] == []
    assert AgentProfile.objects.filter(slug="other-shop").exists()


def test_a_message_sent_again_returns_its_task_without_a_second_run(shop: dict[str, Any]) -> None:
    from facade.dialogue.models import Run

    first = _post(shop, _rpc("SendMessage", _send_params({"text": "When is the shop open?"}))).json()["result"]["task"]
    again = {"messageId": "resent-1", "contextId": first["contextId"]}
    params = _send_params({"text": "And on Sundays?"}, message=again)
    one = _post(shop, _rpc("SendMessage", params)).json()["result"]["task"]
    runs = Run.objects.filter(session_id=first["contextId"]).count()
    two = _post(shop, _rpc("SendMessage", params)).json()["result"]["task"]
    assert two["id"] == one["id"] != first["id"]
    assert Run.objects.filter(session_id=first["contextId"]).count() == runs == 2
    # A stream of the same message names the same task too.
    streamed = _post(shop, _rpc("SendStreamingMessage", params))
    assert streamed.headers["content-type"].startswith("text/event-stream")
    first_event = json.loads(streamed.text.split("\n\n")[0].removeprefix("data: "))
    assert first_event["result"]["task"]["id"] == one["id"]
    assert Run.objects.filter(session_id=first["contextId"]).count() == 2


def test_return_immediately_answers_at_once_and_the_turn_goes_on(shop: dict[str, Any]) -> None:
    async def talk() -> tuple[Task, Task]:
        async with Peer(shop["site"], shop["keys"]["supplier"].key) as peer:
            request = _message(FLOW["en"]["question"])
            request.configuration.return_immediately = True
            [event] = [e async for e in peer.client.send_message(request)]
            first = event.task
            for _ in range(100):  # polling, as a client of a non-blocking call does
                task = await peer.get(first.id)
                if task.status.state != TaskState.TASK_STATE_WORKING:
                    break
                await asyncio.sleep(0.2)
            return first, task

    first, task = _run(talk())
    # Answered before the turn (a whole run of the model and the tools) could have finished.
    assert first.status.state == TaskState.TASK_STATE_WORKING
    assert task.status.state in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED)
    assert FLOW["en"]["answer"] in reply_text(task)
