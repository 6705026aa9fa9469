"""The owner's knowledge page: the entries of one agent with filters, an entry's version history
with diffs, and what waits for the owner.

Reads only, always scoped to an agent the signed-in user owns.  Uploads, their progress and
restores go through the JSON API from `static/js/knowledge.js`, so every write keeps going
through the one service that also writes the ledger.  Its URL is in `knowledge/urls.py`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import F, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound

from .extract import MAX_BYTES
from .models import EntryVersion, Kind, KnowledgeEntry, SourceType, Status
from .selectors import pending_versions

PAGE_SIZE = 50
PENDING_LIMIT = 200
# Restoring is allowed for content that was approved once (the same rule as entry_restore).
ONCE_APPROVED = (Status.APPROVED, Status.ROLLED_BACK, Status.EXPIRED)

STATUS_LABELS: dict[str, Promise] = {
    Status.PENDING: _("Pending"),
    Status.APPROVED: _("Approved"),
    Status.REJECTED: _("Rejected"),
    Status.EXPIRED: _("Expired"),
    Status.ROLLED_BACK: _("Rolled back"),
    Status.QUARANTINED: _("Quarantined"),
}
SOURCE_LABELS: dict[str, Promise] = {
    SourceType.OWNER_DIALOGUE: _("Owner dialogue"),
    SourceType.UPLOAD: _("Upload"),
    SourceType.URL: _("Web address"),
    SourceType.REVIEW: _("Nightly review"),
    SourceType.OBSERVE: _("Industry feed"),
    SourceType.CUSTOMER: _("Customer candidate"),
}
KIND_LABELS: dict[str, Promise] = {
    Kind.FACT: _("Fact"),
    Kind.FAQ: _("FAQ"),
    Kind.POLICY: _("Policy"),
    Kind.PREFERENCE: _("Preference"),
    Kind.WORDING: _("Wording"),
    Kind.TABOO: _("Taboo"),
}
CATEGORY_LABELS: dict[str, Promise] = {
    "law": _("Law"),
    "tax": _("Tax"),
    "medical": _("Medical"),
    "finance": _("Finance"),
    "safety": _("Safety"),
}
REASON_LABELS: dict[str, Promise] = {
    "regulated": _("Touches a regulated topic"),
    "contradicts_approved": _("Contradicts approved knowledge"),
    "customer_candidate": _("Drawn from customer conversations"),
    "low_confidence": _("Low confidence"),
    "from_review": _("Proposed by the nightly review"),
    "from_observe": _("Found by the industry feed"),
    "no_source": _("No source given"),
    "no_source_version": _("No source version given"),
    "l1_auto_approved": _("Approved automatically: your own material"),
    "released_from_quarantine": _("Released from quarantine"),
}
_RESTORED = re.compile(r"restored_from_v(\d+)")
_QUARANTINED = re.compile(r"quarantined_from_(\w+)")
_SHA = re.compile(r"[0-9a-f]{16,}")
_ID = re.compile(r"[0-9]{1,18}")
# Diff tokens: whitespace runs, words (letters without CJK), or any single other character, so
# Chinese text diffs character by character and English word by word.
_TOKEN = re.compile(r"\s+|[^\W\u2e80-\u9fff\uf900-\ufaff]+|.", re.S)
# An unchanged stretch longer than this is shortened to its ends in a diff.
_KEEP = 160


def reason_text(code: str) -> str:
    """A decision reason in the reader's language; unknown codes are shown as they are."""
    if code in REASON_LABELS:
        return str(REASON_LABELS[code])
    if match := _RESTORED.fullmatch(code):
        return gettext("Restored from version %(number)s") % {"number": match.group(1)}
    if match := _QUARANTINED.fullmatch(code):
        was = STATUS_LABELS.get(match.group(1), match.group(1))
        return gettext("Quarantined (was %(status)s)") % {"status": was}
    return code


@dataclass(frozen=True)
class Segment:
    op: str  # "equal", "ins", "del" or "gap" (an unchanged stretch left out)
    text: str


