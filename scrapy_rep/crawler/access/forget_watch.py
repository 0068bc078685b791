"""Make ``scrapy-rep cache forget`` (and the Tester's Refetch) reach a running crawl.

A forget deletes the origin's record in the store, and logs its key there
(``ForgetLog``). This process holds its own copy of the origin in memory
(``KnownOrigins``), which it would keep until it expires. So once every
``REP_FORGET_POLL_INTERVAL`` seconds the watch reads the log's new entries,
one query whatever the number of origins, and drops those origins here: the
next request for one loads the store, finds nothing, and fetches robots.txt
again (once across the processes sharing the store, as always).

Never in a request's way: a failed read is the store's usual one warning and
is tried again at the next interval. The watch is not a flight, so it never
keeps a finished crawl open, and it stops when the spider closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from twisted.internet.defer import Deferred

from scrapy_rep.cache.storage import ForgetLog, MemoryStorage, Sleep, Storage
from scrapy_rep.crawler.access.loop_thread import ThreadedStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.crawler.async_bridge import asyncio_running
from scrapy_rep.crawler.async_bridge import sleep as reactor_sleep
from scrapy_rep.engine.origin import Origin, origin_of

__all__ = ["ForgetWatch", "forget_log", "watch_forgets"]

logger = logging.getLogger("scrapy_rep.crawler.access.resolver")


def forget_log(storage: Storage) -> ForgetLog | None:
    """``storage`` as a ``ForgetLog``, if it (or the store a thread runs) keeps one."""
    inner = storage.storage if isinstance(storage, ThreadedStorage) else storage
    return storage if isinstance(inner, ForgetLog) and isinstance(storage, ForgetLog) else None


class ForgetWatch:
    """Read the store's forget log every ``interval`` seconds; ``drop`` what it names."""

    def __init__(
        self,
        log: ForgetLog,
        drop: Callable[[Origin], bool],
        *,
        interval: float,
        failed: Callable[[Exception], None],
        sleep: Sleep | None = None,
    ) -> None:
        self._log = log
        self._drop = drop
        self._failed = failed
        self.interval = interval
        self._sleep = sleep or reactor_sleep
        self.cursor: str | None = None
        self._running: asyncio.Task[None] | Deferred[None] | None = None

    async def poll(self) -> int:
        """One read of the log: the origins dropped here. The first read only
        notes where the log ends (what was forgotten before this crawl began
        is not in its memory anyway). Never raises."""
        try:
            self.cursor, keys = await self._log.forgotten_since(self.cursor)
        except Exception as exc:
            self._failed(exc)
            return 0
        dropped = 0
        for key in keys:
            origin = origin_of(key)
            if origin is not None and self._drop(origin):
                dropped += 1
        if dropped:
            logger.info(
                "robots.txt forgotten in the store for %d origin(s) this crawl held "
                "(scrapy-rep cache forget): they are fetched again at their next request",
                dropped,
            )
        return dropped

    async def start(self) -> None:
        """Note where the log ends, then read it every ``interval`` in the background."""
        if self._running is not None:
            return
        await self.poll()
        if asyncio_running():
            self._running = asyncio.get_running_loop().create_task(self._loop())
            self._running.add_done_callback(_retrieve)
        else:
            running = self._running = Deferred.fromCoroutine(self._loop())
            running.addErrback(lambda _: None)  # cancelled at stop; poll never raises

    def wake(self) -> None:
        """Read the log now (a forget in this very process: the memory store)."""
        if self._running is None:
            return
        if asyncio_running():
            asyncio.get_running_loop().create_task(self.poll()).add_done_callback(_retrieve)
        else:
            Deferred.fromCoroutine(self.poll()).addErrback(lambda _: None)

    def stop(self) -> None:
        running, self._running = self._running, None
        if running is not None:
            running.cancel()

    async def _loop(self) -> None:
        while True:
            await self._sleep(self.interval)
            await self.poll()


async def watch_forgets(
    resolver: Resolver, interval: float, on_drop: Callable[[Origin], object]
) -> ForgetWatch | None:
    """Start watching the resolver's store (None if it keeps no log): each
    origin dropped is also told to ``on_drop`` (stats)."""
    log = forget_log(resolver.storage)
    if log is None:
        return None

    def drop(origin: Origin) -> bool:
        if not resolver.drop(origin):
            return False
        on_drop(origin)
        return True

    watch = ForgetWatch(log, drop, interval=interval, failed=resolver.store_failed)
    await watch.start()
    if isinstance(log, MemoryStorage):  # a forget can only come from this process: at once
        log.on_forget.append(watch.wake)
    return watch


def _retrieve(task: asyncio.Task[object]) -> None:
    if not task.cancelled():
        task.exception()  # poll never raises; retrieved all the same
