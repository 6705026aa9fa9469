"""An approved taboo is enforced (issue 13, "Learn"): once the owner approves "we never say cheap",
the customer prompt lists "cheap" and a customer or peer reply that still says it is not
delivered — it is replaced by the safe wording and recorded as a `taboo` guard block with the
lesson's entry id.  A pending, rejected or quarantined lesson forbids nothing; another agent's
taboos are not this one's.

The matching rules are pure (facade/dialogue/runtime/taboo.py): case-insensitive after NFKC
(full-width letters fold to ASCII), whole words for Latin script ("cheap" is not "cheaper"),
anywhere for Chinese."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from approvals.models import ChangeProposal
from conftest import TenantWorld
from facade.dialogue.models import Run
from facade.dialogue.runtime.loop import turn_handle
from facade.dialogue.runtime.providers.base import ModelReply
from facade.dialogue.runtime.providers.offline import OfflineProvider
from facade.dialogue.runtime.providers.scripted import ScriptedProvider
from facade.dialogue.runtime.taboo import matches, taboo_hit
from facade.dialogue.services import session_open
from facade.tenancy.models import AgentProfile, Customer, PeerCredential
from facade.tenancy.rules import Audience
from facade.tenancy.schemas import Actor
from facade.tenancy.services import peer_key_create
from knowledge import rules
from knowledge.models import EntryVersion
from knowledge.schemas import SourceIn
from knowledge.selectors import Taboo, taboos_in_effect
from knowledge.services import entry_propose, knowledge_quarantine, knowledge_unquarantine
from ledger.models import LedgerEvent
from rsi.metrics import day_counts
from rsi.review_input import local_today, review_input_build

# --- the pure rules ---------------------------------------------------------------------------

MATCHING = [
    # (reply, phrase, said?)
    ("It's cheap!", "cheap", True),
    ("CHEAP and cheerful", "cheap", True),
    ("Is it Cheap?", "cheap", True),
    ("“cheap”", "cheap", True),
    ("it's cheap-ish", "cheap", True),  # a hyphen ends a word
    ("cheap.", "cheap", True),
    ("It is ｃｈｅａｐ", "cheap", True),  # full-width letters are the same letters (NFKC)
    ("It is ＣＨＥＡＰ！", "cheap", True),
    ("这个很cheap的", "cheap", True),  # Chinese around a Latin word still leaves it a word
    ("It's cheaper than you think", "cheap", False),  # whole words: "cheaper" is another word
    ("the cheapest option", "cheap", False),
    ("a cheapskate", "cheap", False),
    ("inexpensive", "cheap", False),
    ("a low cost option", "low cost", True),
    ("a low  cost option", "low cost", True),  # any blanks between the words of a phrase
    ("a low-cost option", "low cost", False),
    ("We are the cheapest in town", "we are the cheapest", True),
    ("café au lait", "caf", False),  # a Latin letter with an accent is part of the word
    ("这个很便宜！", "便宜", True),  # Chinese: anywhere in the sentence
    ("便宜又好", "便宜", True),
    ("我们的价格很实惠", "便宜", False),
    ("ｂｉｌｌｉｇ ist es nicht", "billig", True),
    ("", "cheap", False),
    ("anything", "", False),  # an empty phrase forbids nothing
    ("anything", " ‘ ’ ", False),
]


@pytest.mark.parametrize(("reply", "phrase", "said"), MATCHING)
def test_matching(reply: str, phrase: str, said: bool) -> None:
    assert matches(reply, phrase) is said


def test_the_first_broken_taboo_is_named() -> None:
    taboos = [Taboo(1, "budget"), Taboo(2, "cheap"), Taboo(3, "便宜")]
    assert taboo_hit("It's cheap and 便宜", taboos) == Taboo(2, "cheap")
    assert taboo_hit("It's affordable", taboos) is None
    assert taboo_hit("It's cheap", []) is None


@pytest.mark.parametrize(
    ("given", "title", "phrase"),
    [
        ("cheap", "whatever the title says", "cheap"),
        ("  low   cost ", "", "low cost"),
        ("", "Never say ‘cheap’", "cheap"),
        ("", "Never say cheap", "cheap"),
        ("", "Don't say 'budget'", "budget"),
        ("", "never say “we are the cheapest”.", "we are the cheapest"),
        ("", "不说‘便宜’", "便宜"),
        ("", "不要说“便宜”。", "便宜"),
        ("", "Tone of voice", ""),
        ("", "Say hello first", ""),
    ],
)
def test_a_taboos_phrase_is_given_or_read_from_its_title(given: str, title: str, phrase: str) -> None:
    assert rules.taboo_phrase(given, title) == phrase


# --- whole turns --------------------------------------------------------------------------------

CORRECTION = {"en": "we never say cheap", "zh-hans": "我们从不说便宜"}
ASKS = {"en": "Is the repair cheap?", "zh-hans": "修理便宜吗？"}
SAYS = {"en": "It's cheap!", "zh-hans": "修理很便宜！"}
PHRASE = {"en": "cheap", "zh-hans": "便宜"}


def say(text: str) -> ModelReply:
    return ModelReply(text=text, prompt_tokens=10, completion_tokens=5)


def eager(world: TenantWorld) -> None:
    """The most permissive agent there is: the L1 rule approves any owner material at all."""
    AgentProfile.objects.filter(pk=world.agent.pk).update(knowledge_threshold=Decimal("0"))
    world.agent.refresh_from_db()


def decide(world: TenantWorld, change: ChangeProposal, decision: str) -> None:
    """The owner's decision through the real token flow: authorize, then decide with the token."""
    client = APIClient()
    client.force_login(world.owner)
    base = f"/api/agents/{world.agent.slug}/changes/{change.pk}"
    granted = client.post(f"{base}/authorize", {"decision": decision}, format="json")
    assert granted.status_code == 200, granted.content
    change.refresh_from_db()
    body = {"token": granted.json()["token"], "decision": decision, "expected_version": change.version}
    decided = client.post(f"{base}/decide", body, format="json")
    assert decided.status_code == 200, decided.content


