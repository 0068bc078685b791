"""Each origin's access, per request: the crawl's one way in to the lifecycles.

What applies to an origin is its lifecycle's to say (``cache/lifecycle.py``,
a machine without I/O). A request asks it once (``current``, ``access``);
when the answer needs I/O, a flight (``driver.LifecycleDriver``: load, fetch, save,
sleep) carries it out, one per origin at a time (``SingleFlight``), and every
request waiting gets its result. Beside them: ``KnownOrigins`` (what this
process knows, bounded) and ``SharedRecords`` (the store, shared across
processes, never fatal). No Scrapy here: the fetch, the clock and the store
are injected.
"""

from __future__ import annotations

import logging
import random as _random
import time
from collections.abc import Callable
from typing import Final

from scrapy_rep.cache.effects import FETCH_NOW, Save, Use
from scrapy_rep.cache.lifecycle import LifecycleRules, OriginLifecycle, Start, shared_parsed_bodies
from scrapy_rep.cache.outcome import Access, FetchOutcome
from scrapy_rep.cache.policy import OriginRecord, PolicyConfig
from scrapy_rep.cache.standing import IN_OUTAGE
from scrapy_rep.cache.storage import MAX_WAIT, MemoryStorage, Sleep, Storage
from scrapy_rep.cache.storage.defaults import MAX_ORIGINS, known_bytes, parsed_bytes
from scrapy_rep.crawler.access.driver import (
    HIT,
    Fetch,
    Landed,
    LifecycleDriver,
    OnAccess,
    OnFetched,
)
from scrapy_rep.crawler.access.known_origins import KnownOrigins, Watch
from scrapy_rep.crawler.access.shared_records import SharedRecords
from scrapy_rep.crawler.access.single_flight import SingleFlight
from scrapy_rep.crawler.async_bridge import FetchStopped, StopSignal
from scrapy_rep.crawler.async_bridge import sleep as reactor_sleep
from scrapy_rep.engine.origin import Origin, robots_url

__all__ = [
    "Count",
    "Fetch",
    "FetchFor",
    "FetchStopped",
    "OnAccess",
    "OnFetched",
    "Resolver",
    "shared_parsed_bodies",
]

logger = logging.getLogger(__name__)

#: What asked (a request, opaque here) -> the fetch made on its behalf: called
#: the moment a flight starts, so that it can note what it needs of the asker
#: then (the proxy its robots.txt goes through), before the asker moves on.
FetchFor = Callable[[object], Fetch]
#: Counts an event: "hit", "miss", "expired", "stale_used", "requests_in_outage/<state>".
Count = Callable[[str], None]

#: Bound of ``Resolver.outages`` (cleared when full).
_MAX_IN_OUTAGE: Final = 100_000
#: robotstxt/requests_in_outage/<state>, per request answered during an
#: outage: the state's word is the report's (``cache.standing.State``).
OUTAGE_COUNTS: Final = {
    access: f"requests_in_outage/{state.value}" for access, state in IN_OUTAGE.items()
}


