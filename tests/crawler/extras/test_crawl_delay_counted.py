"""What REP_CRAWL_DELAY = "obey" counts (docs/crawl-delay.md): an origin whose
crawl-delay applies to the spider's own robots.txt token, read from its
``robotstxt_user_agent`` attribute, and no other; nothing goes wrong on the way."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import Reply, SiteServer

from .conftest import PagesSpider, crawl, hits, stats
from .test_crawl_delay import OBEY, Clock, RefreshingSpider, pages, robots


class OtherBotSpider(PagesSpider):
    robotstxt_user_agent = "otherbot"


@pytest.mark.parametrize(
    ("text", "applied"),
    [
        ("User-agent: *\nDisallow: /private\n\nUser-agent: otherbot\nCrawl-delay: 0.3\n", 1),
        ("User-agent: *\nCrawl-delay: 0.3\n\nUser-agent: otherbot\nDisallow: /private\n", None),
    ],
    ids=["its_group_paces", "only_star_paces"],
)
@deferred_f_from_coro_f
async def test_the_delay_counted_is_that_of_the_spiders_own_token(
    text: str, applied: int | None
) -> None:
    with SiteServer({"/robots.txt": robots(text)}) as site:
        crawler = await crawl(pages(site, 2), OBEY, spidercls=OtherBotSpider)
    assert len(hits(site)) == 3
    assert stats(crawler).get("robotstxt/crawl_delay/applied") == applied
    assert "log_count/ERROR" not in stats(crawler)


@deferred_f_from_coro_f
async def test_a_refreshed_delay_is_counted_again_and_a_cut_one_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/crawl-delay.md: ``applied`` counts an origin again after a refresh;
    a delay past REP_CRAWL_DELAY_MAX is cut, counted each time, warned once."""
    bodies = iter(
        [
            "User-agent: *\nCrawl-delay: 0.2\n",
            "User-agent: *\nCrawl-delay: 60\n",  # cut to 0.3
            "User-agent: *\nCrawl-delay: 90\n",  # cut again, not warned again
        ]
    )
    clock = Clock()
    routes = {"/robots.txt": lambda host: robots(next(bodies))}
    with SiteServer(routes) as site, caplog.at_level(logging.WARNING):
        crawler = await crawl(
            pages(site, 3),
            {**OBEY, "REP_CLOCK": clock, "REP_CRAWL_DELAY_MAX": 0.3},
            RefreshingSpider,
            clock=clock,
            expire_after=(0, 1),
        )
    assert [hit.path for hit in hits(site)].count("/robots.txt") == 3
    counted = stats(crawler)
    assert (counted["robotstxt/crawl_delay/applied"], counted["robotstxt/crawl_delay/clamped"]) == (
        3,
        2,
    )
    said = [r for r in caplog.records if r.name == "scrapy_rep.crawler.pace.crawl_delay"]
    assert len(said) == 1 and "crawl-delay 60 s" in said[0].getMessage()
    assert "log_count/ERROR" not in counted


@deferred_f_from_coro_f
async def test_a_refreshed_delay_is_counted_even_when_the_pages_left_are_disallowed() -> None:
    """The refresh asked for by /page2 brings a delay and a Disallow of it: no
    page of the origin reaches the downloader again, the delay is counted all
    the same. Another origin has no robots.txt (404): nothing to count there."""
    bodies = iter(
        [
            "User-agent: *\nCrawl-delay: 0.2\n",
            "User-agent: *\nCrawl-delay: 0.2\nDisallow: /page2\n",
        ]
    )
    clock = Clock()
    with (
        SiteServer({"/robots.txt": lambda host: robots(next(bodies))}) as site,
        SiteServer({"/robots.txt": Reply(404)}) as bare,
    ):
        crawler = await crawl(
            [bare.url("/page"), *pages(site, 3)],  # one after the other
            {**OBEY, "REP_CLOCK": clock},
            RefreshingSpider,
            clock=clock,
            expire_after=(2,),  # after /page1
        )
    assert [hit.path for hit in hits(site)] == ["/robots.txt", "/page0", "/page1", "/robots.txt"]
    assert [hit.path for hit in hits(bare)] == ["/robots.txt", "/page"]
    counted = stats(crawler)
    assert counted["robotstxt/crawl_delay/applied"] == 2 and "log_count/ERROR" not in counted
