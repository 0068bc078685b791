"""docs/spec.md §2.2 and §3 end to end: real crawls, real servers, the cache on a moved clock.

Each ``crawl`` below is a new crawler with a new middleware and a newly
opened store: for the sqlite backend that is what a restart of the crawl
is. Time moves through REP_CLOCK (the testing hook), never by sleeping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from crawler.conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from crawler.servers import Reply, SiteServer
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import signals
from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUnreachable
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
from scrapy_rep.engine.origin import Origin

from .conftest import HOUR, FakeClock, VirtualClock

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"


def sqlite(tmp_path: Path, clock: FakeClock | VirtualClock, **more: Any) -> dict[str, Any]:
    return {
        "REP_STORAGE": "sqlite",
        "REP_STORAGE_PATH": str(tmp_path / "robotstxt.sqlite3"),
        "REP_CLOCK": clock,
        **more,
    }


class Switch:
    """A robots.txt route the test changes between crawls."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    def __call__(self, host: str) -> Reply:
        return self.reply


@pytest.mark.parametrize("rules", ["google", "google-legacy"])
@deferred_f_from_coro_f
async def test_status_5xx_stays_closed_across_restarts_for_12h_then_last_good_copy(
    tmp_path: Path, clock: FakeClock, rules: str
) -> None:
    """docs/spec.md §2.2, §2.3, §3.3: an expired copy whose refresh answers 503 closes the
    origin for 12 hours, across restarts, then the last good copy applies
    (the older Google rules keep it closed)."""
    robots = Switch(Reply(200, DISALLOW_PRIVATE))
    settings = sqlite(tmp_path, clock, REP_OUTAGE_RULES=rules)
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url("/public"), site.url("/private")]
        good = await crawl(urls, settings)
        assert site.paths() == ["/robots.txt", "/public"]

        robots.reply = Reply(503)
        clock.advance(25 * HOUR)  # the copy expired an hour ago: refresh -> 503
        failed = await crawl(urls, settings)
        assert site.paths()[2:] == ["/robots.txt"]

        clock.advance(11 * HOUR)  # a restart, 11 h into the outage
        restarted = await crawl(urls, settings)
        assert site.paths()[3:] == ["/robots.txt"]  # a background retry, no page

        clock.advance(HOUR + 60)  # 12 h 01 min into the outage
        later = await crawl(urls, settings)
        late_paths = site.paths()[4:]

    assert isinstance(spider_of(good).dropped[site.url("/private")], ForbiddenByRobotsTxt)
    assert stats(good)["robotstxt/cache/miss"] == 2
    for run in (failed, restarted):
        spider = spider_of(run)
        assert spider.got == []
        assert all(isinstance(e, RobotsTxtUnreachable) for e in spider.dropped.values())
        assert all("503" in e.reason for e in spider.dropped.values())
        assert stats(run)["robotstxt/requests_in_outage/closed"] == 2
    assert stats(failed)["robotstxt/cache/expired"] == 2
    assert stats(restarted)["robotstxt/cache/hit"] == 2  # the outage came from the file
    assert "robotstxt/request_count" in stats(restarted)

    spider = spider_of(later)
    if rules == "google":
        assert sorted(late_paths) == ["/public", "/robots.txt"]
        assert spider.got == [site.url("/public")]
        assert isinstance(spider.dropped[site.url("/private")], ForbiddenByRobotsTxt)
        assert stats(later)["robotstxt/cache/stale_used"] == 2
        assert stats(later)["robotstxt/requests_in_outage/last-copy"] == 2
    else:  # REP_OUTAGE_RULES = "google-legacy": closed until a retry succeeds
        assert late_paths == ["/robots.txt"]
        assert spider.got == []
        assert stats(later)["robotstxt/requests_in_outage/closed"] == 2


