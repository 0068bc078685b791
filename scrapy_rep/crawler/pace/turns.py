"""One pace per origin for every process sharing the store (docs/politeness.md).

With ``REP_CRAWL_DELAY = "obey"`` each page request of an origin with a
crawl-delay (or request-rate) reserves its turn in the store before it goes
(``scrapy_rep.cache.pace``; a Redis script, a SQLite transaction, a dict for
the memory store: one process is one worker). The store hands turns out
``interval`` apart across every process, so the site sees the pace it asked
for however many workers crawl it. Nothing is held during a download.

A request whose turn is in the future waits parked (``Parking``): it holds
no place in CONCURRENT_REQUESTS and blocks nothing. In one process only the
first waiting request of an origin holds a reservation; the others wait in
line behind it, so the store never hands out more turns than there are
processes.

A turn is spent as the request leaves (docs/politeness.md): one that waited
takes a place, and waits until its download slot would send it at once
(``internals.Slots``), before the store's last word (``going``): a pause
may have begun after its turn was handed out, or another request may have
gone less than a delay ago. Its line moves on, and the store marks it gone
again (``departed``), only once it left. Spent earlier, a turn let a request
that then waited for a place go late and the next one on time.

``Retry-After`` on a 429 or 503 (a page or robots.txt) pauses the origin in
the store for every worker, within ``REP_RETRY_AFTER_MIN`` and ``_MAX``; a
request waiting for its slot asks the store as it leaves, and what the slot
has queued already is held with it (``Slots.hold``).

Store round trips: a request whose turn is now makes one (``reserve``). A
request that waited makes two more (``going`` as it leaves, the ``departed``
mark after). Such requests go at most once per crawl-delay per origin, so
the trips cost nothing a crawl would notice.

A store that cannot pace (a user's class, a store down) leaves each process
its own pace, with one warning: never faster than one process would go; a
Redis down, at the delay times the workers it last counted
(docs/politeness.md, "Faults").
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from scrapy import signals as scrapy_signals
from twisted.internet.defer import Deferred

from scrapy_rep.crawler.async_bridge import sleep, unless_stopped, wait
from scrapy_rep.crawler.config.settings import Config, CrawlDelayConfig
from scrapy_rep.crawler.internals import Slots
from scrapy_rep.crawler.pace.seat import Lead, Seat
from scrapy_rep.crawler.pace.turn_store import PaceStore
from scrapy_rep.engine.origin import Origin

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.crawler.internals import Parking
    from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["Pace", "pacing"]

logger = logging.getLogger(__name__)

#: Bound of the per-origin memos (cleared when full, as the middleware's).
_MAX_REMEMBERED: Final = 100_000
#: Added to every crawl-delay: the allowance for the time between a turn and
#: the request reaching the site, which varies with each process's event loop
#: (the turns themselves are spaced on the store's one clock).
MARGIN: Final = 0.05

WAITED: Final = "robotstxt/pace/waited"
#: The seconds every paced request waited, added up over the requests: with
#: many requests waiting at once it exceeds the crawl's own length
#: (docs/politeness.md, "Stats"). ``WAIT_SECONDS_OLD`` is its former name, kept
#: as an alias with the same value until 1.0.
WAIT_SECONDS: Final = "robotstxt/pace/wait_seconds_summed"
WAIT_SECONDS_OLD: Final = "robotstxt/pace/wait_seconds"
#: The longest one request waited for its origin's turn.
WAIT_LONGEST: Final = "robotstxt/pace/wait_seconds_longest"
WAITING_MAX: Final = "robotstxt/pace/waiting_max"
REQUEUED: Final = "robotstxt/pace/requeued_on_stop"


def pacing(robots: RobotsTxt, tokens: tuple[str, ...]) -> float | None:
    """The slowest of the group's ``crawl-delay`` and ``request-rate`` (seconds apart)."""
    found = [v for v in (robots.crawl_delay(tokens), robots.request_rate(tokens)) if v is not None]
    return max(found) if found else None


