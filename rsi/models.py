"""The rsi app's models: the schedule's run claims (schedule_models.py); the review's and
observe's own modules add theirs."""

from .schedule_models import *  # noqa: F401,F403
