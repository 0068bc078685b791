"""A broken store must not lose or wrongly allow requests (docs/spec.md §3.4, issue 4)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from crawler.conftest import RecordingSpider, crawl, spider_of, stats
from crawler.servers import Reply, SiteServer
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import STORAGE_CLOSE_REASON, ForbiddenByRobotsTxt

from .conftest import FakeClock, RedisServer, free_port

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"


@deferred_f_from_coro_f
async def test_storage_corrupt_sqlite_file_is_moved_aside_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "robotstxt.sqlite3"
    path.write_bytes(b"this is not a database, " * 100)
    settings = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(path)}
    with SiteServer({"/robots.txt": Reply(200, DISALLOW_PRIVATE)}) as site:
        urls = [site.url("/public"), site.url("/private")]
        with caplog.at_level(logging.WARNING):
            first = await crawl(urls, settings)
        second = await crawl(urls, settings)  # the new file works: no fetch
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "damaged" in warnings[0].getMessage() and str(path) in warnings[0].getMessage()
    aside = list(tmp_path.glob("robotstxt.sqlite3.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not a database")
    assert site.paths() == ["/robots.txt", "/public", "/public"]
    for run in (first, second):
        assert spider_of(run).got == [site.url("/public")]
        assert isinstance(spider_of(run).dropped[site.url("/private")], ForbiddenByRobotsTxt)


@pytest.mark.parametrize("setting", ["REP_REDIS_URL", "REDIS_URL"])
@deferred_f_from_coro_f
async def test_storage_redis_down_at_startup_closes_the_spider_naming_the_url(
    setting: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/2"
    settings = {"REP_STORAGE": "redis", setting: url}
    with (
        SiteServer({"/robots.txt": Reply(200, DISALLOW_PRIVATE)}) as site,
        caplog.at_level(logging.ERROR),
    ):
        crawler = await crawl([site.url("/public")], settings)
    assert site.paths() == []  # nothing ran unchecked, nothing ran at all
    assert stats(crawler)["finish_reason"] == STORAGE_CLOSE_REASON
    errors = [r.getMessage() for r in caplog.records if r.name == "scrapy_rep.crawler.middleware"]
    assert len(errors) == 1
    assert f"Redis at {url} is not reachable" in errors[0]
    assert "REP_STORAGE='redis'" in errors[0]


class Phased(RecordingSpider):
    """Crawls origin after origin; the test's hooks run between the phases."""

    def __init__(
        self, urls: list[str], phases: list[list[str]], hooks: dict[int, Any], **kwargs: Any
    ) -> None:
        super().__init__(phases[0], **kwargs)
        self.phases = phases
        self.hooks = hooks
        self.phase = 0
        self.asked = list(phases[0])

    def parse(self, response: Response) -> Iterator[Request]:
        super().parse(response)
        if not response.url.endswith("/next") or self.phase + 1 >= len(self.phases):
            return
        self.phase += 1
        self.hooks.get(self.phase, lambda: None)()
        self.asked += self.phases[self.phase]
        for url in self.phases[self.phase]:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)


@deferred_f_from_coro_f
async def test_storage_redis_killed_mid_crawl_loses_no_request_lets_none_through(
    redis_server: RedisServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis dies after the first origin and comes back before the last: one
    warning, every request reached a server after its check or was dropped with
    a reason, no /private page was ever served, and each robots.txt was
    fetched once."""
    routes = {"/robots.txt": Reply(200, DISALLOW_PRIVATE), "/next": Reply(200, b"next")}
    with (
        SiteServer(routes) as a,
        SiteServer(routes) as b,
        SiteServer(routes) as c,
        SiteServer(routes) as d,
    ):
        sites = (a, b, c, d)
        phases = [
            [a.url("/public"), a.url("/private"), a.url("/next")],
            [b.url("/public"), b.url("/private"), a.url("/private?2"), b.url("/next")],
            [c.url("/public"), c.url("/private"), a.url("/again"), c.url("/next")],
            [d.url("/public"), d.url("/private"), b.url("/private?3"), d.url("/next")],
        ]

        def restart() -> None:
            redis_server.start()
            clock.advance(1.0)  # past REP_REDIS_RETRY_INTERVAL: the next use probes Redis

        hooks = {1: redis_server.kill, 2: restart}
        settings = {
            "REP_STORAGE": "redis",
            "REP_REDIS_URL": redis_server.url,
            "REP_REDIS_RETRY_INTERVAL": 0.5,
            "REP_CLOCK": clock,
            "CONCURRENT_REQUESTS": 4,
        }
        with caplog.at_level(logging.INFO, logger="scrapy_rep"):
            crawler = await crawl([], settings, spidercls=Phased, phases=phases, hooks=hooks)
        served = {site.port: site.paths() for site in sites}
    spider = spider_of(crawler)
    assert isinstance(spider, Phased) and spider.phase == 3
    assert not spider.failed
    assert sorted(spider.asked) == sorted([*spider.got, *spider.dropped])
    assert all("/private" in url for url in spider.dropped)
    assert all("/private" not in url for url in spider.got)
    for site in sites:
        assert served[site.port].count("/robots.txt") == 1
        assert not any(path.startswith("/private") for path in served[site.port])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and redis_server.url in warnings[0]
    assert any("is back" in r.getMessage() for r in caplog.records)
    # What was learnt while Redis was away reached it when it came back.
    # (The blocking client: this test also runs under the epoll reactor.)
    with redis.Redis.from_url(redis_server.url) as raw:
        assert raw.exists(f"scrapy_rep:origin:http://127.0.0.1:{b.port}") == 1
        assert raw.exists(f"scrapy_rep:origin:http://127.0.0.1:{d.port}") == 1
