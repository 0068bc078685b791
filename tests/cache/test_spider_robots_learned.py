"""A robots.txt the spider downloads itself, past the middleware's answer
(``dont_obey_robotstxt``), is learned from: when it is newer than the copy
the crawl holds, its rules apply to the requests that come after
(docs/decisions.md; the middleware reads the responses to /robots.txt).

Waves of ``ArrivingSpider``, time moved through REP_CLOCK between them.
"""

from __future__ import annotations

from crawler.conftest import ArrivingSpider, crawl, spider_of
from crawler.servers import Reply, SiteServer
from scrapy import Request
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import FakeClock
from .test_cache_crawls import DISALLOW_PRIVATE, Switch


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
