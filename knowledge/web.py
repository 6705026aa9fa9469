"""The owner's knowledge pages, always scoped to an agent the signed-in user owns:

- the knowledge page: the entries with filters, an entry's version history with diffs, and what
  waits for the owner (reads only: uploads, their progress and restores go through the JSON API
  from `static/js/knowledge.js`);
- Unanswered questions: topics of customer questions nothing answered (keys and counts, never
  the customers' sentences), each with "answer this" and "attach to entry";
- a new entry (a form, prefilled when it answers a topic).

The forms post here (with CSRF) and every write goes through a service of `knowledge.services`,
which also writes the ledger.  The URLs are in `knowledge/urls.py`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import F, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

from .extract import MAX_BYTES
from .models import EntryVersion, Kind, KnowledgeEntry, SourceType, Status
from .rules import topic_ref, topic_shown
from .selectors import open_topic_key, pending_versions, unanswered_topics
from .services import (
    MAX_BODY,
    MAX_TITLE,
    PAGE_SOURCE_ATTACH,
    PAGE_SOURCE_NEW,
    KnowledgeError,
    topic_answer,
    topic_asked,
    topic_attach,
)

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
    "lesson": _("A lesson: it takes effect once you approve it"),
    "written_by_model": _("Written by the agent: it takes effect once you approve it"),
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


@dataclass(frozen=True)
class SourceView:
    """Where a version came from, as a person reads it; the ids stay for the tooltip."""

    text: str
    href: str = ""
    ids: str = ""


_WEB = re.compile(r"https?://\S+")


def source_view(version: EntryVersion) -> SourceView:
    """ "Owner chat on 3 Dec 2026", "Uploaded file menu.md, section Cakes", a feed item… with a
    link where there is a page to go to.  The raw type, reference and version are kept in `ids`."""
    ref, kind = version.source_ref, version.source_type
    day = date_format(timezone.localtime(version.created_at), "DATE_FORMAT")
    ids = " · ".join(
        (
            gettext("source: %(type)s") % {"type": kind},
            gettext("reference: %(ref)s") % {"ref": ref},
            gettext("source version: %(version)s") % {"version": version.source_version},
        )
    )
    slug = version.agent.slug
    if kind == SourceType.OWNER_DIALOGUE:
        if ref.startswith("session:"):
            return SourceView(
                gettext("Owner chat on %(date)s") % {"date": day}, reverse("owner-chat", args=[slug]), ids
            )
        if ref == PAGE_SOURCE_ATTACH:
            text = gettext("Question attached on the Unanswered questions page on %(date)s") % {"date": day}
            return SourceView(text, reverse("owner-unanswered", args=[slug]), ids)
        if ref == PAGE_SOURCE_NEW:
            return SourceView(gettext("Written on the knowledge pages on %(date)s") % {"date": day}, "", ids)
        if ref == "seed_demo":
            return SourceView(gettext("Demo set-up on %(date)s") % {"date": day}, "", ids)
        return SourceView(gettext("Owner dialogue on %(date)s") % {"date": day}, "", ids)
    if kind in (SourceType.UPLOAD, SourceType.URL):
        document, _hash, _anchor = ref.partition("#")
        if kind == SourceType.URL or _WEB.fullmatch(document):
            text = gettext("Web page %(address)s, section %(section)s") % {
                "address": document,
                "section": version.title,
            }
            return SourceView(text, document if _WEB.fullmatch(document) else "", ids)
        text = gettext("Uploaded file %(file)s, section %(section)s (%(date)s)") % {
            "file": document,
            "section": version.title,
            "date": day,
        }
        return SourceView(text, "", ids)
    if kind == SourceType.OBSERVE:
        return SourceView(
            gettext("Industry feed item of %(date)s") % {"date": day}, ref if _WEB.fullmatch(ref) else "", ids
        )
    if kind == SourceType.REVIEW:
        return SourceView(gettext("Nightly review of %(date)s") % {"date": day}, "", ids)
    if kind == SourceType.CUSTOMER:
        return SourceView(gettext("Customer conversations, %(date)s") % {"date": day}, "", ids)
    return SourceView(str(SOURCE_LABELS.get(kind, kind)), "", ids)


@dataclass
class VersionRow:
    """One version as the page shows it: labels in the reader's language."""

    v: EntryVersion
    status_label: str = ""
    source_label: str = ""
    kind_label: str = ""
    source_version_short: str = ""
    source: SourceView = field(default_factory=lambda: SourceView(""))
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
            source=source_view(version),
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
    versions = EntryVersion.objects.filter(agent=agent, number=F("entry__latest_number")).select_related(
        "entry", "agent"
    )
    if status:
        versions = versions.filter(status=status)
    if source_type:
        versions = versions.filter(source_type=source_type)
    return versions.order_by("-created_at", "-pk")


