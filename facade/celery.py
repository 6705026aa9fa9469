"""The Celery application.  Beat schedules live in code (later steps add their entries)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "facade.settings")

app = Celery("facade")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.conf.beat_schedule = {
    "knowledge-sweep": {
        "task": "knowledge.tasks.sweep",
        "schedule": 5 * 60,
        "options": {"expires": 4 * 60},
    },
    "sessions-expire": {
        "task": "facade.dialogue.tasks.sessions_expire",
        "schedule": 5 * 60,
        "options": {"expires": 4 * 60},
    },
    # A chat turn left without a reply (its process died, or lost the database) is answered
    # honestly once it is stuck beyond FACADE_RUN_STUCK_SECONDS.
    "runs-stranded-sweep": {
        "task": "facade.dialogue.tasks.runs_stranded_answer",
        "schedule": 60,
        "options": {"expires": 50},
    },
    # An A2A task whose turn's process died stays WORKING no longer than that bound and a minute:
    # it ends with its run's honest reply, or failed when its message was never stored.
    "a2a-tasks-stranded-sweep": {
        "task": "facade.peers.tasks.tasks_stranded_end",
        "schedule": 60,
        "options": {"expires": 50},
    },
    "proposals-expire": {
        "task": "approvals.tasks.proposals_expire",
        "schedule": 60 * 60,
        "options": {"expires": 50 * 60},
    },
    # A proposal's replay preview whose dispatch was lost, or whose worker died, is sent again.
    "proposal-replays-sweep": {
        "task": "approvals.tasks.proposal_replays_sweep",
        "schedule": 10 * 60,
        "options": {"expires": 9 * 60},
    },
    # The nightly re-check of delivered replies (03:00), the nightly review (03:30) and the morning
    # observe (05:00) in each tenant's own time zone: the tick claims what is due
    # (rsi/schedule.py), so it runs often and does little.
    "rsi-tick": {
        "task": "rsi.tasks.tick",
        "schedule": 5 * 60,
        "options": {"expires": 4 * 60},
    },
    "ledger-verify-nightly": {
        "task": "ledger.tasks.ledger_verify_all",
        "schedule": 60 * 60 * 24,
        "options": {"expires": 60 * 60},
    },
}
