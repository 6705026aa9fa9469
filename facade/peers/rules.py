"""Pure decisions of the A2A binding (no ORM): the task state a turn's run gives, and which
states end a task.  The names are the specification's (A2A 1.0, `TaskState`)."""

from __future__ import annotations

from enum import StrEnum

from facade.dialogue.intents import OWNER_DECISION


class TaskState(StrEnum):
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELED = "TASK_STATE_CANCELED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"


# The stop reason of a task the sweep of stranded tasks ended (peers/stranded.py).
STRANDED = "stranded"

TERMINAL = frozenset({TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED})

# The stop reasons of a turn that refused what it was asked: a discount, a special price or a
# promise only the business decides (facade/dialogue/intents.py).  The reply says so and offers
# a request; the task itself is not done by the agent, so it ends REJECTED with that reply.
REFUSALS = frozenset({OWNER_DECISION})


def task_state(
    *, run_status: str | None, stop_reason: str, needs_input: bool, canceled: bool, refused: bool = False
) -> TaskState:
    """The state of a task whose latest turn's run ended as given (`run_status` None: no run
    answers it yet; `refused`: the turn asked for a tool its key or the contract does not allow,
    and the server refused it).  Fails closed: a run status this table does not know is FAILED."""
    if canceled:
        return TaskState.CANCELED
    if run_status is None:
        return TaskState.SUBMITTED
    if run_status in ("planning", "executing"):
        return TaskState.WORKING
    if stop_reason in REFUSALS:
        return TaskState.REJECTED
    if refused and run_status == "completed" and not needs_input:
        # Asked for what this peer may not have (an ask-only key registering an order): the
        # reply says why, and the task is not done (issue 33 §2).
        return TaskState.REJECTED
    if run_status == "cancelled":
        return TaskState.CANCELED
    if run_status in ("failed", "over_budget"):
        return TaskState.FAILED
    if run_status == "waiting_input" or (run_status == "completed" and needs_input):
        return TaskState.INPUT_REQUIRED
    if run_status == "completed":
        return TaskState.COMPLETED
    return TaskState.FAILED


def is_terminal(state: TaskState) -> bool:
    return state in TERMINAL


def stranded_state(*, run_status: str | None, stop_reason: str, needs_input: bool) -> TaskState:
    """The state the sweep of stranded tasks gives a task left WORKING beyond the bound: the
    state its answered run gives (the stranded run's honest reply is FAILED; a turn whose process
    died after answering keeps its answer's state), and FAILED when nothing answered it
    (`run_status` None) — never WORKING or SUBMITTED again."""
    if run_status is None:
        return TaskState.FAILED
    state = task_state(run_status=run_status, stop_reason=stop_reason, needs_input=needs_input, canceled=False)
    return TaskState.FAILED if state in (TaskState.WORKING, TaskState.SUBMITTED) else state
