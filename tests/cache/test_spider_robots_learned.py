"""A robots.txt the spider downloads itself, past the middleware's answer
(``dont_obey_robotstxt``), is learned from: when it is newer than the copy
the crawl holds, its rules apply to the requests that come after
(docs/decisions.md; the middleware reads the responses to /robots.txt).

Waves of ``ArrivingSpider``, time moved through REP_CLOCK between them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from crawler.conftest import SETTINGS, ArrivingSpider, RecordingSpider, crawl, spider_of, stats
from crawler.servers import Reply, SiteServer
from scrapy import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import FakeClock, VirtualClock
from .test_cache_crawls import DISALLOW_PRIVATE, Switch, sqlite


@deferred_f_from_coro_f
async def test_scrapy_robots_txt_the_spider_downloads_itself_refreshes_the_rules(
    clock: FakeClock,
) -> None:
    robots = Switch(Reply(200, DISALLOW_PRIVATE))

    def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            robots.reply = Reply(200, b"User-agent: *\nDisallow: /later\n")
            clock.advance(60)  # the spider's download is a minute newer than the copy

    with SiteServer({"/robots.txt": robots}) as site:
        own = Request(site.url("/robots.txt"), meta={"dont_obey_robotstxt": True})
        waves = [[own], [site.url("/later/x"), site.url("/private/y")]]
        crawler = await crawl(
            [site.url("/a")], {"REP_CLOCK": clock}, ArrivingSpider, waves=waves, before=then
        )
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/a", "/robots.txt", "/private/y"]
    assert sorted(spider.got) == [site.url("/a"), site.url("/private/y"), site.url("/robots.txt")]
    assert isinstance(spider.dropped[site.url("/later/x")], ForbiddenByRobotsTxt)


@pytest.mark.parametrize("newer", [False, True])
@deferred_f_from_coro_f
async def test_storage_a_download_is_learned_only_when_newer_than_the_stored_copy(
    tmp_path: Path, newer: bool
) -> None:
    """The spider downloads a robots.txt past the middleware's answer, of an
    origin the crawl has let go of from memory (REP_MEMORY_MAX_ORIGINS=1).
    Fetched at the same moment as the stored copy, it teaches nothing: the
    stored copy stays, and the origin holding the one place stays held. A
    minute newer, it is learned: stored for the next crawl, and held in
    memory (its rules known without a read of the store), in that one place."""
    clock = VirtualClock()  # stands still but for the minute below
    settings = sqlite(tmp_path, clock)
    robots = Switch(Reply(200, DISALLOW_PRIVATE))

    def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 2 and newer:
            clock.now += 60

    with SiteServer({"/robots.txt": robots}) as site, SiteServer({}) as other:
        await crawl([site.url("/a")], settings)
        robots.reply = Reply(200, b"User-agent: *\nDisallow: /later\n")
        own = Request(site.url("/robots.txt"), meta={"dont_obey_robotstxt": True})
        waves = [[other.url("/b")], [own]]  # the other origin takes the one place
        one = {**settings, "REP_MEMORY_MAX_ORIGINS": 1}
        learning = await crawl([site.url("/a")], one, ArrivingSpider, waves=waves, before=then)
        after = await crawl([site.url("/private/p"), site.url("/later/l")], settings)
    assert sorted(spider_of(learning).got) == sorted([site.url("/a"), other.url("/b"), own.url])
    assert stats(learning)["robotstxt/origins_now/known"] == (0 if newer else 1)
    dropped, got = ("/later/l", "/private/p") if newer else ("/private/p", "/later/l")
    assert site.paths() == ["/robots.txt", "/a", "/a", "/robots.txt", got]
    assert list(spider_of(after).dropped) == [site.url(dropped)]


class OwnDownloadMidFetch(RecordingSpider):
    """Asks for a page (its robots.txt fetch is held open by the site), then
    downloads that robots.txt itself past the middleware's answer, then asks
    for two pages more while the held fetch is still under way."""

    def __init__(self, site: SiteServer, fetching: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.site, self.fetching = site, fetching
        self.own = Request(site.url("/robots.txt"), meta={"dont_obey_robotstxt": True})

    async def start(self) -> AsyncIterator[Request]:
        self.urls = [self.site.url("/a")]
        async for request in super().start():
            yield request
        await ArrivingSpider.until(self.fetching.is_set)
        self.urls = [self.own]
        async for request in super().start():
            yield request
        await ArrivingSpider.until(lambda: self.own.url in self.got)
        self.urls = [self.site.url("/spider/x"), self.site.url("/fetched/y")]
        async for request in super().start():
            yield request


@deferred_f_from_coro_f
async def test_scrapy_own_download_while_the_fetch_is_under_way_is_not_learned() -> None:
    """The spider's own download of a robots.txt the crawl is fetching does not
    answer for it: the requests that come meanwhile wait for the fetch, and
    its rules decide (docs/spec.md §3.5)."""
    fetching, release = threading.Event(), threading.Event()

    def robots(host: str) -> Reply:
        if not fetching.is_set():  # the crawl's own fetch: held open
            fetching.set()
            release.wait(30)
            return Reply(200, b"User-agent: *\nDisallow: /fetched\n")
        return Reply(200, b"User-agent: *\nDisallow: /spider\n")

    def let_go() -> None:  # in a thread of its own: the same under every reactor
        deadline = time.monotonic() + 30
        while len(site.paths()) < 2 and time.monotonic() < deadline:  # the spider's download
            time.sleep(0.01)
        time.sleep(0.3)  # its response read, the two pages asked for: ordering only
        release.set()

    with SiteServer({"/robots.txt": robots}) as site:
        crawler = get_crawler(OwnDownloadMidFetch, SETTINGS)
        going = threading.Thread(target=let_go, daemon=True)
        going.start()
        await crawler.crawl_async(site=site, fetching=fetching)
        going.join(30)
    spider = spider_of(crawler)
    assert list(spider.dropped) == [site.url("/fetched/y")]
    assert site.count("/spider/x") == 1
