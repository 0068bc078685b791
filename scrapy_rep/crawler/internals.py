"""Every reach into Scrapy beyond its documented API, in one place.

Each helper degrades to doing nothing (and says so by its return value) when
Scrapy's internals look different, so a Scrapy upgrade cannot break a crawl
through this module; it can only lose the optimisation. ``missing_internals``
looks for each fact below when the spider opens and the crawl warns, naming
what it lacks (docs/decisions.md, "Scrapy's moving parts"): nothing is lost
silently. tests/crawler/test_internals.py checks every fact on the floor
(Scrapy 2.18, ``.ci/floor``), on the newest release and in reactorless mode.

Parking (requests that wait for robots.txt hold no place):

- ``engine.downloader.active``, the set of requests in the downloader, and
  ``total_concurrency``, its limit (CONCURRENT_REQUESTS); the engine
  schedules nothing while it is full. Scrapy 1.0 on.
- ``engine._slot.nextcall.schedule()`` wakes the engine before its heartbeat;
  ``engine._slot.closing`` is set once the spider is closing (2.13 on).
- ``engine.downloader.middleware.methods["process_request"]`` lists the bound
  methods the downloader calls (unplugging the built-in middleware).

The pace (``Slots``, ``REP_CRAWL_DELAY``/``REP_RETRY_AFTER = "obey"``):

- ``engine.downloader.slots`` maps ``get_slot_key(request)`` to a ``Slot``
  whose ``queue``, ``transferring`` and ``concurrency`` say whether it would
  send a request at once; a new slot's concurrency is ``per_slot_settings``
  (DOWNLOAD_SLOTS, 2.11 on) or ``ip_concurrency``/``domain_concurrency``.
- While ``slot.latercall`` is set the slot sends nothing from its queue;
  ``downloader._latercall(slot)`` clears it and sends (a ``call_later``
  handle, 2.14 on).
- ``Downloader.DOWNLOAD_SLOT``, the ``download_slot`` request meta key that
  names a request's slot (0.17 on); ``request_left_downloader`` (2.0 on) is
  sent once a transfer has ended, and its request's slot key wakes the
  requests waiting for that slot.
- Not read: ``RANDOMIZE_DOWNLOAD_DELAY``, replaced in 2.19 by
  ``DOWNLOAD_DELAY_JITTER``. A slot's own delay, jittered or not, applies
  after a request's turn, whichever setting sets it.

Scrapy's throttler (scrapy/scrapy#6931, open) deprecates download slots,
``get_slot_key``, ``DOWNLOAD_SLOTS`` (for ``THROTTLING_SCOPES``) and the
``download_slot`` meta key (for ``throttling_scopes``). ``missing_internals``
names each that is gone or deprecated, and the throttler's setting once Scrapy
has it: the pace then warns at start-up that it may not hold.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import time
import warnings
from collections import deque
from typing import TYPE_CHECKING, Any, Final

from scrapy import signals
from scrapy.utils.asyncio import call_later
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from twisted.internet.defer import Deferred

from scrapy_rep.crawler.async_bridge import StopSignal, Ticker, wait

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from scrapy.settings import BaseSettings

logger = logging.getLogger("scrapy_rep.crawler.middleware")  # said as the middleware

BUILTIN_ROBOTSTXT: Final = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
#: Seconds between looks for a free place while robots.txt downloads wait.
PLACE_POLL: Final = 0.02
#: Seconds between looks at whether the engine is stopping, while requests wait.
STOP_POLL: Final = 0.25
#: Bound of the slots' holds remembered (the ended ones are dropped then).
_MAX_HELD: Final = 10_000
#: The setting of Scrapy's throttler (scrapy/scrapy#6931), which replaces
#: download slots: present in Scrapy's defaults once it has landed.
THROTTLER_SETTING: Final = "THROTTLING_SCOPES"


def builtin_robotstxt_enabled(settings: BaseSettings) -> bool:
    """Would Scrapy's own RobotsTxtMiddleware run for these settings?"""
    if not settings.getbool("ROBOTSTXT_OBEY"):
        return False  # it raises NotConfigured then
    builtin = load_object(BUILTIN_ROBOTSTXT)
    for component in build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES")):
        cls = load_object(component) if isinstance(component, str) else component
        if isinstance(cls, type) and issubclass(cls, builtin):
            return True
    return False


