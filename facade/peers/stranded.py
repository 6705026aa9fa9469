"""The sweep of stranded A2A tasks: a task left WORKING beyond FACADE_RUN_STUCK_SECONDS (the
process answering it died mid-turn — a streamed or non-blocking turn runs in the web process)
ends in a final state with its reason, so that no peer polls or subscribes to it for ever.

The task's pending message (`PeerTask.pending_message_id`) says what it was answering:
- stored and answered (by the sweep of stranded runs, runtime/stranded.py, with the honest
  "could not finish" reply and run status `failed`; or by the turn itself, whose process died
  before it linked the answer): the turn is linked and the task takes the state its run gives —
  FAILED for a stranded run, with that reply as its status message;
- stored, its run not yet answered: the run is answered here first, as the sweep of stranded
  runs would (its latest attempt began beyond the bound too), then as above;
- stored, its run attempted again within the bound (a re-send): left be;
- never stored (the process died before the turn stored it): FAILED, and the task's status
  message says that the message was not saved and should be sent again.

Each task is ended in one transaction under its row lock, with the ledger event
`a2a_task.stranded`; running the sweep twice ends nothing twice.  Celery beat runs it every
minute (facade/celery.py)."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from facade.dialogue.models import Message, Run
from facade.dialogue.runtime.stranded import runs_stranded_answer
from facade.dialogue.services import run_stuck_since

from . import events
from .models import PeerTask, PeerTaskTurn
from .rules import STRANDED, TaskState, stranded_state

BATCH = 500


def _latest_attempt(run: Run) -> dt.datetime:
    return run.attempted_at or run.started_at


def tasks_stranded_end(now: dt.datetime | None = None) -> int:
    """End every task stranded in WORKING; returns how many were ended."""
    now = now or timezone.now()
    cutoff = run_stuck_since(now)
    stuck = list(
        PeerTask.objects.filter(state=TaskState.WORKING.value, updated_at__lte=cutoff)
        .order_by("updated_at", "pk")
        .values_list("pk", flat=True)[:BATCH]
    )
    if not stuck:
        return 0
    # Their runs first: a stranded run gets its honest reply, which the task then carries.
    runs_stranded_answer()
    ended = 0
    for pk in stuck:
        with transaction.atomic():
            task = (
                PeerTask.objects.select_for_update(skip_locked=True)
                .filter(pk=pk, state=TaskState.WORKING.value, updated_at__lte=cutoff)
                .first()
            )
            if task is None:
                continue  # answered, canceled or being swept since it was listed
            message = (
                Message.objects.filter(
                    session_id=task.session_id, reply_to__isnull=True, client_message_id=task.pending_message_id
                ).first()
                if task.pending_message_id
                else None
            )
            run = Run.objects.filter(message=message).first() if message is not None else None
            answered = message is not None and Message.objects.filter(reply_to=message).exists()
            if message is not None and not answered and run is not None and _latest_attempt(run) > cutoff:
                continue  # a re-send is answering it again, within the bound
            if message is not None:
                PeerTaskTurn.objects.get_or_create(message=message, defaults={"task": task})
            state = stranded_state(
                run_status=run.status if run is not None and answered else None,
                stop_reason=run.stop_reason if run is not None else "",
                needs_input=bool(run and run.needs_input),
            )
            since = _latest_attempt(run) if run is not None else task.updated_at
            task.state = state.value
            task.stop_reason = STRANDED if state == TaskState.FAILED else ""
            task.updated_at = now
            task.save(update_fields=["state", "stop_reason", "updated_at"])
            events.a2a_task_stranded(
                task=task,
                message_id=message.pk if message is not None else None,
                stuck_seconds=max(0, int((now - since).total_seconds())),
            )
            ended += 1
    return ended
