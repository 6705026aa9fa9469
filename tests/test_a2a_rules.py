"""The A2A binding's pure decisions, table-driven, no database: the task state a turn's run
gives (issue 33 §2) and which `A2A-Version` values are served (A2A 1.0 §3.6.2, as a2a-sdk)."""

from __future__ import annotations

import pytest

from facade.peers.protocol import version_supported
from facade.peers.rules import TaskState, is_terminal, task_state


@pytest.mark.parametrize(
    ("run_status", "stop_reason", "needs_input", "canceled", "state"),
    [
        (None, "", False, False, TaskState.SUBMITTED),
        ("planning", "", False, False, TaskState.WORKING),
        ("executing", "", False, False, TaskState.WORKING),
        ("completed", "", False, False, TaskState.COMPLETED),
        ("completed", "", True, False, TaskState.INPUT_REQUIRED),
        ("waiting_input", "", True, False, TaskState.INPUT_REQUIRED),
        ("waiting_input", "owner_decision", True, False, TaskState.REJECTED),
        ("completed", "owner_decision", False, False, TaskState.REJECTED),
        ("failed", "provider_error", False, False, TaskState.FAILED),
        ("over_budget", "max_steps", False, False, TaskState.FAILED),
        ("cancelled", "cancelled", False, False, TaskState.CANCELED),
        ("completed", "", False, True, TaskState.CANCELED),  # the peer canceled while it ran
        ("something_new", "", False, False, TaskState.FAILED),  # unknown: fails closed
    ],
)
def test_task_state(
    run_status: str | None, stop_reason: str, needs_input: bool, canceled: bool, state: TaskState
) -> None:
    assert (
        task_state(run_status=run_status, stop_reason=stop_reason, needs_input=needs_input, canceled=canceled) == state
    )


def test_terminal_states_are_the_specifications() -> None:
    assert {s for s in TaskState if is_terminal(s)} == {
        TaskState.COMPLETED,
        TaskState.FAILED,
        TaskState.CANCELED,
        TaskState.REJECTED,
    }


@pytest.mark.parametrize(
    ("header", "served"),
    [
        (None, False),  # empty means 0.3
        ("", False),
        ("0.3", False),
        ("1.0", True),
        ("1", True),
        ("1.1", True),  # the same major version, as a2a-sdk serves it
        (" 1.0 ", True),
        ("2.0", False),
        ("1.x", False),
        ("one", False),
    ],
)
def test_version_supported(header: str | None, served: bool) -> None:
    assert version_supported(header) is served