def entry_history(entry: KnowledgeEntry) -> list[HistoryItem]:
    """All versions of an entry, newest first, each with its diff against the one before."""
    items: list[HistoryItem] = []
    before: EntryVersion | None = None
    for version in entry.versions.select_related("entry", "agent").order_by("number"):
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
        "retry": gettext("the worker stopped; running it again from the start"),
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
        "inbox_url": inbox_url(agent),
    }
    return render(request, "knowledge/owner_knowledge.html", context)


def inbox_url(agent: AgentProfile) -> str:
    """The owner's inbox (approvals' page): a version that waits is decided there, as the L1
    change proposal filed for it — nothing on the knowledge pages approves."""
    return f"/owner/{agent.slug}/inbox"


# Messages that tell the owner something waits carry this tag; knowledge/_messages.html then
# links to the inbox.
INBOX_TAG = "inbox"


# --- Unanswered questions and new entries ------------------------------------------------------


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def _entry_choices(agent: AgentProfile) -> list[EntryVersion]:
    """The entries a topic can be attached to: those customers are served, by title."""
    return list(
        EntryVersion.objects.filter(agent=agent, served=True, status=Status.APPROVED).order_by("title", "pk")[:500]
    )


@require_safe
@login_required
@ensure_csrf_cookie
def owner_unanswered(request: HttpRequest, slug: str) -> HttpResponse:
    """Topics of the questions nothing answered, most asked first: counts and dates only."""
    agent = _owned(request, slug)
    unanswered = unanswered_topics(agent)
    context = {
        "agent": agent,
        "topics": [
            {
                "t": topic,
                # The page names a topic by its hash (its label is all an owner reads of it): a
                # number the label leaves out never reaches the page, its links or its forms.
                "answer_url": reverse("owner-knowledge-new", args=[agent.slug]) + "?" + urlencode({"topic": topic.ref}),
            }
            for topic in unanswered.topics
        ],
        "withheld": unanswered.withheld,
        "min_askers": unanswered.min_askers,
        "entries": _entry_choices(agent),
        "inbox_url": inbox_url(agent),
    }
    return render(request, "knowledge/owner_unanswered.html", context)


def failure_text(exc: KnowledgeError) -> str:
    """A refusal of the knowledge services in the owner's language."""
    if exc.code == "invalid_input":
        return gettext(
            "Give the entry a title and an answer, and each question on a line of its own "
            "(at most 20 questions of 200 characters)."
        )
    if exc.code == "not_found":
        return gettext("This question has been answered already, or the entry is gone.")
    if exc.code == "not_served":
        return gettext("Only an approved entry can take a question: decide it in your inbox first.")
    return gettext("That did not work. Please try again.")


def _failure(request: HttpRequest, exc: KnowledgeError) -> None:
    messages.error(request, failure_text(exc), extra_tags=INBOX_TAG if exc.code == "not_served" else "")


