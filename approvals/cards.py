"""A change proposal as the owner reads it on a card (the inbox page and the owner chat render
`templates/approvals/_card.html` from `card_view`): the level and origin in plain words, the
before/after of what it changes (a word diff for texts, a table for prices, lists for skills,
delivery and the state machine), its evidence (a conversation's summary — counts, requests,
rating, what was cited — or a knowledge version; never a customer's words), what is uncertain,
how it would be rolled back, and which buttons it offers.

Reads only.  Cross-app rows are read through `apps.get_model`, as approvals/contract.py does:
dialogue depends on approvals, not the other way round."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from facade.tenancy.models import DEFAULT_WORDING
from knowledge.selectors import unanswered_topics
from knowledge.web import Segment, text_diff

from . import replay_rules, targets
from .contract import live_terms
from .contract_rules import item_label, removals
from .models import ChangeProposal, ProposalReplay, ProposalStatus, ReplayStatus
from .outbox import outbox_enabled
from .schemas import REVIEW_DRAFT_PLACEHOLDER, Kind
from .summaries import summary_shown

# The review's placeholder text of a draft, stored in English (schemas.REVIEW_DRAFT_PLACEHOLDER).
DRAFT_PLACEHOLDER_SHOWN = _(
    "The daily review found this question unanswered and does not know the answer: write the answer here "
    "before you approve."
)
LEVEL_WORDS: dict[int, Promise] = {
    1: _("Level 1 — knowledge: what your agent may tell customers. Approving adds it to the knowledge base."),
    2: _(
        "Level 2 — wording: how your agent says things and the order of its questions. "
        "It takes effect on the next customer turn."
    ),
    3: _(
        "Level 3 — the contract: skills, delivery, prices or how requests move. Deciding asks for a code we e-mail "
        "you, and approving publishes a new contract version."
    ),
}
KIND_WORDS: dict[str, Promise] = {
    Kind.KNOWLEDGE_DRAFT: _("Knowledge entry"),
    Kind.LESSON: _("Lesson"),
    Kind.WORDING: _("Wording"),
    Kind.CLARIFICATION_ORDER: _("Order of questions"),
    Kind.BOUNDARY_WORDING: _("Boundary wording"),
    Kind.SKILL_IDS: _("Skills"),
    Kind.DELIVERY: _("Delivery"),
    Kind.PRICING: _("Prices"),
    Kind.STATE_CONTRACT: _("Request states"),
    Kind.COMPOSITION_MODE: _("How replies are composed"),
    Kind.ROLLBACK: _("Roll-back"),
}
ORIGIN_WORDS: dict[str, Promise] = {
    "review_report": _("Proposed by the nightly review of conversations"),
    "owner_dialogue": _("Proposed by your agent in your chat with it"),
    "observe_digest": _("Found in the industry feed"),
    "customer_candidate": _("Drawn from customer conversations"),
    "owner_direct": _("Your own change"),
}
STATUS_WORDS: dict[str, Promise] = {
    ProposalStatus.PENDING: _("Waiting for your decision"),
    ProposalStatus.APPROVED: _("Approved"),
    ProposalStatus.REJECTED: _("Rejected"),
    ProposalStatus.APPLIED: _("Applied"),
    ProposalStatus.FAILED: _("Failed"),
    ProposalStatus.ROLLED_BACK: _("Rolled back"),
    ProposalStatus.EXPIRED: _("Expired"),
}
LANGUAGE_WORDS: dict[str, Promise] = {"en": _("English"), "zh-hans": _("Simplified Chinese")}
SITUATION_WORDS: dict[str, Promise] = {
    "greeting": _("greeting a customer"),
    "unknown": _("when it does not know"),
    "handoff": _("handing over to a person"),
    "request_registered": _("after registering a request"),
}
# The two composition modes as the owner reads them (facade/dialogue/runtime/strict.py).
MODE_WORDS: dict[str, Promise] = {
    "guarded": _("Guarded: the agent writes its own replies; the guard and the grounding check stop any promise."),
    "strict": _(
        "Strict: the agent only repeats your approved knowledge, your published sentences and request status; "
        "anything else is refused with your boundary wording."
    ),
}
ROLLBACK_WORDS: dict[int, Promise] = {
    1: _("Restore the entry's previous version on the knowledge page (it becomes a new version)."),
    2: _("One click on “Roll back” restores the previous wording as a new, recorded change."),
    3: _(
        "“Roll back” proposes the previous contract's content as a new version; it is published after you confirm "
        "it with an e-mailed code."
    ),
}
ASSURANCE_WORDS: dict[str, Promise] = {
    "click": _("a click while signed in"),
    "email_otp": _("a code sent by e-mail"),
    "email_otp+totp": _("a code sent by e-mail and one from the authenticator app"),
    "owner_session": _("proposing it yourself while signed in"),
}


def _word(table: dict[str, Promise] | dict[int, Promise], key: Any) -> str:
    found = table.get(key)
    return str(found) if found is not None else str(key)


@dataclass(frozen=True)
class Row:
    """One line of a before/after comparison: `state` is "same", "added", "removed" or "changed"."""

    name: str
    before: str
    after: str
    state: str


@dataclass(frozen=True)
class Evidence:
    label: str
    lines: list[str]
    href: str = ""


@dataclass
class ReplayPointers:
    label: str
    items: list[dict[str, Any]]  # {"message": id, "session": uuid}: ids only


@dataclass
class ReplayView:
    """The replay preview of the proposal's current version (approvals/replay.py): counts and
    pointers, never a customer's words.  `state` is running (also before the worker started),
    done, failed or skipped."""

    state: str
    heading: str
    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    fine: str = ""
    notes: list[str] = field(default_factory=list)
    pointers: list[ReplayPointers] = field(default_factory=list)


@dataclass
class CardView:
    proposal: ChangeProposal
    kind: str
    title: str
    level_words: str
    origin: str
    status: str
    diff_kind: str  # "text", "rows", "none"
    heading_before: str = ""
    heading_after: str = ""
    context: list[tuple[str, str]] = field(default_factory=list)  # (name, value) above the diff
    text_segments: list[Segment] = field(default_factory=list)
    text_before: str = ""
    text_after: str = ""
    rows: list[Row] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    rollback: str = ""
    decided: str = ""
    contract_version: int | None = None
    failure_reasons: list[str] = field(default_factory=list)
    rollback_of: str = ""
    can_decide: bool = False
    can_roll_back: bool = False
    needs_totp: bool = False  # L3 in a tenant that requires the authenticator code too
    outbox_url: str = ""  # L3 in the demo: where the e-mailed code can be read (approvals/outbox.py)
    signatures: str = ""  # L3 under the two-owner rule: the approvals recorded so far
    replay: ReplayView | None = None  # the replay preview, for the kinds that are replayed
    data: dict[str, Any] = field(default_factory=dict)  # what the script needs, as data-* attributes
    # A pending knowledge draft or lesson: its title and text in the card's editor (the text empty
    # while it is the review's placeholder), and the payload the script sends back with the edit.
    draft: dict[str, Any] | None = None


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return str(value.get("text", ""))
    return str(value)


def _list_rows(before: list[str], after: list[str]) -> list[Row]:
    """Kept items in their new order, then what was removed."""
    rows = [
        Row(str(n), item, item, "same") if item in before else Row(str(n), "", item, "added")
        for n, item in enumerate(after, 1)
    ]
    rows += [Row("", item, "", "removed") for item in before if item not in after]
    return rows


def _price_rows(before: dict[str, Any] | None, after: dict[str, Any]) -> list[Row]:
    """Each item by its names in every language ("Birthday cake / 生日蛋糕"), its amount before and after."""
    was_currency = (before or {}).get("currency", "")
    old = {item_label(i): f"{i['amount']} {was_currency}".strip() for i in (before or {}).get("items", [])}
    currency = after.get("currency", "")
    rows = []
    for item in after.get("items", []):
        name, amount = item_label(item), f"{item['amount']} {currency}".strip()
        was = old.pop(name, "")
        rows.append(Row(name, was, amount, "added" if not was else ("same" if was == amount else "changed")))
    rows += [Row(name, was, "", "removed") for name, was in old.items()]
    return rows


def _flow_lists(value: Any) -> tuple[list[str], list[str]]:
    """States and moves of a request state machine (`{"initial", "states": {name: {"next_actor",
    "to": […]}}}`), as lines: a state with nowhere to go is a final one."""
    if not isinstance(value, dict) or not isinstance(value.get("states"), dict):
        return [], []
    states = value["states"]
    first, final = gettext("first state"), gettext("final state")
    marked = [
        str(name)
        + (f" ({first})" if name == value.get("initial") else "")
        + (f" ({final})" if not (spec or {}).get("to") else "")
        for name, spec in states.items()
    ]
    moves = [f"{name} → {to}" for name, spec in states.items() for to in (spec or {}).get("to", [])]
    return marked, moves


def _items(value: Any, key: str) -> list[Any]:
    """A list the diff holds as the list itself (the value at a contract target) or inside a
    payload under `key`."""
    if isinstance(value, dict):
        value = value.get(key)
    return list(value) if isinstance(value, list) else []


def _option(option: Any) -> str:
    if not isinstance(option, dict):
        return str(option)
    note = str(option.get("note") or "")
    return f"{option.get('channel')}: {note}" if note else str(option.get("channel"))


def effective_kind(proposal: ChangeProposal) -> str:
    """The kind of change a card shows: a roll-back shows the kind of change it undoes."""
    field_name = (proposal.target or {}).get("field")
    if proposal.kind == Kind.ROLLBACK and field_name in targets.KIND_OF:
        return targets.KIND_OF[field_name]
    return str(proposal.kind)


def _diff(view: CardView, proposal: ChangeProposal) -> None:
    """Before and after, from the proposal's diff: for a contract change the values at its
    target (a text, a list, the price list, the state machine), for knowledge the payloads."""
    before = (proposal.diff or {}).get("before")
    after = (proposal.diff or {}).get("after")
    kind = effective_kind(proposal)
    path = list((proposal.target or {}).get("path") or [])
    payload = proposal.payload or {}
    language = path[0] if path else str(payload.get("language", ""))
    pending = proposal.status == ProposalStatus.PENDING
    view.heading_before = gettext("Now") if pending else gettext("Before the change")
    view.heading_after = gettext("After the change")
    if kind in (Kind.WORDING, Kind.BOUNDARY_WORDING):
        view.context.append((gettext("Language"), _word(LANGUAGE_WORDS, language)))
        if kind == Kind.WORDING:
            situation = path[1] if len(path) > 1 else payload.get("situation")
            view.context.append((gettext("Situation"), _word(SITUATION_WORDS, situation)))
    if kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
        view.context.append((gettext("Title"), str((after or payload).get("title", ""))))
    if kind in (Kind.WORDING, Kind.BOUNDARY_WORDING, Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
        view.diff_kind = "text"
        view.text_before, view.text_after = _text_of(before), _text_of(after if after is not None else payload)
        if view.text_after.strip() == REVIEW_DRAFT_PLACEHOLDER:
            # The review's placeholder is stored in English (the record); the owner reads it in theirs.
            view.text_after = str(DRAFT_PLACEHOLDER_SHOWN)
        if kind == Kind.BOUNDARY_WORDING and not view.text_before:
            # No wording of the owner's in this language: customers are told what the live
            # contract falls back to (while pending), which before any change was the default.
            fallback = DEFAULT_WORDING[language or "en"]["boundary"]
            if pending:
                fallback = live_terms(proposal.agent).boundary(language or "en")
                view.heading_before = gettext("Now (the default wording)")
            view.text_before = str(fallback)
        if after is None and proposal.kind == Kind.ROLLBACK:
            # Rolled back to no sentence of the owner's: the platform's own one is said again.
            if kind == Kind.BOUNDARY_WORDING:
                view.text_after = str(DEFAULT_WORDING[language or "en"]["boundary"])
                view.heading_after = gettext("After the change (the default wording)")
            else:
                view.heading_after = gettext("After the change (the platform's own sentence)")
        if view.text_before and view.text_after:
            view.text_segments = text_diff(view.text_before, view.text_after)
        return
    if kind == Kind.COMPOSITION_MODE:
        view.diff_kind = "text"
        view.text_before = _word(MODE_WORDS, str(before or "guarded"))
        view.text_after = _word(MODE_WORDS, str(after or "guarded"))
        return
    view.diff_kind = "rows"
    if kind == Kind.PRICING:
        old = before if isinstance(before, dict) else None
        new = after if isinstance(after, dict) else {}
        view.context.append((gettext("Currency"), str(new.get("currency", ""))))
        view.rows = _price_rows(old, new)
    elif kind == Kind.CLARIFICATION_ORDER:
        view.rows = _list_rows([str(f) for f in _items(before, "fields")], [str(f) for f in _items(after, "fields")])
    elif kind == Kind.SKILL_IDS:
        view.rows = _list_rows(
            [str(f) for f in _items(before, "skill_ids")], [str(f) for f in _items(after, "skill_ids")]
        )
    elif kind == Kind.DELIVERY:
        view.rows = _list_rows(
            [_option(o) for o in _items(before, "options")], [_option(o) for o in _items(after, "options")]
        )
    elif kind == Kind.STATE_CONTRACT:
        old_states, old_moves = _flow_lists(before)
        new_states, new_moves = _flow_lists(after)
        view.rows = [Row(gettext("State"), r.before, r.after, r.state) for r in _list_rows(old_states, new_states)]
        view.rows += [Row(gettext("Move"), r.before, r.after, r.state) for r in _list_rows(old_moves, new_moves)]
    else:
        view.diff_kind = "none"


def _session_evidence(agent_id: int, session_id: str) -> Evidence:
    """A conversation in numbers: when, who, how many messages, the requests it registered, its
    rating and the knowledge it cited.  Never a word of what the customer wrote."""
    session_model = apps.get_model("dialogue", "DialogueSession")
    session = session_model.objects.filter(pk=session_id, agent_id=agent_id).first()
    if session is None:
        return Evidence(gettext("A conversation that no longer exists"), [])
    day = date_format(timezone.localtime(session.created_at), "Y-m-d H:i")
    who = {"customer": gettext("a customer"), "peer": gettext("a partner's agent"), "owner": gettext("you")}
    if session.preview:
        whom = gettext("you (preview)")
    elif session.simulated:
        whom = gettext("a simulated customer (rsi_simulate)")
    else:
        whom = who.get(session.audience, session.audience)
    label = gettext("Conversation with %(who)s on %(date)s") % {"who": whom, "date": day}
    asked = session.messages.filter(role="principal").count()
    lines = [gettext("Messages from them: %(n)s; replies: %(m)s") % {"n": asked, "m": session.messages.count() - asked}]
    for request in session.requests.order_by("pk"):
        lines.append(
            gettext("Request #%(id)s (%(kind)s): %(state)s")
            % {"id": request.pk, "kind": request.kind, "state": str(request.state).replace("_", " ")}
        )
    rating = getattr(session, "rating", None) if hasattr(session, "rating") else None
    if rating is not None:
        lines.append(gettext("Rated %(stars)s of 5") % {"stars": rating.stars})
    hit_model = apps.get_model("knowledge", "KnowledgeHit")
    cited = (
        hit_model.objects.filter(agent_id=agent_id, session_id=session.pk)
        .values_list("version__title", flat=True)
        .distinct()[:10]
    )
    if cited:
        lines.append(gettext("Knowledge it cited: %(titles)s") % {"titles": ", ".join(cited)})
    missed = apps.get_model("knowledge", "KnowledgeMiss").objects.filter(session_id=session.pk).count()
    if missed:
        lines.append(gettext("Questions nothing answered: %(n)s") % {"n": missed})
    if session.status != "open":
        lines.append(gettext("Ended (%(status)s)") % {"status": session.status})
    return Evidence(label, lines)


def _knowledge_evidence(agent: Any, version_id: int) -> Evidence:
    version = apps.get_model("knowledge", "EntryVersion").objects.filter(pk=version_id, agent=agent).first()
    if version is None:
        return Evidence(gettext("A knowledge version that no longer exists"), [])
    label = gettext("Knowledge “%(title)s”, version %(n)s (%(status)s)") % {
        "title": version.title,
        "n": version.number,
        "status": version.status,
    }
    if version.source_type == "customer":
        # A customer candidate's text is what a customer wrote.
        return Evidence(label, [gettext("Drawn from customer conversations; its text is not shown here.")])
    return Evidence(label, [version.body[:600]], href=f"{_knowledge_url(agent)}?entry={version.entry_id}")


def _knowledge_url(agent: Any) -> str:
    from django.urls import reverse

    return reverse("owner-knowledge", args=[agent.slug])


def _uncertain(view: CardView, proposal: ChangeProposal) -> list[str]:
    notes = []
    if proposal.origin != "owner_direct":
        notes.append(gettext("Your agent proposed this: read the new wording or values yourself before approving."))
    if not proposal.evidence:
        notes.append(gettext("No evidence is attached to it."))
    if (view.text_before if view.diff_kind == "text" else (proposal.diff or {}).get("before")) in (None, "", [], {}):
        notes.append(gettext("There is nothing in place yet to compare it with."))
    if proposal.level == 3:
        notes.append(_open_conversations(proposal))
    return notes


def _open_conversations(proposal: ChangeProposal) -> str:
    """What publishing an L3 change does to the conversations customers are in (issue 26 §2,
    `contract_rules.removals`): nothing ends for prices, delivery or an added skill; a change that
    takes away a skill or a part of the request flow moves them to a new session that keeps what
    was said and the requests."""
    name = str((proposal.target or {}).get("field") or "")
    diff = proposal.diff or {}
    if removals({name: diff.get("before")}, {name: diff.get("after")}):
        return gettext(
            "Customers in a conversation that relies on what it takes away continue in a new conversation from "
            "their next message, on the new version; their messages and requests go with them."
        )
    return gettext("Customers in a conversation hear it from their next message; no conversation ends.")


def card_view(proposal: ChangeProposal) -> CardView:
    status = str(proposal.status)
    kind = _word(KIND_WORDS, effective_kind(proposal))
    if proposal.kind == Kind.ROLLBACK:
        kind = gettext("Roll-back: %(kind)s") % {"kind": kind}
    view = CardView(
        proposal=proposal,
        kind=kind,
        title=summary_shown(proposal.summary),
        level_words=_word(LEVEL_WORDS, proposal.level),
        origin=_word(ORIGIN_WORDS, proposal.origin),
        status=_word(STATUS_WORDS, status),
        diff_kind="none",
    )
    _diff(view, proposal)
    for pointer in proposal.evidence or []:
        if pointer.get("type") == "session":
            view.evidence.append(_session_evidence(proposal.agent_id, str(pointer.get("id"))))
        elif pointer.get("type") == "knowledge_version":
            view.evidence.append(_knowledge_evidence(proposal.agent, int(pointer.get("id") or 0)))
    view.uncertain = _uncertain(view, proposal)
    view.uncertain += _topic_notes(proposal)
    view.rollback = _word(ROLLBACK_WORDS, proposal.level)
    if proposal.decided_at:
        view.decided = gettext("Decided on %(date)s with %(how)s") % {
            "date": date_format(timezone.localtime(proposal.decided_at), "Y-m-d H:i"),
            "how": _word(ASSURANCE_WORDS, proposal.assurance),
        }
    view.contract_version = proposal.contract_version
    view.failure_reasons = [str(r) for r in proposal.failure_reasons or []]
    view.rollback_of = proposal.rollback_of_id or ""
    view.can_decide = status == ProposalStatus.PENDING
    # Only a change of the contract is rolled back with one click (knowledge: on its page).
    view.can_roll_back = status == ProposalStatus.APPLIED and bool(proposal.target)
    if view.can_decide and proposal.level == 3:
        from .step_up import TWO_OWNERS, approvals_of

        tenant = proposal.agent.tenant
        view.needs_totp = bool(tenant.l3_requires_totp)
        if outbox_enabled():
            view.outbox_url = reverse("owner-outbox", args=[proposal.agent.slug])
        if tenant.l3_requires_two_owners:
            view.signatures = gettext("Approvals so far: %(n)s of %(needed)s owners.") % {
                "n": approvals_of(proposal),
                "needed": TWO_OWNERS,
            }
    if status == ProposalStatus.PENDING and replay_rules.replayed(proposal.kind):
        view.replay = replay_view(proposal)
    view.data = {"id": proposal.pk, "version": proposal.version, "level": proposal.level, "status": status}
    if view.can_decide and proposal.kind in (Kind.KNOWLEDGE_DRAFT, Kind.LESSON):
        text = str(proposal.payload.get("text", ""))
        unwritten = text.strip() == REVIEW_DRAFT_PLACEHOLDER
        view.draft = {
            "title": str(proposal.payload.get("title", "")),
            "text": "" if unwritten else text,
            "unwritten": unwritten,
            "payload": json.dumps(proposal.payload, ensure_ascii=False),
        }
        if proposal.kind == Kind.KNOWLEDGE_DRAFT:
            view.draft["translation"] = _draft_translation(proposal.payload)
    return view


def _topic_notes(proposal: ChangeProposal) -> list[str]:
    """A pending new-entry draft for a topic that has been answered since (on the Unanswered
    questions page, or by another approved draft): approving it would answer it twice."""
    topic = (proposal.payload or {}).get("topic")
    if proposal.status != ProposalStatus.PENDING or not topic or (proposal.payload or {}).get("entry_id"):
        return []
    if topic in {t.ref for t in unanswered_topics(proposal.agent).topics}:
        return []
    return [
        gettext(
            "Its question has been answered since, and has left the Unanswered questions: approving this "
            "would add a second answer. Reject it unless you mean to."
        )
    ]


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _draft_translation(payload: dict[str, Any]) -> dict[str, str]:
    """The draft's answer in the other language, for its editor (issue 26 §4: one entry answers
    both languages): the one it holds, else an empty one in the language its text is not in."""
    held = payload.get("translations") or {}
    if held:
        language, value = next(iter(sorted(held.items())))
        return {"language": language, "title": str(value.get("title", "")), "text": str(value.get("text", ""))}
    written = f"{payload.get('title', '')} {payload.get('text', '')}"
    chinese = _CJK.search(written) is not None and str(payload.get("text", "")).strip() != REVIEW_DRAFT_PLACEHOLDER
    return {"language": "en" if chinese else "zh-hans", "title": "", "text": ""}


POINTER_WORDS: dict[str, Promise] = {
    "affected_cited_after": _("Questions it would answer with a citation"),
    "elsewhere_worse": _("Answers elsewhere that would get worse"),
    "elsewhere_changed": _("Answers elsewhere that would change"),
    "blocked_after": _("Replies the guard would block"),
}


def replay_view(proposal: ChangeProposal) -> ReplayView:
    replay = ProposalReplay.objects.filter(proposal=proposal, proposal_version=proposal.version).first()
    if replay is None or replay.status == ReplayStatus.RUNNING:
        return ReplayView(
            state="running",
            heading=gettext("Replay on past conversations"),
            notes=[gettext("Replaying this change on the past conversations it concerns…")],
        )
    heading = gettext("Replay on the past %(days)s days") % {"days": replay.days}
    if replay.status == ReplayStatus.SKIPPED:
        return ReplayView(
            state="skipped",
            heading=heading,
            notes=[gettext("The replay runs once you have written the answer into this draft.")],
        )
    if replay.status == ReplayStatus.FAILED:
        return ReplayView(
            state="failed",
            heading=heading,
            notes=[gettext("The replay could not be completed. You can decide without it.")],
        )
    return _replay_done(replay, heading)


def _replay_done(replay: ProposalReplay, heading: str) -> ReplayView:
    """Counts in words: for a knowledge draft the questions it would answer; for wording and the
    order of questions the customer turns whose replies it changes."""
    c = {k: int(v) for k, v in (replay.counts or {}).items()}
    view = ReplayView(state="done", heading=heading)
    if replay.proposal.kind == Kind.KNOWLEDGE_DRAFT:
        concerned = gettext(
            "Questions it concerns: %(n)s. Answered with a citation: %(before)s before, %(after)s after."
        ) % {
            "n": c.get("affected", 0),
            "before": c.get("affected_cited_before", 0),
            "after": c.get("affected_cited_after", 0),
        }
    else:
        concerned = gettext("Customer turns it concerns: %(n)s. Their replies would change: %(changed)s.") % {
            "n": c.get("affected", 0),
            "changed": c.get("affected_changed", 0),
        }
    view.lines = [
        concerned,
        gettext("Answers elsewhere that would change: %(n)s of %(of)s replayed.")
        % {"n": c.get("elsewhere_changed", 0), "of": c.get("elsewhere", 0)},
        gettext("Replies the guard would block: %(before)s before, %(after)s after.")
        % {"before": c.get("blocked_before", 0), "after": c.get("blocked_after", 0)},
    ]
    lost, blocked = c.get("elsewhere_lost_citation", 0), c.get("elsewhere_now_blocked", 0)
    # Two messages, not ngettext: the catalogue holds no plural forms (Chinese has one).
    if lost:
        view.warnings.append(
            gettext("1 answer elsewhere would lose its citation.")
            if lost == 1
            else gettext("%(n)s answers elsewhere would lose their citation.") % {"n": lost}
        )
    if blocked:
        view.warnings.append(
            gettext("1 answer elsewhere would now be blocked by the guard.")
            if blocked == 1
            else gettext("%(n)s answers elsewhere would now be blocked by the guard.") % {"n": blocked}
        )
    if not view.warnings:
        view.fine = gettext("No answer elsewhere gets worse.")
    notes = [
        gettext("Replayed %(n)s customer turns with %(model)s on %(date)s.")
        % {
            "n": c.get("replayed", 0),
            "model": gettext("the built-in offline model") if replay.model == "offline" else replay.model,
            "date": date_format(timezone.localtime(replay.computed_at or replay.started_at), "Y-m-d H:i"),
        }
    ]
    if c.get("failed"):
        notes.append(gettext("The model failed on %(n)s of them; they are not counted.") % {"n": c["failed"]})
    if replay.timed_out:
        notes.append(gettext("It stopped at its time limit: the counts cover the turns replayed."))
    notes.append(gettext("Counts only: what customers wrote is not shown. The decision stays yours."))
    view.notes = notes
    pointers = replay.pointers or {}
    for key, label in POINTER_WORDS.items():
        items = [p for p in pointers.get(key, []) if isinstance(p, dict)]
        if items:
            view.pointers.append(ReplayPointers(str(label), items))
    return view
