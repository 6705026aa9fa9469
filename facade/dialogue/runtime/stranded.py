"""The sweep of stranded runs: a message whose run was left without a reply for longer than
FACADE_RUN_STUCK_SECONDS (its process died mid-turn, or lost the database and could not record
it) gets the honest answer that it could not be finished and is saved, with stop reason
`stranded` on the run and a `run.stranded` ledger event, and the session's open chats get it as
the turn's reply (a page still waiting on the message stops waiting).  Celery beat runs it every minute
(facade/celery.py); running it twice answers nothing twice."""

from __future__ import annotations

from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..events import run_stranded
from ..models import Message, Run, RunStatus
from ..push import session_push_on_commit
from ..schemas import ReplyOut
from ..selectors import message_view, reply_view
from ..services import AlreadyAnswered, RunOutcome, run_finish, run_stuck_since
from .loop import HONEST
from .prompts import conversation_language

STRANDED = "stranded"  # the stop reason of a run the sweep answered
BATCH = 500


def runs_stranded_answer() -> int:
    """Answer every stranded run, one transaction each under the run's row lock (a re-send that
    begins the run again meanwhile takes the same lock, and the sweep then leaves it be).
    Returns how many were answered."""
    now = timezone.now()
    cutoff = run_stuck_since(now)
    stranded = (
        Run.objects.filter(finished_at__isnull=True)
        .annotate(latest=Coalesce("attempted_at", "started_at"))
        .filter(latest__lte=cutoff)
        .order_by("pk")
        .values_list("pk", flat=True)[:BATCH]
    )
    answered = 0
    for pk in list(stranded):
        with transaction.atomic():
            run = (
                Run.objects.select_for_update(of=("self",))
                .select_related("session", "session__agent", "message")
                .filter(pk=pk, finished_at__isnull=True)
                .first()
            )
            if run is None or (run.attempted_at or run.started_at) > cutoff:
                continue  # answered, or begun again by a re-send, since it was listed
            if Message.objects.filter(reply_to_id=run.message_id).exists():
                continue
            session = run.session
            language = conversation_language([run.message.text])
            outcome = RunOutcome(
                status=RunStatus.FAILED,
                stop_reason=STRANDED,
                needs_input=False,
                guard_category="",
                text=str(HONEST[language][STRANDED]),
                citations=[],
            )
            try:
                reply = run_finish(session=session, run=run, outcome=outcome, spans=[], hits=[], agent=session.agent)
            except AlreadyAnswered:
                continue
            stuck = int((now - (run.attempted_at or run.started_at)).total_seconds())
            run_stranded(session=session, run=run, reply=reply, stuck_seconds=stuck)
            pushed = ReplyOut(
                client_message_id=run.message.client_message_id,
                message=message_view(run.message),
                reply=reply_view(reply),
                request=None,
                duplicate=False,
            )
            session_push_on_commit(session_id=session.pk, frame=pushed.frame())
            answered += 1
    return answered
