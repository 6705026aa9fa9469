"""The simulated week's ledger event (`manage.py rsi_simulate`, rsi/simulate.py): one per played
day, written at the real time the day was played, so that an auditor reading the chain can tell
the demo's backdated customer traffic from real service — which sessions, on which day, from
which seed.  Ids and counts only, never a scripted customer sentence."""

from __future__ import annotations

import uuid

from facade.tenancy.schemas import Actor
from ledger.catalogue import EventPayload, register
from ledger.schemas import AppendedEvent
from ledger.services import ledger_append

ENTITY = "simulation"


class SimulationDayPlayed(EventPayload):
    agent: str
    day: str  # the local day the traffic was played on (its events carry that day's times)
    time_zone: str
    seed: int
    customers: int
    sessions: list[str]  # the simulated sessions' ids: every one of them is demo traffic
    messages: int


SIMULATION_DAY_PLAYED = register(
    "simulation.day_played",
    app="rsi",
    entity_type=ENTITY,
    payload=SimulationDayPlayed,
    description="rsi_simulate played a day of scripted customer traffic with the clock set to that day: "
    "the sessions it opened (their events carry that day's times), the seed and the counts.",
)


def simulation_day_played(
    *, tenant_id: int, run_id: uuid.UUID, payload: SimulationDayPlayed, actor: Actor
) -> AppendedEvent:
    return ledger_append(
        chain_id=tenant_id,
        event_type=SIMULATION_DAY_PLAYED.name,
        entity_type=ENTITY,
        entity_id=str(run_id),
        actor_type=actor.type,
        actor_id=actor.id,
        payload=payload.model_dump(),
    )
