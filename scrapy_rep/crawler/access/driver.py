"""The driver of an origin's lifecycle for one flight: load, fetch, save, sleep.

A flight (one per origin at a time, ``SingleFlight``) tells the origin's
``OriginLifecycle`` each event once (the flight's start, the record loaded,
each fetch's outcome or another process's record) and carries out the
effects it hands back in one loop (``carry_out``), in order, until an answer
for the requests that wait: ``FetchNow`` (through the store's single flight,
docs/spec.md §3.5), ``WaitUntil`` (a first failure's quick retry, docs/spec.md
§2.2), ``Save``, ``Announce``, ``Use``.

Quick retries are bounded twice: by the lifecycle on the crawl's clock, and
here by ``unreachable_wait`` of real time (``monotonic``), so a crawl never
hangs on a dead origin whatever its clock says.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from twisted.internet.defer import CancelledError

from scrapy_rep.cache.effects import (
    FETCH_NOW,
    Announce,
    Effect,
    Effects,
    FetchNow,
    Save,
    Use,
    WaitBudget,
    WaitUntil,
)
from scrapy_rep.cache.lifecycle import LifecycleRules, OriginLifecycle, Start
from scrapy_rep.cache.outcome import Access, FetchKind, FetchOutcome
from scrapy_rep.cache.storage import Sleep
from scrapy_rep.crawler.access.known_origins import KnownOrigins
from scrapy_rep.crawler.access.shared_records import SharedRecords
from scrapy_rep.engine.origin import Origin, robots_url

__all__ = ["EXPIRED", "HIT", "MISS", "Fetch", "Landed", "LifecycleDriver"]

logger = logging.getLogger("scrapy_rep.crawler.access.resolver")

Fetch = Callable[[Origin], Awaitable[FetchOutcome]]
#: After the fetches of one flight (a first failure and its quick retries,
#: or one refresh), with the Access they lead to (logs).
OnFetched = Callable[[Origin, list[FetchOutcome], Access], None]
#: When an origin's Access is set or changes in this process, before the
#: requests that asked are answered; ``fetched`` is the fetch behind it, if
#: this process just made one (signals, stats).
OnAccess = Callable[[Origin, Access, "FetchOutcome | None"], Awaitable[None]]

#: How a request's answer was found (the robotstxt/cache/<how> stats).
HIT: Final = "hit"
MISS: Final = "miss"
EXPIRED: Final = "expired"

#: A flight's result: the lifecycle it settled, how its answer was found, the answer.
Landed = tuple[OriginLifecycle, str, Use]


@dataclass(frozen=True, slots=True)
class _Flight:
    """What a flight's fetches need: the lifecycle told, the fetch, and until
    when (``monotonic``) since when (the clock) its requests may wait, if any do."""

    lifecycle: OriginLifecycle
    fetch: Fetch
    since: float
    until: float


class LifecycleDriver:
    """Flies flights: what they need of the crawl, and whether it is closing."""

    def __init__(
        self,
        store: SharedRecords,
        states: KnownOrigins,
        lifecycles: LifecycleRules,
        *,
        clock: Callable[[], float],
        sleep: Sleep,
        unreachable_wait: float,
        monotonic: Callable[[], float] = time.monotonic,
        on_access: OnAccess | None,
        on_fetched: OnFetched | None,
    ) -> None:
        self._store = store
        self._known_origins = states
        self._lifecycle_rules = lifecycles
        self._clock = clock
        self._sleep = sleep
        self._unreachable_wait = unreachable_wait
        self._monotonic = monotonic
        self._on_access = on_access
        self._on_fetched = on_fetched
        self.closed = False

    async def announce(self, origin: Origin, announce: Announce) -> None:
        """Tell the crawl before any waiter is answered: the flight's fetches, a new access."""
        try:
            if announce.outcomes and self._on_fetched is not None:
                self._on_fetched(origin, list(announce.outcomes), announce.access)
            if announce.new and self._on_access is not None:
                await self._on_access(origin, announce.access, announce.fetched)
        except Exception:
            logger.exception("Handling the robots.txt of %s failed", origin)

    async def fly(self, origin: Origin, fetch_it: Fetch, start: Start = Start.ASK) -> Landed:
        """Load (a new origin), fetch with ``fetch_it`` while the lifecycle
        says so, announce: the answer for the flight's waiters."""
        lifecycle = self._known_origins.get(origin)
        how, answer = HIT, None
        try:
            if lifecycle is None:
                lifecycle = self._known_origins.keep(origin, self._lifecycle_rules.new())
                effects = lifecycle.loaded(await self._store.load(origin), self._clock())
                if start is Start.RETRY:
                    effects = lifecycle.flight(start, self._clock())
            else:
                effects = lifecycle.flight(start, self._clock())
            if FETCH_NOW in effects:
                how = MISS if lifecycle.record is None else EXPIRED
            until = self._monotonic() + self._unreachable_wait
            flight = _Flight(lifecycle, fetch_it, self._clock(), until)
            answer = await self.carry_out(origin, effects, flight)
        except CancelledError:  # Twisted's: a close, never an answer to record
            raise
        except Exception:
            logger.exception("Resolving the robots.txt of %s failed", origin)
        if lifecycle is None:
            lifecycle = self._lifecycle_rules.new()
        if answer is None:
            answer = await self.carry_out(origin, lifecycle.landed(self._clock()))
        assert answer is not None, "landing always answers"
        self._known_origins.keep(origin, lifecycle)  # evicted meanwhile? it is the newest now
        return lifecycle, how, answer

    async def carry_out(
        self, origin: Origin, effects: Effects, flight: _Flight | None = None
    ) -> Use | None:
        """Do what an event of the lifecycle says, in order, and what the
        events of the fetches it starts say after it: the answer, if any."""
        todo: deque[Effect] = deque(effects)
        answer: Use | None = None
        while todo:
            match todo.popleft():
                case FetchNow() as fetch_now:
                    assert flight is not None, "a fetch outside a flight"
                    todo.extend(await self._fetch_once(origin, flight, fetch_now))
                case WaitUntil(at=at):
                    await self._sleep(max(at - self._clock(), 0.0))
                case Save() as save:
                    await self._store.save(origin, save)
                case Announce() as announce:
                    await self.announce(origin, announce)
                case Use() as answer:
                    pass
        return answer

    async def _fetch_once(self, origin: Origin, flight: _Flight, fetch_now: FetchNow) -> Effects:
        """Fetch, across every process sharing the store unless ``fetch_now``
        says here or nobody shares it: the lifecycle's effects after it (the
        save already done by the store's single flight)."""
        lifecycle = flight.lifecycle

        def budget() -> WaitBudget | None:
            """Read when the fetch ended: what the requests may still wait."""
            if self.closed:
                return None
            return WaitBudget(flight.since, flight.until - self._monotonic())

        async def fetched() -> Effects:
            outcome = await _fetch_safely(flight.fetch, origin, self._clock)
            return lifecycle.fetched(outcome, self._clock(), budget())

        if not fetch_now.shared or self._store.in_process:
            return await fetched()
        saved: list[Save] = []  # the store's single flight writes it, under its lease
        after: list[Effect] = []

        async def fetch() -> Save:
            for effect in await fetched():
                match effect:
                    case Save():
                        saved.append(effect)
                    case _:
                        after.append(effect)
            return saved[-1]

        known = lifecycle.record
        newer_than = known.fetched_at if known is not None else None
        record = await self._store.fetch_once(origin, fetch, newer_than)
        if not saved:
            if record is not None:  # another process fetched it
                return lifecycle.shared(record, self._clock(), budget())
            await fetch()  # the store failed: fetch here, nothing saved
        else:
            await self._keep_marks(origin, lifecycle, saved[-1])
        return tuple(after)

    async def _keep_marks(self, origin: Origin, lifecycle: OriginLifecycle, saved: Save) -> None:
        """A page that answered while the fetch was saving marked its record
        after the save was made (``Resolver.site_answered`` leaves it to the
        fetch): save the marked record too."""
        now = lifecycle.record
        if now is None or now is saved.record:
            return
        if now.fetched_at == saved.record.fetched_at:
            await self._store.save(origin, Save(now, saved.keep))


async def _fetch_safely(fetch: Fetch, origin: Origin, clock: Callable[[], float]) -> FetchOutcome:
    try:
        return await fetch(origin)
    except CancelledError:  # Twisted's (an Exception): the crawl closed, as asyncio's would
        raise
    except Exception as exc:  # the fetch should not raise; never strand waiters
        logger.exception("Fetching %s failed", robots_url(origin))
        return FetchOutcome(
            FetchKind.UNREACHABLE,
            robots_url(origin),
            clock(),
            reason=f"{type(exc).__name__}: {exc}",
        )
