"""A store that fails on one operation only (docs/spec.md §3.5): a spider's own
robots.txt download is still taken, a fetch made here when it cannot lock,
and the failure is said once; and a store is closed with what it holds
written when the crawl ends."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.engine.origin import robots_url

from .test_cache_resolver import BODY, OK, A, ManualClock, Server, resolver


class ReadsFail(MemoryStorage):
    async def get(self, key: str) -> OriginRecord | None:
        raise RuntimeError("cannot read")


class WritesFail(MemoryStorage):
    async def put(self, key: str, record: OriginRecord, ttl: float) -> None:
        raise RuntimeError("disk full")


@pytest.mark.parametrize(("store", "said"), [(ReadsFail, "cannot read"), (WritesFail, "disk full")])
@deferred_f_from_coro_f
async def test_a_spiders_own_robots_txt_is_taken_and_a_failing_store_said_once(
    store: type[MemoryStorage], said: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    rep = resolver(server, clock, store(clock=clock))
    own = FetchOutcome(FetchKind.SUCCESS, robots_url(A), clock(), 200, BODY)
    with caplog.at_level(logging.WARNING, "scrapy_rep.crawler.access.resolver"):
        assert await rep.seed(A, own)
        access = await rep.access(A)
    assert not access.allowed("/private", "bot") and server.calls == []  # the spider's copy
    assert len(caplog.records) == 1 and said in caplog.records[0].getMessage()


class LocksFail(MemoryStorage):
    async def lock(self, key: str, ttl: float) -> bool:
        raise RuntimeError("cannot lock")


@deferred_f_from_coro_f
async def test_a_store_that_cannot_lock_costs_one_fetch_here_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    rep = resolver(server, clock, LocksFail(clock=clock))
    with caplog.at_level(logging.WARNING, "scrapy_rep.crawler.access.resolver"):
        accesses = [await rep.access(origin) for origin in (A, A)]
    assert [a.allowed("/private", "bot") for a in accesses] == [False, False]
    assert len(server.calls) == 1
    assert len(caplog.records) == 1 and "cannot lock" in caplog.records[0].getMessage()


@deferred_f_from_coro_f
async def test_what_a_crawl_fetched_is_in_the_sqlite_file_once_it_closes(tmp_path: Path) -> None:
    clock = ManualClock()
    path = tmp_path / "robots.sqlite3"
    rep = resolver(Server(clock, OK), clock, await SqliteStorage.open(path, clock=clock))
    await rep.access(A)
    await rep.close()
    later = await SqliteStorage.open(path, clock=clock)  # the next crawl
    try:
        stored = await later.get(str(A))
    finally:
        await later.close()
    assert stored is not None and stored.good_body == BODY


class ClosingFails(MemoryStorage):
    async def close(self) -> None:
        raise RuntimeError("cannot close")


@deferred_f_from_coro_f
async def test_a_store_that_fails_to_close_is_logged_and_the_close_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    rep = resolver(Server(clock, OK), clock, ClosingFails(clock=clock))
    await rep.access(A)
    with caplog.at_level(logging.ERROR, "scrapy_rep.crawler.access.resolver"):
        await rep.close()
    assert [r.getMessage() for r in caplog.records] == ["Closing the robots.txt cache failed"]
