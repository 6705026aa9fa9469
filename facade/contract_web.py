"""The owner's contract page (`/owner/<slug>/contract`, "What your agent says and offers"):
the live contract read as a person reads it, and one small form per kind of change.

Every form posts to `…/contract/change` (CSRF-checked, owners of the agent only, others 404) and
proposes its change through `approvals.services.proposal_create` — the page never writes the
contract: the owner's own L2 change (wording, clarification order) is applied by proposing it,
boundary wording and L3 changes wait in the inbox.  A refused proposal re-shows the page with the
form's input kept and the refusal's detail; nothing is half-applied because nothing is written
outside the one service call.

It lives at the wiring level because it reads both approvals (the contract, the catalogue) and
the dialogue runtime (the platform's own sentences shown where the owner has none)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from approvals.cards import CardView, card_view
from approvals.contract import live_content, live_terms
from approvals.contract_rules import item_names
from approvals.models import ChangeProposal, ProposalStatus
from approvals.rules import Origin
from approvals.schemas import Kind
from approvals.selectors import pending_count, proposal_get
from approvals.services import ProposalError, proposal_create
from approvals.skills import DELIVERY_CHANNELS, SKILLS
from approvals.web import approvals_texts
from facade.dialogue.runtime.providers.offline import TEXT
from facade.tenancy.models import DEFAULT_WORDING, AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

LANGUAGES = {"en": _("English"), "zh-hans": _("Simplified Chinese")}
MOMENTS = {
    "greeting": _("When a customer greets the agent"),
    "unknown": _("When nothing the agent knows answers"),
    "handoff": _("When the agent hands over to a person"),
    "request_registered": _("When a request is registered"),
}
# The offline runtime's key for each moment (facade/dialogue/runtime/providers/offline.py).
PLATFORM_KEY = {"greeting": "greeting", "unknown": "unknown", "handoff": "handoff", "request_registered": "registered"}
CHANNELS = {
    "pickup": _("Pick-up"),
    "post": _("Post"),
    "courier": _("Courier"),
    "email": _("E-mail"),
    "onsite": _("On site"),
}
ACTORS = {"owner": _("you"), "customer": _("the customer"), "nobody": _("nobody")}
SKILL_LABELS = {
    "knowledge_answers": _("Answer from the agent's approved knowledge, citing the entries used."),
    "request_intake": _("Clarify what the customer needs and register a request for the owner."),
    "handoff": _("Hand the conversation to a person at the business."),
    "request_status": _("Tell a customer where their request stands and who acts next."),
}
SUMMARIES = {
    Kind.WORDING: _("Change what the agent says"),
    Kind.BOUNDARY_WORDING: _("Change the boundary wording"),
    Kind.CLARIFICATION_ORDER: _("Change what the agent asks for before a request"),
    Kind.SKILL_IDS: _("Change the agent's skills"),
    Kind.DELIVERY: _("Change the delivery options"),
    Kind.PRICING: _("Change the prices"),
    Kind.STATE_CONTRACT: _("Change the request flow"),
    Kind.COMPOSITION_MODE: _("Change how replies are composed"),
}
# The two composition modes (facade/dialogue/runtime/strict.py): a name and the trade-off.
MODES = {
    "guarded": (
        _("Guarded (the default)"),
        _(
            "The agent writes its own replies from your knowledge. Before a reply is sent, the commitment guard and "
            "the grounding check stop any price, date or outcome it was not given, and your boundary wording is "
            "sent instead. Replies read naturally; a promise the checks miss could still get through."
        ),
    ),
    "strict": (
        _("Strict"),
        _(
            "The agent may only repeat sentences of your approved knowledge that it found for this question, your "
            "published sentences (greeting, questions, boundary wording, hand-over) and the status of a request, "
            "filled in only with what the customer wrote. Anything else is refused with your boundary wording. A "
            "promise can then only come from something you approved; replies are stiffer, and the agent cannot "
            "say what you have not published."
        ),
    ),
}
FORM_KINDS = tuple(SUMMARIES)
EMPTY_PRICE_ROWS = 5


class FormInvalid(Exception):
    """The form's input cannot even be made into a payload (e.g. the flow is not JSON)."""


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def platform_sentence(agent: AgentProfile, language: str, moment: str) -> str:
    """What the agent says at `moment` when its owner worded nothing (placeholders shown as such)."""
    sentence = TEXT[language][PLATFORM_KEY[moment]]
    return sentence.replace("{name}", agent.name).replace("{id}", "…").replace("{next}", "…")


