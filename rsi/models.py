"""The rsi app's models, one module per part of issue 13: the schedule's run claims
(schedule_models.py) and the daily review's reports (review_models.py)."""

from .review_models import *  # noqa: F401,F403
from .schedule_models import *  # noqa: F401,F403
