"""What a forget heard by a running crawl says (docs/cli.md, ``cache forget``):
one INFO line with the number of origins it held and now drops; nothing for
a forget of an origin it did not hold, nor once the crawl's watch stopped."""

from __future__ import annotations

import asyncio
import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.crawler.access.forget_watch import watch_forgets
from scrapy_rep.engine.origin import Origin

from .test_cache_resolver import A, B, ManualClock
from .test_forget_watch import FlakyLog, _held, until


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "forgotten in the store" in r.getMessage()]


@deferred_f_from_coro_f
async def test_a_forget_of_held_origins_is_said_with_their_number_and_no_other(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    storage = MemoryStorage(clock=clock)
    rep, _ = await _held(clock, storage)
    dropped: list[Origin] = []
    watch = await watch_forgets(rep, 86_400.0, dropped.append)
    assert watch is not None
    caplog.set_level(logging.INFO, "scrapy_rep.crawler.access.resolver")
    await storage.forget("https://never-held.example")
    assert await watch.poll() == 0
    await storage.forget(str(A))
    await storage.forget(str(B))
    await until(lambda: rep.current(A) is None and rep.current(B) is None)
    assert (
        said(caplog)
        == [
            "robots.txt forgotten in the store for 2 origin(s) this crawl held "
            "(scrapy-rep cache forget): they are fetched again at their next request"
        ]
        or said(caplog)
        == [
            "robots.txt forgotten in the store for 1 origin(s) this crawl held "
            "(scrapy-rep cache forget): they are fetched again at their next request"
        ]
        * 2
    )
    assert sorted(map(str, dropped)) == sorted(map(str, (A, B)))
    watch.stop()
    caplog.clear()
    await rep.access(A)
    await storage.forget(str(A))  # after the crawl's watch stopped
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert rep.current(A) is not None and said(caplog) == [] and len(dropped) == 2


@deferred_f_from_coro_f
async def test_a_read_of_a_store_that_is_down_drops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    storage = FlakyLog(clock=clock)
    rep, _ = await _held(clock, storage)
    watch = await watch_forgets(rep, 86_400.0, lambda _: None)
    assert watch is not None
    await storage.forget(str(A))
    storage.down = True
    with caplog.at_level(logging.INFO, "scrapy_rep.crawler.access.resolver"):
        assert await watch.poll() == 0
    assert rep.current(A) is not None and said(caplog) == []
    watch.stop()
