"""Crawl helpers for the opt-in extras: crawl-delay and sitemaps from robots.txt.

The servers come from tests/crawler/servers.py. Every crawl here runs real
Scrapy against them; timings are read from the server's own request log.
The crawls are wired as users wire them, with the add-on (which also enables
both extensions); ``BY_HAND`` is the variant: the downloader middleware and
the extensions set by hand, without the spider middleware.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator, Sequence
from itertools import combinations, pairwise
from typing import Any

from reactor_choice import NONE, chosen_reactor
from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.http import Request, Response
from scrapy.settings import default_settings
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from crawler.servers import Hit, SiteServer

BUILTIN = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
OURS = "scrapy_rep.RobotsTxtMiddleware"
CRAWL_DELAY = "scrapy_rep.crawler.pace.crawl_delay.CrawlDelay"
FOLLOW_SITEMAPS = "scrapy_rep.crawler.page.sitemaps.FollowSitemaps"

SETTINGS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "ADDONS": {"scrapy_rep.Addon": 0},
    "DOWNLOAD_TIMEOUT": 5,
    "RETRY_ENABLED": False,
    "USER_AGENT": "TestBot/1.0 (+http://127.0.0.1/)",
    "REP_STORAGE": "memory",
    "LOG_LEVEL": "DEBUG",
}

#: Merged over SETTINGS: no add-on, so no spider middleware.
BY_HAND: dict[str, Any] = {
    "ADDONS": {},
    "DOWNLOADER_MIDDLEWARES": {OURS: 100, BUILTIN: None},
    "EXTENSIONS": {CRAWL_DELAY: 0, FOLLOW_SITEMAPS: 0},
}

#: ``@pytest.mark.parametrize("wiring", WIRINGS)``, then ``crawl(..., {**WIRINGS[wiring], ...})``.
WIRINGS: dict[str, dict[str, Any]] = {"add-on": {}, "by hand": BY_HAND}

#: No random variation of DOWNLOAD_DELAY: DOWNLOAD_DELAY_JITTER from Scrapy 2.19
#: on (which deprecates RANDOMIZE_DOWNLOAD_DELAY), RANDOMIZE_DOWNLOAD_DELAY on 2.18.
NO_DELAY_JITTER: dict[str, Any] = (
    {"DOWNLOAD_DELAY_JITTER": 0}
    if hasattr(default_settings, "DOWNLOAD_DELAY_JITTER")
    else {"RANDOMIZE_DOWNLOAD_DELAY": False}
)


class PagesSpider(Spider):
    """Requests the given URLs; records pages and sitemaps it receives."""

    name = "pages"

    def __init__(self, urls: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = list(urls)
        self.got: list[str] = []
        self.sitemaps: list[Response] = []

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response: Response) -> None:
        self.got.append(response.url)

    def parse_sitemap(self, response: Response) -> None:
        self.sitemaps.append(response)


async def crawl(
    urls: Sequence[str],
    settings: dict[str, Any] | None = None,
    spidercls: type[Spider] = PagesSpider,
    **kwargs: Any,
) -> Crawler:
    crawler = get_crawler(spidercls, {**SETTINGS, **(settings or {})})
    await crawler.crawl_async(urls=urls, **kwargs)
    return crawler


def spider_of(crawler: Crawler) -> PagesSpider:
    assert isinstance(crawler.spider, PagesSpider)
    return crawler.spider


def stats(crawler: Crawler) -> dict[str, Any]:
    assert crawler.stats is not None
    return crawler.stats.get_stats()


def hits(site: SiteServer, host: str = "127.0.0.1") -> list[Hit]:
    """The requests ``site`` got for one host name, in arrival order."""
    return [hit for hit in site.hits if hit.host.rsplit(":", 1)[0] == host]


def gaps(times: Sequence[Hit]) -> list[float]:
    """Seconds between consecutive requests, as the server saw them."""
    return [later.at - earlier.at for earlier, later in pairwise(times)]


#: Scrapy's http handler without a reactor (``Crawler._apply_reactorless_default_settings``).
_REACTORLESS_HTTP = "scrapy.core.downloader.handlers._aiohttp.AiohttpDownloadHandler"


class SlotStamps:
    """When each request reached Scrapy's downloader (``request_reached_downloader``)
    and when the downloader handed it to its HTTP handler, in this process
    (``time.monotonic``): the download slot let it go in between, by its own
    clock. ``settings()`` adds the stamping handler (Scrapy's own, subclassed)."""

    def __init__(self) -> None:
        self.reached: dict[str, float] = {}
        self.handed: dict[str, float] = {}

    def settings(self) -> dict[str, Any]:
        base = load_object(
            _REACTORLESS_HTTP
            if chosen_reactor() == NONE
            else default_settings.DOWNLOAD_HANDLERS_BASE["http"]
        )
        handed = self.handed

        class Stamping(base):  # type: ignore[misc, valid-type]
            def download_request(self, request: Request, *args: Any) -> Any:
                handed[request.url] = time.monotonic()
                return super().download_request(request, *args)

        if inspect.iscoroutinefunction(base.download_request):  # Scrapy 2.19 on

            class StampingAsync(base):  # type: ignore[misc, valid-type]
                async def download_request(self, request: Request) -> Any:
                    handed[request.url] = time.monotonic()
                    return await super().download_request(request)

            return {"DOWNLOAD_HANDLERS": {"http": StampingAsync}}
        return {"DOWNLOAD_HANDLERS": {"http": Stamping}}

    def connect(self, crawler: Crawler) -> None:
        crawler.signals.connect(self._reached, signal=signals.request_reached_downloader)

    def _reached(self, request: Request, spider: Spider | None = None) -> None:
        self.reached.setdefault(request.url, time.monotonic())

    def too_close(self, delay: float) -> list[tuple[str, str]]:
        """Pairs of requests the slot cannot have let go ``delay`` apart: each
        went between reaching the downloader and reaching the handler, so
        two that went ``delay`` apart have those far ends ``delay`` apart at
        least, however late a busy event loop ran (empty: the delay held)."""
        urls = sorted(self.handed, key=self.handed.__getitem__)
        return [
            (a, b)
            for a, b in combinations(urls, 2)
            if self.handed[b] - self.reached[a] < delay and self.handed[a] - self.reached[b] < delay
        ]


logging.getLogger("scrapy_rep").setLevel(logging.DEBUG)
