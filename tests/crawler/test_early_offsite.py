"""Which requests the add-on checks before the scheduler when Scrapy's offsite
filter is in play (docs/decisions.md, "Robots-aware scheduling"): not those
the filter will drop, but those it lets through all the same (``dont_filter``,
``allow_offsite``), and every request when the filter is not enabled.

Real crawls through the add-on against a server on 127.0.0.1, asked for as
``localhost`` (off the spider's ``allowed_domains``) and ``127.0.0.1``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from scrapy import Request
from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import ArrivingSpider, crawl, spider_of, stats
from .servers import Reply, SiteServer

ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n")
OFFSITE = "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware"


class OnSiteSpider(ArrivingSpider):
    """Only 127.0.0.1 is the spider's own; its requests are as given (filtered)."""

    name = "onsite"
    allowed_domains: ClassVar[list[str]] = ["127.0.0.1"]

    async def start(self) -> AsyncIterator[Request]:
        async for request in super().start():
            yield request.replace(dont_filter=False) if request.meta.get("filtered") else request


def _wave(site: SiteServer, path: str, how: str) -> Request:
    """A request for ``path`` on ``localhost``, off the spider's domains, let through ``how``."""
    url = site.url(path, "localhost")
    if how == "dont_filter":
        return Request(url, dont_filter=True)
    return Request(url, meta={"allow_offsite": True, "filtered": True})


@pytest.mark.parametrize("how", ["dont_filter", "allow_offsite"])
@deferred_f_from_coro_f
async def test_scrapy_offsite_request_let_through_is_checked_before_the_scheduler(
    how: str,
) -> None:
    """Off the spider's domains but let through by Scrapy's filter: the
    origin's robots.txt is known from its first request, and the forbidden
    one that comes later is dropped before the scheduler."""
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        first, later = _wave(site, "/open", how), _wave(site, "/private/x", how)
        crawler = await crawl([first], {}, OnSiteSpider, waves=[[later]])
    spider = spider_of(crawler)
    assert spider.got == [first.url]
    assert isinstance(spider.dropped[later.url], ForbiddenByRobotsTxt)
    assert stats(crawler)["robotstxt/dropped_early"] == 1
    assert site.paths() == ["/robots.txt", "/open"]


@deferred_f_from_coro_f
async def test_scrapy_without_the_offsite_filter_every_request_is_checked_early() -> None:
    """Scrapy's offsite filter disabled (DOWNLOADER_MIDDLEWARES sets it to
    None): no request is anyone else's to drop, so each is checked before the
    scheduler, those off the spider's domains included."""
    settings = {"DOWNLOADER_MIDDLEWARES": {OFFSITE: None}}
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        # filtered requests (no dont_filter): with the filter on, both would be dropped
        first, later = (
            Request(site.url(path, "localhost"), meta={"filtered": True})
            for path in ("/open", "/private/x")
        )
        crawler = await crawl([first], settings, OnSiteSpider, waves=[[later]])
    spider = spider_of(crawler)
    assert spider.got == [first.url]
    assert isinstance(spider.dropped[later.url], ForbiddenByRobotsTxt)
    assert stats(crawler)["robotstxt/dropped_early"] == 1


class OwnOffsite(OffsiteMiddleware):
    """A project's own offsite filter: it keeps the crawl on 127.0.0.1 whatever
    the spider's allowed_domains say."""

    def should_follow(self, request: Request, spider: Any) -> bool:
        return "//127.0.0.1:" in request.url


class AnySiteSpider(OnSiteSpider):
    name = "anysite"
    allowed_domains: ClassVar[list[str]] = []


@deferred_f_from_coro_f
async def test_scrapy_no_robots_txt_for_an_origin_a_projects_own_offsite_filter_drops() -> None:
    """A subclass of Scrapy's offsite filter decides on its own, even for a
    spider without allowed_domains: the origin it drops is none of the
    add-on's business, so its robots.txt is not fetched early either."""
    settings = {"DOWNLOADER_MIDDLEWARES": {OFFSITE: None, f"{__name__}.OwnOffsite": 50}}
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        kept = Request(site.url("/a"), meta={"filtered": True})
        dropped = Request(site.url("/b", "localhost"), meta={"filtered": True})
        crawler = await crawl([kept, dropped], settings, AnySiteSpider)
        hosts = [hit.host for hit in site.hits if hit.path == "/robots.txt"]
    assert spider_of(crawler).got == [kept.url]
    assert hosts == [f"127.0.0.1:{site.port}"]
