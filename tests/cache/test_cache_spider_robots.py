"""A spider's own robots.txt requests (SitemapSpider): answered from the cache,
so the server sees one robots.txt request; and what a spider downloads itself
refreshes the cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from crawler.conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from crawler.servers import Reply, SiteServer
from scrapy.http import Request, Response
from scrapy.spiders import SitemapSpider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtDisallowed


class Sitemaps(SitemapSpider):
    name = "sitemaps"

    def __init__(self, robots: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sitemap_urls = [robots]
        self.got: list[str] = []
        self.dropped: list[str] = []

    def parse(self, response: Response) -> None:
        self.got.append(response.url)

    def _parse_sitemap(self, response: Response) -> Any:
        if response.url.endswith("/robots.txt"):
            self.robots_answers = [*getattr(self, "robots_answers", []), response]
        for request in super()._parse_sitemap(response):
            yield request.replace(errback=self.errback)

    def errback(self, failure: Failure) -> None:
        if isinstance(failure.value, RobotsTxtDisallowed):
            self.dropped.append(failure.request.url)  # type: ignore[attr-defined]


def sitemap(*urls: str) -> bytes:
    entries = "".join(f"<url><loc>{url}</loc></url>" for url in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    ).encode()


@deferred_f_from_coro_f
async def test_scrapy_sitemap_spider_robots_txt_answered_from_the_cache() -> None:
    """The spider asks for robots.txt to find sitemaps; the server sees one request."""
    with SiteServer() as site:
        robots = f"User-agent: *\nDisallow: /private\nSitemap: {site.url('/sitemap.xml')}\n"
        site.routes["/robots.txt"] = Reply(
            200, robots.encode(), {"Content-Type": "text/plain", "X-Served-By": "origin"}
        )
        site.routes["/sitemap.xml"] = Reply(
            200,
            sitemap(site.url("/page1"), site.url("/page2"), site.url("/private/x")),
            {"Content-Type": "application/xml"},
        )
        crawler = get_crawler(Sitemaps, SETTINGS)
        await crawler.crawl_async(robots=site.url("/robots.txt"))
    spider = crawler.spider
    assert isinstance(spider, Sitemaps)
    assert site.count("/robots.txt") == 1
    assert sorted(spider.got) == [site.url("/page1"), site.url("/page2")]
    assert spider.dropped == [site.url("/private/x")]
    [answer] = spider.robots_answers
    assert answer.flags == ["cached"] and answer.status == 200
    assert answer.headers[b"X-Served-By"] == b"origin"  # the headers we fetched
    assert stats(crawler)["robotstxt/cache/served"] == 1
    assert stats(crawler)["robotstxt/request_count"] == 1


@deferred_f_from_coro_f
async def test_scrapy_spiders_own_robots_txt_download_refreshes_the_cache() -> None:
    """An unreachable origin's robots.txt goes to the network when the spider asks;
    the answer it gets (newer than ours) becomes the origin's robots.txt."""
    answers = [Reply(503), Reply(200, b"User-agent: *\nDisallow: /private\n")]

    def robots(host: str) -> Reply:
        return answers.pop(0) if len(answers) > 1 else answers[0]

    class Asker(RecordingSpider):
        def errback(self, failure: Failure) -> Iterator[Request]:
            super().errback(failure)
            if failure.request.url.endswith("/first"):  # type: ignore[attr-defined]
                yield Request(site.url("/robots.txt"), callback=self.after, dont_filter=True)

        def after(self, response: Response) -> Iterator[Request]:
            self.robots_status = response.status
            for path in ("/public", "/private"):
                yield Request(site.url(path), callback=self.parse, errback=self.errback)

    with SiteServer({"/robots.txt": robots}) as site:
        crawler = await crawl([site.url("/first")], spidercls=Asker)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/robots.txt", "/public"]
    assert spider.robots_status == 200  # type: ignore[attr-defined]
    assert "unreachable" in spider.dropped[site.url("/first")].reason
    assert spider.got == [site.url("/public")]
    assert isinstance(spider.dropped[site.url("/private")], ForbiddenByRobotsTxt)
