"""Crawl helpers: a spider that records what it got, and one call to run a crawl.

The crawls are wired as users wire them: ``ADDONS = {"scrapy_rep.Addon": 0}``
(both middlewares, the extensions). ``BY_HAND`` is the variant: the downloader
middleware alone, set in ``DOWNLOADER_MIDDLEWARES`` without the spider
middleware, so every request reaches the downloader middleware; ``WIRINGS``
runs a test both ways.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep.crawler.errors import RobotsTxtDisallowed

BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS = "scrapy_rep.RobotsTxtMiddleware"

ADDON = "scrapy_rep.Addon"

SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "ADDONS": {ADDON: 0},
    "DOWNLOAD_TIMEOUT": 5,
    "RETRY_ENABLED": False,
    "USER_AGENT": "TestBot/1.0 (+http://127.0.0.1/)",
    "LOG_LEVEL": "DEBUG",
    # Each test starts from an empty cache (ports are reused between tests),
    # and an unreachable robots.txt is not retried while requests wait: these
    # tests count the requests that reach the server. tests/cache covers both.
    "REP_STORAGE": "memory",
    "REP_UNREACHABLE_WAIT": 0,
}

#: Merged over SETTINGS: the downloader middleware set by hand, no add-on, so
#: no spider middleware (no drop before the scheduler, no early fetch).
BY_HAND: dict[str, Any] = {
    "ADDONS": {},
    "DOWNLOADER_MIDDLEWARES": {OURS: 100, BUILTIN: None},
}

#: ``@pytest.mark.parametrize("wiring", WIRINGS)``, then ``crawl(..., {**WIRINGS[wiring], ...})``.
WIRINGS: dict[str, dict[str, Any]] = {"add-on": {}, "by hand": BY_HAND}


class RecordingSpider(Spider):
    """Requests the given URLs (or Requests) and records every outcome."""

    name = "recording"

    def __init__(self, urls: Sequence[str | Request] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.got: list[str] = []  # URLs of responses the callback received
        self.dropped: dict[str, RobotsTxtDisallowed] = {}  # URL -> our exception
        self.failed: dict[str, Failure] = {}  # URL -> any other failure

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            if isinstance(url, Request):
                yield url.replace(callback=self.parse, errback=self.errback, dont_filter=True)
            else:
                yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)

    def parse(self, response: Response) -> None:
        self.got.append(response.url)

    def errback(self, failure: Failure) -> None:
        url = failure.request.url  # type: ignore[attr-defined]
        if isinstance(failure.value, RobotsTxtDisallowed):
            self.dropped[url] = failure.value
        else:
            self.failed[url] = failure


async def crawl(
    urls: Sequence[str | Request],
    settings: dict[str, Any] | None = None,
    spidercls: type[Spider] = RecordingSpider,
    **kwargs: Any,
) -> Crawler:
    """Run one crawl to its end; the spider and stats stay on the returned crawler."""
    crawler = get_crawler(spidercls, {**SETTINGS, **(settings or {})})
    await crawler.crawl_async(urls=urls, **kwargs)
    return crawler


def stats(crawler: Crawler) -> dict[str, Any]:
    assert crawler.stats is not None
    return crawler.stats.get_stats()


def spider_of(crawler: Crawler) -> RecordingSpider:
    assert isinstance(crawler.spider, RecordingSpider)
    return crawler.spider


logging.getLogger("scrapy_rep").setLevel(logging.DEBUG)
