"""Live gauges of the origins a crawl holds: known, closed now, on their last
copy, forbidding the crawler everything (docs/stats-signals.md, "Gauges").

Kept by transitions, never by a rescan: an origin counts from when the
resolver holds it (``access.known_origins``) to when it lets it go (evicted past
``REP_MEMORY_MAX_ORIGINS`` or ``REP_MEMORY_MAX_BYTES``, or forgotten by
``cache forget``), in the categories of its last access, reclassified each
time its access changes (``on_access``). The categories come from
``cache.standing``, the classification of ``scrapy-rep report``. Pure: no
Scrapy; ``Reporter`` puts the values in the crawl's stats.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Final

from scrapy_rep.cache.lifecycle import OriginLifecycle
from scrapy_rep.cache.outcome import Access, AccessState
from scrapy_rep.cache.policy_config import PolicyConfig
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.standing import RULED, State, forbids_everything, standing

__all__ = ["CLOSED", "FORBIDS_ALL", "GAUGES", "LAST_COPY", "OriginGauges", "gauge_bits"]

#: An origin's categories, as bits.
CLOSED: Final = 1
LAST_COPY: Final = 2
FORBIDS_ALL: Final = 4
#: The stats, and the bit each counts (0: every origin known). They count
#: origins (``robotstxt/requests_in_outage/<state>`` counts requests), in the
#: report's words: its states (``State``) and its flag ``forbids-all``.
GAUGES: Final = {
    "robotstxt/origins_now/known": 0,
    f"robotstxt/origins_now/{State.CLOSED.value}": CLOSED,
    f"robotstxt/origins_now/{State.LAST_COPY.value}": LAST_COPY,
    "robotstxt/origins_now/forbids-all": FORBIDS_ALL,
}


def gauge_bits(
    record: OriginRecord | None,
    access: Access,
    now: float,
    policy: PolicyConfig,
    tokens: Sequence[str],
) -> int:
    """An origin's categories now: its state by ``cache.standing``; forbidding
    everything when its rules apply and forbid ``tokens`` every path
    (``cache.standing.forbids_everything``)."""
    found = standing(record, now, policy) if record is not None else None
    if found is None:  # nothing stored to go by: what the crawl applies
        return CLOSED if access.state is AccessState.CLOSED else 0
    bits = CLOSED if found.state is State.CLOSED else 0
    if found.state is State.LAST_COPY:
        bits |= LAST_COPY
    robots = access.robots
    if found.state in RULED and robots is not None and forbids_everything(robots, tokens):
        bits |= FORBIDS_ALL
    return bits


class OriginGauges:
    """Each origin the resolver holds (its lifecycle, and its categories: None
    until its access is first known), and the count of each gauge;
    ``on_batch`` is called every ``batch`` changes (``Reporter.set_gauges``)."""

    def __init__(
        self,
        policy: PolicyConfig | None = None,
        clock: Callable[[], float] = time.time,
        tokens: Callable[[], Sequence[str]] = tuple,
        batch: int = 100,
    ) -> None:
        self._policy = policy if policy is not None else PolicyConfig()
        self._clock = clock
        self._tokens = tokens
        self._held: dict[Hashable, OriginLifecycle] = {}
        self._bits: dict[Hashable, int | None] = {}
        self._counts = dict.fromkeys(GAUGES, 0)
        self._batch = batch
        self.on_batch: Callable[[], object] | None = None
        self.changes = 0

    def watch(self, origin: Hashable, lifecycle: OriginLifecycle | None) -> None:
        """``KnownOrigins``' watch: ``origin`` held anew (its lifecycle), or let go (None)."""
        if lifecycle is None:
            self._held.pop(origin, None)
            if origin in self._bits:
                self._count(self._bits.pop(origin), -1)
                self._changed()
            return
        self._held[origin] = lifecycle
        access = lifecycle.access
        self._set(origin, None if access is None else self._classify(lifecycle.record, access))

    def resolved(self, origin: Hashable, access: Access) -> None:
        """``origin``'s access is new (``on_access``): its categories now, if it is held."""
        lifecycle = self._held.get(origin)
        if lifecycle is not None:
            self._set(origin, self._classify(lifecycle.record, access))

    def values(self) -> dict[str, int]:
        return dict(self._counts)

    def _classify(self, record: OriginRecord | None, access: Access) -> int:
        return gauge_bits(record, access, self._clock(), self._policy, self._tokens())

    def _set(self, origin: Hashable, bits: int | None) -> None:
        old = self._bits.get(origin, -1)
        if old == bits:
            return
        if old != -1:
            self._count(old, -1)
        self._bits[origin] = bits
        self._count(bits, 1)
        self._changed()

    def _count(self, bits: int | None, step: int) -> None:
        if bits is None:
            return
        for stat, bit in GAUGES.items():
            if bit == 0 or bits & bit:
                self._counts[stat] += step

    def _changed(self) -> None:
        self.changes += 1
        if self.changes >= self._batch and self.on_batch is not None:
            self.on_batch()
