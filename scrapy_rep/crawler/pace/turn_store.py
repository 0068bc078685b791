"""The store side of the pace (docs/politeness.md): where an origin's turns come from.

Turns are reserved in the store every process shares (``pace_of``: a Redis
script, a SQLite transaction, a dict for the memory store), after what this
process knows first: a Retry-After pause it just saw, its own robots.txt
download a moment ago (a request too). A store that cannot pace (a user's
class) leaves each process its own pace (a local memory store), with one
warning: never faster than one process would go. Redis down, each process
paces alone at the delay times the workers Redis last counted
(``FallbackStorage``). Every turn taken so is counted
(``robotstxt/pace/local``, docs/politeness.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

from scrapy_rep.cache.policy import retry_after_delay
from scrapy_rep.cache.storage import FallbackStorage, MemoryStorage
from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY
from scrapy_rep.crawler.access.loop_thread import ThreadedStorage, pace_of
from scrapy_rep.crawler.access.spider_robots import ROBOTS_PATH
from scrapy_rep.engine.origin import Origin, origin_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_rep.cache.storage.protocol import Pacing
    from scrapy_rep.crawler.config.settings import Config, CrawlDelayConfig

__all__ = ["LOCAL", "PAUSED", "WORKERS", "PaceStore"]

logger = logging.getLogger("scrapy_rep.crawler.pace.turns")  # said as the pace

#: Processes whose turns one origin's next time may legitimately be ahead by:
#: a stored time further ahead than a pause plus this many delays is clamped.
_WORKERS_BOUND: Final = 64
_BUSY: Final = (429, 503)
#: Bound of the per-origin memos (cleared when full, as the middleware's).
_MAX_REMEMBERED: Final = 100_000

PAUSED: Final = "robotstxt/pace/paused"
LOCAL: Final = "robotstxt/pace/local"
WORKERS: Final = "robotstxt/pace/workers"


class PaceStore:
    """An origin's turns and pauses, shared through the store (or kept here)."""

    def __init__(
        self,
        crawler: Crawler,
        rep: Config,
        config: CrawlDelayConfig,
        storage_of: Callable[[], object],
        hold: Callable[[Request, float], object] = lambda request, seconds: None,
    ) -> None:
        self._crawler = crawler
        self._storage_of = storage_of
        #: Holds a request's download slot for a pause (``internals.Slots.hold``).
        self._hold = hold
        self._obey = config.obey
        self._retry_after = config.retry_after
        #: Its Retry-After bounds (REP_RETRY_AFTER_MIN, REP_RETRY_AFTER_MAX).
        self._policy = rep.policy
        self._clock = rep.clock
        self.max_ahead = rep.policy.retry_after_max + _WORKERS_BOUND * config.max_delay
        self._local = MemoryStorage(rep.memory_max_origins, clock=time.monotonic)
        self._paused: dict[Origin, float] = {}  # origin -> time.monotonic() it ends
        #: origin -> time.monotonic() its robots.txt came back: a request too.
        self._robots_at: dict[Origin, float] = {}
        self._warned = False
        self._tasks: set[Any] = set()
        #: Turns the store took on its own, its shared part down, counted so far.
        self._local_seen = 0

    def now(self) -> float:
        """The crawl's clock (``REP_CLOCK``), the one a store gives turns on:
        a turn's age is read on it, so an injected clock that stands still
        makes no turn wait for itself."""
        return self._clock()

    def _store(self) -> Pacing:
        storage = self._storage_of()
        shared = pace_of(storage)
        if shared is not None:
            return shared
        self._fall_back(f"the store {type(storage).__name__} keeps no pace")
        return self._local

    async def reserve(self, origin: Origin, interval: float) -> float:
        """Seconds until the origin's next turn (0: now), reserved for this process."""
        key = str(origin)
        # What this process knows first (a pause, its robots.txt download): a
        # turn the store gave and the request did not take would be lost.
        floor = max(self._paused_here(origin), self._after_robots(origin, interval))
        store = self._store()
        try:
            wait = await store.reserve(key, interval, self.max_ahead, floor)
        except Exception as exc:
            self._fall_back(repr(exc))
            return await self._local.reserve(key, interval, self.max_ahead, floor)
        self._count_local(store)
        return wait

    async def going(self, origin: Origin, interval: float) -> float:
        """A reserved turn has come: seconds to wait still (0: go now)."""
        key = str(origin)
        here = self._paused_here(origin)
        if here > 0:
            return here
        store = self._store()
        try:
            left = await store.going(key, interval, self.max_ahead)
        except Exception as exc:
            self._fall_back(repr(exc))
            return await self._local.going(key, interval, self.max_ahead)
        self._count_local(store)
        return left

    def _count_local(self, store: object) -> None:
        """Turns a store took on its own while its shared part was down (Redis,
        ``FallbackStorage``): local turns too, as docs/politeness.md says; and
        the most workers it counted (each delay's factor meanwhile)."""
        inner = store.storage if isinstance(store, ThreadedStorage) else store
        stats = self._crawler.stats
        if not isinstance(inner, FallbackStorage) or stats is None:
            return
        taken = inner.local_turns
        if taken != self._local_seen:
            stats.inc_value(LOCAL, taken - self._local_seen)
        self._local_seen = taken
        stats.max_value(WORKERS, inner.workers)

    def _paused_here(self, origin: Origin) -> float:
        """The pause this process learned itself (before the store has it)."""
        until = self._paused.get(origin)
        if until is None:
            return 0.0
        left = until - time.monotonic()
        if left <= 0:
            del self._paused[origin]
        return left

    def _after_robots(self, origin: Origin, interval: float) -> float:
        """The robots.txt download this process just made counts as a request:
        the first page waits a delay after it (the store has it too, a moment later)."""
        came = self._robots_at.get(origin)
        if came is None:
            return 0.0
        left = came + interval - time.monotonic()
        if left <= 0:
            del self._robots_at[origin]
        return left

    def _fall_back(self, why: str) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.inc_value(LOCAL)
        if not self._warned:
            self._warned = True
            logger.warning(
                "The pace of origins cannot be shared (%s): each process keeps its own "
                "crawl-delay and Retry-After pauses",
                why,
                extra={"spider": self._crawler.spider},
            )

    # --- Retry-After -------------------------------------------------------------------

    def downloaded(
        self, response: Response, request: Request, spider: Spider | None = None
    ) -> None:
        """Learn from a download: this process's robots.txt fetch went (a
        request too), or a 429/503 with Retry-After pauses its origin."""
        if self._obey and urlparse_cached(request).path == ROBOTS_PATH:
            self._robots_went(request)
        if response.status not in _BUSY or not self._retry_after:
            return
        value = response.headers.get(b"Retry-After")
        if not value:
            return
        seconds = retry_after_delay(value.decode("latin-1"), self._clock(), self._policy)
        origin = origin_of(request.url) if seconds is not None else None
        if origin is None or seconds is None:
            return
        here = self._paused_here(origin)
        if here > 0 and here >= seconds - 1.0:
            return  # the pause under way (a second's rounding): said and stored already
        self._paused[origin] = time.monotonic() + seconds
        self._hold(request, seconds)  # what the downloader has queued waits too
        if self._crawler.stats is not None:
            self._crawler.stats.inc_value(PAUSED)
        logger.warning(
            "%(origin)s answered %(status)d with Retry-After %(value)r: no request to it "
            "for %(seconds).0f s, from any process sharing the store (REP_RETRY_AFTER_MIN "
            "%(min)g s, REP_RETRY_AFTER_MAX %(max).0f s)",
            {
                "origin": origin,
                "status": response.status,
                "value": value.decode("latin-1"),
                "seconds": seconds,
                "min": self._policy.retry_after_min,
                "max": self._policy.retry_after_max,
            },
            extra={"spider": self._crawler.spider},
        )
        self._background(self._pause(origin, seconds))

    def _robots_went(self, request: Request) -> None:
        """A robots.txt download: the first page waits a delay after it. The
        store hears of it from ``robots_fetched`` (before the record is shared)
        for this process's own fetches, here for any other (a spider's own)."""
        fetched = origin_of(request.url)
        if fetched is None:
            return
        if len(self._robots_at) >= _MAX_REMEMBERED:
            self._robots_at.clear()
        self._robots_at[fetched] = time.monotonic()
        if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            self._background(self._went(fetched))

    def departed(self, origin: Origin) -> None:
        """A paced request left: the store marks it gone once more, now. Its
        turn was given on the store's clock a moment before, and the answer
        can reach a busy process late; the next turn counts from this mark,
        which comes after the request left (docs/politeness.md)."""
        self._background(self._went(origin))

    async def robots_fetched(self, origin: Origin) -> None:
        """This process fetched the origin's robots.txt: the store knows it
        went before any process reads the record and sends a page after it."""
        if self._obey:
            await self._went(origin)

    async def _went(self, origin: Origin) -> None:
        """Tell the store a request to ``origin`` went now (``going`` with no interval)."""
        try:
            await self._store().going(str(origin), 0.0, self.max_ahead)
        except Exception as exc:
            self._fall_back(repr(exc))

    async def _pause(self, origin: Origin, seconds: float) -> None:
        try:
            await self._store().pause(str(origin), seconds, self.max_ahead)
        except Exception as exc:
            self._fall_back(repr(exc))
            await self._local.pause(str(origin), seconds, self.max_ahead)

    def _background(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            deferred = Deferred.fromCoroutine(coro)
            self._tasks.add(deferred)
            deferred.addBoth(lambda _: self._tasks.discard(deferred))
            return
        task = loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
