"""The storage backends under any Twisted reactor: one private asyncio loop.

The backends (sqlite, redis, a user's class) are asyncio coroutines. Under
Scrapy's asyncio reactor they run on the reactor's own loop. Under another
reactor (epoll, poll, select) no asyncio loop runs in the reactor thread, so
``LoopThread`` runs one in a daemon thread and ``ThreadedStorage`` sends each
storage call there (``run_coroutine_threadsafe``), handing the result back to
the reactor thread as a Deferred (``callFromThread``). The reactor never
blocks, the backends stay as they are, and whatever tasks a backend starts
(lock renewals, a driver's own) live on that loop until the store closes.
In Scrapy's reactorless mode the crawl's own asyncio loop runs the backends
(``store.open_configured_storage``): no thread, and no reactor to call back.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar, cast

from twisted.internet.defer import CancelledError, Deferred

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import ForgetLog, Storage, combined_calls
from scrapy_rep.cache.storage.protocol import Pacing
from scrapy_rep.crawler.async_bridge import wait

__all__ = ["LoopThread", "ThreadedStorage", "pace_of"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class LoopThread:
    """One asyncio event loop in a daemon thread, from ``start`` to ``stop``."""

    def __init__(self, name: str = "scrapy_rep-storage") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._stopped: Deferred[None] = Deferred()

    def start(self) -> None:
        self._thread.start()

    @property
    def running(self) -> bool:
        """Started and not yet stopped (the thread may take a moment more to end)."""
        return self._thread.is_alive() and not self._stopped.called

    def call(self, coro: Coroutine[Any, Any, T]) -> Deferred[T]:
        """Run ``coro`` on the loop; its result (or error) fires the Deferred in
        the reactor thread. Cancelling the Deferred cancels the coroutine."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        result: Deferred[T] = Deferred(lambda _: _cancel(future))
        future.add_done_callback(lambda done: _in_reactor(_fire, result, done))
        return result

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro``'s result, awaited from the reactor thread (any reactor)."""
        return await wait(self.call(coro))

    async def stop(self) -> None:
        """Stop the loop, cancel what is left on it, close it; the thread ends."""
        if not self.running:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        await wait(self._stopped)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            try:
                _cancel_left_tasks(self._loop)
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
                self._loop.run_until_complete(self._loop.shutdown_default_executor())
            finally:
                self._loop.close()
                _in_reactor(self._stopped.callback, None)


class ThreadedStorage:
    """A ``Storage`` whose every call runs on a ``LoopThread``, which it stops on close."""

    def __init__(self, storage: Storage, loop: LoopThread) -> None:
        self.storage = storage
        self._loop = loop

    async def get(self, key: str) -> OriginRecord | None:
        return await self._loop.run(self.storage.get(key))

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        await self._loop.run(self.storage.put(key, record, ttl_seconds))

    async def lock(self, key: str, ttl: float) -> bool:
        return await self._loop.run(self.storage.lock(key, ttl))

    async def release(self, key: str) -> None:
        await self._loop.run(self.storage.release(key))

    async def lock_and_get(self, key: str, ttl: float) -> tuple[bool, OriginRecord | None]:
        """One trip to the loop thread (and one to the store, if it can)."""
        return await self._loop.run(_lock_and_get(self.storage, key, ttl))

    async def put_and_release(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        await self._loop.run(_put_and_release(self.storage, key, record, ttl_seconds))

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The store's forget log (``ForgetLog``), if it keeps one (``forget_log``)."""
        log = cast(ForgetLog, self.storage)
        return await self._loop.run(log.forgotten_since(cursor))

    # Each origin's pace (``Pacing``), if the store keeps one (``pace_of``).
    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        pacing = cast(Pacing, self.storage)
        return await self._loop.run(pacing.reserve(key, interval, max_ahead, not_before))

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        return await self._loop.run(cast(Pacing, self.storage).pause(key, seconds, max_ahead))

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        return await self._loop.run(cast(Pacing, self.storage).going(key, interval, max_ahead))

    async def close(self) -> None:
        try:
            await self._loop.run(self.storage.close())
        finally:
            await self._loop.stop()


async def _lock_and_get(storage: Storage, key: str, ttl: float) -> tuple[bool, OriginRecord | None]:
    combined = combined_calls(storage)
    if combined is not None:
        return await combined.lock_and_get(key, ttl)
    return await storage.lock(key, ttl), await storage.get(key)


async def _put_and_release(
    storage: Storage, key: str, record: OriginRecord, ttl_seconds: float
) -> None:
    combined = combined_calls(storage)
    if combined is not None:
        await combined.put_and_release(key, record, ttl_seconds)
        return
    try:
        await storage.put(key, record, ttl_seconds)
    finally:
        await storage.release(key)


def _fire(result: Deferred[T], done: Future[T]) -> None:
    """In the reactor thread: pass ``done``'s outcome on, unless already cancelled."""
    if result.called:
        return
    if done.cancelled():
        result.errback(CancelledError())
        return
    error = done.exception()
    if error is not None:
        result.errback(error)
    else:
        result.callback(done.result())


def _cancel(future: Future[Any]) -> None:
    """The caller gave up: cancel the coroutine on the loop (the Deferred fails itself)."""
    future.cancel()


def _in_reactor(func: Any, *args: object) -> None:
    """Call ``func`` in the reactor thread (safe from any thread)."""
    from twisted.internet import reactor

    reactor.callFromThread(func, *args)


def _cancel_left_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks still on ``loop`` (a backend's background work) and let them end."""
    tasks = list(asyncio.all_tasks(loop))
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    done = loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task, outcome in zip(tasks, done):
        if isinstance(outcome, Exception) and not task.cancelled():
            logger.warning("A robots.txt cache task failed on close: %r", outcome)


def pace_of(storage: object) -> Pacing | None:
    """``storage`` as ``Pacing``, if it (or the store a thread runs) keeps a pace."""
    inner = storage.storage if isinstance(storage, ThreadedStorage) else storage
    return storage if isinstance(inner, Pacing) and isinstance(storage, Pacing) else None
