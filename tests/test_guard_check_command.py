"""`manage.py guard_check`: the whole outgoing check on a message, as a customer reply gets it —
the commitment guard, then the grounding check against what the model was given (`--given`, or
an agent's published texts and approved knowledge with `--agent`) — one JSON line per message."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from approvals.contract import contract_compile
from conftest import TenantWorld
from facade.tenancy.schemas import Actor
from knowledge.models import EntryVersion, SourceType, Status
from knowledge.schemas import SourceIn
from knowledge.services import entry_approve, entry_propose

ACTOR = Actor.platform("tests")
PASSED = {"blocked": False, "category": None, "check": None, "rule": None}
UNSOURCED = {"blocked": True, "category": "unsourced_figure", "check": "grounding", "rule": None}
# The guard lets these through (hedged, or not a delivery): only the grounding check can stop them.
HEDGED_DAYS = "Usually it takes 3 days."
OPEN_UNTIL = "Our workshop is open until 6pm."
TWO_GRAND = "Last year a rebuild cost a customer two grand."


def check(*args: str, **options: Any) -> list[dict[str, Any]]:
    out = io.StringIO()
    call_command("guard_check", *args, stdout=out, **options)
    lines = out.getvalue().splitlines()
    assert all(line.startswith("{") for line in lines), lines
    return [json.loads(line) for line in lines]


# --- without an agent: no database ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("The haircut costs €35.", {"blocked": True, "category": "price", "check": "guard", "rule": "price.en.money"}),
        (
            "三天内送达。",
            {"blocked": True, "category": "deadline", "check": "guard", "rule": "deadline.zh.within_days"},
        ),
        (
            "We guarantee you'll be satisfied.",
            {"blocked": True, "category": "outcome", "check": "guard", "rule": "outcome.en.guarantee_word"},
        ),
        ("The owner will confirm the price.", PASSED),
        (HEDGED_DAYS, UNSOURCED),
        (OPEN_UNTIL, UNSOURCED),
    ],
)
def test_one_message_one_json_line(text: str, verdict: dict[str, Any]) -> None:
    out = io.StringIO()
    call_command("guard_check", text, stdout=out)
    assert out.getvalue().count("\n") == 1
    assert json.loads(out.getvalue()) == verdict
    assert list(json.loads(out.getvalue())) == ["blocked", "category", "check", "rule"]


def test_the_grounding_check_counts_only_the_given_texts() -> None:
    assert check(HEDGED_DAYS) == [UNSOURCED]
    assert check(HEDGED_DAYS, given=["Shipping takes three days."]) == [PASSED]
    assert check(OPEN_UNTIL, given=["We close at six."]) == [PASSED]
    # Repeatable: every --given text counts.
    both = "Usually it takes 3 days, and we're open until 6pm."
    assert check(both, given=["Shipping takes 3 days."]) == [UNSOURCED]
    assert check(both, given=["Shipping takes 3 days.", "Open until 18:00."]) == [PASSED]
    # "two grand" is 2000: a 2 in the input does not source it.
    assert check(TWO_GRAND, given=["We have 2 mechanics."]) == [UNSOURCED]
    assert check(TWO_GRAND, given=["Rebuilds: 2,000."]) == [PASSED]


def test_the_command_line_parses_given() -> None:
    out = io.StringIO()
    call_command("guard_check", HEDGED_DAYS, "--given", "It takes 3 days.", "--given", "other", stdout=out)
    assert json.loads(out.getvalue()) == PASSED


def test_standard_input() -> None:
    assert check("-", stdin=io.StringIO("我们无法保证。\n")) == [PASSED]
    assert check("-", stdin=io.StringIO("明天发货")) == [
        {"blocked": True, "category": "deadline", "check": "guard", "rule": "deadline.zh.day_word"}
    ]


def test_a_file_is_checked_line_by_line(tmp_path: Path) -> None:
    sentences = tmp_path / "replies.txt"
    sentences.write_text(f"The haircut costs €35.\n\n  \nThe owner will confirm the price.\n{HEDGED_DAYS}\n", "utf-8")
    verdicts = check(file=str(sentences))
    assert [(v["check"], v["category"]) for v in verdicts] == [
        ("guard", "price"),
        (None, None),
        ("grounding", "unsourced_figure"),
    ]
    assert check(file=str(sentences), given=["3 days"])[2] == PASSED
    assert len(check(file="-", stdin=io.StringIO("三天内送达。\n我们无法保证。\n"))) == 2


def test_usage_errors() -> None:
    with pytest.raises(CommandError, match="no message given"):
        call_command("guard_check", stdout=io.StringIO())
    with pytest.raises(CommandError, match="empty"):
        call_command("guard_check", "-", stdin=io.StringIO("  \n"), stdout=io.StringIO())
    with pytest.raises(CommandError, match="not both"):
        call_command("guard_check", "text", file="x", stdout=io.StringIO())
    with pytest.raises(CommandError, match="cannot read"):
        call_command("guard_check", file="/nonexistent/replies.txt", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no message"):
        call_command("guard_check", file="-", stdin=io.StringIO("\n\n"), stdout=io.StringIO())


# --- with an agent: its published texts and approved knowledge --------------------------------


def approved(world: TenantWorld, title: str, body: str, **extra: Any) -> EntryVersion:
    source = SourceIn(type=SourceType.OWNER_DIALOGUE, ref=f"chat:{title}", version="1")
    version = entry_propose(agent=world.agent, title=title, body=body, source=source, actor=ACTOR, **extra)
    if version.status != Status.APPROVED:
        version = entry_approve(version=version, actor=ACTOR)
    version.refresh_from_db()
    assert version.status == Status.APPROVED and version.served
    return version


@pytest.mark.django_db
def test_an_agents_approved_knowledge_and_contract_count_as_given(world_a: TenantWorld) -> None:
    slug = world_a.agent.slug
    assert check(HEDGED_DAYS, agent=slug) == [UNSOURCED]
    approved(world_a, "Shipping", "Parcels usually take 3 days to arrive.")
    assert check(HEDGED_DAYS, agent=slug) == [PASSED]
    # The contract's texts: the owner's boundary wording and own sentences.
    assert check(OPEN_UNTIL, agent=slug) == [UNSOURCED]
    contract_compile(
        agent=world_a.agent,
        changes={"wording": {"en": {"greeting": "Hello! Our workshop closes at six in the evening."}}},
        actor=ACTOR,
    )
    assert check(OPEN_UNTIL, agent=slug) == [PASSED]
    assert check(TWO_GRAND, agent=slug) == [UNSOURCED]
    contract_compile(agent=world_a.agent, changes={"mission": "Rebuilds from two grand, fixed in a week."}, actor=ACTOR)
    assert check(TWO_GRAND, agent=slug) == [PASSED]
    # --given adds to the agent's texts; the guard still reads first.
    assert check("The haircut costs €35.", agent=slug, given=["€35"])[0]["check"] == "guard"


@pytest.mark.django_db
def test_knowledge_that_is_not_approved_and_valid_now_is_not_given(world_a: TenantWorld) -> None:
    slug = world_a.agent.slug
    later = timezone.now() + dt.timedelta(days=30)
    approved(world_a, "Next season", "From next month parcels take 3 days.", valid_from=later)
    assert check(HEDGED_DAYS, agent=slug) == [UNSOURCED]
    # Another agent's knowledge is not this agent's.
    from conftest import build_tenant

    other = build_tenant("bravo")
    approved(other, "Shipping", "Parcels usually take 3 days to arrive.")
    assert check(HEDGED_DAYS, agent=slug) == [UNSOURCED]
    assert check(HEDGED_DAYS, agent=other.agent.slug) == [PASSED]


@pytest.mark.django_db
def test_an_unknown_agent_is_an_error() -> None:
    with pytest.raises(CommandError, match="no agent with the slug 'nobody'"):
        call_command("guard_check", "It costs €3.", agent="nobody", stdout=io.StringIO())
