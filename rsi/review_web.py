"""The owner asks for a daily review and watches it (issue 13).  The owner overview
(`/owner/<slug>/`) has "Run today's review" and a date picker (today and past days); either is a
plain form POST (CSRF) to `owner-review-run`, which queues the run (rsi.review_trigger) and
redirects to the day's review page `/owner/<slug>/reviews/<day>`.  That page shows where the
review stands — queued, running (with its step), finished with its counts and a link to the
report in the inbox, or failed — server-rendered, refreshed by a <noscript> meta refresh without
JavaScript, and with it by static/js/review.js polling `owner-review-status` (JSON, the same
words).  Owners of the agent only: anyone else gets a 404."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import formats
from django.utils.translation import gettext
from django.views.decorators.http import require_POST, require_safe

from facade.errors import ApplicationError
from facade.leases import WORKER_LOST
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

from .review_input import local_today
from .review_trigger import Phase, Progress, active_review, review_progress, review_request
from .run_progress import STEPS
from .schedule_rules import local_now


def _owned(request: HttpRequest, slug: str) -> AgentProfile:
    try:
        return AgentPolicy.get_owned(request.user, slug)
    except NotFound as exc:
        raise Http404("no such agent among those you own") from exc


def _date(raw: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        return None


def first_day(agent: AgentProfile) -> dt.date:
    """The earliest day the date picker offers: the agent's first local day."""
    return local_now(agent.created_at, agent.tenant.time_zone).date()


def step_words() -> dict[str, str]:
    return {
        "input": gettext("Building the input from the day's figures"),
        "reviewers": gettext("The reviewers read the figures"),
        "gate": gettext("Checking every claim's evidence"),
        "proposals": gettext("Filing proposals for your decision"),
    }


def count_words() -> dict[str, str]:
    return {
        "wins": gettext("Wins"),
        "misses": gettext("Misses"),
        "gaps": gettext("Gaps"),
        "proposals": gettext("Proposals for your decision"),
        "held_back": gettext("Proposals held back"),
        "dropped_claims": gettext("Claims dropped for lack of evidence"),
    }


def _message(progress: Progress, agent: AgentProfile) -> str:
    text = _phase_message(progress, agent)
    if progress.retry:
        retry = gettext("The worker running this review stopped; it is being run again from the start (once).")
        return f"{retry} {text}"
    return text


def _phase_message(progress: Progress, agent: AgentProfile) -> str:
    day = progress.day.isoformat()
    if progress.phase == Phase.QUEUED:
        at = local_now(progress.queued_at, agent.tenant.time_zone) if progress.queued_at else None
        return gettext("Queued at %(time)s: the review of %(day)s waits for a worker to start it.") % {
            "time": formats.time_format(at, "H:i") if at else "—",
            "day": day,
        }
    if progress.phase == Phase.RUNNING:
        if progress.step:
            return gettext("Running, step %(n)s of %(total)s: %(step)s.") % {
                "n": STEPS.index(progress.step) + 1,
                "total": len(STEPS),
                "step": step_words()[progress.step],
            }
        return gettext("Running: the review of %(day)s has started.") % {"day": day}
    if progress.phase == Phase.FINISHED and progress.counts is not None:
        counts = progress.counts
        text = (
            gettext(
                "Finished. Wins: %(wins)s, misses: %(misses)s, gaps: %(gaps)s; proposals waiting for your decision: "
                "%(proposals)s."
            )
            % counts
        )
        if progress.partial:
            partial = gettext("%(finished)s The day is not over: this report is partial and the next run updates it.")
            text = partial % {"finished": text}
        return text
    if progress.phase == Phase.FAILED and progress.error == WORKER_LOST:
        return gettext(
            "The review of %(day)s failed: the worker running it stopped, and stopped again when it was run "
            "again. Nothing of it was saved and nothing changed; run it again, and if it fails again, tell your "
            "platform operator."
        ) % {"day": day}
    if progress.phase == Phase.FAILED:
        return gettext(
            "The review of %(day)s failed (%(error)s). Nothing of it was saved and nothing changed; run it again, "
            "and if it fails again, tell your platform operator."
        ) % {"day": day, "error": progress.error or gettext("unknown error")}
    return gettext("There is no review of %(day)s yet.") % {"day": day}