def correct(world: TenantWorld, language: str) -> tuple[Any, ChangeProposal]:
    """The owner's correction in the owner chat, heard by the offline model: a pending taboo."""
    session = session_open(agent=world.agent, audience=Audience.OWNER, user=world.owner)
    turn_handle(session=session, text=CORRECTION[language], provider=OfflineProvider(world.agent))
    change = ChangeProposal.objects.filter(agent=world.agent, kind="lesson").latest("pk")
    return session, change


def customer_turn(
    world: TenantWorld, language: str, audience: Audience = Audience.CUSTOMER
) -> tuple[Any, ScriptedProvider]:
    """A customer asks; the scripted model answers with the forbidden word."""
    if audience == Audience.PEER:
        issued = peer_key_create(agent=world.agent, name="partner", actor=Actor.human(world.owner.pk))
        session = session_open(
            agent=world.agent, audience=Audience.PEER, peer=PeerCredential.objects.get(pk=issued.credential_id)
        )
    else:
        session = session_open(
            agent=world.agent, audience=audience, customer=Customer.objects.create(tenant=world.tenant)
        )
    provider = ScriptedProvider.of(say(SAYS[language]))
    return turn_handle(session=session, text=ASKS[language], provider=provider), provider


def system_prompt(provider: ScriptedProvider) -> str:
    return str(provider.calls[0].messages[0]["content"])


def delivered(world: TenantWorld, language: str) -> bool:
    result, provider = customer_turn(world, language)
    assert result.reply is not None
    listed = f"“{PHRASE[language]}”" in system_prompt(provider)
    if result.reply.text == SAYS[language]:
        assert not listed and result.run.guard_category == ""
        return True
    assert listed
    return False


