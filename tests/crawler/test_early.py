"""Issue 14 §3: robots-aware scheduling, the spider middleware the add-on installs.

Known-forbidden requests never reach the scheduler (so neither JOBDIR's disk
queue nor scrapy-redis's shared queue holds them); an unknown origin's
robots.txt is fetched as soon as its first request is yielded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import ClassVar

import pytest
from scrapy import Request, signals
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import signals as rep_signals
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import RecordingSpider, stats
from .servers import Reply, SiteServer

ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n")
SLOW = 1.0  # seconds the busy page takes
ADDON = {
    "ADDONS": {"scrapy_rep.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "REP_STORAGE": "memory",
    "RETRY_ENABLED": False,
    "LOG_LEVEL": "DEBUG",
}


class EarlySpider(RecordingSpider):
    """Yields /a, waits for the origin's verdict, then /private/x; /a's page links more."""

    name = "early"

    async def start(self) -> AsyncIterator[Request]:
        resolved = asyncio.Event()
        self.crawler.signals.connect(
            lambda **_: resolved.set(), rep_signals.robotstxt_resolved, weak=False
        )
        base = self.urls[0]
        assert isinstance(base, str)
        yield Request(base + "/a", callback=self.parse_a, errback=self.errback)
        await asyncio.wait_for(resolved.wait(), 10)
        yield Request(base + "/private/x", callback=self.parse, errback=self.errback)

    def parse_a(self, response: Response) -> Iterator[Request]:
        self.got.append(response.url)
        base = self.urls[0]
        yield Request(f"{base}/private/y", callback=self.parse, errback=self.errback)
        yield Request(f"{base}/b", callback=self.parse, errback=self.errback)


@deferred_f_from_coro_f
async def test_scrapy_known_forbidden_requests_never_reach_the_scheduler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rep")
    scheduled: list[str] = []
    dropped_signal: list[str] = []
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        crawler = get_crawler(EarlySpider, ADDON)
        crawler.signals.connect(
            lambda request, **_: scheduled.append(request.url),
            signals.request_scheduled,
            weak=False,
        )
        crawler.signals.connect(
            lambda request, **_: dropped_signal.append(request.url),
            rep_signals.request_dropped,
            weak=False,
        )
        await crawler.crawl_async(urls=[site.url("").rstrip("/")])
        paths = site.paths()
    spider = crawler.spider
    assert isinstance(spider, EarlySpider)
    forbidden = [site.url("/private/x"), site.url("/private/y")]
    assert sorted(spider.got) == [site.url("/a"), site.url("/b")]
    # Dropped as by the downloader: the errback, the signal, the stats, the log ...
    assert sorted(spider.dropped) == forbidden
    assert all(isinstance(e, ForbiddenByRobotsTxt) for e in spider.dropped.values())
    assert sorted(dropped_signal) == forbidden
    assert stats(crawler)["robotstxt/forbidden"] == 2
    # ... but before the scheduler: it never held them.
    assert stats(crawler)["robotstxt/dropped_early"] == 2
    assert not set(forbidden) & set(scheduled)
    assert f"Dropped <GET {site.url('/private/x')}> before scheduling" in caplog.text
    assert not [p for p in paths if p.startswith("/private")]


class SlowFirstSpider(RecordingSpider):
    """A slow page of one origin holds the only place; a page of another waits."""

    name = "slowfirst"

    async def start(self) -> AsyncIterator[Request]:
        busy, other = self.urls
        assert isinstance(busy, str) and isinstance(other, str)
        yield Request(busy, callback=self.parse, priority=10)
        await asyncio.sleep(0.1)  # the busy page has taken the place
        yield Request(other, callback=self.parse)


@deferred_f_from_coro_f
async def test_scrapy_robots_txt_fetched_while_the_first_request_waits_in_the_scheduler() -> None:
    """One place, held 1 s by a slow page: the other origin's page waits in the
    scheduler, and its robots.txt takes the place first when it frees, so the
    page's verdict is known when it is dequeued (a cache hit, not a wait)."""

    def slow_page(host: str) -> Reply:
        time.sleep(SLOW)
        return Reply(200, b"slow")

    with (
        SiteServer({"/robots.txt": ROBOTS, "/slow": slow_page}) as busy,
        SiteServer({"/robots.txt": ROBOTS}) as other,
    ):
        crawler = get_crawler(SlowFirstSpider, {**ADDON, "CONCURRENT_REQUESTS": 1})
        await crawler.crawl_async(urls=[busy.url("/slow"), other.url("/page")])
        other_hits = other.paths()
    assert crawler.spider.got == [busy.url("/slow"), other.url("/page")]  # type: ignore[union-attr]
    assert other_hits == ["/robots.txt", "/page"]
    # The other page found its verdict known: it never waited for a fetch.
    assert stats(crawler).get("robotstxt/cache/miss", 0) <= 1  # the busy origin's, if any
    assert stats(crawler)["robotstxt/cache/hit"] >= 1


class OffsiteSpider(RecordingSpider):
    name = "offsite"
    allowed_domains: ClassVar[list[str]] = ["127.0.0.1"]

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            assert isinstance(url, str)
            yield Request(url, callback=self.parse)  # filtered, not dont_filter


@deferred_f_from_coro_f
async def test_scrapy_no_robots_txt_for_an_origin_the_offsite_filter_drops() -> None:
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        crawler = get_crawler(OffsiteSpider, ADDON)
        await crawler.crawl_async(urls=[site.url("/page"), site.url("/page", "localhost")])
        hosts = [hit.host for hit in site.hits if hit.path == "/robots.txt"]
    assert hosts == [f"127.0.0.1:{site.port}"]
    assert crawler.spider.got == [site.url("/page")]  # type: ignore[union-attr]
