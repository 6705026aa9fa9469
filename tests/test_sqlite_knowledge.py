"""The embedded default's search (SQLite FTS5) answers in English and Chinese and never crosses
tenants, like the PostgreSQL one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from embedded import manage, shell_result

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import entry_propose
from django.db import connection
out = {"vendor": connection.vendor}
actor = Actor.platform("test")
for slug in ("a-desk", "b-desk"):
    agent = AgentProfile.objects.get(slug=slug)
    for title, body, ref in (
        ("Gift wrapping", "Loyal customers get free gift wrapping.", "chat:1"),
        ("退货政策", "收到货物七天内可以无理由退货。", "chat:1"),
        ("VAT", "Prices include VAT.", "chat:2"),
    ):
        source = SourceIn(type="owner_dialogue", ref=ref, version="1")
        entry_propose(agent=agent, title=title, body=body, source=source, actor=actor)
for slug in ("a-desk", "b-desk"):
    agent = AgentProfile.objects.get(slug=slug)
    out[slug] = {
        q + "/" + audience: [
            (r.entry_id, r.title, r.status) for r in knowledge_search(agent=agent, query=q, audience=audience)
        ]
        for q in ("gift wrapping", "怎么退货", "vat") for audience in ("customer", "owner")
    }
print("RESULT" + json.dumps(out))
"""


def test_sqlite_search_is_bilingual_and_tenant_scoped(tmp_path: Path) -> None:
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo", "--tenant", "a", "--agent", "a-desk", "--owner-email", "o@a.test")
    manage(tmp_path, "seed_demo", "--tenant", "b", "--agent", "b-desk", "--owner-email", "o@b.test")
    out = json.loads(shell_result(tmp_path, SCRIPT))
    assert out["vendor"] == "sqlite"
    a, b = out["a-desk"], out["b-desk"]
    assert [t for _, t, _ in a["gift wrapping/customer"]] == ["Gift wrapping"]
    assert [t for _, t, _ in a["怎么退货/customer"]] == ["退货政策"]
    assert a["vat/customer"] == [] and [s for _, _, s in a["vat/owner"]] == ["pending"]
    ids_a = {i for results in a.values() for i, _, _ in results}
    ids_b = {i for results in b.values() for i, _, _ in results}
    assert ids_a and ids_b and not ids_a & ids_b
