"""asyncio and Twisted, either way: the crawl runs its coroutines on whichever
loop Scrapy's reactor gives (asyncio's, Twisted's own, or none in
reactorless mode), and these helpers let them sleep, await a Deferred, and
notice that the crawl is stopping under every one of them. The ground the
wings stand on: it imports nothing else of the crawler.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar, cast

from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

__all__ = [
    "FetchStopped",
    "StopSignal",
    "Ticker",
    "asyncio_running",
    "reactorless",
    "sleep",
    "unless_stopped",
    "wait",
]

T = TypeVar("T")


class FetchStopped(BaseException):
    """The crawl is stopping: raised by a fetch that did not start, and to a
    request that was waiting for a flight when the stop came.

    Nothing was fetched, so nothing is recorded or announced: the flight ends
    and its waiters get this, like a cancellation (hence a BaseException: no
    ``except Exception`` on the way takes it for an unreachable robots.txt).
    """


def asyncio_running() -> bool:
    """Is this code running on an asyncio loop (Scrapy's asyncio reactor)?"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def reactorless() -> bool:
    """Is this Scrapy's reactorless mode (``TWISTED_REACTOR_ENABLED = False``):
    an asyncio loop runs and no Twisted reactor is installed? Importing
    ``twisted.internet.reactor`` is then an ``ImportError`` (Scrapy forbids it),
    so nothing here may reach for the reactor (docs/decisions.md, "Reactorless mode")."""
    return asyncio_running() and "twisted.internet.reactor" not in sys.modules


async def sleep(seconds: float) -> None:
    """Sleep on asyncio if a loop runs, else on the Twisted reactor."""
    if asyncio_running():
        await asyncio.sleep(seconds)
        return
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    await _cancelled_as_asyncio(deferLater(reactor, seconds))


def wait(waiter: Deferred[T]) -> Awaitable[T]:
    """A Deferred made awaitable from asyncio coroutines as well as Twisted ones."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return _cancelled_as_asyncio(waiter)
    return waiter.asFuture(loop)


async def _cancelled_as_asyncio(waiter: Deferred[T]) -> T:
    """``waiter``, its cancellation raised as asyncio's ``CancelledError``.

    Twisted's ``CancelledError`` is an ``Exception``: a flight cancelled at
    close under another reactor would be taken by ``except Exception`` for a
    store or fetch failure and carry on. asyncio's is not, as under the asyncio
    reactor.
    """
    try:
        return await waiter
    except CancelledError as exc:
        raise asyncio.CancelledError from exc


class StopSignal:
    """One look at whether the crawl is stopping, every ``poll`` seconds, for
    every request that waits: its Deferred (a flight's waiter, ``watch``) is
    failed with ``FetchStopped``, or one of its own (``wait``) fired, once
    the crawl stops. A look per waiter would make objects per waiter per
    tick, and a race per waiter (a task, a future, a cancelled Deferred)
    cost more than the rest of its wait: a broad crawl pays for both in the
    collector (docs/benchmarks.md, "At scale"). The looks are timed by asyncio's loop when one
    runs (reactorless mode has no reactor), else by the reactor."""

    def __init__(self, stopped: Callable[[], bool], poll: float) -> None:
        self._stopped = stopped
        self._poll = poll
        #: (waiter, fail it): fail with FetchStopped, or fire with None.
        self._waiters: list[tuple[Deferred[Any], bool]] = []
        self._looking = False

    def wait(self) -> Deferred[None]:
        """Fires once the crawl stops; cancel it when no longer interested."""
        waiter: Deferred[None] = Deferred()
        waiter.addErrback(_ignore_cancel)
        self._add(waiter, False)
        return waiter

    def watch(self, waiter: Deferred[Any]) -> None:
        """Fail ``waiter`` with ``FetchStopped`` once the crawl stops, unless it
        has fired by then: nothing to undo when it fires first."""
        self._add(waiter, True)

    def _add(self, waiter: Deferred[Any], fail: bool) -> None:
        self._waiters.append((waiter, fail))
        if not self._looking:
            self._looking = True
            _call_later(self._poll, self._look)

    def _look(self) -> None:
        stopped = self._stopped()
        waiters, self._waiters = self._waiters, []
        for waiter, fail in waiters:
            if waiter.called:
                continue  # its work came first
            if not stopped:
                self._waiters.append((waiter, fail))
            elif fail:
                waiter.errback(Failure(FetchStopped()))  # type: ignore[no-untyped-call]
            else:
                waiter.callback(None)
        if self._waiters:
            _call_later(self._poll, self._look)
        else:
            self._looking = False


class Ticker:
    """Calls ``func`` every ``poll`` seconds from ``start`` to ``stop``, on
    asyncio's loop when one runs (reactorless mode has no reactor), else on
    the reactor: Twisted's ``LoopingCall`` imports the reactor."""

    def __init__(self, func: Callable[[], None], poll: float) -> None:
        self._func = func
        self._poll = poll
        self._round = 0  # a tick of an earlier start..stop finds itself outdated
        self.running = False

    def start(self) -> None:
        if self.running:
            return
        self.running = True
        self._round += 1
        round_ = self._round
        _call_later(self._poll, lambda: self._tick(round_))

    def stop(self) -> None:
        self.running = False

    def _tick(self, round_: int) -> None:
        if not self.running or round_ != self._round:
            return
        self._func()
        if self.running and round_ == self._round:
            _call_later(self._poll, lambda: self._tick(round_))


def _call_later(seconds: float, func: Callable[[], None]) -> None:
    if asyncio_running():
        asyncio.get_event_loop().call_later(seconds, func)
        return
    from twisted.internet import reactor
    from twisted.internet.base import ReactorBase

    cast(ReactorBase, reactor).callLater(seconds, func)


def _ignore_cancel(failure: Failure) -> Failure | None:
    """A stop waiter cancelled because its work came first: nothing to report."""
    return None if isinstance(failure.value, CancelledError) else failure


async def unless_stopped(work: Coroutine[Any, Any, T], stop: StopSignal) -> T | None:
    """``work``'s result, or None once ``stop`` fires (``work`` is then
    cancelled). A result is taken the moment it comes, under either world."""
    stopped = stop.wait()
    if asyncio_running():
        task = asyncio.ensure_future(work)
        stop_future = stopped.asFuture(asyncio.get_event_loop())
        try:
            first: set[asyncio.Future[Any]] = {task, stop_future}
            await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not stopped.called:
                stopped.cancel()
        if task.done():
            return task.result()
        task.cancel()
        return None
    waiting: Deferred[T] = Deferred.fromCoroutine(work)
    either: Deferred[None] = Deferred()

    def wake(result: object) -> object:
        if not either.called:
            either.callback(None)
        return result

    waiting.addBoth(wake)
    stopped.addBoth(wake)
    try:
        await either
    finally:
        if not stopped.called:
            stopped.cancel()
    if waiting.called:
        return await _cancelled_as_asyncio(waiting)
    waiting.addErrback(lambda _: None)
    waiting.cancel()
    return None
