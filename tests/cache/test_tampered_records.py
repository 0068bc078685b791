"""Issue 13 §6: stored records are validated.

A tampered or foreign sqlite row or Redis value (wrong types, -1e308, NaN,
1e300 expiries) used to raise on every request for 31 days, or allow
everything forever. Now it is absent: robots.txt is fetched again, with one
warning per store.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from crawler.conftest import crawl, spider_of
from crawler.servers import Reply, SiteServer
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord, PolicyConfig, loaded_record
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import RedisServer

ROBOTS = b"User-agent: *\nDisallow: /private\n"
DAY = 86_400.0


def record_bytes(**header: Any) -> bytes:
    """An allow-all (404) record as stored, with ``header`` fields replaced."""
    now = time.time()
    good = OriginRecord(FetchKind.UNAVAILABLE, 404, "HTTP 404", now, now + DAY, good_at=now)
    head, _, body = good.to_bytes().partition(b"\n")
    fields = {**json.loads(head), **header}
    return json.dumps(fields).encode() + b"\n" + body


TAMPERED = {
    "nan expiry": record_bytes(e=float("nan")),
    "-1e308 fetch time": record_bytes(f=-1e308),
    "1e300 expiry": record_bytes(e=1e300),
    "a string timestamp": record_bytes(f="yesterday"),
    "a list status": record_bytes(s=[404]),
    "a boolean status": record_bytes(s=True),
    "huge failures": record_bytes(c=10**12),
    "no_store as text": record_bytes(ns="yes"),
    "unknown kind": record_bytes(k="bogus"),
    "a body without the flag": record_bytes() + b"User-agent: *\nDisallow:\n",
    "not JSON": b"{not json\n",
    "a list, not an object": b"[1, 2]\n",
}


@pytest.mark.parametrize("data", TAMPERED.values(), ids=TAMPERED.keys())
def test_storage_tampered_record_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        OriginRecord.from_bytes(data)


def test_storage_a_valid_record_still_reads() -> None:
    assert OriginRecord.from_bytes(record_bytes()).status == 404


def test_storage_loaded_expiry_capped_at_fetch_time_plus_the_longest_life() -> None:
    config = PolicyConfig()
    now = time.time()
    forever = OriginRecord(FetchKind.UNAVAILABLE, 404, "HTTP 404", now - 2 * DAY, 1e10)
    capped = loaded_record(forever, now, config)
    assert capped is not None and capped.expires_at == now - 2 * DAY + config.cache_max_ttl
    future = OriginRecord(FetchKind.UNAVAILABLE, 404, "HTTP 404", now + DAY, now + 2 * DAY)
    assert loaded_record(future, now, config) is None


#: Valid in every field, allow-all, fetched two days ago, "valid" until 2286.
STALE_FOREVER = record_bytes(f=time.time() - 2 * DAY, g=time.time() - 2 * DAY, e=9e9)


@pytest.mark.parametrize("data", [TAMPERED["nan expiry"], TAMPERED["a list status"], STALE_FOREVER])
@deferred_f_from_coro_f
async def test_storage_tampered_sqlite_row_is_fetched_again_with_one_warning(
    data: bytes, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "robots.sqlite3"
    settings = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(path)}
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        await crawl([site.url("/warm-up")], settings)  # creates the file and a row
        with sqlite3.connect(path) as db:
            db.execute("UPDATE origins SET data = ?, expires_at = 9e15", (data,))
        with caplog.at_level(logging.WARNING):
            crawler = await crawl([site.url("/page"), site.url("/private/x")], settings)
        robots = site.count("/robots.txt")
    assert spider_of(crawler).got == [site.url("/page")]
    assert isinstance(spider_of(crawler).dropped[site.url("/private/x")], ForbiddenByRobotsTxt)
    assert robots == 2  # the warm-up's, and one again for the tampered row
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) <= 1  # a stale-forever row is valid: capped, no warning needed


@deferred_f_from_coro_f
async def test_storage_tampered_redis_value_is_fetched_again_with_one_warning(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {"REP_STORAGE": "redis", "REP_REDIS_URL": redis_server.url}
    client = redis.Redis.from_url(redis_server.url)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        await crawl([site.url("/warm-up")], settings)
        keys = [key for key in client.keys("scrapy_rep:*") if b"lock" not in key]
        assert keys
        for key in keys:
            client.set(key, TAMPERED["nan expiry"])
        with caplog.at_level(logging.WARNING):
            crawler = await crawl([site.url("/page"), site.url("/private/x")], settings)
        robots = site.count("/robots.txt")
    assert spider_of(crawler).got == [site.url("/page")]
    assert robots == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "unreadable cached record" in warnings[0]
