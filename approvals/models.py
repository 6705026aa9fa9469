"""Change proposals and the decision authority (issue 12)."""

from .authority_models import *  # noqa: F401,F403
from .contract_models import AgentContract  # noqa: F401
