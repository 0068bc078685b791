"""The pace of one origin: an atomic "next allowed time" reservation (docs/politeness.md).

Pure: every function takes the store's ``now`` and the stored times, and
returns the new times. Each store runs them (or, for Redis, the same steps
in a Lua script) inside one atomic step: a SQLite transaction, a Redis
script, a dict in one process. Nothing is held during a download: a request
reserves its turn and the store moves the origin's next allowed time on by
the interval, so the next request of any process sharing the store gets the
turn after it.

Three times per origin: ``next_at`` (the turn after the last one handed
out), ``paused_until`` (a ``Retry-After``) and ``went_at`` (when the last
request went). A request that waited says so when its turn comes
(``going``): a pause that began meanwhile holds it, and so does a request of
another process that went late (a busy event loop), so that two requests go
at least ``interval`` apart by the store's clock, whatever each waited. A
stored time that makes no sense (not a number, far ahead: a tampered key, a
clock gone wrong) is clamped, so it can slow one turn down by at most
``max_ahead`` and never stall a crawl.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["Times", "Turn", "follow", "going", "pause", "reserve", "sane"]


class Times(NamedTuple):
    """What the store keeps per origin (None: absent or unreadable)."""

    next_at: float | None = None
    paused_until: float | None = None
    went_at: float | None = None


class Turn(NamedTuple):
    """A step's answer: how long to wait, and the times to store."""

    wait: float  # seconds from ``now``: until the turn, or the pause left
    times: Times


def sane(stored: float | None, now: float, max_ahead: float) -> float:
    """A stored time as one to trust: ``now`` when absent, unreadable or past;
    at most ``now + max_ahead`` (a far-future value is a tampered key)."""
    if stored is None or math.isnan(stored) or stored < now:
        return now
    return min(stored, now + max_ahead)


def _went(stored: float | None, now: float) -> float:
    """When the last request went: never after ``now``; -inf when unknown."""
    if stored is None or math.isnan(stored):
        return -math.inf
    return min(stored, now)


def reserve(
    stored: Times, now: float, interval: float, max_ahead: float, not_before: float = 0.0
) -> Turn:
    """The next turn: after the last one handed out, after any pause, and
    ``not_before`` seconds from now at the earliest; the origin's next allowed
    time moves ``interval`` past it. A turn that is now goes now."""
    interval = max(interval, 0.0)
    pause_end = sane(stored.paused_until, now, max_ahead)
    went = _went(stored.went_at, now)
    start = max(
        sane(stored.next_at, now, max_ahead),
        pause_end,
        min(went + interval, now + max_ahead),
        now + min(max(not_before, 0.0), max_ahead),
    )
    went_at = now if start <= now else (None if math.isinf(went) else went)
    return Turn(start - now, Times(start + interval, pause_end, went_at))


def pause(stored: Times, now: float, seconds: float, max_ahead: float) -> Turn:
    """A ``Retry-After`` of ``seconds``: no turn before then (a longer pause
    already stored is kept). ``wait`` is the pause left."""
    until = max(sane(stored.paused_until, now, max_ahead), now + min(max(seconds, 0.0), max_ahead))
    next_at = max(sane(stored.next_at, now, max_ahead), until)
    return Turn(until - now, Times(next_at, until, stored.went_at))


def going(stored: Times, now: float, interval: float, max_ahead: float) -> Turn:
    """A request that waited for its turn would go now. ``wait`` > 0: not yet
    (a pause began after its turn was handed out, or the last request went
    late, less than ``interval`` ago); wait that long and ask again. 0: it
    goes, and the next turn is ``interval`` from now at the earliest."""
    interval = max(interval, 0.0)
    pause_end = sane(stored.paused_until, now, max_ahead)
    next_at = sane(stored.next_at, now, max_ahead)
    went = _went(stored.went_at, now)
    ready = max(pause_end, min(went + interval, now + max_ahead))
    if ready > now:
        return Turn(ready - now, Times(next_at, pause_end, stored.went_at))
    return Turn(0.0, Times(max(next_at, now + interval), pause_end, now))


def follow(stored: Times, now: float, wait: float, interval: float, max_ahead: float) -> Times:
    """The times after another store (the shared one) gave a turn ``wait``
    seconds from now (0: the request went now), kept by a local stand-in so
    that if the shared store is lost, this process goes on from its own turns.
    The stand-in never vetoes a turn the shared store gave."""
    start = now + min(max(wait, 0.0), max_ahead)
    next_at = max(sane(stored.next_at, now, max_ahead), start + max(interval, 0.0))
    went_at = now if wait <= 0 else stored.went_at
    return Times(next_at, stored.paused_until, went_at)
