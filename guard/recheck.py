"""The nightly re-check of delivered replies (issue 15 §6): a rule added today finds yesterday's slips.

Every customer's or peer's reply is stored with the rule-set hash of the outgoing check it passed
(`Message.ruleset_hash`, set by `run_finish`).  Once a night, before the daily review and in each
tenant's time zone (`rsi.schedule_rules`: kind `recheck` at 03:00 for the previous local day),
`recheck_day` runs the *current* `outgoing_check` over that day's delivered replies whose stored
hash is another one.  On a day with no new rules that is one aggregate query and nothing else.

What the check is given is rebuilt on the server from what was stored, never from a client: the
agent's published texts (the contract version the session ran under, and the live one), the
approved knowledge versions the reply cited (their whole text, which also lets their attributed
quotes pass as in the runtime's `citations`), the price list or delivery options of the contract
version it cited (approvals/published.py), and the session's earlier messages.  A reply that
fails now is a **delivered violation** (`DeliveredViolation`, one per reply however often it is
read again, with `guard.delivered_violation`); every reply read gets the current hash; the agent's
day ends with `guard.recheck_completed` and its counts.  All of an agent's day is one
transaction: read, recorded and marked together, or not at all (the next run reads it again).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from approvals.contract import live_content
from approvals.contract_models import AgentContract
from approvals.published import cited_again
from facade.dialogue.models import DialogueSession, Message, Run
from facade.dialogue.runtime.loop import HISTORY
from facade.tenancy.models import AgentProfile
from knowledge.models import EntryVersion
from rsi.schedule_rules import day_bounds

from . import events, outgoing
from .models import DeliveredViolation
from .texts import texts_in

__all__ = ["OUTWARD", "RecheckResult", "delivered_replies", "previous_day", "recheck_day"]

logger = logging.getLogger(__name__)

OUTWARD = ("customer", "peer")
Check = Callable[..., outgoing.OutgoingVerdict]


@dataclass(frozen=True)
class RecheckResult:
    agent: str
    day: dt.date
    ruleset_hash: str
    checked: int  # replies an older rule set had passed, read again now
    skipped: int  # replies the current rule set had read already
    violations: int  # delivered violations found for the first time

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "day": self.day.isoformat(),
            "ruleset_hash": self.ruleset_hash,
            "checked": self.checked,
            "skipped": self.skipped,
            "violations": self.violations,
        }


def previous_day(agent: AgentProfile, now: dt.datetime | None = None) -> dt.date:
    """The tenant's local yesterday: the day the nightly run reads."""
    local = (now or timezone.now()).astimezone(dt.UTC).astimezone(_zone(agent))
    return local.date() - dt.timedelta(days=1)


def _zone(agent: AgentProfile) -> dt.tzinfo:
    from zoneinfo import ZoneInfo

    return ZoneInfo(agent.tenant.time_zone)


def delivered_replies(agent: AgentProfile, day: dt.date) -> QuerySet[Message]:
    """The agent's replies delivered to customers and peers on the tenant's local `day` (an
    owner's preview of the customer face is not a delivery)."""
    start, end = day_bounds(day, agent.tenant.time_zone)
    return Message.objects.filter(
        role="agent",
        created_at__gte=start,
        created_at__lt=end,
        session__tenant_id=agent.tenant_id,
        session__agent=agent,
        session__audience__in=OUTWARD,
        session__preview=False,
    )


