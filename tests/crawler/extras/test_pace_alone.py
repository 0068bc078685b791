"""The crawl-delay on its own, with ``REP_RETRY_AFTER = "ignore"``, and the
pace's stats counted exactly (docs/politeness.md, "Stats").

Real crawls against local servers, timed by the site's own clock; the
stats are compared with each other and with the number of pages that
waited, never with a duration.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import AsyncIterator, Iterator

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import Reply, SiteServer, page

from .conftest import PagesSpider, crawl, gaps, hits, spider_of, stats

SLACK = 0.1
LATE = 0.3
DELAY = 0.5


def robots(text: str) -> Reply:
    return Reply(200, text.encode(), {"Content-Type": "text/plain"})


@deferred_f_from_coro_f
async def test_crawl_delay_obeyed_with_retry_after_ignored_paces_its_origin_and_no_other() -> None:
    """Retry-After ignored leaves the crawl-delay obeyed; an origin without one
    is not paced at all (nothing waits for it)."""
    with (
        SiteServer({"/robots.txt": robots(f"User-agent: *\nCrawl-delay: {DELAY}\n")}) as paced,
        SiteServer({"/robots.txt": robots("User-agent: *\nDisallow: /x\n")}) as free,
    ):
        urls = [paced.url(f"/p{n}") for n in range(3)]
        others = [free.url(f"/o{n}", "localhost") for n in range(3)]
        settings = {"REP_CRAWL_DELAY": "obey", "REP_RETRY_AFTER": "ignore"}
        crawler = await crawl([*urls, *others], settings)
    assert sorted(spider_of(crawler).got) == sorted([*urls, *others])
    paced_gaps = gaps(hits(paced))
    assert len(paced_gaps) == 3
    assert all(gap >= DELAY - SLACK for gap in paced_gaps), paced_gaps
    assert statistics.median(paced_gaps) < DELAY + LATE, paced_gaps
    assert stats(crawler)["robotstxt/pace/waited"] == 3  # the paced pages only


@deferred_f_from_coro_f
async def test_retry_after_obeyed_alone_leaves_the_crawl_delay_unapplied() -> None:
    """``REP_RETRY_AFTER = "obey"`` with the crawl-delay ignored: no page waits
    for a turn, with a ``Crawl-delay`` in robots.txt or without one."""
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 2\n")}) as delayed,
        SiteServer({"/robots.txt": robots("User-agent: *\nDisallow: /x\n")}) as free,
    ):
        urls = [delayed.url(f"/p{n}") for n in range(3)]
        others = [free.url(f"/o{n}", "localhost") for n in range(3)]
        # one page of an origin at a time: the others wait for their slot, not a turn
        settings = {
            "REP_CRAWL_DELAY": "ignore",
            "REP_RETRY_AFTER": "obey",
            "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        }
        crawler = await crawl([*urls, *others], settings)
    assert sorted(spider_of(crawler).got) == sorted([*urls, *others])
    assert "robotstxt/pace/waited" not in stats(crawler)
    assert "robotstxt/crawl_delay/applied" not in stats(crawler)


@deferred_f_from_coro_f
async def test_one_page_that_waited_is_counted_once_and_its_wait_is_the_sum(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One page waits its turn after robots.txt: it is the one that waited,
    the most at once, its wait both the longest and the sum (to the ms); the
    debug log says how long its turn was away."""
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nRequest-rate: 2/1s\n")}) as site,
        caplog.at_level(logging.DEBUG, "scrapy_rep"),
    ):
        crawler = await crawl([site.url("/p0")], {"REP_CRAWL_DELAY": "obey"})
    assert [r for r in caplog.records if ": turn in 0." in r.getMessage()]
    assert len(spider_of(crawler).got) == 1
    found = stats(crawler)
    assert found["robotstxt/pace/waited"] == 1
    assert found["robotstxt/pace/waiting_max"] == 1
    longest = found["robotstxt/pace/wait_seconds_longest"]
    assert 0 < longest == round(longest, 3) < 30  # seconds, not a clock's reading
    assert found["robotstxt/pace/wait_seconds_summed"] == longest
    assert found["robotstxt/pace/wait_seconds"] == longest


@deferred_f_from_coro_f
async def test_pages_waiting_at_once_are_each_counted_once() -> None:
    """Two pages asked together: both wait (the second in line, then for its
    turn), each counted once, both at once at the most."""
    with SiteServer({"/robots.txt": robots("User-agent: *\nRequest-rate: 2/1s\n")}) as site:
        urls = [site.url("/p0"), site.url("/p1")]
        crawler = await crawl(urls, {"REP_CRAWL_DELAY": "obey"})
    assert sorted(spider_of(crawler).got) == sorted(urls)
    found = stats(crawler)
    assert found["robotstxt/pace/waited"] == 2
    assert found["robotstxt/pace/waiting_max"] == 2
    summed = found["robotstxt/pace/wait_seconds_summed"]
    longest = found["robotstxt/pace/wait_seconds_longest"]
    assert 0 < longest < summed == round(summed, 3) < 60


class OneThenTwoSpider(PagesSpider):
    """Asks for its first page, then for the other two at once when it is back."""

    async def start(self) -> AsyncIterator[Request]:
        yield Request(self.urls[0], callback=self.parse, dont_filter=True)

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        super().parse(response)
        if response.url == self.urls[0]:
            for url in self.urls[1:]:
                yield Request(url, callback=super().parse, dont_filter=True)


@deferred_f_from_coro_f
async def test_pages_waiting_after_another_waited_are_counted_as_they_wait() -> None:
    """One page waits alone, then two at once: three waited, two at the most."""
    with SiteServer({"/robots.txt": robots("User-agent: *\nRequest-rate: 4/1s\n")}) as site:
        urls = [site.url(f"/p{n}") for n in range(3)]
        crawler = await crawl(urls, {"REP_CRAWL_DELAY": "obey"}, OneThenTwoSpider)
    assert sorted(spider_of(crawler).got) == urls
    found = stats(crawler)
    assert found["robotstxt/pace/waited"] == 3
    assert found["robotstxt/pace/waiting_max"] == 2


@deferred_f_from_coro_f
async def test_a_turn_that_comes_while_its_download_slot_is_busy_waits_for_the_slot() -> None:
    """Two origins on one host share Scrapy's download slot (one transfer at
    a time here): a page whose turn comes while the other origin's slow page
    holds the slot goes once the slot is free, and each page arrives."""

    def slow(host: str) -> Reply:
        time.sleep(1.0)
        return page("/slow")

    with (
        SiteServer({"/robots.txt": robots(f"User-agent: *\nCrawl-delay: {DELAY}\n")}) as paced,
        SiteServer({"/robots.txt": robots(""), "/slow": slow}) as other,
    ):
        urls = [paced.url(f"/p{n}") for n in range(3)]
        settings = {"REP_CRAWL_DELAY": "obey", "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
        crawler = await crawl([*urls, other.url("/slow")], {**settings, "DOWNLOAD_TIMEOUT": 10})
    assert sorted(spider_of(crawler).got) == sorted([*urls, other.url("/slow")])
    assert all(gap >= DELAY - SLACK for gap in gaps(hits(paced))), gaps(hits(paced))
