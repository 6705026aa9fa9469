"""The rsi app's models live in one module per increment of issue 13."""

from .observe_models import *  # noqa: F401,F403