def recheck_day(*, agent_id: int, day: dt.date, check: Check | None = None) -> RecheckResult:
    """Re-check one agent's delivered replies of one local day against the current rule set.
    `check` stands in for `outgoing.outgoing_check` (tests count its calls)."""
    check = check or outgoing.outgoing_check
    current = outgoing.RULESET_HASH
    agent = AgentProfile.objects.select_related("tenant").get(pk=agent_id)
    replies = delivered_replies(agent, day)
    with transaction.atomic():
        counted = replies.aggregate(total=Count("pk"), stale=Count("pk", filter=~Q(ruleset_hash=current)))
        total, stale_count = int(counted["total"]), int(counted["stale"])
        if not stale_count:
            return RecheckResult(agent.slug, day, current, checked=0, skipped=total, violations=0)
        # Locked, so two runs of the same day take turns; the second finds the rows marked.
        stale: list[dict[str, Any]] = [
            dict(row)
            for row in replies.exclude(ruleset_hash=current)
            .select_for_update(of=("self",))
            .order_by("pk")
            .values("pk", "session_id", "text", "citations", "reply_to_id", "created_at")
        ]
        if not stale:
            return RecheckResult(agent.slug, day, current, checked=0, skipped=total, violations=0)
        context = _Context.load(agent, stale)
        already = set(
            DeliveredViolation.objects.filter(message_id__in=[r["pk"] for r in stale]).values_list(
                "message_id", flat=True
            )
        )
        found = 0
        now = timezone.now()
        for reply in stale:
            verdict = check(
                reply["text"],
                given=context.given(reply),
                citations=context.citations(reply),
                customer=context.customer(reply),
            )
            if not verdict.blocked or reply["pk"] in already:
                continue
            run_id = context.runs.get(reply["reply_to_id"])
            DeliveredViolation.objects.create(
                tenant_id=agent.tenant_id,
                agent=agent,
                message_id=reply["pk"],
                run_id=run_id,
                ruleset_hash=current,
                category=verdict.category or "unknown",
                failed_check=verdict.check or "",
                rule=verdict.rule or "",
                delivered_at=reply["created_at"],
                found_at=now,
            )
            events.guard_delivered_violation(
                agent=agent,
                message_id=reply["pk"],
                run_id=str(run_id) if run_id else None,
                category=verdict.category or "unknown",
                check=verdict.check or "",
                rule=verdict.rule,
                ruleset_hash=current,
            )
            found += 1
        Message.objects.filter(pk__in=[r["pk"] for r in stale]).update(ruleset_hash=current)
        result = RecheckResult(
            agent.slug, day, current, checked=len(stale), skipped=total - len(stale), violations=found
        )
        events.guard_recheck_completed(
            agent=agent,
            day=day.isoformat(),
            ruleset_hash=current,
            checked=result.checked,
            skipped=result.skipped,
            violations=found,
        )
    if found:
        logger.warning("guard recheck: %s delivered violation(s) of agent %s on %s", found, agent.pk, day)
    return result


# The parts of a contract the customer and peer prompt says (prompts.customer_prompt): not the
# pricing or delivery terms, which the model is never given.
_PROMPT_FIELDS = ("mission", "boundary_wording", "wording", "clarification_order", "request_flow")


def _prompt_texts(content: Mapping[str, Any]) -> list[str]:
    return list(texts_in({field: content.get(field) for field in _PROMPT_FIELDS}))


