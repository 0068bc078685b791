"""Single flight in one process (docs/spec.md §3.5, §8.3): one load or fetch per origin
at a time, every request that arrives meanwhile waiting for its result.

A flight runs on its own, independent of the request that started it
(cancelling that request does not cancel the fetch), and hands its result to
each waiter: a waiter never looks anything up after waking, so nothing that
happened meanwhile (an LRU eviction under many origins) can make it miss the
answer it waited for.

Also the bridge between asyncio and Twisted coroutines: the flights run on
whichever reactor the crawl uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Generic, TypeVar, cast

from twisted.internet.defer import CancelledError, Deferred
from twisted.python.failure import Failure

__all__ = [
    "FetchStopped",
    "Flights",
    "StopSignal",
    "asyncio_running",
    "sleep",
    "unless_stopped",
    "wait",
]

K = TypeVar("K")
R = TypeVar("R")
T = TypeVar("T")


class FetchStopped(BaseException):
    """The crawl is stopping: raised by a fetch that did not start, and to a
    request that was waiting for a flight when the stop came.

    Nothing was fetched, so nothing is recorded or announced: the flight ends
    and its waiters get this, like a cancellation (hence a BaseException: no
    ``except Exception`` on the way takes it for an unreachable robots.txt).
    """


class Flights(Generic[K, R]):
    """Flights keyed by ``K`` (an origin), each ending with a result ``R``."""

    def __init__(self) -> None:
        self._waiters: dict[K, list[Deferred[R]]] = {}
        self._tasks: _Tasks = set()
        self._idle_callbacks: list[Callable[[], object]] = []

    def pending(self, key: K) -> bool:
        return key in self._waiters

    @property
    def busy(self) -> bool:
        """Some flight is under way."""
        return bool(self._waiters)

    def __len__(self) -> int:
        """Flights under way."""
        return len(self._waiters)

    async def join(
        self, key: K, fly: Callable[[], Coroutine[Any, Any, R]], stop: StopSignal | None = None
    ) -> R:
        """The result of ``key``'s flight, starting ``fly()`` if none is under way;
        ``FetchStopped`` if ``stop`` fires first (the flight goes on)."""
        waiter: Deferred[R] = Deferred()
        if stop is not None:
            stop.watch(waiter)
        waiters = self._waiters.get(key)
        if waiters is not None:
            waiters.append(waiter)
        else:
            # Register before starting: a flight may finish synchronously.
            self._waiters[key] = [waiter]
            self._start(self._run(key, fly()))
        return await wait(waiter)

    def launch(self, key: K, fly: Callable[[], Coroutine[Any, Any, R]]) -> bool:
        """Start a flight nobody waits for (a background retry), unless one is under way."""
        if key in self._waiters:
            return False
        self._waiters[key] = []
        self._start(self._run(key, fly()))
        return True

    def call_when_idle(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once no flight is under way (at once if none is)."""
        if not self._waiters:
            callback()
        elif callback not in self._idle_callbacks:
            self._idle_callbacks.append(callback)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    async def _run(self, key: K, flight: Coroutine[Any, Any, R]) -> None:
        # The key is forgotten before any waiter wakes: under a Twisted
        # reactor other than asyncio a waiter wakes at once, inside
        # ``callback``, and may start the key's next flight (a background
        # retry), which must not be forgotten in its place.
        try:
            result = await flight
        except BaseException as exc:
            for waiter in self._waiters.pop(key, []):
                if not waiter.called:
                    waiter.errback(exc)
            raise
        else:
            for waiter in self._waiters.pop(key, []):
                if not waiter.called:  # a cancelled waiter has been called already
                    waiter.callback(result)
        finally:
            if not self._waiters:
                callbacks, self._idle_callbacks = self._idle_callbacks, []
                for callback in callbacks:
                    callback()

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` on its own (asyncio if a loop runs, else Twisted); keep it to cancel."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            deferred = Deferred.fromCoroutine(coro)
            if not deferred.called:
                self._tasks.add(deferred)
                deferred.addBoth(lambda _: self._tasks.discard(deferred))
            deferred.addErrback(lambda _: None)  # the flight logged it; nobody else waits
            return
        task = loop.create_task(coro)
        self._tasks.add(task)  # a reference until done, as asyncio asks
        task.add_done_callback(_forget(self._tasks))


_Tasks = set[asyncio.Task[None] | Deferred[None]]


def _forget(tasks: _Tasks) -> Callable[[asyncio.Task[None]], None]:
    """A done-callback that drops the task and retrieves its exception (logged)."""

    def done(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: the flight logged it

    return done


def asyncio_running() -> bool:
    """Is this code running on an asyncio loop (Scrapy's asyncio reactor)?"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
    collector (issue 28). The looks are timed by asyncio's loop when one
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
