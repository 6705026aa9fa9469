"""One knowledge-search scenario for every backend: the same material, the same questions.

`answers(agent, other)` writes the material through the services and returns what each
audience finds, as plain JSON-able data, so the PostgreSQL test calls it in-process and the
SQLite test runs it in `manage.py shell` on the embedded default (tests/test_search_backends.py).
`agent` and `other` belong to different tenants.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

DAY = dt.timedelta(days=1)
AUDIENCES = ("customer", "peer", "owner")
QUESTIONS = (
    "gift wrapping",
    "怎么退货",
    "vat",
    "tax refunds",
    "ferry",
    "winter sale",
    "summer sale",
    "delivery days",
    "bravo parking",
)


def answers(agent: Any, other: Any) -> dict[str, Any]:
    from django.db import connection
    from django.utils import timezone

    from facade.tenancy.schemas import Actor
    from knowledge.schemas import SourceIn
    from knowledge.selectors import knowledge_search
    from knowledge.services import entry_approve, entry_propose, entry_reject, knowledge_quarantine

    actor = Actor.platform("tests")
    now = timezone.now()

    def add(owner: Any, title: str, body: str, ref: str, **extra: Any) -> Any:
        source = SourceIn(type="owner_dialogue", ref=ref, version="1")
        return entry_propose(agent=owner, title=title, body=body, source=source, actor=actor, **extra)

    for each in (agent, other):
        add(each, "Gift wrapping", "Loyal customers get free gift wrapping.", "chat:1")
        add(each, "退货政策", "收到货物七天内可以无理由退货。", "chat:2")
    add(other, "Bravo parking", "Bravo customers park behind the warehouse.", "chat:3")
    vat = add(agent, "VAT", "Prices include VAT.", "chat:4")  # regulated: waits for the owner
    refunds = add(agent, "Tax refunds", "Tax refunds are paid in cash.", "chat:5")
    entry_reject(version=refunds, actor=actor)
    add(agent, "Ferry", "The ferry leaves every hour.", "poisoned:1")
    knowledge_quarantine(agent=agent, actor=actor, source_ref="poisoned:1")
    add(agent, "Winter sale", "The winter sale starts next week.", "chat:6", valid_from=now + DAY)
    # Past its validity but still approved: no job has marked it expired yet.
    summer = add(agent, "Summer sale", "The summer sale ran in July.", "chat:7", valid_from=now - 30 * DAY)
    type(summer).objects.filter(pk=summer.pk).update(valid_until=now - DAY)
    first = add(agent, "Delivery days", "We deliver on Tuesdays.", "chat:8")
    second = add(agent, "Delivery days", "We deliver on Tuesdays and Fridays.", "chat:9", entry=first.entry)
    if second.status == "pending":
        entry_approve(version=second, actor=actor)
    for i in range(4):
        add(agent, f"Candle {i}", f"Scented candle number {i}.", f"chat:1{i}")

    def found(owner: Any, question: str, audience: str, limit: int = 5) -> list[list[Any]]:
        results = knowledge_search(agent=owner, query=question, audience=audience, limit=limit)
        return [[r.title, r.version, r.status, r.entry_id] for r in results]

    summer.refresh_from_db()
    return {
        "vendor": connection.vendor,
        "statuses": {"vat": vat.status, "summer": summer.status},
        "agent": {f"{q}/{a}": found(agent, q, a) for q in QUESTIONS for a in AUDIENCES},
        "other": {f"{q}/{a}": found(other, q, a) for q in QUESTIONS for a in AUDIENCES},
        "candles": {str(limit): found(agent, "scented candle", "customer", limit) for limit in (2, 10)},
    }
