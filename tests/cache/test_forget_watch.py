"""The running crawl's side of a forget (``forget_watch``), without Scrapy.

Driven by hand: the watch's sleep is a gate the test opens, so "once per
interval" is checked without waiting; the clock is the resolver's own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.storage import MemoryStorage, StorageUnavailable
from scrapy_rep.crawler.access.forget_watch import ForgetWatch, watch_forgets
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.engine.origin import Origin

from .test_cache_resolver import OK, A, B, ManualClock, Server


class Ticks:
    """The watch's sleep: returns when the test says an interval has passed."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._ticks: asyncio.Queue[None] = asyncio.Queue()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self._ticks.get()

    def tick(self) -> None:
        self._ticks.put_nowait(None)


class FlakyLog(MemoryStorage):
    """A memory store whose log can be made unreachable."""

    down = False

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        if self.down:
            raise StorageUnavailable("the store is down")
        return await super().forgotten_since(cursor)


async def until(done: Callable[[], bool]) -> None:
    """Let the loop run (no time passes) until ``done()``."""
    for _ in range(200):
        if done():
            return
        await asyncio.sleep(0)
    raise AssertionError("never happened")


async def _held(clock: ManualClock, storage: MemoryStorage) -> tuple[Resolver, Server]:
    server = Server(clock, OK)
    rep = Resolver(server, storage=storage, clock=clock)
    for origin in (A, B):
        await rep.access(origin)
    assert server.calls == [A, B]
    return rep, server


@deferred_f_from_coro_f
async def test_a_forget_is_heard_at_the_next_interval_and_fetched_again_once() -> None:
    clock = ManualClock()
    storage = MemoryStorage(clock=clock)
    rep, server = await _held(clock, storage)
    ticks = Ticks()
    watch = ForgetWatch(storage, rep.drop, interval=7.0, failed=rep.store_failed, sleep=ticks)
    await watch.start()
    await until(lambda: ticks.asked == [7.0])
    await storage.forget(str(A))
    await asyncio.sleep(0)
    assert rep.current(A) is not None  # not before the interval is up: no read per request
    ticks.tick()
    await until(lambda: len(ticks.asked) == 2)
    assert rep.current(A) is None and rep.current(B) is not None
    await asyncio.gather(rep.access(A), rep.access(A))
    assert server.calls == [A, B, A]  # one fetch again, for A only
    watch.stop()
    await storage.forget(str(B))
    ticks.tick()
    await asyncio.sleep(0)
    assert rep.current(B) is not None and len(ticks.asked) == 2  # stopped: no more reads


@deferred_f_from_coro_f
async def test_a_store_that_is_down_warns_once_and_is_read_again_later(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    storage = FlakyLog(clock=clock)
    rep, _ = await _held(clock, storage)
    ticks = Ticks()
    rep_watch = ForgetWatch(storage, rep.drop, interval=1.0, failed=rep.store_failed, sleep=ticks)
    await rep_watch.start()
    await storage.forget(str(A))
    storage.down = True
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            ticks.tick()
            await until(lambda: ticks._ticks.empty())
            await asyncio.sleep(0)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cache failed" in warnings[0].getMessage()
    assert rep.current(A) is not None
    storage.down = False
    ticks.tick()
    await until(lambda: rep.current(A) is None)  # what it missed, read when it is back
    rep_watch.stop()


@deferred_f_from_coro_f
async def test_watch_forgets_counts_what_it_drops_and_skips_a_store_without_a_log() -> None:
    clock = ManualClock()
    storage = MemoryStorage(clock=clock)
    rep, _ = await _held(clock, storage)
    told: list[Origin] = []
    watch = await watch_forgets(rep, 3600.0, told.append)
    assert watch is not None and watch.cursor == "0"
    await storage.forget(str(A))
    await storage.forget("https://never-held.example")
    assert await watch.poll() == 1 and told == [A]
    watch.stop()

    class NoLog:
        async def get(self, key: str) -> None:
            return None

        async def put(self, *_: object) -> None: ...

        async def lock(self, key: str, ttl: float) -> bool:
            return True

        async def release(self, key: str) -> None: ...

        async def close(self) -> None: ...

    plain = Resolver(Server(clock, OK), storage=NoLog(), clock=clock)  # type: ignore[arg-type]
    assert await watch_forgets(plain, 1.0, told.append) is None


@deferred_f_from_coro_f
async def test_with_the_memory_store_a_forget_in_this_process_is_heard_at_once() -> None:
    """No interval to wait: the memory store wakes the watch, which reads its
    log as for any store (the same path: each forget is heard once)."""
    clock = ManualClock()
    storage = MemoryStorage(clock=clock)
    rep, server = await _held(clock, storage)
    watch = await watch_forgets(rep, 86_400.0, lambda _: None)
    assert watch is not None
    await storage.forget(str(A))
    await until(lambda: rep.current(A) is None)
    assert rep.current(B) is not None
    await rep.access(A)
    await asyncio.sleep(0)
    assert rep.current(A) is not None and server.calls == [A, B, A]
    watch.stop()