@pytest.mark.parametrize("answered", [True, False])
@deferred_f_from_coro_f
async def test_status_5xx_after_30d_pages_that_answered_keep_the_site_open(
    tmp_path: Path, clock: FakeClock, answered: bool
) -> None:
    """docs/spec.md §2.2: 30 days into an outage, a site whose pages answered within the
    last day is crawled as if it had no robots.txt; one whose pages did not is
    closed. The middleware hears of those answers from the responses."""
    robots = Switch(Reply(200, DISALLOW_PRIVATE))
    settings = sqlite(tmp_path, clock, REP_UNREACHABLE_WAIT=0)
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url("/public"), site.url("/private")]
        await crawl(urls, settings)  # the good copy
        robots.reply = Reply(503)
        clock.advance(25 * HOUR)  # expired an hour ago: the refresh starts the outage
        await crawl(urls, settings)
        clock.advance(30 * 24 * HOUR - 2 * HOUR)  # the last good copy applies
        if answered:
            copy = await crawl(urls, settings)
            assert spider_of(copy).got == [site.url("/public")]  # it answered
        clock.advance(2 * HOUR)  # 30 days and an hour into the outage
        late = await crawl(urls, settings)
    if answered:
        assert sorted(spider_of(late).got) == sorted(urls)  # as if no robots.txt
        assert stats(late)["robotstxt/requests_in_outage/outage-allow"] == 2
    else:
        assert spider_of(late).got == []
        assert stats(late)["robotstxt/requests_in_outage/closed"] == 2


@deferred_f_from_coro_f
async def test_status_5xx_a_page_answering_between_retries_is_remembered_across_restarts(
    tmp_path: Path,
) -> None:
    """docs/spec.md §2.2, §2.3: a page that answers while no retry of robots.txt
    is due is written to the store at once, so the crawl that starts after
    30 days of outage finds the site answered within the last day."""
    clock = VirtualClock()
    robots = Switch(Reply(200, DISALLOW_PRIVATE))
    settings = sqlite(tmp_path, clock, REP_UNREACHABLE_WAIT=0)
    with SiteServer({"/robots.txt": robots}) as site:
        private, public = [site.url("/private")], [site.url("/public")]
        await crawl(private, settings)  # the good copy
        robots.reply = Reply(503)
        clock.now += 25 * HOUR  # expired an hour ago: the refresh starts the outage
        await crawl(private, settings)
        clock.now += 30 * 24 * HOUR - HOUR
        await crawl(private, settings)  # a retry (no page answers: the last copy drops it)
        answered = await crawl(public, settings)  # no retry due: only the page
        clock.now += 2 * HOUR  # 30 days and an hour into the outage
        late = await crawl(private + public, settings)
    assert site.paths()[:5] == ["/robots.txt"] * 3 + ["/public", "/robots.txt"]
    assert sorted(site.paths()[5:]) == ["/private", "/public"]
    assert spider_of(answered).got == public
    assert sorted(spider_of(late).got) == sorted(private + public)  # as if no robots.txt
    assert stats(late)["robotstxt/requests_in_outage/outage-allow"] == 2


@deferred_f_from_coro_f
async def test_cache_3_2_max_age_sets_the_life_no_store_is_not_kept(
    tmp_path: Path, clock: FakeClock
) -> None:
    """docs/spec.md §3.2 across restarts: max-age=600 lives 10 minutes; no-store is refetched."""
    aged = Reply(200, DISALLOW_PRIVATE, {"Cache-Control": "max-age=600"})
    unstored = Reply(200, DISALLOW_PRIVATE, {"Cache-Control": "no-store"})
    settings = sqlite(tmp_path, clock)
    with SiteServer({"/robots.txt": aged}) as site, SiteServer({"/robots.txt": unstored}) as nos:
        urls = [site.url("/private"), nos.url("/private")]
        await crawl(urls, settings)
        clock.advance(500)
        within = await crawl(urls, settings)
        clock.advance(200)
        after = await crawl(urls, settings)
    assert site.paths() == ["/robots.txt", "/robots.txt"]  # not at 500 s, again at 700 s
    assert nos.paths() == ["/robots.txt"] * 3  # its body never reached the file
    for run in (within, after):
        assert set(spider_of(run).dropped) == set(urls)
    assert stats(within)["robotstxt/cache/hit"] == 1
    assert stats(after)["robotstxt/cache/expired"] == 2


@deferred_f_from_coro_f
async def test_status_503_first_failure_waits_for_a_quick_retry() -> None:
    """docs/spec.md §2.2: requests that meet an origin's first 503 wait for a quick retry."""
    answers = [Reply(503), Reply(200, DISALLOW_PRIVATE)]

    def robots(host: str) -> Reply:
        return answers.pop(0) if len(answers) > 1 else answers[0]

    clock = VirtualClock()  # the retry's wait on the crawl's clock, whatever the load
    settings = {
        "REP_UNREACHABLE_WAIT": 5,
        "REP_RETRY_BUSY_INITIAL": 0.2,
        "REP_RETRY_JITTER": 0,
        "REP_CLOCK": clock,
    }
    with SiteServer({"/robots.txt": robots}) as site:
        crawler = await crawl([site.url("/public"), site.url("/private")], settings)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/robots.txt", "/public"]
    assert spider.got == [site.url("/public")]
    assert isinstance(spider.dropped[site.url("/private")], ForbiddenByRobotsTxt)
    assert clock.slept == pytest.approx([0.2])  # one quick retry, after the busy back-off