class Pace:
    """The middleware's pace; ``Pace.of`` gives None when it is off."""

    def __init__(
        self,
        crawler: Crawler,
        parking: Parking,
        tokens_for: Callable[[Request], tuple[str, ...]],
        storage_of: Callable[[], object],
        config: CrawlDelayConfig,
    ) -> None:
        self._crawler = crawler
        self._parking = parking
        self._tokens_for = tokens_for
        self._obey = config.obey
        self._retry_after = config.retry_after
        self._max_delay = config.max_delay
        self._slots = Slots(crawler)
        self._store = PaceStore(crawler, Config.of(crawler), config, storage_of, self._slots.hold)
        self._intervals: dict[Origin, tuple[object, tuple[str, ...], float]] = {}
        self._lines: dict[Origin, deque[Deferred[None]]] = {}
        self._waiting = 0
        crawler.signals.connect(self._store.downloaded, signal=scrapy_signals.response_downloaded)

    @classmethod
    def of(
        cls,
        crawler: Crawler,
        parking: Parking,
        tokens_for: Callable[[Request], tuple[str, ...]],
        storage_of: Callable[[], object],
    ) -> Pace | None:
        """None unless REP_CRAWL_DELAY or REP_RETRY_AFTER is "obey": no cost then."""
        config = CrawlDelayConfig.from_settings(crawler.settings)
        if not config.obey and not config.retry_after:
            return None
        return cls(crawler, parking, tokens_for, storage_of, config)

    async def robots_fetched(self, origin: Origin) -> None:
        """The origin's robots.txt was fetched here: a request, the store hears
        it before the record is shared (``PaceStore.robots_fetched``)."""
        await self._store.robots_fetched(origin)

    # --- a request's turn ----------------------------------------------------------

    async def turn(self, request: Request, origin: Origin, access: Access) -> Request | None:
        """Wait for the request's turn: None to go on; the request itself (to
        the scheduler again) if the crawl stopped while it waited."""
        interval = self._interval(origin, access, request)
        if interval is None:
            return None
        lined = interval > 0
        lead = Lead(self._leave(origin), lined)
        if lined and origin in self._lines:  # another request leads: behind it
            lead.head = False
            return await self._wait(request, origin, interval, None, lead)
        if lined:
            self._lines[origin] = deque()  # this request is the head of the line
        if not self._slots.room(request):  # its turn would be spent in the slot's queue
            return await self._wait(request, origin, interval, None, lead)
        try:
            first = await self._store.reserve(origin, interval)
        except BaseException:
            lead.leave()
            raise
        if first <= 0 and self._slots.room(request):
            self._gone(request, origin, lead)
            return None
        return await self._wait(request, origin, interval, first, lead, self._store.now())

    def _interval(self, origin: Origin, access: Access, request: Request) -> float | None:
        """Seconds between two turns of the origin (0: only pauses); None: no pacing."""
        interval = 0.0
        robots = access.robots
        if self._obey and robots is not None:
            tokens = self._tokens_for(request)
            known = self._intervals.get(origin)
            if known is not None and known[0] is robots and known[1] == tokens:
                interval = known[2]
            else:
                wanted = pacing(robots, tokens)
                interval = min(wanted, self._max_delay) + MARGIN if wanted else 0.0
                if len(self._intervals) >= _MAX_REMEMBERED:
                    self._intervals.clear()
                self._intervals[origin] = (robots, tokens, interval)
        if interval <= 0 and not self._retry_after:
            return None
        return interval

    async def _wait(
        self,
        request: Request,
        origin: Origin,
        interval: float,
        first: float | None,
        lead: Lead,
        answered: float = 0.0,
    ) -> Request | None:
        """``first``: the turn reserved (seconds to it), ``answered`` when
        (the store's clock, ``PaceStore.now``); None: not reserved yet (the request waits in
        line, or for its download slot)."""
        seat = Seat(self._parking, request)
        waited = _Waited(self)
        try:
            went = await unless_stopped(
                self._take_turn(request, origin, interval, (first, answered), lead, seat, waited),
                self._parking.stop_signal,
            )
            if not went:
                if self._crawler.stats is not None:
                    self._crawler.stats.inc_value(REQUEUED)
                return request.replace(dont_filter=True)
            self._gone(request, origin, lead)
            return None
        finally:
            lead.leave()  # it went (or gave up): the next of the line reserves now
            seat.finish()
            waited.end()

    async def _take_turn(
        self,
        request: Request,
        origin: Origin,
        interval: float,
        reserved: tuple[float | None, float],
        lead: Lead,
        seat: Seat,
        waited: _Waited,
    ) -> bool:
        """Wait until the request may go; False: the crawl is stopping."""
        seat.leave()
        first, answered = reserved
        if first is None:
            if lead.lined and not lead.head:
                waited.begin()
                await self._in_line(origin)
                lead.head = True
            while not self._slots.room(request):
                await self._slots.wait_room(request)
            first = await self._store.reserve(origin, interval)
            answered = self._store.now()
        wait_for, mine = first, first <= 0  # mine: the store counts it as gone now
        while True:
            if wait_for > 0:
                waited.begin()
                seat.leave()  # no place held while it sleeps
                logger.debug("%s: turn in %.3f s", origin, wait_for)
                await sleep(wait_for)
            delayed = await self._ready(request, seat)
            if delayed is None:
                return False
            if mine and not delayed:
                return True
            # The store's last word, now that nothing stands between the request
            # and the site: not yet if a pause began, or another request went
            # less than a delay ago; else it goes, and the store says so. A turn
            # the store counted as gone when it answered (``mine``) waits only
            # for a request of another worker that went since: its own mark is
            # that long ago, the other's less (docs/politeness.md).
            since = self._store.now() - answered
            wait_for = await self._store.going(origin, min(interval, since) if mine else interval)
            mine, answered = wait_for <= 0, self._store.now()
            if mine and self._slots.room(request):
                return True

    def _gone(self, request: Request, origin: Origin, lead: Lead) -> None:
        """The request goes to its slot now: the slot counts it, the store marks
        it gone once more (``departed``), the next of its line reserves."""
        self._slots.sent(request)
        lead.leave()
        if lead.lined:
            self._store.departed(origin)

    async def _ready(self, request: Request, seat: Seat) -> bool | None:
        """Until its download slot would send it at once and it has a place:
        whether it had to wait for either; None: the crawl is stopping."""
        delayed = False
        while True:
            if not self._slots.room(request):
                seat.leave()
                await self._slots.wait_room(request)
                delayed = True
                continue
            if not seat.take_free():
                if not await seat.sit():
                    return None
                delayed = True
            if self._slots.room(request):  # still, after waiting for the place
                return delayed

    async def _in_line(self, origin: Origin) -> None:
        line = self._lines.get(origin)
        if line is None:  # the line emptied meanwhile: this request leads it now
            self._lines[origin] = deque()
            return
        waiter: Deferred[None] = Deferred()
        line.append(waiter)
        await wait(waiter)

    def _leave(self, origin: Origin) -> Callable[[], None]:
        return lambda: self._next_in_line(origin)

    def _next_in_line(self, origin: Origin) -> None:
        """The head went: the next request of the line reserves its turn."""
        line = self._lines.get(origin)
        while line:
            waiter = line.popleft()
            if not waiter.called:  # a cancelled one has been called already
                waiter.callback(None)
                return
        self._lines.pop(origin, None)


class _Waited:
    """One request's wait for its turn, counted once in the stats."""

    __slots__ = ("_pace", "_since")

    def __init__(self, pace: Pace) -> None:
        self._pace = pace
        self._since: float | None = None

    def begin(self) -> None:
        if self._since is not None:
            return
        self._since = time.monotonic()
        pace = self._pace
        pace._waiting += 1
        stats = pace._crawler.stats
        if stats is not None:
            stats.inc_value(WAITED)
            stats.max_value(WAITING_MAX, pace._waiting)

    def end(self) -> None:
        if self._since is None:
            return
        pace = self._pace
        pace._waiting -= 1
        stats = pace._crawler.stats
        if stats is not None:
            this = time.monotonic() - self._since
            waited = round(stats.get_value(WAIT_SECONDS, 0.0) + this, 3)
            stats.set_value(WAIT_SECONDS, waited)
            stats.set_value(WAIT_SECONDS_OLD, waited)
            stats.max_value(WAIT_LONGEST, round(this, 3))
        self._since = None
