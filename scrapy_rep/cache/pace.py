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

__all__ = ["Turn", "pause", "paused_for", "reserve", "sane"]


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


def paused_for(paused_until: float | None, now: float, max_ahead: float) -> float:
    """Seconds of pause left: a request that waited asks this before it goes,
    since a pause may have been set after its turn was handed out."""
    return sane(paused_until, now, max_ahead) - now