def progress_view(agent: AgentProfile, progress: Progress) -> dict[str, Any]:
    """What the page and its status endpoint show, in the reader's language."""
    current = STEPS.index(progress.step) if progress.step else -1
    done_all = progress.phase == Phase.FINISHED
    steps = []
    if progress.phase in (Phase.RUNNING, Phase.FINISHED):
        words = step_words()
        for index, step in enumerate(STEPS):
            state = "done" if done_all or index < current else "current" if index == current else "todo"
            steps.append({"id": step, "label": words[step], "state": state})
    names = count_words()
    counts = [{"id": k, "label": names[k], "value": v} for k, v in (progress.counts or {}).items()]
    report_url = ""
    if progress.phase == Phase.FINISHED:
        report_url = f"{reverse('owner-inbox', args=[agent.slug])}?review={progress.day.isoformat()}#review-h"
    return {
        "day": progress.day.isoformat(),
        "phase": progress.phase.value,
        "active": progress.phase in (Phase.QUEUED, Phase.RUNNING),
        "retry": progress.retry,
        "step": progress.step,
        "steps": steps,
        "message": _message(progress, agent),
        "counts": counts,
        "partial": progress.partial,
        "canRun": progress.phase in (Phase.NONE, Phase.FAILED) or (done_all and not progress.final),
        "reportUrl": report_url,
        "reportText": gettext("Read the report in your inbox"),
        "runText": (
            gettext("Run it again")
            if progress.phase == Phase.FAILED
            else gettext("Run this review")
            if progress.phase == Phase.NONE
            else gettext("Run it again with what has happened since")
        ),
        "statusUrl": reverse("owner-review-status", args=[agent.slug, progress.day.isoformat()]),
    }


def overview_review(agent: AgentProfile) -> dict[str, Any]:
    """The overview's "Daily review" section: today, the picker's range, a review under way."""
    today = local_today(agent.tenant)
    active = active_review(agent)
    return {
        "today": today,
        "first": min(first_day(agent), today),
        "active": active,
        "active_url": reverse("owner-review", args=[agent.slug, active.day.isoformat()]) if active else "",
    }


@require_POST
@login_required
def owner_review_run(request: HttpRequest, slug: str) -> HttpResponse:
    agent = _owned(request, slug)
    back = HttpResponseRedirect(reverse("owner-overview", args=[slug]) + "#review")
    raw = request.POST.get("date", "").strip()[:20]
    day = _date(raw) if raw else local_today(agent.tenant)
    if day is None:
        messages.error(request, gettext("Give the day as YYYY-MM-DD."))
        return back
    try:
        requested = review_request(agent=agent, day=day, actor=Actor.human(request.user.pk))
    except ApplicationError as exc:
        if exc.code != "future_day":
            raise
        messages.error(request, gettext("That day has not begun yet: choose today or a past day."))
        return back
    if not requested.queued:
        messages.info(
            request,
            gettext("This review is already under way: you are watching it.")
            if requested.run is not None and requested.run.status in ("queued", "running")
            else gettext("This day has been reviewed whole: here is its report."),
        )
    return HttpResponseRedirect(reverse("owner-review", args=[slug, day.isoformat()]), status=303)


@require_safe
@login_required
def owner_review(request: HttpRequest, slug: str, day: str) -> HttpResponse:
    agent = _owned(request, slug)
    when = _date(day)
    if when is None:
        raise Http404("not a day")
    view = progress_view(agent, review_progress(agent, when))
    return render(request, "rsi/owner_review.html", {"agent": agent, "view": view, "today": local_today(agent.tenant)})


@require_safe
def owner_review_status(request: HttpRequest, slug: str, day: str) -> JsonResponse:
    """The day's review progress as JSON, for the page's script (owners only; others 404)."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": "not_authenticated", "detail": "sign in"}, status=401)
    try:
        agent = AgentPolicy.get_owned(request.user, slug)
    except NotFound:
        return JsonResponse({"error": "not_found", "detail": "no such agent among those you own"}, status=404)
    when = _date(day)
    if when is None:
        return JsonResponse({"error": "not_found", "detail": "not a day"}, status=404)
    response = JsonResponse(progress_view(agent, review_progress(agent, when)))
    response["Cache-Control"] = "no-store"
    return response


__all__ = ["owner_review", "owner_review_run", "owner_review_status", "overview_review", "progress_view"]
