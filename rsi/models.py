"""The rsi app's models, one module per increment of issue 13 (the review's in review_models.py)."""

from .review_models import *  # noqa: F401,F403