@require_POST
@login_required
def owner_unanswered_attach(request: HttpRequest, slug: str) -> HttpResponse:
    """Attach a topic to an entry: the entry gets it as one of its questions (a new version)."""
    agent = _owned(request, slug)
    back = reverse("owner-unanswered", args=[agent.slug])
    entry_id = request.POST.get("entry", "")
    entry = KnowledgeEntry.objects.filter(agent=agent, pk=int(entry_id)).first() if _ID.fullmatch(entry_id) else None
    if entry is None:
        messages.error(request, gettext("Choose the entry that answers this question."))
        return HttpResponseRedirect(back)
    try:
        version = topic_attach(
            agent=agent,
            topic=open_topic_key(agent, request.POST.get("topic", "")),
            entry=entry,
            actor=Actor.human(request.user.pk),
        )
    except KnowledgeError as exc:
        _failure(request, exc)
        return HttpResponseRedirect(back)
    if version.status == Status.APPROVED:
        text = gettext("“%(question)s” now finds “%(title)s” (version %(number)s).")
    else:
        text = gettext("“%(question)s” was added to “%(title)s” (version %(number)s), which waits for your approval.")
    messages.success(
        request,
        text % {"question": version.questions[-1], "title": version.title, "number": version.number},
        extra_tags="" if version.status == Status.APPROVED else INBOX_TAG,
    )
    return HttpResponseRedirect(back)


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _other_language(given: str, label: str) -> str:
    """The language of a new entry's second answer: as the form says, else the one the topic's
    words are not in."""
    if given in ("en", "zh-hans"):
        return given
    return "en" if _CJK.search(label) else "zh-hans"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
@ensure_csrf_cookie
def owner_knowledge_new(request: HttpRequest, slug: str) -> HttpResponse:
    """A new entry written by the owner; from "answer this" it is prefilled with the topic as
    its title and first question, and saving it resolves the topic."""
    agent = _owned(request, slug)
    source = request.POST if request.method == "POST" else request.GET
    topic = open_topic_key(agent, " ".join(source.get("topic", "").split())[:200])
    label = topic_shown(topic_asked(agent, topic)) if topic else ""
    form = {
        "title": source.get("title", label)[:MAX_TITLE],
        "body": source.get("body", "")[:MAX_BODY],
        "questions": source.get("questions", label),
        # The entry's answer in the other language (issue 26 §4): the one the topic is not in.
        "other_language": _other_language(source.get("other_language", ""), label),
        "other_title": source.get("other_title", "")[:MAX_TITLE],
        "other_body": source.get("other_body", "")[:MAX_BODY],
    }
    error = ""
    if request.method == "POST":
        if not topic:
            error = gettext("Open this form from a question on the Unanswered questions page.")
        else:
            try:
                version = topic_answer(
                    agent=agent,
                    topic=topic,
                    title=form["title"],
                    body=form["body"],
                    questions=_lines(form["questions"]),
                    translations={form["other_language"]: {"title": form["other_title"], "body": form["other_body"]}},
                    actor=Actor.human(request.user.pk),
                )
            except KnowledgeError as exc:
                error = failure_text(exc)
            else:
                if version.status == Status.APPROVED:
                    text = gettext("“%(title)s” was added and customers are answered with it from now on.")
                else:
                    text = gettext("“%(title)s” was added and waits for your approval.")
                tag = "" if version.status == Status.APPROVED else INBOX_TAG
                messages.success(request, text % {"title": version.title}, extra_tags=tag)
                return HttpResponseRedirect(
                    reverse("owner-knowledge", args=[agent.slug]) + f"?entry={version.entry_id}#history-h"
                )
    # The form carries the topic's hash back, never its key (as the Unanswered questions page).
    shown = topic if not topic or topic.startswith("topic.") else topic_ref(topic)
    context = {"agent": agent, "topic": shown, "label": label, "form": form, "error": error}
    return render(request, "knowledge/owner_knowledge_new.html", context, status=400 if error else 200)
