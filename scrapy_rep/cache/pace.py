"""The pace of one origin: an atomic "next allowed time" reservation (issue 26).

Pure: every function takes the store's ``now`` and the stored times, and
returns the new times. Each store runs them (or, for Redis, the same steps
in a Lua script) inside one atomic step: a SQLite transaction, a Redis
script, a dict in one process. Nothing is held during a download: a request
reserves its turn and the store moves the origin's next allowed time on by
the interval, so the next request of any process sharing the store gets the
turn after it.

Two times per origin: ``next_at`` (the turn after the last one handed out)
and ``paused_until`` (a ``Retry-After``). A stored time that makes no sense
(not a number, in the past, further ahead than ``max_ahead``: a tampered key,
a clock gone wrong) is clamped, so it can slow one turn down by at most
``max_ahead`` and never stall a crawl.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["Turn", "going", "pause", "reserve", "sane"]


class Turn(NamedTuple):
    """A reservation: how long to wait, and the times to store."""

    wait: float  # seconds from ``now`` until the request may go
    next_at: float
    paused_until: float


def sane(stored: float | None, now: float, max_ahead: float) -> float:
    """A stored time as one to trust: ``now`` when absent, unreadable or past;
    at most ``now + max_ahead`` (a far-future value is a tampered key)."""
    if stored is None or math.isnan(stored) or stored < now:
        return now
    return min(stored, now + max_ahead)


def reserve(
    next_at: float | None,
    paused_until: float | None,
    now: float,
    interval: float,
    max_ahead: float,
    not_before: float = 0.0,
) -> Turn:
    """The next turn: after the last one handed out, after any pause, and
    ``not_before`` seconds from now at the earliest; the origin's next allowed
    time moves ``interval`` past it."""
    pause_end = sane(paused_until, now, max_ahead)
    start = max(sane(next_at, now, max_ahead), pause_end, now + min(not_before, max_ahead))
    return Turn(start - now, start + max(interval, 0.0), pause_end)


def pause(
    next_at: float | None,
    paused_until: float | None,
    now: float,
    seconds: float,
    max_ahead: float,
) -> Turn:
    """A ``Retry-After`` of ``seconds``: no turn before then (a longer pause
    already stored is kept). ``wait`` is the pause left."""
    until = max(sane(paused_until, now, max_ahead), now + min(max(seconds, 0.0), max_ahead))
    return Turn(until - now, max(sane(next_at, now, max_ahead), until), until)


def going(
    next_at: float | None,
    paused_until: float | None,
    now: float,
    interval: float,
    max_ahead: float,
) -> Turn:
    """A request that waited for its turn goes now: unless a pause began
    after its turn was handed out (``wait`` is then the pause left), the next
    turn is at least ``interval`` from now, so a turn taken late (a busy event
    loop) does not squeeze the gap to the next one."""
    pause_end = sane(paused_until, now, max_ahead)
    stored = sane(next_at, now, max_ahead)
    if pause_end > now:
        return Turn(pause_end - now, stored, pause_end)
    return Turn(0.0, max(stored, now + max(interval, 0.0)), pause_end)