def unplug_builtin_robotstxt(crawler: Crawler, spider: Spider) -> bool:
    """Take the built-in middleware's ``process_request`` out of the chain.

    Returns False if it could not be found (nothing was changed). Either way
    a WARNING says what happened and how to configure it right.
    """
    unplugged = _unplug_builtin(crawler)
    fix = "Set it to None in DOWNLOADER_MIDDLEWARES or use ADDONS = {'scrapy_rep.Addon': 0}."
    if unplugged:
        logger.warning(
            "Scrapy's built-in RobotsTxtMiddleware is enabled beside scrapy_rep's; "
            "the built-in one is disabled for this crawl so that robots.txt is not "
            "fetched twice. %s",
            fix,
            extra={"spider": spider},
        )
    else:
        logger.warning(
            "Scrapy's built-in RobotsTxtMiddleware is enabled beside scrapy_rep's and "
            "could not be disabled; scrapy_rep's middleware is disabled for this crawl. %s",
            fix,
            extra={"spider": spider},
        )
    return unplugged


def missing_internals(crawler: Crawler, pace: bool) -> list[str]:
    """What this module reaches for in Scrapy and does not find, or finds
    deprecated, each with what it serves (the module docstring's list);
    ``pace``: the pace's needs too. Empty when all is there. Read when the
    spider opens (the engine's slot and the downloader exist then)."""
    engine: Any = crawler.engine
    downloader = getattr(engine, "downloader", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = _parking_facts(engine, downloader)
        if pace:
            found += _pace_facts(downloader)
    missing = [f"{name} ({purpose})" for name, purpose, there in found if not there]
    missing += [f"deprecated: {w.message}" for w in caught if issubclass(w.category, Warning)]
    if pace and THROTTLER_SETTING in crawler.settings:
        missing.append(
            f"Scrapy's throttler ({THROTTLER_SETTING}) replaces the download slots "
            "the pace waits on (scrapy/scrapy#6931)"
        )
    return missing


_Fact = tuple[str, str, bool]
_PARKED: Final = "requests waiting for robots.txt are parked out of CONCURRENT_REQUESTS"
_PACED: Final = "the pace waits for a request's download slot"


def _parking_facts(engine: Any, downloader: Any) -> list[_Fact]:
    slot = getattr(engine, "_slot", None)
    return [
        ("Downloader.active", _PARKED, isinstance(getattr(downloader, "active", None), set)),
        ("Downloader.total_concurrency", _PARKED, _is_int(downloader, "total_concurrency")),
        (
            "ExecutionEngine._slot.nextcall.schedule",
            "a parked request wakes the engine",
            callable(getattr(getattr(slot, "nextcall", None), "schedule", None)),
        ),
        ("ExecutionEngine._slot.closing", "a close stops the waiting", hasattr(slot, "closing")),
    ]


def _pace_facts(downloader: Any) -> list[_Fact]:
    module = importlib.import_module(type(downloader).__module__)
    slot_fields = set(getattr(getattr(module, "Slot", None), "__dataclass_fields__", ()))
    return [
        ("Downloader.slots", _PACED, isinstance(getattr(downloader, "slots", None), dict)),
        ("Downloader.get_slot_key", _PACED, callable(getattr(downloader, "get_slot_key", None))),
        (
            "the download_slot request meta key (Downloader.DOWNLOAD_SLOT)",
            "the slot a request left wakes the requests waiting for it",
            getattr(downloader, "DOWNLOAD_SLOT", None) == "download_slot",
        ),
        (
            "Slot.queue, .transferring, .concurrency, .latercall",
            _PACED,
            {"queue", "transferring", "concurrency", "latercall"} <= slot_fields,
        ),
        (
            "Downloader.per_slot_settings, .ip_concurrency, .domain_concurrency",
            "a new slot's concurrency (DOWNLOAD_SLOTS)",
            isinstance(getattr(downloader, "per_slot_settings", None), dict)
            and _is_int(downloader, "ip_concurrency")
            and _is_int(downloader, "domain_concurrency"),
        ),
        (
            "Downloader._latercall",
            "a Retry-After pause holds what a slot has queued",
            callable(getattr(downloader, "_latercall", None)),
        ),
    ]


def _is_int(owner: object, name: str) -> bool:
    return isinstance(getattr(owner, name, None), int)


def _unplug_builtin(crawler: Crawler) -> bool:
    builtin = load_object(BUILTIN_ROBOTSTXT)
    manager = getattr(getattr(crawler.engine, "downloader", None), "middleware", None)
    methods = getattr(manager, "methods", {}).get("process_request")
    if methods is None:
        return False
    found = [m for m in methods if isinstance(getattr(m, "__self__", None), builtin)]
    for method in found:
        methods.remove(method)
    return bool(found)


class _Reserved:
    """A place in the downloader's ``active`` set held for a waiting download."""

    __slots__ = ()


_Waiters = deque[tuple[Deferred[bool], _Reserved]]


class Parking:
    """Let requests that wait for a robots.txt not count against CONCURRENT_REQUESTS.

    A request waiting in a downloader middleware sits in the downloader's
    ``active`` set, and the engine stops scheduling when that set is full: a
    dozen requests for one origin with a hanging robots.txt would stall every
    other origin until the timeout. Parking takes such a request out of
    ``active`` while it waits and puts it back before it moves on.

    Every waiting request is parked, the first of an origin too: the
    robots.txt download itself is in ``active``, so robots.txt fetches stay
    within CONCURRENT_REQUESTS while no page holds a place for one. At most
    ``PARKED_PER_SLOT`` times CONCURRENT_REQUESTS are parked, so the scheduler
    is not emptied into memory; and when the engine stops (a pause or a
    close), parked requests go back to the scheduler and no download waiting
    for a place starts (``stopping``).
    """

    PARKED_PER_SLOT: Final = 10

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self.count = 0
        #: Requests waiting for robots.txt that could not be parked: in
        #: ``active``, but not downloading, so not counted as a place taken;
        #: like parked ones, they wait for a ``place`` before they download.
        self.holding = 0
        #: Downloads waiting for a place, each with the place it reserved:
        #: parked pages whose verdict is in first, then robots.txt fetches.
        self._place_waiters: tuple[_Waiters, _Waiters] = (deque(), deque())
        self._reserved = 0
        self._watcher = Ticker(self._release, PLACE_POLL)
        #: Fires for every waiting request once the engine stops (one look for all).
        self.stop_signal = StopSignal(lambda: self.stopping, STOP_POLL)

    async def place(self, ahead: bool = False) -> bool:
        """Wait for a free place in CONCURRENT_REQUESTS: a robots.txt download
        is a download like any other, and does not crowd the pages out.
        False: the crawl is stopping, do not download (a stop stops:
        docs/decisions.md, "Waiting for robots.txt").

        A waiting download reserves its place in ``active`` at once, so the
        engine pulls no new page into it. ``ahead``: a waiting page whose
        verdict is in (parked or holding), served before the robots.txt fetches that wait, so an
        origin's pages go while its answer is fresh (and still in memory).
        Scrapy frees a place after every middleware has seen the response,
        with no signal then, so one timer looks for free places while
        downloads wait.
        """
        if self.stopping:
            return False
        active = self._active()
        if active is None or (self._free() > 0 and not any(self._place_waiters)):
            return True
        reserved = _Reserved()
        active.add(reserved)
        self._reserved += 1
        waiter: Deferred[bool] = Deferred()
        waiters = self._place_waiters[0 if ahead else 1]
        waiters.append((waiter, reserved))
        self._watcher.start()
        try:
            return await wait(waiter)
        finally:
            # The reserved place is given up only now, as the download takes
            # it: in between, the engine would see a free place and fill it.
            active.discard(reserved)
            if (waiter, reserved) in waiters:  # cancelled before its turn
                waiters.remove((waiter, reserved))
                self._reserved -= 1

    def free_place(self) -> bool:
        """A place is free this moment and no download waits for one."""
        return self._active() is None or (self._free() > 0 and not any(self._place_waiters))

    def _free(self) -> int:
        active = self._active()
        limit = getattr(getattr(self._crawler.engine, "downloader", None), "total_concurrency", 0)
        if active is None or not limit:
            return 1
        return int(limit) - (len(active) - self.holding - self._reserved)

    def _release(self) -> None:
        """Give free places to the waiting downloads in turn; once the crawl
        is stopping, tell every one of them not to start."""
        free = self._free()
        stopping = self.stopping
        active = self._active()
        for waiters in self._place_waiters:
            while waiters and (free > 0 or stopping):
                waiter, reserved = waiters.popleft()
                self._reserved -= 1  # its reserved place counts as taken now
                if not waiter.called:
                    waiter.callback(not stopping)  # it swaps that place for its download
                    free -= 1
                elif active is not None:
                    active.discard(reserved)
        if not any(self._place_waiters):
            self._watcher.stop()

    def park(self, request: Request) -> bool:
        active = self._active()
        downloader = getattr(self._crawler.engine, "downloader", None)
        limit = getattr(downloader, "total_concurrency", 0) * self.PARKED_PER_SLOT
        if active is None or request not in active or not limit or self.count >= limit:
            return False
        active.discard(request)
        self.count += 1
        self.wake_engine()
        return True

    def unpark(self, request: Request) -> None:
        active = self._active()
        if active is not None:
            active.add(request)
        self.count -= 1

    @property
    def stopping(self) -> bool:
        """The engine was asked to stop (Ctrl-C, ``crawler.stop()``) or to close
        the spider (CLOSESPIDER_*, ``engine.close_spider_async``).

        A close leaves ``engine.running`` alone until the spider is closed;
        its mark is the engine slot's ``closing`` (Scrapy 2.13 to 2.19).
        """
        engine = self._crawler.engine
        if engine is None:
            return False
        if getattr(engine, "running", True) is False:
            return True
        return getattr(getattr(engine, "_slot", None), "closing", None) is not None

    def _active(self) -> set[Any] | None:
        active = getattr(getattr(self._crawler.engine, "downloader", None), "active", None)
        return active if isinstance(active, set) else None

    def wake_engine(self) -> None:
        """Let the engine look at its slots (and idleness) now, not at its next heartbeat."""
        slot = getattr(self._crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        schedule = getattr(nextcall, "schedule", None)
        if callable(schedule):
            schedule()


class Slots:
    """Scrapy's download slots, as the pace needs them (docs/politeness.md).

    A request handed to the downloader waits in its slot's queue while the
    slot is busy, out of reach: a turn it took before would be spent late,
    and a ``Retry-After`` pause would not hold it. So a paced request goes
    only when its slot would send it at once (``room``), and waits parked
    until a transfer of that slot ends (``wait_room``); a pause this process
    learns holds the slot too (``hold``), for what its queue has already.

    A request the slot takes becomes a transfer only on the loop's next turn:
    until then the slot counts it nowhere, and several requests let go in
    one turn would all be sent at once. So the requests let go (``sent``)
    count until they leave the downloader.
    """

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self._waiters: dict[str, deque[Deferred[None]]] = {}
        #: slot key -> the requests let go that have not left the downloader
        self._sent: dict[str, list[Request]] = {}
        self._held: dict[str, float] = {}  # slot key -> time.monotonic() its hold ends
        self._listening = False

    def _find(self, request: Request) -> tuple[str, Any] | None:
        """(key, slot or None), or None when the downloader looks different."""
        downloader = getattr(self._crawler.engine, "downloader", None)
        slots = getattr(downloader, "slots", None)
        key_of = getattr(downloader, "get_slot_key", None)
        if not isinstance(slots, dict) or not callable(key_of):
            return None
        key = key_of(request)
        return key, slots.get(key)

    def room(self, request: Request) -> bool:
        """Would the request's slot send it at once (nothing queued, a transfer free)?"""
        found = self._find(request)
        if found is None:
            return True
        key, slot = found
        try:
            if slot is None:  # the first request makes it, as Scrapy would
                return self._starting(key, ()) < self._new_slot_concurrency(key)
            if slot.queue:
                return False
            taken = len(slot.transferring) + self._starting(key, slot.transferring)
            return taken < int(slot.concurrency)
        except (AttributeError, TypeError):
            return True

    def _new_slot_concurrency(self, key: str) -> int:
        downloader: Any = getattr(self._crawler.engine, "downloader", None)
        default = downloader.ip_concurrency or downloader.domain_concurrency
        return int(downloader.per_slot_settings.get(key, {}).get("concurrency", default))

    def _starting(self, key: str, transferring: Any) -> int:
        """Requests let go to the slot that are not transfers yet."""
        sent = self._sent.get(key)
        if not sent:
            return 0
        active = getattr(getattr(self._crawler.engine, "downloader", None), "active", ())
        sent[:] = [r for r in sent if r in active]  # one a later middleware dropped is gone
        if not sent:
            del self._sent[key]
        return sum(1 for r in sent if r not in transferring)

    def sent(self, request: Request) -> None:
        """``request`` goes to its slot now: it counts there until it leaves."""
        found = self._find(request)
        if found is None:
            return
        if not self._listening:
            self._listening = True
            self._crawler.signals.connect(self._left, signal=signals.request_left_downloader)
        self._sent.setdefault(found[0], []).append(request)

    async def wait_room(self, request: Request) -> None:
        """Until a transfer of the request's slot ends (then ``room`` again)."""
        found = self._find(request)
        if found is None:
            return
        key = found[0]
        waiter: Deferred[None] = Deferred()
        if not self._listening:
            self._listening = True
            self._crawler.signals.connect(self._left, signal=signals.request_left_downloader)
        self._waiters.setdefault(key, deque()).append(waiter)
        try:
            await wait(waiter)
        finally:
            waiters = self._waiters.get(key)
            if waiters is not None:
                with contextlib.suppress(ValueError):  # cancelled, not woken: still there
                    waiters.remove(waiter)
                if not waiters:
                    del self._waiters[key]

    def _left(self, request: Request, spider: Spider | None = None) -> None:
        """A transfer ended: the first request waiting for that slot looks again.
        Its slot is found as it was for the request (``get_slot_key``), not
        by the ``download_slot`` meta key alone, which Scrapy may rename."""
        found = self._find(request)
        key = found[0] if found is not None else ""
        sent = self._sent.get(key)
        if sent is not None:
            with contextlib.suppress(ValueError):
                sent.remove(request)
        waiters = self._waiters.get(key)
        while waiters:
            waiter = waiters.popleft()
            if not waiter.called:
                waiter.callback(None)
                return

    def hold(self, request: Request, seconds: float) -> bool:
        """Send nothing from the request's slot for ``seconds``: what its
        queue holds waits out a pause too. False: nothing could be held."""
        downloader = getattr(self._crawler.engine, "downloader", None)
        release = getattr(downloader, "_latercall", None)
        found = self._find(request)
        if found is None or found[1] is None or not callable(release):
            return False
        (key, slot), now = found, time.monotonic()
        if self._held.get(key, 0.0) >= now + seconds:
            return True  # a longer hold is on
        if not hasattr(slot, "latercall"):
            return False
        if slot.latercall is not None:  # the slot's own delay: the downloader looks again after
            slot.latercall.cancel()
        slot.latercall = call_later(seconds, release, slot)
        if len(self._held) >= _MAX_HELD:
            self._held = {k: until for k, until in self._held.items() if until > now}
        self._held[key] = now + seconds
        return True
