"""A URL with a query is not the robots.txt URL (docs/spec.md §1.2): asked for
before its origin's robots.txt is known, ``/robots.txt?x=1`` waits for it and
is then checked like any page, never answered with the robots.txt."""

from __future__ import annotations

from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl, spider_of
from .servers import Reply, SiteServer

BODY = b"User-agent: *\nDisallow: /robots.txt\n"


@deferred_f_from_coro_f
async def test_robots_txt_with_a_query_is_checked_like_a_page() -> None:
    with SiteServer({"/robots.txt": Reply(200, BODY)}) as site:
        queried = site.url("/robots.txt?x=1")
        crawler = await crawl([site.url("/p"), queried])  # both before robots.txt is known
    spider = spider_of(crawler)
    assert spider.got == [site.url("/p")] and list(spider.dropped) == [queried]
    assert site.paths() == ["/robots.txt", "/p"]  # the middleware's fetch only
