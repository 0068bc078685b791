"""A store that fails on one operation only (docs/spec.md §3.5): a spider's own
robots.txt download is still taken, and the failure is said once."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import MemoryStorage
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