def taboo_blocks() -> list[dict[str, Any]]:
    return [e.payload for e in LedgerEvent.objects.of_type("guard.blocked").order_by("seq")]


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_an_approved_taboo_stops_the_reply_that_says_it(
    world_a: TenantWorld, world_b: TenantWorld, language: str
) -> None:
    eager(world_a)
    owner_session, change = correct(world_a, language)
    [version] = EntryVersion.objects.filter(agent=world_a.agent, entry__kind="taboo")
    assert (version.status, version.taboo_phrase) == ("pending", PHRASE[language])

    # Pending: nothing forbidden, the reply is delivered as the model wrote it.
    assert taboos_in_effect(world_a.agent) == ()
    assert delivered(world_a, language)
    assert taboo_blocks() == []

    decide(world_a, change, "approve")
    assert taboos_in_effect(world_a.agent) == (Taboo(version.entry_id, PHRASE[language]),)
    result, provider = customer_turn(world_a, language)
    assert result.reply is not None
    # Listed in the customer prompt, and the reply that still says it is replaced.
    assert f"“{PHRASE[language]}”" in system_prompt(provider)
    assert PHRASE[language] not in result.reply.text
    assert result.reply.text.startswith(world_a.agent.boundary(language))
    run = Run.objects.get(pk=result.run.pk)
    assert (run.guard_category, run.status, run.needs_input) == ("taboo", "waiting_input", True)
    [blocked] = taboo_blocks()
    assert blocked == {
        "category": "taboo",
        "audience": "customer",
        "entry_id": version.entry_id,
        "rule": "",
        "reason": None,
    }
    assert SAYS[language] not in json.dumps(blocked, ensure_ascii=False)  # ids only, never the text
    # A peer's reply too.
    peer, _provider = customer_turn(world_a, language, Audience.PEER)
    assert peer.reply is not None and peer.reply.text.startswith(world_a.agent.boundary(language))
    assert taboo_blocks()[-1]["audience"] == "peer"

    # Another tenant's agent is not bound by this owner's taboo.
    assert delivered(world_b, language)

    # The review counts taboo blocks as their own figure; the metrics apart from over-commitment;
    # both the customer's and the peer's, each audience apart (issue 33 §4).
    today = local_today(world_a.tenant)
    built = review_input_build(agent=world_a.agent, day=today, partial=True)
    assert (built.review_input.figures["guard.taboo"], built.review_input.figures["peers.guard.taboo"]) == (1, 1)
    days = (today - dt.timedelta(days=1), today + dt.timedelta(days=1))
    for audience in ("customer", "peer"):
        [counts] = day_counts(world_a.agent, *days, audience=audience).values()
        assert (counts["taboo_blocks"], counts["blocked_replies"]) == (1, 0)

    # Quarantining the lesson's source lifts the ban; releasing it brings it back.
    source = {"source_type": "owner_dialogue", "source_ref": f"session:{owner_session.pk}"}
    assert knowledge_quarantine(agent=world_a.agent, actor=Actor.human(world_a.owner.pk), **source) == 1
    assert taboos_in_effect(world_a.agent) == ()
    assert delivered(world_a, language)
    knowledge_unquarantine(agent=world_a.agent, actor=Actor.human(world_a.owner.pk), **source)
    assert not delivered(world_a, language)
    # Still nothing in the other world.
    assert delivered(world_b, language)


@pytest.mark.django_db
def test_a_rejected_taboo_forbids_nothing(world_a: TenantWorld) -> None:
    eager(world_a)
    _session, change = correct(world_a, "en")
    decide(world_a, change, "reject")
    assert EntryVersion.objects.get(agent=world_a.agent).status == "rejected"
    assert taboos_in_effect(world_a.agent) == ()
    assert delivered(world_a, "en")


@pytest.mark.django_db
def test_a_superseded_taboo_forbids_only_its_new_words(world_a: TenantWorld) -> None:
    """A new approved version of the taboo replaces the old one's phrase."""
    eager(world_a)
    _session, change = correct(world_a, "en")
    decide(world_a, change, "approve")
    first = EntryVersion.objects.get(agent=world_a.agent)
    entry_propose(
        agent=world_a.agent,
        entry=first.entry,
        title="Never say ‘budget’",
        body="We never say budget.",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="tone.md", version="2"),
    )
    decide(world_a, ChangeProposal.objects.filter(agent=world_a.agent, status="pending").get(), "approve")
    assert taboos_in_effect(world_a.agent) == (Taboo(first.entry_id, "budget"),)
    assert delivered(world_a, "en")