@dataclass
class _Context:
    """What the replies of one agent-day were given, read with a handful of queries."""

    published: dict[int | None, list[str]]  # contract version → its texts (None: the live one)
    contents: dict[int, dict[str, Any]]  # contract version → its content (the versions cited or run under)
    session_versions: dict[Any, int | None]
    history: dict[Any, list[tuple[int, str, str]]]  # session → its messages (id, text, role) in order
    versions: dict[tuple[int, int], tuple[int, str, str]]  # (entry, number) → (version id, title, body)
    runs: dict[int, Any]  # the principal message → its run's id

    @classmethod
    def load(cls, agent: AgentProfile, stale: list[dict[str, Any]]) -> _Context:
        session_ids = {r["session_id"] for r in stale}
        last = max(r["pk"] for r in stale)
        session_versions = dict(
            DialogueSession.objects.filter(pk__in=session_ids).values_list("pk", "contract_version")
        )
        published: dict[int | None, list[str]] = {None: [agent.name, *_prompt_texts(live_content(agent))]}
        wanted = {v for v in session_versions.values() if v is not None}
        wanted |= {int(c["version"]) for r in stale for c in (r["citations"] or []) if _of_contract(c)}
        contents: dict[int, dict[str, Any]] = {}
        for contract in AgentContract.objects.filter(agent=agent, version__in=wanted):
            contents[contract.version] = contract.content()
            published[contract.version] = [agent.name, *_prompt_texts(contents[contract.version])]
        history: dict[Any, list[tuple[int, str, str]]] = defaultdict(list)
        for session_id, pk, text, role in (
            Message.objects.filter(session_id__in=session_ids, pk__lt=last)
            .order_by("pk")
            .values_list("session_id", "pk", "text", "role")
        ):
            history[session_id].append((pk, text, role))
        cited = {
            (int(c["entry_id"]), int(c["version"]))
            for r in stale
            for c in (r["citations"] or [])
            if isinstance(c, Mapping) and "entry_id" in c and "version" in c and not _of_contract(c)
        }
        versions: dict[tuple[int, int], tuple[int, str, str]] = {}
        if cited:
            match = reduce(or_, (Q(entry_id=e, number=n) for e, n in cited))
            # Whatever its status now: the runtime cited it when it was approved and valid.
            for pk, entry_id, number, title, body in EntryVersion.objects.filter(match, agent=agent).values_list(
                "pk", "entry_id", "number", "title", "body"
            ):
                versions[(entry_id, number)] = (pk, title, body)
        principal = [r["reply_to_id"] for r in stale]
        runs = dict(Run.objects.filter(message_id__in=principal).values_list("message_id", "pk"))
        return cls(published, contents, session_versions, history, versions, runs)

    def _cited(self, reply: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], tuple[int, str, str] | None]]:
        """The reply's knowledge citations with their versions (a published part: None)."""
        out: list[tuple[Mapping[str, Any], tuple[int, str, str] | None]] = []
        for c in reply["citations"] or []:
            if _of_contract(c):
                out.append((c, None))
            elif isinstance(c, Mapping) and "entry_id" in c and "version" in c:
                out.append((c, self.versions.get((int(c["entry_id"]), int(c["version"])))))
        return out

    def _published(self, cited: Mapping[str, Any]) -> dict[str, Any]:
        """A cited price list or delivery options as the run had it, from its contract version."""
        content = self.contents.get(int(cited["version"]), {})
        return cited_again(cited, content)

    def given(self, reply: Mapping[str, Any]) -> list[str]:
        """What the run had: the prompt's texts of the contract version the session ran under, the
        cited versions' texts, and the conversation the prompt held (its last HISTORY messages)."""
        version = self.session_versions.get(reply["session_id"])
        texts = list(self.published.get(version) or self.published[None])
        texts += [body for _c, found in self._cited(reply) if found for body in (found[1], found[2])]
        texts += [self._published(c)["snippet"] for c, _found in self._cited(reply) if _of_contract(c)]
        return texts + [text for text, _role in self._earlier(reply)]

    def _earlier(self, reply: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The conversation the prompt held: its last HISTORY messages and the one the reply answered."""
        earlier = [(text, role) for pk, text, role in self.history.get(reply["session_id"], []) if pk < reply["pk"]]
        return earlier[-(HISTORY + 1) :]

    def customer(self, reply: Mapping[str, Any]) -> list[str]:
        """The customer's (or peer's) own messages among them, as the run loop reads them."""
        return [text for text, role in self._earlier(reply) if role == "principal"]

    def citations(self, reply: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The reply's citations in the order it numbered them, each with its version's text as
        what may be quoted (the runtime had the search's snippet of it)."""
        return [
            self._published(c)
            if _of_contract(c)
            else {
                "entry_id": c["entry_id"],
                "version": c["version"],
                "version_id": found[0] if found else None,
                "title": found[1] if found else str(c.get("title") or ""),
                "snippet": " ".join(found[2].split()) if found else "",
            }
            for c, found in self._cited(reply)
        ]


def _of_contract(cited: Any) -> bool:
    """Whether a stored citation is of a contract's published price list or delivery options."""
    return isinstance(cited, Mapping) and bool(cited.get("published")) and isinstance(cited.get("version"), int)
