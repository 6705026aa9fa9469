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


QUESTIONS_SCRIPT = r"""
import json
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from knowledge.models import KnowledgeEntry
from knowledge.selectors import knowledge_search, unanswered_topics
from knowledge.services import knowledge_miss_record, topic_attach
agent = AgentProfile.objects.get(slug="a-desk")
def found(q):
    return [r.title for r in knowledge_search(agent=agent, query=q, audience="customer")]
out = {q: found(q) for q in ("你们几点开门?", "营业时间是什么时候?", "What time do you close?", "你们卖面包吗?")}
for asker in ("c1", "c2", "c3"):
    knowledge_miss_record(agent=agent, session_id=None, query="你们周末送外卖吗?", asker=asker)
out["before"] = found("你们周末送外卖吗?")
[topic] = unanswered_topics(agent).topics
hours = KnowledgeEntry.objects.get(agent=agent, origin_key="demo:opening-hours-zh")
version = topic_attach(agent=agent, topic=topic.key, entry=hours, actor=Actor.platform("test"))
out["attached"] = [version.number, version.status, version.questions[-1]]
out["after"] = found("你们周末送外卖吗?")
out["left"] = len(unanswered_topics(agent).topics)
print("RESULT" + json.dumps(out))
"""


def test_sqlite_finds_entries_by_their_questions_and_by_attached_topics(tmp_path: Path) -> None:
    """Migrating rebuilds the versions table on SQLite; the FTS trigger must still index what
    the seed and an attached topic write afterwards."""
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo", "--tenant", "a", "--agent", "a-desk", "--owner-email", "o@a.test")
    out = json.loads(shell_result(tmp_path, QUESTIONS_SCRIPT))
    assert out["你们几点开门?"][:1] == ["营业时间"]
    assert out["营业时间是什么时候?"][:1] == ["营业时间"]
    assert out["What time do you close?"][:1] == ["Opening hours"]
    assert out["你们卖面包吗?"] == []
    assert out["before"] == []
    assert out["attached"][:2] == [2, "approved"]
    assert out["after"][:1] == ["营业时间"]
    assert out["left"] == 0


BOTH_LANGUAGES_SCRIPT = r"""
import json
from facade.tenancy.models import AgentProfile
from facade.tenancy.schemas import Actor
from knowledge.schemas import SourceIn
from knowledge.selectors import knowledge_search
from knowledge.services import entry_propose
agent = AgentProfile.objects.get(slug="a-desk")
entry_propose(
    agent=agent,
    title="Gift boxes",
    body="Every gift box is wrapped by hand.",
    translations={"zh-hans": {"title": "礼盒", "body": "每个礼盒都手工包装。"}},
    source=SourceIn(type="owner_dialogue", ref="chat:9", version="1"),
    actor=Actor.platform("test"),
)
def found(q):
    return [(r.title, r.snippet) for r in knowledge_search(agent=agent, query=q, audience="customer")][:1]
print("RESULT" + json.dumps({"en": found("gift boxes"), "zh": found("有礼盒吗?")}, ensure_ascii=False))
"""


def test_sqlite_finds_an_entry_by_its_other_language_and_answers_in_it(tmp_path: Path) -> None:
    """Issue 26 §4 on the embedded default: the translation is indexed (the migration that added
    it rebuilt the table and made the FTS trigger again) and served in the language asked."""
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "seed_demo", "--tenant", "a", "--agent", "a-desk", "--owner-email", "o@a.test")
    out = json.loads(shell_result(tmp_path, BOTH_LANGUAGES_SCRIPT))
    assert out["en"] == [["Gift boxes", "Every gift box is wrapped by hand."]]
    assert out["zh"] == [["礼盒", "每个礼盒都手工包装。"]]
