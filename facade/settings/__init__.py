"""Settings for Facade: configuration comes only from the environment.

`base` holds what every deployment shares; one module per concern follows it.  The
order matters: later modules read names defined by `base`.
"""

from .accounts import *  # noqa: F401,F403
from .approvals import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
from .celery import *  # noqa: F401,F403
from .channels import *  # noqa: F401,F403
from .drf import *  # noqa: F401,F403
from .email import *  # noqa: F401,F403
from .knowledge import *  # noqa: F401,F403
from .logging import *  # noqa: F401,F403
from .observe import *  # noqa: F401,F403
from .runtime import *  # noqa: F401,F403
from .security import *  # noqa: F401,F403