def _in_flow_order(flow: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The states as a request meets them: the initial one first, then breadth-first along the
    moves, then any other (the stored JSON's key order says nothing)."""
    states: dict[str, Any] = dict(flow.get("states") or {})
    order: list[str] = []
    queue = [str(flow.get("initial"))] if flow.get("initial") in states else []
    while queue:
        name = queue.pop(0)
        if name in order:
            continue
        order.append(name)
        queue.extend(str(t) for t in (states[name].get("to") or []) if t in states)
    order += sorted(set(states) - set(order))
    return [(name, dict(states[name])) for name in order]


@dataclass
class Form:
    """One change form: its values (the live ones, or what the owner posted) and its error."""

    kind: str
    values: dict[str, Any]
    summary: str
    error: str = ""
    rows: list[dict[str, str]] = field(default_factory=list)


def _live_forms(agent: AgentProfile) -> dict[str, Form]:
    terms = live_terms(agent)
    content_delivery = _live_delivery(agent)
    pricing = _live_pricing(agent)
    notes = {str(o.get("channel")): str(o.get("note", "")) for o in content_delivery}
    return {
        Kind.WORDING: Form(Kind.WORDING, {"language": "en", "situation": "greeting", "text": ""}, ""),
        Kind.BOUNDARY_WORDING: Form(
            Kind.BOUNDARY_WORDING, {"language": "en", "text": terms.boundary_wording.get("en", "")}, ""
        ),
        Kind.CLARIFICATION_ORDER: Form(Kind.CLARIFICATION_ORDER, {"fields": ", ".join(terms.clarification_order)}, ""),
        Kind.SKILL_IDS: Form(Kind.SKILL_IDS, {"skill_ids": list(terms.skill_ids)}, ""),
        Kind.DELIVERY: Form(Kind.DELIVERY, {"channels": list(notes), "notes": notes}, ""),
        Kind.PRICING: Form(
            Kind.PRICING,
            {"currency": str(pricing.get("currency") or "EUR")},
            "",
            rows=[_price_row(item) for item in pricing["items"]],
        ),
        Kind.STATE_CONTRACT: Form(
            Kind.STATE_CONTRACT, {"flow": json.dumps(terms.request_flow, indent=2, ensure_ascii=False)}, ""
        ),
        Kind.COMPOSITION_MODE: Form(
            Kind.COMPOSITION_MODE, {"mode": "guarded" if terms.composition_mode == "strict" else "strict"}, ""
        ),
    }


def _price_row(item: Any) -> dict[str, str]:
    """A listed item as a form row: its English and its Chinese name (an item of an older
    contract, with one name, in the column of the language its name is written in), its amount."""
    names = item_names(item)
    return {"name": names.get("en", ""), "name_zh": names.get("zh-hans", ""), "amount": str(item.get("amount", ""))}


def _price_item(row: dict[str, str]) -> dict[str, Any]:
    """A form row as a price-list item: named in both languages when both names are given (a
    customer asking in either is answered in theirs), else by the one name given."""
    english, chinese = row["name"].strip(), row["name_zh"].strip()
    item: dict[str, Any] = {"name": english or chinese, "amount": row["amount"]}
    if english and chinese:
        item["names"] = {"en": english, "zh-hans": chinese}
    return item


def _live_delivery(agent: AgentProfile) -> list[dict[str, Any]]:
    return list(live_content(agent).get("delivery") or [])


def _live_pricing(agent: AgentProfile) -> dict[str, Any]:
    pricing = dict(live_content(agent).get("pricing") or {})
    pricing.setdefault("items", [])
    return pricing


def _posted_form(kind: str, post: Any) -> Form:
    """The form as the owner filled it in (kept when the page is shown again)."""
    summary = post.get("summary", "")[:300]
    if kind == Kind.SKILL_IDS:
        return Form(kind, {"skill_ids": post.getlist("skill_ids")}, summary)
    if kind == Kind.DELIVERY:
        notes = {c: post.get(f"note_{c}", "")[:500] for c in CHANNELS}
        return Form(kind, {"channels": post.getlist("channels"), "notes": notes}, summary)
    if kind == Kind.PRICING:
        names, amounts = post.getlist("name"), post.getlist("amount")
        chinese = post.getlist("name_zh") or [""] * len(names)
        rows = [
            {"name": n[:200], "name_zh": z[:200], "amount": a[:30]}
            for n, z, a in zip(names, chinese, amounts, strict=False)
            if n or z or a
        ]
        return Form(kind, {"currency": post.get("currency", "").strip().upper()[:3]}, summary, rows=rows)
    keys = {
        Kind.WORDING: ("language", "situation", "text"),
        Kind.BOUNDARY_WORDING: ("language", "text"),
        Kind.CLARIFICATION_ORDER: ("fields",),
        Kind.STATE_CONTRACT: ("flow",),
        Kind.COMPOSITION_MODE: ("mode",),
    }[Kind(kind)]
    return Form(kind, {k: post.get(k, "")[:20_000] for k in keys}, summary)


def payload_of(form: Form) -> dict[str, Any]:
    """The `proposal_create` payload of a filled-in form (README's API row names each shape)."""
    v = form.values
    if form.kind == Kind.WORDING:
        return {"language": v["language"], "situation": v["situation"], "text": v["text"]}
    if form.kind == Kind.BOUNDARY_WORDING:
        return {"language": v["language"], "text": v["text"]}
    if form.kind == Kind.CLARIFICATION_ORDER:
        return {"fields": [f.strip() for f in v["fields"].replace("，", ",").split(",") if f.strip()]}
    if form.kind == Kind.SKILL_IDS:
        return {"skill_ids": list(v["skill_ids"])}
    if form.kind == Kind.DELIVERY:
        return {"options": [{"channel": c, "note": v["notes"].get(c, "")} for c in CHANNELS if c in v["channels"]]}
    if form.kind == Kind.PRICING:
        return {"currency": v["currency"], "items": [_price_item(row) for row in form.rows]}
    if form.kind == Kind.COMPOSITION_MODE:
        return {"mode": v["mode"]}
    try:
        return dict(json.loads(v["flow"]))
    except (ValueError, TypeError) as exc:
        raise FormInvalid(gettext("The request flow is not valid JSON: %(problem)s") % {"problem": exc}) from exc


def outcome_message(request: HttpRequest, agent: AgentProfile, proposal: ChangeProposal) -> None:
    """What became of the change, said in the section of the form that proposed it (its tag
    `contract-<kind>`): the page comes back scrolled to that sentence, not to the top."""
    tag = f"contract-{proposal.kind}"
    if proposal.status == ProposalStatus.APPLIED:
        messages.success(request, gettext("Applied: customers hear it from their next message."), extra_tags=tag)
    elif proposal.status == ProposalStatus.FAILED:
        reasons = "; ".join(str(r) for r in proposal.failure_reasons or [])
        messages.error(request, gettext("Failed: %(reasons)s") % {"reasons": reasons}, extra_tags=tag)
    else:
        card = reverse("owner-inbox", args=[agent.slug]) + f"#{proposal.pk}"
        waiting = (
            gettext(
                "Proposed. It waits for your decision: approve it on its card below, with the code we e-mail you, "
                "or later in the inbox."
            )
            if proposal.level == 3
            else gettext("Proposed. It waits for your decision: decide it on its card below or in the inbox.")
        )
        messages.info(
            request,
            format_html('{} <a href="{}">{}</a>', waiting, card, gettext("Open this change in your inbox")),
            extra_tags=tag,
        )


def _outcomes(request: HttpRequest) -> tuple[dict[str, list[Any]], list[Any]]:
    """The page's messages: those of a change form by its kind (shown in its section), the rest."""
    by_kind: dict[str, list[Any]] = {}
    others: list[Any] = []
    for message in messages.get_messages(request):
        tags = str(message.extra_tags or "").split()
        kind = next((t.removeprefix("contract-") for t in tags if t.startswith("contract-")), "")
        if kind in FORM_KINDS:
            by_kind.setdefault(kind, []).append(message)
        else:
            others.append(message)
    return by_kind, others


def _proposed_card(agent: AgentProfile, change_id: str) -> CardView | None:
    """The card of the change just proposed from this page (`?change=<id>`), when it waits for a
    decision: the owner decides it where they are, with the same card and script as the inbox."""
    if not change_id:
        return None
    try:
        proposal = proposal_get(agent=agent, proposal_id=change_id[:64])
    except NotFound:
        return None
    if proposal.status != ProposalStatus.PENDING or proposal.kind not in FORM_KINDS:
        return None
    return card_view(proposal)


def _page(request: HttpRequest, agent: AgentProfile, forms: dict[str, Form], status: int = 200) -> HttpResponse:
    terms = live_terms(agent)
    outcomes, messages_left = _outcomes(request)
    proposed = _proposed_card(agent, request.GET.get("change", ""))
    for kind, form in forms.items():
        form.summary = form.summary or str(SUMMARIES[Kind(kind)])
    pricing_form = forms[Kind.PRICING]
    price_rows = pricing_form.rows + [{"name": "", "name_zh": "", "amount": ""}] * EMPTY_PRICE_ROWS
    sentences = [
        {
            "moment": moment,
            "label": label,
            "languages": [
                {
                    "code": code,
                    "name": name,
                    "own": terms.said(code, moment) or "",
                    "platform": platform_sentence(agent, code, moment),
                }
                for code, name in LANGUAGES.items()
            ],
        }
        for moment, label in MOMENTS.items()
    ]
    boundary = [
        {
            "code": code,
            "name": name,
            "own": str(terms.boundary_wording.get(code) or ""),
            "platform": DEFAULT_WORDING[code]["boundary"],
        }
        for code, name in LANGUAGES.items()
    ]
    flow = terms.request_flow
    states = [
        {
            "name": name,
            "initial": name == flow.get("initial"),
            "actor": ACTORS.get(str(state.get("next_actor")), state.get("next_actor")),
            "to": list(state.get("to") or []),
        }
        for name, state in _in_flow_order(flow)
    ]
    delivery = _live_delivery(agent)
    context = {
        "agent": agent,
        "version": terms.version,
        "sentences": sentences,
        "boundary": boundary,
        "clarification": terms.clarification_order,
        "skills": [{"id": s, "label": SKILL_LABELS.get(s, SKILLS[s]), "on": s in terms.skill_ids} for s in SKILLS],
        "delivery": [{"label": CHANNELS.get(str(o.get("channel")), o.get("channel")), **o} for o in delivery],
        "pricing": _live_pricing(agent),
        # Each listed item by its name in every language it has one in ("Birthday cake / 生日蛋糕").
        "price_items": [
            {"names": list(item_names(i).values()) or [str(i.get("name", ""))], "amount": i.get("amount", "")}
            for i in _live_pricing(agent)["items"]
        ],
        "states": states,
        "waiting": pending_count(agent=agent),
        "inbox_url": reverse("owner-inbox", args=[agent.slug]),
        "forms": forms,
        "price_rows": price_rows,
        "languages": LANGUAGES,
        "moments": MOMENTS,
        "skill_rows": [
            {"id": s, "label": SKILL_LABELS.get(s, SKILLS[s]), "on": s in forms[Kind.SKILL_IDS].values["skill_ids"]}
            for s in SKILLS
        ],
        "channel_rows": [
            {
                "id": c,
                "label": CHANNELS[c],
                "on": c in forms[Kind.DELIVERY].values["channels"],
                "note": forms[Kind.DELIVERY].values["notes"].get(c, ""),
            }
            for c in CHANNELS
            if c in DELIVERY_CHANNELS
        ],
        "change_url": reverse("owner-contract-change", args=[agent.slug]),
        "mode": terms.composition_mode,
        "modes": [{"code": code, "name": name, "explained": explained} for code, (name, explained) in MODES.items()],
        # Each form's section: what became of its change, and that change's card while it waits.
        "outcome": {
            kind: {
                "kind": kind,
                "messages": outcomes.get(kind, []),
                "card": proposed if proposed and proposed.proposal.kind == kind else None,
            }
            for kind in FORM_KINDS
        },
        "page_messages": messages_left,
        "texts": approvals_texts(),
    }
    response = render(request, "contract/owner_contract.html", context, status=status)
    response["Cache-Control"] = "no-store"
    return response


@require_safe
@login_required
def owner_contract(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    return _page(request, agent, _live_forms(agent))


@require_POST
@login_required
def owner_contract_change(request: HttpRequest, slug: str) -> HttpResponse:
    """One form's change, proposed through `proposal_create`; PRG back to the page."""
    agent = _owned(request, slug)
    kind = request.POST.get("kind", "")
    if kind not in FORM_KINDS:
        raise Http404("no such form")
    form = _posted_form(kind, request.POST)
    try:
        proposal = proposal_create(
            agent=agent,
            kind=kind,
            payload=payload_of(form),
            summary=form.summary,
            origin=Origin.OWNER_DIRECT,
            actor=Actor.human(request.user.pk),
            owner=request.user,
        )
    except (ProposalError, FormInvalid) as exc:
        form.error = exc.detail if isinstance(exc, ProposalError) else str(exc)
        forms = {**_live_forms(agent), kind: form}
        return _page(request, agent, forms, status=400)
    outcome_message(request, agent, proposal)
    # Back to the sentence that says what became of it, with the change's card under it when it
    # waits for a decision (not to the top of a long page, nor to a form that looks untouched).
    query = f"?change={proposal.pk}" if proposal.status == ProposalStatus.PENDING else ""
    return HttpResponseRedirect(reverse("owner-contract", args=[agent.slug]) + f"{query}#{kind}-outcome")
