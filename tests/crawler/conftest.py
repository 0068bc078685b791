"""Crawl helpers: a spider that records what it got, one that asks over time,
and one call to run a crawl.

The crawls are wired as users wire them: ``ADDONS = {"scrapy_rep.Addon": 0}``
(both middlewares, the extensions). ``BY_HAND`` is the variant: the downloader
middleware alone, set in ``DOWNLOADER_MIDDLEWARES`` without the spider
middleware, so every request reaches the downloader middleware; ``WIRINGS``
runs a test both ways.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from scrapy import Spider
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep import signals as rep_signals
from scrapy_rep.cache.outcome import Access, AccessState
from scrapy_rep.crawler.async_bridge import sleep
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


class ArrivingSpider(RecordingSpider):
    """Requests that arrive over the crawl, wave after wave, not all at its start.

    ``urls`` (if any) is the first wave, ``waves`` the next ones. A wave is
    yielded once every request of the one before has its outcome (got,
    dropped or failed): a chain, so no wave races the crawl's answers. Before
    each later wave, ``before(spider, n)`` is awaited: the test's own trigger
    (switch the site's robots.txt, move the injected clock, wait for the
    crawl's progress with ``until`` or ``until_resolved``). Then ``gap``
    seconds of real time pass: for arrival only, no assertion may depend on
    them.
    """

    name = "arriving"
    #: A wave whose outcomes have not all come by then fails the crawl.
    SETTLE_TIMEOUT = 30.0

    def __init__(
        self,
        urls: Sequence[str | Request] = (),
        waves: Sequence[Sequence[str | Request]] = (),
        gap: float = 0.0,
        before: Callable[[ArrivingSpider, int], Awaitable[None] | None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(urls, **kwargs)
        self.waves = ([list(urls)] if urls else []) + [list(wave) for wave in waves]
        self.gap = gap
        self.before = before
        self.outcomes = 0  # responses, drops and failures so far
        self.arrived: list[int] = []  # waves yielded, in order
        self.resolved: list[Access] = []  # each robotstxt_resolved, in order

    async def start(self) -> AsyncIterator[Request]:
        self.crawler.signals.connect(
            lambda access, **_: self.resolved.append(access),
            signal=rep_signals.robotstxt_resolved,
            weak=False,
        )
        yielded = 0
        for number, wave in enumerate(self.waves):
            if number:
                await self.until(lambda n=yielded: self.outcomes >= n, self.SETTLE_TIMEOUT)
                if self.before is not None:
                    triggered = self.before(self, number)
                    if triggered is not None:
                        await triggered
                if self.gap:
                    await sleep(self.gap)
            self.arrived.append(number)
            self.urls = wave
            async for request in super().start():
                yielded += 1
                yield request

    async def until_resolved(self, count: int, timeout: float = 10.0) -> None:
        """Wait until robotstxt_resolved has been sent ``count`` times (an
        origin's access known, or changed): a retry's answer, say."""
        await self.until(lambda: len(self.resolved) >= count, timeout)

    async def until_rules(self, timeout: float = 10.0) -> None:
        """Wait until the origin's newest access is its robots.txt's rules
        (an outage's retry answered, say)."""
        await self.until(
            lambda: bool(self.resolved) and self.resolved[-1].state is AccessState.RULES, timeout
        )

    @staticmethod
    async def until(done: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait for the crawl's progress (``done()``), not for time to pass."""
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"not within {timeout} s")
            await sleep(0.02)

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.outcomes += 1

    def errback(self, failure: Failure) -> None:
        super().errback(failure)
        self.outcomes += 1


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
    """The crawl's spider (a RecordingSpider, or a subclass such as ArrivingSpider)."""
    assert isinstance(crawler.spider, RecordingSpider)
    return crawler.spider


logging.getLogger("scrapy_rep").setLevel(logging.DEBUG)