def text_diff(old: str, new: str) -> list[Segment]:
    """A word-level (character-level for CJK) diff of two texts, deletions before insertions."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            segments.extend(_shortened("".join(a[i1:i2]), first=i1 == 0, last=i2 == len(a)))
            continue
        if op in ("delete", "replace"):
            segments.append(Segment("del", "".join(a[i1:i2])))
        if op in ("insert", "replace"):
            segments.append(Segment("ins", "".join(b[j1:j2])))
    return segments


def _shortened(text: str, *, first: bool, last: bool) -> list[Segment]:
    if len(text) <= 2 * _KEEP + 20:
        return [Segment("equal", text)]
    head = "" if first else text[:_KEEP]
    tail = "" if last else text[-_KEEP:]
    return [s for s in (Segment("equal", head), Segment("gap", "…"), Segment("equal", tail)) if s.text]


@dataclass
class VersionRow:
    """One version as the page shows it: labels in the reader's language."""

    v: EntryVersion
    status_label: str = ""
    source_label: str = ""
    kind_label: str = ""
    source_version_short: str = ""
    categories: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, version: EntryVersion) -> VersionRow:
        sv = version.source_version
        return cls(
            v=version,
            status_label=str(STATUS_LABELS.get(version.status, version.status)),
            source_label=str(SOURCE_LABELS.get(version.source_type, version.source_type)),
            kind_label=str(KIND_LABELS.get(version.entry.kind, version.entry.kind)),
            source_version_short=sv[:12] + "…" if _SHA.fullmatch(sv) else sv,
            categories=[str(CATEGORY_LABELS.get(c, c)) for c in version.regulated_categories],
            reasons=[reason_text(code) for code in version.decision_reasons],
        )


@dataclass
class HistoryItem:
    row: VersionRow
    previous: int | None
    title_diff: list[Segment] | None  # None: the title did not change
    body_diff: list[Segment]  # empty for the first version
    is_current: bool
    restorable: bool


def latest_versions(agent: AgentProfile, *, status: str = "", source_type: str = "") -> QuerySet[EntryVersion]:
    """The latest version of each of the agent's entries, newest first, filtered on that version."""
    versions = EntryVersion.objects.filter(agent=agent, number=F("entry__latest_number")).select_related("entry")
    if status:
        versions = versions.filter(status=status)
    if source_type:
        versions = versions.filter(source_type=source_type)
    return versions.order_by("-created_at", "-pk")


def entry_history(entry: KnowledgeEntry) -> list[HistoryItem]:
    """All versions of an entry, newest first, each with its diff against the one before."""
    items: list[HistoryItem] = []
    before: EntryVersion | None = None
    for version in entry.versions.select_related("entry").order_by("number"):
        items.append(
            HistoryItem(
                row=VersionRow.of(version),
                previous=before.number if before else None,
                title_diff=text_diff(before.title, version.title) if before and before.title != version.title else None,
                body_diff=text_diff(before.body, version.body) if before else [],
                is_current=version.pk == entry.current_version_id,
                restorable=version.status in ONCE_APPROVED and version.pk != entry.current_version_id,
            )
        )
        before = version
    return items[::-1]


def _choice(value: str | None, choices: type[Status] | type[SourceType]) -> str:
    """A filter value, or "" (any) for anything that is not one of the choices."""
    return value if value and value in choices.values else ""


def _options(labels: dict[str, Promise], selected: str) -> list[dict[str, Any]]:
    return [{"value": value, "label": label, "selected": value == selected} for value, label in labels.items()]


def _js_text() -> dict[str, Any]:
    return {
        "sending": gettext("Sending the file…"),
        "progress": gettext("{done} of {total} sections"),
        "states": {
            "queued": gettext("waiting for a worker"),
            "running": gettext("working"),
            "done": gettext("done"),
            "failed": gettext("failed"),
        },
        "finished": gettext("{created} new, {unchanged} unchanged"),
        "failed": gettext("The upload failed: {detail}"),
        "http": gettext("The server answered with status {status}."),
        "network": gettext("The server could not be reached. Please try again."),
        "choose": gettext("Choose a file first."),
    }


@require_safe
@login_required
@ensure_csrf_cookie
def owner_knowledge(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc

    status = _choice(request.GET.get("status"), Status)
    source_type = _choice(request.GET.get("source_type"), SourceType)
    page = Paginator(latest_versions(agent, status=status, source_type=source_type), PAGE_SIZE).get_page(
        request.GET.get("page")
    )

    entry = None
    if "entry" in request.GET:
        entry_id = request.GET["entry"]
        entry = (
            KnowledgeEntry.objects.filter(agent=agent, pk=int(entry_id)).first() if _ID.fullmatch(entry_id) else None
        )
        if entry is None:
            raise Http404("no such entry")

    pending = [VersionRow.of(v) for v in pending_versions(agent)[:PENDING_LIMIT]]
    context = {
        "agent": agent,
        "status": status,
        "source_type": source_type,
        "status_options": _options(STATUS_LABELS, status),
        "source_options": _options(SOURCE_LABELS, source_type),
        "page": page,
        "rows": [VersionRow.of(v) for v in page.object_list],
        "entry": entry,
        "history": entry_history(entry) if entry else [],
        "current": entry.current_version.number if entry and entry.current_version else None,
        "pending": pending,
        "pending_total": pending_versions(agent).count() if len(pending) == PENDING_LIMIT else len(pending),
        "max_upload": MAX_BYTES,
        "jobs_url": reverse("knowledge-job", kwargs={"slug": agent.slug, "job_id": 0}).removesuffix("0"),
        "js_text": _js_text(),
    }
    return render(request, "knowledge/owner_knowledge.html", context)
