"""Every row of the lifecycle's transition table, walked against the machine.

``TRANSITIONS`` (cache/lifecycle.py) says, for each phase and event, the
phase it leads to and the kinds of effect handed back. Each row here has a
walk that brings a new lifecycle to the row's phase on a hand-moved clock
(no reactor, no I/O), then tells it the row's event: the phase before, the
effects' kinds in order and the phase after must be the row's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from scrapy_rep.cache.effects import WaitBudget
from scrapy_rep.cache.lifecycle import (
    TRANSITIONS,
    Event,
    OriginLifecycle,
    Phase,
    Start,
    Transition,
)
from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import DAY, HOUR, PolicyConfig, record_outcome
from scrapy_rep.cache.record import OriginRecord

from .test_lifecycle import BUSY, GONE, OK, T0, answer, stored
from .test_lifecycle_edges import lifecycle

#: The sections of docs/spec.md ("2", "2.2", ...), which the rows cite.
SECTIONS = set(
    re.findall(
        r"^#{2,3} ([0-9.]+?)\.? ",
        (Path(__file__).parents[2] / "docs" / "spec.md").read_text(encoding="utf-8"),
        re.MULTILINE,
    )
)
WAIT = WaitBudget(T0, 10.0)  # requests may wait 10 s more for a quick retry
SPENT = WaitBudget(T0, 1.0)  # less than the first retry's 2 s
#: A 503 a day after a good fetch: the kept copy, and an outage since then.
DOWN = record_outcome(
    stored(OK), answer(FetchKind.UNREACHABLE, 503, DAY), T0 + DAY, PolicyConfig(retry_jitter=0)
)
NO_STORE = OriginRecord.from_bytes(
    stored(answer(FetchKind.SUCCESS, 200, DAY, "no-store"), DAY).to_bytes()
)

#: A walk: the lifecycle brought to its phase, the time of the event, its arguments.
Walk = Callable[[], tuple[OriginLifecycle, float, tuple[object, ...]]]


def cold() -> OriginLifecycle:
    return lifecycle()


def fetching() -> OriginLifecycle:
    origin = lifecycle()
    origin.loaded(None, T0)
    return origin


def fresh() -> OriginLifecycle:
    origin = lifecycle()
    origin.loaded(stored(OK), T0)
    return origin


def expired() -> OriginLifecycle:
    origin = fresh()
    origin.asked(T0 + DAY)
    return origin


def closed() -> OriginLifecycle:
    """Closed by a first 503 nobody could wait for; the next retry due at T0 + 2."""
    origin = fetching()
    origin.fetched(BUSY, T0, None)
    return origin


def retrying_soon() -> OriginLifecycle:
    """A first 503 that requests wait a quick retry for, at T0 + 2."""
    origin = fetching()
    origin.fetched(BUSY, T0, WAIT)
    return origin


def retrying() -> OriginLifecycle:
    origin = closed()
    origin.flight(Start.RETRY, T0 + 3)
    return origin


def seeded() -> OriginLifecycle:
    origin = fresh()
    origin.seeded(answer(FetchKind.UNAVAILABLE, 404, 60), T0 + 60)
    return origin


def marked() -> OriginLifecycle:
    origin = closed()
    origin.site_answered(T0 + HOUR)
    return origin


def landed() -> OriginLifecycle:
    origin = lifecycle()
    origin.landed(T0)
    return origin


WALKS: dict[tuple[Phase, Event, str], Walk] = {
    (Phase.COLD, Event.LOADED, "no record stored"): lambda: (cold(), T0, (None,)),
    (Phase.COLD, Event.LOADED, "a fresh record"): lambda: (cold(), T0 + 60, (stored(OK),)),
    (Phase.COLD, Event.LOADED, "an expired record"): lambda: (cold(), T0 + DAY, (stored(OK),)),
    (Phase.COLD, Event.LOADED, "a record from the future"): lambda: (
        cold(),
        T0,
        (stored(OK, 10 * DAY),),
    ),
    (Phase.COLD, Event.LOADED, "a record in an outage"): lambda: (cold(), T0 + DAY + 1, (DOWN,)),
    (Phase.COLD, Event.ASKED, "after a flight that failed"): lambda: (landed(), T0 + 1, ()),
    (Phase.COLD, Event.LANDED, "the store failed"): lambda: (cold(), T0, ()),
    (Phase.FETCHING, Event.ASKED, "another request"): lambda: (fetching(), T0 + 1, ()),
    (Phase.FETCHING, Event.FETCHED, "2xx"): lambda: (fetching(), T0, (OK, WAIT)),
    (Phase.FETCHING, Event.FETCHED, "4xx"): lambda: (fetching(), T0, (GONE, WAIT)),
    (Phase.FETCHING, Event.FETCHED, "5xx, a quick retry"): lambda: (fetching(), T0, (BUSY, WAIT)),
    (Phase.FETCHING, Event.FETCHED, "5xx, the wait spent"): lambda: (
        fetching(),
        T0,
        (BUSY, SPENT),
    ),
    (Phase.FETCHING, Event.SHARED, "a fresh record"): lambda: (
        expired(),
        T0 + DAY,
        (stored(GONE, DAY), WAIT),
    ),
    (Phase.FETCHING, Event.SHARED, "no-store"): lambda: (expired(), T0 + DAY, (NO_STORE, WAIT)),
    (Phase.FETCHING, Event.LANDED, "an expired record"): lambda: (expired(), T0 + DAY, ()),
    (Phase.FRESH, Event.ASKED, "settled"): lambda: (fresh(), T0 + 10, ()),
    (Phase.FRESH, Event.ASKED, "a record not yet told"): lambda: (seeded(), T0 + 61, ()),
    (Phase.FRESH, Event.SEEDED, "a newer response"): lambda: (
        fresh(),
        T0 + 60,
        (answer(FetchKind.UNAVAILABLE, 404, 60),),
    ),
    (Phase.FRESH, Event.SEEDED, "no newer"): lambda: (fresh(), T0, (GONE,)),
    (Phase.FRESH, Event.SITE_ANSWERED, "no outage"): lambda: (fresh(), T0 + HOUR, ()),
    (Phase.EXPIRED, Event.ASKED, "past its life"): lambda: (fresh(), T0 + DAY, ()),
    (Phase.EXPIRED, Event.FLIGHT, "ask"): lambda: (fresh(), T0 + DAY, (Start.ASK,)),
    (Phase.EXPIRED, Event.FLIGHT, "fetch"): lambda: (fresh(), T0 + DAY, (Start.FETCH,)),
    (Phase.OUTAGE, Event.ASKED, "closed, settled"): lambda: (closed(), T0 + 0.5, ()),
    (Phase.OUTAGE, Event.ASKED, "a quick retry under way"): lambda: (retrying_soon(), T0 + 1, ()),
    (Phase.OUTAGE, Event.ASKED, "12 hours in, a copy"): lambda: (
        fresh_then(DOWN, T0 + DAY + 1),
        T0 + DAY + 13 * HOUR,
        (),
    ),
    (Phase.OUTAGE, Event.ASKED, "12 hours in, no copy"): lambda: (closed(), T0 + 12 * HOUR, ()),
    (Phase.OUTAGE, Event.FLIGHT, "retry"): lambda: (closed(), T0 + 3, (Start.RETRY,)),
    (Phase.OUTAGE, Event.FETCHED, "a quick retry's 2xx"): lambda: (
        retrying_soon(),
        T0 + 2,
        (answer(FetchKind.SUCCESS, 200, 2), WaitBudget(T0, 8.0)),
    ),
    (Phase.OUTAGE, Event.FETCHED, "2xx, nobody waits"): lambda: (
        retrying(),
        T0 + 3,
        (answer(FetchKind.SUCCESS, 200, 3), WaitBudget(T0 + 3, 10.0)),
    ),
    (Phase.OUTAGE, Event.FETCHED, "5xx, nobody waits"): lambda: (
        retrying(),
        T0 + 3,
        (answer(FetchKind.UNREACHABLE, 503, 3), WaitBudget(T0 + 3, 10.0)),
    ),
    (Phase.OUTAGE, Event.SITE_ANSWERED, "first"): lambda: (closed(), T0 + HOUR, ()),
    (Phase.OUTAGE, Event.SITE_ANSWERED, "marked within the hour"): lambda: (
        marked(),
        T0 + HOUR + 60,
        (),
    ),
}


def fresh_then(record: OriginRecord, at: float) -> OriginLifecycle:
    origin = lifecycle()
    origin.loaded(record, at)
    return origin


def test_every_row_has_a_walk_and_every_walk_a_row() -> None:
    rows = [(row.phase, row.event, row.when) for row in TRANSITIONS]
    assert len(set(rows)) == len(rows)  # no row twice
    assert set(rows) == set(WALKS)
    assert {row.phase for row in TRANSITIONS} == set(Phase)
    assert {row.event for row in TRANSITIONS} == set(Event)


def named(row: Transition) -> str:
    return f"{row.phase.value}, {row.event.value}: {row.when}"


@pytest.mark.parametrize("row", TRANSITIONS, ids=named)
def test_spec_lifecycle_table_row(row: Transition) -> None:
    """docs/spec.md, the section the row cites."""
    assert {cite.strip().removeprefix("§") for cite in row.cite.split(",")} <= SECTIONS
    origin, now, data = WALKS[row.phase, row.event, row.when]()
    assert origin.phase(now) is row.phase
    event = getattr(origin, row.event.value)
    if row.event in (Event.FETCHED, Event.SHARED):  # (what, now, the wait left)
        effects = event(data[0], now, data[1])
    else:
        effects = event(*data, now)
    assert tuple(type(effect) for effect in effects) == row.effects
    assert origin.phase(now) is row.then
