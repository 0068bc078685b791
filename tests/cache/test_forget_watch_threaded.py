"""A user's store class that keeps no forget log, run in the store's thread
(``ThreadedStorage``): the crawl watches no log, and says nothing of one."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.crawler.access.forget_watch import watch_forgets
from scrapy_rep.crawler.access.loop_thread import LoopThread, ThreadedStorage
from scrapy_rep.crawler.access.resolver import Resolver

from .test_cache_resolver import OK, ManualClock, Server


class NoLog:
    """A store of a user's own, with no forget log."""

    async def get(self, key: str) -> OriginRecord | None:
        return None

    async def put(self, *_: object) -> None: ...

    async def lock(self, key: str, ttl: float) -> bool:
        return True

    async def release(self, key: str) -> None: ...

    async def close(self) -> None: ...


@deferred_f_from_coro_f
async def test_a_threaded_store_without_a_log_is_not_watched(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    storage = ThreadedStorage(NoLog(), LoopThread())  # type: ignore[arg-type]
    rep = Resolver(Server(clock, OK), storage=storage, clock=clock)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        watch = await watch_forgets(rep, 1.0, lambda _: None)
    assert watch is None and caplog.records == []
