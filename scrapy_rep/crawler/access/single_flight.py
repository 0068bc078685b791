"""Single flight in one process (docs/spec.md §3.5, §8.3): one load or fetch per origin
at a time, every request that arrives meanwhile waiting for its result.

A flight runs on its own, independent of the request that started it
(cancelling that request does not cancel the fetch), and hands its result to
each waiter: a waiter never looks anything up after waking, so nothing that
happened meanwhile (an LRU eviction under many origins) can make it miss the
answer it waited for. SingleFlight run on whichever loop the crawl uses
(``async_bridge``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Generic, TypeVar

from twisted.internet.defer import Deferred

from scrapy_rep.crawler.async_bridge import StopSignal, wait

__all__ = ["SingleFlight"]

K = TypeVar("K")
R = TypeVar("R")


class SingleFlight(Generic[K, R]):
    """SingleFlight keyed by ``K`` (an origin), each ending with a result ``R``."""

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
        """SingleFlight under way."""
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