class Resolver:
    """Per-origin access through each origin's lifecycle, one fetch at a time."""

    def __init__(
        self,
        fetch: Fetch,
        *,
        storage: Storage | None = None,
        policy: PolicyConfig | None = None,
        google_quirks: bool = False,
        clock: Callable[[], float] = time.time,
        on_access: OnAccess | None = None,
        on_fetched: OnFetched | None = None,
        count: Count | None = None,
        sleep: Sleep | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        max_wait: float = MAX_WAIT,
        poll: float = 0.05,
        max_origins: int = MAX_ORIGINS,
        max_bytes: int = known_bytes(),
        parsed_max_bytes: int = parsed_bytes(),
        random: Callable[[], float] = _random.random,
        fetch_for: FetchFor | None = None,
        watch: Watch | None = None,
    ) -> None:
        self._fetch = fetch
        self._fetch_for = fetch_for
        self.policy = policy if policy is not None else PolicyConfig()
        self._clock = clock
        self._sleep = sleep or reactor_sleep
        self._store = SharedRecords(
            storage if storage is not None else MemoryStorage(clock=clock),
            clock,
            sleep=self._sleep,
            max_wait=max_wait,
            poll=poll,
        )
        bodies = shared_parsed_bodies(google_quirks)
        bodies.max_bytes = parsed_max_bytes  # process-wide: the last crawler's
        self._lifecycle_rules = LifecycleRules(self.policy, bodies, random)
        self._count = count or _ignore
        self._known_origins = KnownOrigins(max_origins, max_bytes, watch)
        #: Origins whose record was in an outage when a request of theirs
        #: was last answered: the responses worth telling ``site_answered``. A
        #: superset (an origin leaves it at its next plain answer), so that the
        #: other responses cost the middleware nothing.
        self.outages: set[Origin] = set()
        self._flights: SingleFlight[Origin, Landed] = SingleFlight()
        self._driver = LifecycleDriver(
            self._store,
            self._known_origins,
            self._lifecycle_rules,
            clock=clock,
            sleep=self._sleep,
            unreachable_wait=self.policy.unreachable_wait,
            monotonic=monotonic,
            on_access=on_access,
            on_fetched=on_fetched,
        )

    @property
    def storage(self) -> Storage:
        return self._store.storage

    @storage.setter
    def storage(self, storage: Storage) -> None:
        self._store.storage = storage

    # --- answers ---------------------------------------------------------------

    def current(self, origin: Origin, via: object = None) -> Access | None:
        """The answer if it is known and still applies; never waits.

        May start a background retry (an outage) on behalf of ``via`` and
        counts the lookup, like ``access``; None means "call ``access``".
        """
        lifecycle = self._known_origins.asked_for(origin)
        use = lifecycle.known(self._clock()) if lifecycle is not None else None
        return self._answered(origin, use, HIT, via) if use is not None else None

    def peek(self, origin: Origin, via: object = None) -> Access | None:
        """The answer if it is known and still applies; nothing counted. Like
        ``current``, it starts a retry that is due (for ``via``): an origin
        must not stay closed for want of asking (docs/decisions.md)."""
        use = self._known(origin)
        if use is not None and use.retry:
            self._retry(origin, via)
        return use.access if use is not None else None

    def prefetch(self, origin: Origin, via: object = None) -> None:
        """Start loading (or fetching) the origin's robots.txt now, if nothing
        is known or under way; the requests that come later join that flight.

        Not beyond ``KnownOrigins.room`` answers fetched and not yet asked
        for, or under way: one fetched further ahead of its requests would be
        evicted before they come, and fetched again. Those origins are fetched
        when their requests come instead.
        """
        busy = self._driver.closed or self._flights.pending(origin)
        if busy or self.peek(origin, via) is not None:
            return
        if self._known_origins.go_ahead(origin, len(self._flights), self._flights.pending):
            self._flights.launch(origin, lambda: self._driver.fly(origin, self._fetch_of(via)))

    async def access(
        self, origin: Origin, via: object = None, stop: StopSignal | None = None
    ) -> Access:
        """The access for ``origin``, loading or fetching its robots.txt if needed.

        A fetch this starts is made on behalf of ``via`` (``fetch_for``); one
        already under way is joined, whoever started it. Raises
        ``FetchStopped`` if the fetch it waited for did not start, or once
        ``stop`` fires while it waits.
        """
        lifecycle = self._known_origins.asked_for(origin)
        if lifecycle is not None and FETCH_NOW not in (told := lifecycle.asked(self._clock())):
            use = await self._driver.carry_out(origin, told)  # announced first, if new
            if use is not None:
                return self._answered(origin, use, HIT, via)
        _, how, use = await self._flights.join(
            origin, lambda: self._driver.fly(origin, self._fetch_of(via), Start.FETCH), stop
        )
        return self._answered(origin, use, how, via)

    def pending(self, origin: Origin) -> bool:
        """A load or fetch is under way for ``origin``."""
        return self._flights.pending(origin)

    @property
    def busy(self) -> bool:
        """Some load, fetch or background retry is under way."""
        return self._flights.busy

    def call_when_idle(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once no flight is under way (at once if none is)."""
        self._flights.call_when_idle(callback)

    def record(self, origin: Origin) -> OriginRecord | None:
        lifecycle = self._known_origins.get(origin)
        return lifecycle.record if lifecycle is not None else None

    def last_answer(self, origin: Origin) -> FetchOutcome | None:
        """The robots.txt answer behind the current record, to replay to a spider."""
        lifecycle = self._known_origins.get(origin)
        return lifecycle.replay(robots_url(origin)) if lifecycle is not None else None

    # --- what else the crawl tells us -----------------------------------------------

    async def seed(self, origin: Origin, outcome: FetchOutcome) -> bool:
        """Take a robots.txt response someone else downloaded (a spider's own request).

        Ignored while a fetch is under way or when the record is as new.
        """
        if self._flights.pending(origin) or self._driver.closed:
            return False
        lifecycle = self._known_origins.get(origin)
        if lifecycle is None:
            lifecycle = self._lifecycle_rules.new()
            lifecycle.loaded(await self._store.load(origin), self._clock())
        told = lifecycle.seeded(outcome, self._clock())
        if not told:
            return False
        await self._driver.carry_out(origin, told)  # the save
        self._known_origins.keep(origin, lifecycle)  # its bodies changed: count them again
        return True

    async def site_answered(self, origin: Origin) -> None:
        """A page of ``origin`` answered: during an outage, that matters after 30 days."""
        lifecycle = self._known_origins.get(origin)
        if lifecycle is None:
            return
        for effect in lifecycle.site_answered(self._clock()):
            match effect:
                # A fetch under way (or landing meanwhile) records its outcome on top of this mark.
                case Save() if not self._flights.pending(origin):
                    await self._save_mark(origin, lifecycle, effect)

    async def _save_mark(self, origin: Origin, lifecycle: OriginLifecycle, save: Save) -> None:
        """Save a page's mark unless the record moved on meanwhile (docs/spec.md §2.2)."""
        await self._store.save_unless_newer(origin, save, lambda: lifecycle.record is save.record)

    def drop(self, origin: Origin) -> bool:
        """Forget what this process holds of ``origin`` (``cache forget`` ran;
        ``forget_watch``): its next request loads the store, or fetches, again.
        True if it was held. A flight under way lands as usual."""
        self.outages.discard(origin)
        return self._known_origins.drop(origin)

    def store_failed(self, exc: Exception) -> None:
        """Say once that the store failed (the same one warning as a failed load)."""
        self._store.failed(exc)

    async def close(self) -> None:
        """Stop background retries and close the store."""
        self._driver.closed = True
        self._flights.cancel_all()
        await self._store.close()

    # --- answering ------------------------------------------------------------------------

    def counted_early(self, origin: Origin) -> None:
        """Count a request answered by ``peek`` as ``current`` counts one
        (docs/stats-signals.md): a hit, its outage state, a stale copy."""
        use = self._known(origin)
        if use is not None:
            self._counted(origin, use, HIT)
        else:
            self._count(HIT)

    def _known(self, origin: Origin) -> Use | None:
        """The answer held for ``origin`` if it still applies, settling nothing."""
        lifecycle = self._known_origins.get(origin)
        return lifecycle.known(self._clock()) if lifecycle is not None else None

    def _answered(self, origin: Origin, use: Use, how: str, via: object) -> Access:
        self._counted(origin, use, how)
        if use.retry:
            self._retry(origin, via)
        return use.access

    def _counted(self, origin: Origin, use: Use, how: str) -> None:
        self._known_origins.touch(origin)
        self._count(how)
        if use.stale:
            self._count("stale_used")
        if use.outage is not None:
            if len(self.outages) >= _MAX_IN_OUTAGE:
                self.outages.clear()  # its next checked request puts it back
            self.outages.add(origin)
            self._count(OUTAGE_COUNTS[use.outage])
        elif self.outages:
            self.outages.discard(origin)

    def _retry(self, origin: Origin, via: object) -> None:
        """Start the outage's background retry (unless one is under way):
        requests do not wait for it; it goes ``via``'s way (its proxy)."""
        if not self._driver.closed:
            fly = self._driver.fly
            self._flights.launch(origin, lambda: fly(origin, self._fetch_of(via), Start.RETRY))

    def _fetch_of(self, via: object) -> Fetch:
        """The fetch on behalf of ``via``, told now, as its flight starts."""
        if via is None or self._fetch_for is None:
            return self._fetch
        return self._fetch_for(via)


def _ignore(_: str) -> None:
    return None
