"""The driver of an origin's lifecycle for one flight: load, fetch, save, sleep.

A flight (one per origin at a time, ``SingleFlight``) tells the origin's
``OriginLifecycle`` each event once (the record loaded, each fetch's outcome
or another process's record) and carries out the effects it hands back, in
order, until an answer for the requests that wait: ``FetchNow`` (through the
store's single flight, docs/spec.md §3.5), ``WaitUntil`` (a first failure's
quick retry, docs/spec.md §2.2), ``Save``, ``Announce``, ``Use``.

Quick retries are bounded twice: by the lifecycle on the crawl's clock, and
here by ``unreachable_wait`` of real time (``monotonic``), so a crawl never
hangs on a dead origin whatever its clock says.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from scrapy_rep.cache.lifecycle import (
    FETCH_NOW,
    Announce,
    Effect,
    FetchNow,
    LifecycleRules,
    OriginLifecycle,
    Save,
    Use,
    Waiting,
    WaitUntil,
)
from scrapy_rep.cache.outcome import Access, FetchKind, FetchOutcome
from scrapy_rep.cache.storage import Sleep
from scrapy_rep.crawler.access.known_origins import KnownOrigins
from scrapy_rep.crawler.access.shared_records import SharedRecords
from scrapy_rep.engine.origin import Origin, robots_url

__all__ = ["ASK", "EXPIRED", "FETCH", "HIT", "MISS", "RETRY", "Fetch", "Landed", "LifecycleDriver"]

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

#: How a flight starts: ask the lifecycle first, or fetch (it said so), or
#: retry in the background (nobody waits: no quick retries).
ASK: Final = "ask"
FETCH: Final = "fetch"
RETRY: Final = "retry"

#: A flight's result: the lifecycle it settled, how its answer was found, the answer.
Landed = tuple[OriginLifecycle, str, Use]


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
        self._states = states
        self._lifecycles = lifecycles
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
                self._on_fetched(origin, list(announce.outcomes), announce.use.access)
            if announce.new and self._on_access is not None:
                await self._on_access(origin, announce.use.access, announce.fetched)
        except Exception:
            logger.exception("Handling the robots.txt of %s failed", origin)

    async def fly(self, origin: Origin, fetch_it: Fetch, start: str = ASK) -> Landed:
        """Load (a new origin), fetch with ``fetch_it`` while the lifecycle
        says so, announce: the answer for the flight's waiters."""
        lifecycle = self._states.get(origin)
        how, answer = HIT, None
        try:
            effects: list[Effect] = [FETCH_NOW]
            if lifecycle is None:
                lifecycle = self._states.keep(origin, self._lifecycles.new())
                loaded = lifecycle.loaded(await self._store.load(origin), self._clock())
                effects = [loaded] if start is not RETRY else effects
            elif start is ASK:
                effects = [lifecycle.asked(self._clock()) or FETCH_NOW]
            if isinstance(effects[0], FetchNow):
                how = MISS if lifecycle.record is None else EXPIRED
            deadline = self._monotonic() + self._unreachable_wait
            since = self._clock()
            while effects:
                effect = effects.pop(0)
                if isinstance(effect, WaitUntil):
                    await self._sleep(max(effect.at - self._clock(), 0.0))
                    effect = FETCH_NOW
                if isinstance(effect, FetchNow):
                    waits = start is not RETRY
                    effects = await self._fetch_once(
                        origin, lifecycle, fetch_it, effect, (since, deadline) if waits else None
                    )
                elif isinstance(effect, Save):
                    await self._store.save(origin, effect)
                else:
                    answer = effect
                    if isinstance(effect, Announce):
                        await self.announce(origin, effect)
        except Exception:
            logger.exception("Resolving the robots.txt of %s failed", origin)
        if lifecycle is None:
            lifecycle = self._lifecycles.new()
        if answer is None:
            answer = lifecycle.landed(self._clock())
            if isinstance(answer, Announce):
                await self.announce(origin, answer)
        self._states.keep(origin, lifecycle)  # evicted meanwhile? it is the newest now
        return lifecycle, how, answer.use if isinstance(answer, Announce) else answer

    async def _fetch_once(
        self,
        origin: Origin,
        lifecycle: OriginLifecycle,
        fetch_it: Fetch,
        effect: FetchNow,
        wait: tuple[float, float] | None,
    ) -> list[Effect]:
        """Fetch, across every process sharing the store unless ``effect`` says
        here or nobody shares it; the lifecycle's effects after it (the save already done by the
        store's single flight). ``wait``: since when requests wait (the
        clock), and until when they may (``monotonic``)."""
        told: list[list[Effect]] = []

        def waiting() -> Waiting | None:
            """Read when the fetch ended: what the requests may still wait."""
            if wait is None or self.closed:
                return None
            return Waiting(wait[0], wait[1] - self._monotonic())

        async def fetch() -> Save:
            outcome = await _fetch_safely(fetch_it, origin, self._clock)
            told.append(lifecycle.fetched(outcome, self._clock(), waiting()))
            save = told[-1][0]
            assert isinstance(save, Save)
            return save

        if not effect.shared or self._store.in_process:
            await fetch()
            return told[-1]
        known = lifecycle.record
        newer_than = known.fetched_at if known is not None else None
        record = await self._store.fetch_once(origin, fetch, newer_than)
        if record is None and not told:  # the store failed: fetch here, nothing saved
            await fetch()
        elif told:
            await self._keep_marks(origin, lifecycle, told[-1][0])
        if record is None or told:
            return told[-1][1:]
        return [lifecycle.shared(record, self._clock(), waiting())]

    async def _keep_marks(self, origin: Origin, lifecycle: OriginLifecycle, saved: Effect) -> None:
        """A page that answered while the fetch was saving marked its record
        after the save was made (``Resolver.site_answered`` leaves it to the
        fetch): save the marked record too."""
        now = lifecycle.record
        if not isinstance(saved, Save) or now is None or now is saved.record:
            return
        if now.fetched_at == saved.record.fetched_at:
            await self._store.save(origin, Save(now, saved.keep))


async def _fetch_safely(fetch: Fetch, origin: Origin, clock: Callable[[], float]) -> FetchOutcome:
    try:
        return await fetch(origin)
    except Exception as exc:  # the fetch should not raise; never strand waiters
        logger.exception("Fetching %s failed", robots_url(origin))
        return FetchOutcome(
            FetchKind.UNREACHABLE,
            robots_url(origin),
            clock(),
            reason=f"{type(exc).__name__}: {exc}",
        )
