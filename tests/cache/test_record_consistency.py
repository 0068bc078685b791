"""Issue 13 §6: a stored record whose fields are each valid but do not fit together.

``test_tampered_records.py`` covers fields of the wrong type or out of range.
Here every field is a plausible timestamp, but the record cannot have been
written by the policy: an outage that starts after the record's last fetch
(the policy takes that for "an early refresh failed while the copy was
fresh" and, with no copy, allows everything), a next retry a thousand days
away (no retry, so no new robots.txt, until the row expires), a good answer
after the last fetch. Such a record is absent (fetched again, one warning per
store), and a retry is never further than the policy's longest back-off.
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

from .conftest import FakeClock, RedisServer

ROBOTS = b"User-agent: *\nDisallow: /private\n"
ALLOW_ALL = b"User-agent: *\nDisallow:\n"
DAY = 86_400.0
HOUR = 3_600.0


def stored(now: float, body: bytes | None = None, **fields: Any) -> bytes:
    """A record as stored, fetched a minute before ``now``, with ``fields`` replaced."""
    base = OriginRecord(FetchKind.UNREACHABLE, 503, "HTTP 503", now - 60, now - 60)
    head, _, _ = base.to_bytes().partition(b"\n")
    header = {**json.loads(head), **fields, "b": body is not None}
    return json.dumps(header).encode() + b"\n" + (body or b"")


def future_outage(now: float) -> bytes:
    """Unreachable, no good copy, an outage "starting" in 30 days: allow-all forever."""
    return stored(now, st=now + 30 * DAY, n=now + 1000 * DAY, c=1)


def good_after_fetch(now: float) -> bytes:
    return stored(now, ALLOW_ALL, k="success", s=200, e=now + HOUR, g=now + DAY, gs=200)


@pytest.mark.parametrize("make", [future_outage, good_after_fetch])
def test_storage_record_whose_times_do_not_fit_together_is_refused(make: Any) -> None:
    with pytest.raises(ValueError):
        OriginRecord.from_bytes(make(time.time()))


def test_storage_loaded_retry_no_further_than_the_longest_back_off() -> None:
    config = PolicyConfig()
    now = time.time()
    record = OriginRecord(
        FetchKind.UNREACHABLE, 503, "HTTP 503", now - 60, now - 60,
        outage_started_at=now - HOUR, next_retry_at=now + 1000 * DAY, failures=3,
    )  # fmt: skip
    loaded = loaded_record(record, now, config)
    longest = max(config.retry_max, config.retry_busy_max, config.retry_after_max)
    assert loaded is not None and loaded.next_retry_at == now - 60 + longest


def test_storage_loaded_site_answer_from_the_future_is_absent() -> None:
    now = time.time()
    record = OriginRecord(
        FetchKind.UNREACHABLE, 503, "HTTP 503", now - 60, now - 60,
        outage_started_at=now - 40 * DAY, site_reachable_at=now + 1000 * DAY,
    )  # fmt: skip
    assert loaded_record(record, now, PolicyConfig()) is None


def sqlite_settings(path: Path, clock: FakeClock) -> dict[str, Any]:
    return {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(path), "REP_CLOCK": clock}


def replace_sqlite_row(path: Path, data: bytes) -> None:
    """The only row (the warm-up crawl's origin) now holds ``data``."""
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM origins").fetchone() == (1,)
        db.execute("UPDATE origins SET data = ?, expires_at = 9e15", (data,))


@deferred_f_from_coro_f
async def test_storage_sqlite_outage_from_the_future_is_fetched_again_with_one_warning(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "robots.sqlite3"
    settings = sqlite_settings(path, clock)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        await crawl([site.url("/warm-up")], settings)  # creates the file and its row
        replace_sqlite_row(path, future_outage(clock()))
        with caplog.at_level(logging.WARNING):
            crawler = await crawl(
                [site.url("/page"), site.url("/private/x"), site.url("/other")], settings
            )
        robots = site.count("/robots.txt")
    spider = spider_of(crawler)
    assert sorted(spider.got) == [site.url("/other"), site.url("/page")]
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)
    assert robots == 2  # the warm-up's, and once again for the row
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "unreadable cached record" in warnings[0], warnings


@deferred_f_from_coro_f
async def test_storage_redis_outage_from_the_future_is_fetched_again_with_one_warning(
    redis_server: RedisServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    settings = {"REP_STORAGE": "redis", "REP_REDIS_URL": redis_server.url, "REP_CLOCK": clock}
    client = redis.Redis.from_url(redis_server.url)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        await crawl([site.url("/warm-up")], settings)
        keys = [key for key in client.keys("scrapy_rep:*") if b"lock" not in key]
        assert len(keys) == 1
        client.set(keys[0], future_outage(clock()))
        with caplog.at_level(logging.WARNING):
            crawler = await crawl([site.url("/page"), site.url("/private/x")], settings)
        robots = site.count("/robots.txt")
    spider = spider_of(crawler)
    assert spider.got == [site.url("/page")]
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)
    assert robots == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "unreadable cached record" in warnings[0], warnings


@deferred_f_from_coro_f
async def test_storage_sqlite_retry_a_thousand_days_away_is_due_within_the_back_off(
    tmp_path: Path, clock: FakeClock
) -> None:
    """An outage past its closed window, on an allow-all copy, with its retry
    a thousand days away: the retry is due within the longest back-off (an
    hour by default), so two hours on robots.txt is fetched again and its new
    rules replace the copy."""
    path = tmp_path / "robots.sqlite3"
    settings = sqlite_settings(path, clock)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        await crawl([site.url("/warm-up")], settings)
        now = clock()
        row = stored(
            now, ALLOW_ALL, g=now - 2 * DAY, gs=200, e=now - DAY, st=now - 13 * HOUR,
            n=now + 1000 * DAY, c=5,
        )  # fmt: skip
        replace_sqlite_row(path, row)
        clock.advance(2 * HOUR)
        await crawl([site.url("/page")], settings)  # the stale copy applies; a retry is due
        crawler = await crawl([site.url("/page"), site.url("/private/x")], settings)
        robots = site.count("/robots.txt")
    spider = spider_of(crawler)
    assert robots == 2  # the warm-up's, and the retry
    assert spider.got == [site.url("/page")]
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)
