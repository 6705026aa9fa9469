"""The rsi app's models, one module per part of issue 13: the schedule's run claims
(schedule_models.py), the daily review's reports (review_models.py), observe's feeds and
digests (observe_models.py) and the agents' escalation budgets (governance_models.py)."""

from .governance_models import *  # noqa: F401,F403
from .observe_models import *  # noqa: F401,F403
from .review_models import *  # noqa: F401,F403
from .schedule_models import *  # noqa: F401,F403