@pytest.mark.django_db
def test_the_owner_face_is_not_bound_and_only_taboos_forbid(world_a: TenantWorld) -> None:
    """A taboo binds what customers and peers hear; the owner's own chat may name it.  A
    preference or wording lesson with the same title forbids nothing."""
    eager(world_a)
    _session, change = correct(world_a, "en")
    decide(world_a, change, "approve")
    owner = session_open(agent=world_a.agent, audience=Audience.OWNER, user=world_a.owner)
    result = turn_handle(session=owner, text="what do we never say?", provider=ScriptedProvider.of(say("cheap")))
    assert result.reply is not None and result.reply.text == "cheap"

    other = build_other_lesson(world_a)
    assert other.status == "approved" and other.taboo_phrase == ""
    taboo = EntryVersion.objects.get(agent=world_a.agent, entry__kind="taboo")
    assert taboos_in_effect(world_a.agent) == (Taboo(taboo.entry_id, "cheap"),)


def build_other_lesson(world: TenantWorld) -> EntryVersion:
    version = entry_propose(
        agent=world.agent,
        title="Never say ‘budget’",
        body="A preference.",
        kind="preference",
        actor=Actor.human(world.owner.pk),
        source=SourceIn(type="owner_dialogue", ref="prefs.md", version="1"),
    )
    decide(world, ChangeProposal.objects.filter(agent=world.agent, status="pending").get(), "approve")
    version.refresh_from_db()
    return version


@pytest.mark.django_db
def test_a_turn_reads_all_taboos_in_one_query(world_a: TenantWorld) -> None:
    eager(world_a)
    for n, word in enumerate(["cheap", "budget", "bargain", "便宜"]):
        version = entry_propose(
            agent=world_a.agent,
            title=f"Never say ‘{word}’",
            body=f"We never say {word}.",
            kind="taboo",
            actor=Actor.human(world_a.owner.pk),
            source=SourceIn(type="owner_dialogue", ref=f"tone-{n}.md", version="1"),
        )
        decide(world_a, ChangeProposal.objects.get(agent=world_a.agent, payload__version_id=version.pk), "approve")
    with CaptureQueriesContext(connection) as seen:
        result, provider = customer_turn(world_a, "en")
    reads = [q["sql"] for q in seen.captured_queries if '"taboo_phrase"' in q["sql"]]
    assert len(reads) == 1
    assert result.reply is not None and result.reply.text.startswith(world_a.agent.boundary("en"))
    prompt = system_prompt(provider)
    assert all(f"“{word}”" in prompt for word in ["cheap", "budget", "bargain", "便宜"])


@pytest.mark.django_db
def test_a_taboo_recorded_before_phrases_were_kept_is_read_from_its_title(world_a: TenantWorld) -> None:
    """The migration's reading of older rows, and the reading of a taboo whose writer named no
    phrase (the knowledge API): both from the title."""
    from importlib import import_module

    from django.apps import apps

    eager(world_a)
    version = entry_propose(
        agent=world_a.agent,
        title="不说‘便宜’",
        body="我们从不说便宜。",
        kind="taboo",
        actor=Actor.human(world_a.owner.pk),
        source=SourceIn(type="upload", ref="tone.md", version="1"),
    )
    assert version.taboo_phrase == "便宜"
    EntryVersion.objects.filter(pk=version.pk).update(taboo_phrase="")
    import_module("knowledge.migrations.0007_taboo_phrase").phrases_from_titles(apps, None)
    version.refresh_from_db()
    assert version.taboo_phrase == "便宜"


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_guard_check_with_the_agent_reads_its_taboos_first_as_a_turn_does(world_a: TenantWorld, language: str) -> None:
    """`manage.py guard_check --agent` gives the verdict a turn gives (issue 27 §1): the owner's
    approved taboos first, then the outgoing check — a pending taboo forbids nothing."""
    import io
    import json

    from django.core.management import call_command

    def checked() -> dict[str, Any]:
        out = io.StringIO()
        call_command("guard_check", SAYS[language], agent=world_a.agent.slug, stdout=out)
        return json.loads(out.getvalue())

    eager(world_a)
    _session, change = correct(world_a, language)
    assert checked()["check"] != "taboo"
    decide(world_a, change, "approve")
    assert checked() == {"blocked": True, "category": "taboo", "check": "taboo", "rule": None}
    result, _provider = customer_turn(world_a, language)
    assert result.run.guard_category == "taboo"
