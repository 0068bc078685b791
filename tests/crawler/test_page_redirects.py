"""A page that redirects is checked again at the URL it redirects to: Scrapy's
RedirectMiddleware copies the page's meta into the new request, so what the
check wrote there (``meta["rep_decision"]``, docs/versions.md) must never read
as "this is robots.txt's own fetch" (``rep_robotstxt``), which skips the check."""

from __future__ import annotations

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY
from scrapy_rep.crawler.decision_log import PROVENANCE_META_KEY
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import crawl, spider_of
from .servers import Redirect, Reply, SiteServer

RULES = b"User-agent: *\nDisallow: /private\n"


def test_scrapy_the_decision_and_the_robots_fetch_have_keys_of_their_own() -> None:
    assert PROVENANCE_META_KEY != ROBOTSTXT_FETCH_META_KEY


@pytest.mark.parametrize("status", [301, 302, 307])
@deferred_f_from_coro_f
async def test_scrapy_a_redirect_to_a_disallowed_page_is_dropped_there(status: int) -> None:
    with SiteServer({"/robots.txt": Reply(200, RULES)}) as site:
        site.routes["/go"] = Redirect(site.url("/private/x"), status)
        crawler = await crawl([site.url("/go")])
    assert site.paths() == ["/robots.txt", "/go"]  # never /private/x
    spider = spider_of(crawler)
    assert spider.got == []
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)


@deferred_f_from_coro_f
async def test_scrapy_a_redirect_to_another_origin_meets_that_origins_rules() -> None:
    with (
        SiteServer({"/robots.txt": Reply(200, b"")}) as site,
        SiteServer({"/robots.txt": Reply(200, RULES)}) as other,
    ):
        site.routes["/go"] = Redirect(other.url("/private/x"))
        crawler = await crawl([site.url("/go")])
    assert other.paths() == ["/robots.txt"]
    assert isinstance(spider_of(crawler).dropped[other.url("/private/x")], ForbiddenByRobotsTxt)