@deferred_f_from_coro_f
async def test_status_503_dead_origin_dropped_after_unreachable_wait() -> None:
    """docs/spec.md §2.2, §2.4: a crawl never hangs on a dead origin; its requests are
    dropped with the unreachable reason once REP_UNREACHABLE_WAIT is spent."""
    clock = VirtualClock()  # the retries' waits on the crawl's clock, whatever the load
    settings = {
        "REP_UNREACHABLE_WAIT": 1,
        "REP_RETRY_BUSY_INITIAL": 0.2,
        "REP_RETRY_JITTER": 0,
        "REP_CLOCK": clock,
    }
    with SiteServer({"/robots.txt": Reply(503)}) as site:
        crawler = await crawl([site.url(f"/p{i}") for i in range(5)], settings)
    spider = spider_of(crawler)
    # tries at 0 s, 0.2 s and 0.6 s; the next (1.4 s) is past the 1 s wait
    assert site.paths() == ["/robots.txt"] * 3
    assert clock.slept == pytest.approx([0.2, 0.4])  # then dropped, 0.6 s in
    assert len(spider.dropped) == 5 and not spider.got and not spider.failed
    assert all(isinstance(e, RobotsTxtUnreachable) for e in spider.dropped.values())
    assert stats(crawler)["robotstxt/unreachable"] == 5


@deferred_f_from_coro_f
async def test_scrapy_robotstxt_resolved_on_fetch_refresh_and_cache(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The signal for per-origin features: first fetch, each refresh, and from the cache."""
    robots = Switch(Reply(200, b"User-agent: *\nDisallow: /x\n"))
    events: list[dict[str, Any]] = []

    class Refresher(RecordingSpider):
        def parse(self, response: Any) -> Any:
            super().parse(response)
            if response.url.endswith("/a"):
                robots.reply = Reply(200, b"User-agent: *\nDisallow: /b\n")
                clock.advance(25 * HOUR)  # mid-crawl: the copy expires
                yield Request(site.url("/b"), callback=self.parse, errback=self.errback)

    settings = {**SETTINGS, **sqlite(tmp_path, clock)}
    with SiteServer({"/robots.txt": robots}) as site:
        crawlers = [get_crawler(Refresher, settings), get_crawler(RecordingSpider, settings)]
        for crawler in crawlers:
            crawler.signals.connect(
                lambda **kw: events.append(kw), signal=signals.robotstxt_resolved, weak=False
            )
        await crawlers[0].crawl_async(urls=[site.url("/a")])
        await crawlers[1].crawl_async(urls=[site.url("/b"), site.url("/x")])
        middleware = crawlers[1].get_downloader_middleware(RobotsTxtMiddleware)
        assert middleware is not None
        tokens = middleware.tokens_for(Request(site.url("/")))
    origin = Origin("http", "127.0.0.1", site.port)
    assert site.paths() == ["/robots.txt", "/a", "/robots.txt", "/x"]
    assert spider_of(crawlers[0]).got == [site.url("/a")]
    assert list(spider_of(crawlers[0]).dropped) == [site.url("/b")]  # the refreshed rules
    assert list(spider_of(crawlers[1]).dropped) == [site.url("/b")]  # from the cache
    assert len(events) == 3  # fetch, refresh, then the second crawl's cache hit
    assert all(e["origin"] == origin for e in events)
    assert all(e["robotstxt_url"] == site.url("/robots.txt") for e in events)
    assert [e["spider"] for e in events] == [crawlers[0].spider] * 2 + [crawlers[1].spider]
    assert all(e["access"].state is AccessState.RULES for e in events)
    assert not events[0]["access"].allowed(site.url("/x"), "testbot")
    assert not events[1]["access"].allowed(site.url("/b"), "testbot")
    assert events[2]["access"].robots is events[1]["access"].robots  # parsed once per body
    assert tokens == ("testbot",)
    assert stats(crawlers[1])["robotstxt/cache/hit"] == 2
