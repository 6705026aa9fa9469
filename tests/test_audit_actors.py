"""The auditor console names people (issue 26 §6): an actor the ledger records as `user:<id>` is
shown by name and e-mail address to those who may read the tenant's ledger (its auditors and
owners), on the lineage, the timeline and an event's page; a customer or a platform job stays
its id.  And the lineage of the knowledge a night review proposed and the owner approved with a
click shows the review, the proposal and the decision."""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from approvals.models import ChangeProposal
from knowledge.models import EntryVersion
from ledger.models import LedgerEvent
from rsi.simulate import simulation_run
from tests.test_audit_lineage import changes, click_approve
from tests.test_simulated_week import owner_client

pytestmark = pytest.mark.django_db

ANSWER = "Yes: we wrap any purchase in recycled paper at no extra charge."


@pytest.fixture(autouse=True)
def _fresh_rate_windows() -> None:
    cache.clear()


def page(user: Any, path: str, **params: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path, params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def simulated_draft_approved(world: Any, customers: int = 3) -> tuple[ChangeProposal, EntryVersion]:
    """A night of simulated traffic, its review's draft written and approved with a click."""
    [played] = list(simulation_run(agent=world.agent, days=1, customers=customers))
    draft = ChangeProposal.objects.get(agent=world.agent, origin="review_report")
    owner = owner_client(world.owner)
    written = {"title": draft.payload["title"], "text": ANSWER}
    edited = owner.patch(f"{changes(world)}/{draft.pk}", {"payload": written, "expected_version": 1}, format="json")
    assert edited.status_code == 200, edited.content
    click_approve(owner, world, draft.pk, version=edited.json()["version"])
    draft.refresh_from_db()
    assert played.report is not None
    return draft, EntryVersion.objects.get(agent=world.agent, body=ANSWER)


def text_of(html: str) -> str:
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_the_lineage_of_approved_review_knowledge_shows_the_review_the_proposal_and_the_owner_by_name(
    world_a: Any,
) -> None:
    world_a.owner.first_name, world_a.owner.last_name = "Alice", "Baker"
    world_a.owner.save(update_fields=["first_name", "last_name"])
    draft, version = simulated_draft_approved(world_a)
    tenant = world_a.tenant.slug
    for reader in (world_a.auditor, world_a.owner):
        html = page(reader, f"/audit/{tenant}/lineage", entity_type="knowledge_entry", entity_id=str(version.entry_id))
        section = html[html.index('class="lineage-versions"') :]
        text = text_of(section)
        # The review, the proposal and the decision — not "the owner's direct edit".
        assert "the daily review of" in text and "the owner's direct edit" not in text
        assert draft.pk in section and "review_report" in section and draft.authorization_id in section
        # The owner by name and address (twice: who published, who authorised), never as "user:N".
        assert text.count("Alice Baker <owner@alpha.test>") == 2, text
        assert f"<code>user:{world_a.owner.pk}</code>" not in section
        assert f'title="user:{world_a.owner.pk}"' in section  # the ledger's id on hover


def test_the_timeline_and_an_event_name_people_and_leave_customers_and_jobs_as_ids(world_a: Any) -> None:
    world_a.owner.first_name = "Alice"
    world_a.owner.save(update_fields=["first_name"])
    draft, _ = simulated_draft_approved(world_a)
    tenant = world_a.tenant.slug
    owner_id = f"user:{world_a.owner.pk}"
    decided = (
        LedgerEvent.objects.for_entity(world_a.tenant.pk, "change_proposal", draft.pk).of_type("proposal.decided").get()
    )
    for reader in (world_a.auditor, world_a.owner):
        timeline = page(reader, f"/audit/{tenant}/", entity_type="change_proposal", entity_id=draft.pk)
        assert "Alice &lt;owner@alpha.test&gt;" in timeline and f"<code>{owner_id}</code>" not in timeline
        assert "<code>rsi_review</code>" in timeline  # the review that proposed it: a platform job
        # The decision token's `owner_id` is the owner too.
        owner_field = timeline[timeline.index("<code>owner_id</code>") :]
        assert owner_field[: owner_field.index("</dd>")].endswith("Alice &lt;owner@alpha.test&gt;</span>")
        event = page(reader, f"/audit/{tenant}/events/{decided.seq}")
        card = event[: event.index("<h2>")]
        assert "Alice &lt;owner@alpha.test&gt;" in card and f"<code>{owner_id}</code>" not in card
    # A customer stays a pointer.
    by_customer = next(
        e for e in LedgerEvent.objects.filter(chain_id=world_a.tenant.pk) if e.actor_id.startswith("customer:")
    )
    event = page(world_a.auditor, f"/audit/{tenant}/events/{by_customer.seq}")
    assert f"<code>{by_customer.actor_id}</code>" in event[: event.index("<h2>")]
    # Filtering by the ledger's id still works, and the person is named in what it finds.
    mine = page(world_a.auditor, f"/audit/{tenant}/", actor=owner_id)
    assert "proposal.decided" in mine and "Alice &lt;owner@alpha.test&gt;" in mine
