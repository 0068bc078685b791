"""Requests that arrive over a crawl, both wirings: the origin's answer as it
changes between them (the copy expires, an outage, the end of its window) and
what each later request meets, whichever way it takes (docs/spec.md §2.2, §3).

Each wave of ``ArrivingSpider`` comes once the one before has its outcomes,
after the test's trigger (the site switched, the clock moved through
REP_CLOCK, the crawl's progress waited for); never a sleep racing a rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from crawler.conftest import WIRINGS, ArrivingSpider, crawl, spider_of, stats
from crawler.servers import Reply, SiteServer
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUnreachable

from .conftest import HOUR, FakeClock
from .test_cache_crawls import DISALLOW_PRIVATE, Switch


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_cache_3_expiry_between_arrivals_later_requests_meet_the_new_rules(
    wiring: str, clock: FakeClock
) -> None:
    """docs/spec.md §3: requests that come after the copy expired, mid-crawl, are
    checked against robots.txt asked again, not the expired copy (the add-on's
    check before the scheduler included)."""
    robots = Switch(Reply(200, DISALLOW_PRIVATE))

    def expire(spider: ArrivingSpider, wave: int) -> None:
        robots.reply = Reply(200, b"User-agent: *\nDisallow: /open\n")
        clock.advance(25 * HOUR)

    settings = {**WIRINGS[wiring], "REP_CLOCK": clock}
    with SiteServer({"/robots.txt": robots}) as site:
        first, later = (
            [site.url("/open/1"), site.url("/private/1")],
            [
                site.url("/private/2"),
                site.url("/open/2"),
            ],
        )
        crawler = await crawl(first, settings, ArrivingSpider, waves=[later], before=expire)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/open/1", "/robots.txt", "/private/2"]
    assert spider.got == [site.url("/open/1"), site.url("/private/2")]
    assert sorted(spider.dropped) == [site.url("/open/2"), site.url("/private/1")]
    assert all(isinstance(e, ForbiddenByRobotsTxt) for e in spider.dropped.values())
    assert stats(crawler)["robotstxt/request_count"] == 2


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("store", ["memory", "sqlite"])
@deferred_f_from_coro_f
async def test_status_503_outage_is_asked_again_when_later_requests_come(
    wiring: str, store: str, clock: FakeClock, tmp_path: Path
) -> None:
    """docs/spec.md §2.2: an origin closed by a 503 is retried on its schedule.
    Its first request meets the 503 (no quick retries: REP_UNREACHABLE_WAIT is
    0) and is dropped; the site recovers; the first request that comes once
    the retry is due starts it (and is dropped: the origin is closed until
    the answer); the requests that come after the answer meet its rules,
    whatever way they take (docs/spec.md §2.2, the issue's by-hand figures)."""
    robots = Switch(Reply(503))

    async def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            robots.reply = Reply(200, DISALLOW_PRIVATE)
            clock.advance(60)  # past the first retry's wait (30 s)
        else:
            await spider.until_resolved(2, timeout=5)  # closed, then the retry's rules

    settings = {
        **WIRINGS[wiring],
        "REP_CLOCK": clock,
        # longer than any crawl here in real time: no retry but one asked for
        "REP_RETRY_BUSY_INITIAL": 30,
        "REP_RETRY_BUSY_MAX": 30,
        "REP_RETRY_JITTER": 0,
        # the default store, as users run it, and the memory store
        "REP_STORAGE": store,
        "REP_STORAGE_PATH": str(tmp_path / "robots.sqlite3"),
    }
    with SiteServer({"/robots.txt": robots}) as site:
        waves = [[site.url("/p/2")], [site.url("/open"), site.url("/private/x")]]
        crawler = await crawl(
            [site.url("/p/1")], settings, ArrivingSpider, waves=waves, before=then
        )
    spider = spider_of(crawler)
    assert isinstance(spider, ArrivingSpider) and spider.arrived == [0, 1, 2]
    assert site.paths() == ["/robots.txt", "/robots.txt", "/open"]
    assert [access.state for access in spider.resolved] == [AccessState.CLOSED, AccessState.RULES]
    assert spider.got == [site.url("/open")]
    for url in ("/p/1", "/p/2"):
        assert isinstance(spider.dropped.pop(site.url(url)), RobotsTxtUnreachable)
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("retry", [30, 60], ids=["retry due", "retry not yet due"])
@deferred_f_from_coro_f
async def test_status_503_window_end_is_a_reason_to_ask_not_to_allow(
    wiring: str, retry: float, clock: FakeClock
) -> None:
    """docs/spec.md §2.2: an outage with no copy turns allow-all once
    REP_UNREACHABLE_DISALLOW is over, for a site still unreachable, not for
    one nobody asked again: a request that comes then is not fetched before
    robots.txt is asked again (which now forbids it), whether the retry's
    wait is over or not."""
    robots = Switch(Reply(503))

    async def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            robots.reply = Reply(200, DISALLOW_PRIVATE)  # the site recovered at once
            clock.advance(31)  # the 30 s window is over
        else:
            await spider.until_rules(timeout=5)

    settings = {
        **WIRINGS[wiring],
        "REP_CLOCK": clock,
        "REP_UNREACHABLE_DISALLOW": 30,
        # longer than any crawl here in real time: no retry but one asked for
        "REP_RETRY_BUSY_INITIAL": retry,
        "REP_RETRY_BUSY_MAX": retry,
        "REP_RETRY_JITTER": 0,
    }
    with SiteServer({"/robots.txt": robots}) as site:
        waves = [[site.url("/private/late")], [site.url("/open"), site.url("/private/x")]]
        crawler = await crawl(
            [site.url("/p/1")], settings, ArrivingSpider, waves=waves, before=then
        )
    spider = spider_of(crawler)
    assert "/private/late" not in site.paths()
    assert isinstance(spider, ArrivingSpider) and spider.arrived == [0, 1, 2]
    assert [path for path in site.paths() if path != "/robots.txt"] == ["/open"]
    assert spider.got == [site.url("/open")]
    assert isinstance(spider.dropped[site.url("/p/1")], RobotsTxtUnreachable)
    assert site.url("/private/late") in spider.dropped
    assert isinstance(spider.dropped[site.url("/private/x")], ForbiddenByRobotsTxt)


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_status_503_every_request_answered_closed_is_counted(wiring: str) -> None:
    """docs/stats-signals.md: robotstxt/requests_in_outage/closed counts the requests
    answered during an outage in the closed state, those that come once it is
    known included (dropped before the scheduler with the add-on)."""
    with SiteServer({"/robots.txt": Reply(503)}) as site:
        waves = [[site.url("/private/2"), site.url("/p/2")]]
        crawler = await crawl([site.url("/p/1")], WIRINGS[wiring], ArrivingSpider, waves=waves)
    spider = spider_of(crawler)
    assert len(spider.dropped) == 3 and not spider.got
    counts = stats(crawler)
    assert counts["robotstxt/unreachable"] == 3
    assert counts["robotstxt/cache/miss"] == 1 and counts["robotstxt/cache/hit"] == 2
    assert counts.get("robotstxt/dropped_early", 0) == (2 if wiring == "add-on" else 0)
    assert counts["robotstxt/requests_in_outage/closed"] == 3


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_status_5xx_every_request_answered_by_the_last_copy_is_counted(
    wiring: str, clock: FakeClock
) -> None:
    """docs/spec.md §2.2, docs/stats-signals.md: 12 h into an outage the last
    good copy applies; each request it answers counts in
    robotstxt/requests_in_outage/last-copy and robotstxt/cache/stale_used, the one
    that comes once that state is known included (forbidden before the
    scheduler with the add-on)."""
    robots = Switch(Reply(200, DISALLOW_PRIVATE))

    def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            robots.reply = Reply(503)
            clock.advance(25 * HOUR)  # the copy expired an hour ago: refresh -> 503
        elif wave == 2:
            clock.advance(12 * HOUR + 60)  # the last good copy applies

    settings = {**WIRINGS[wiring], "REP_CLOCK": clock}
    with SiteServer({"/robots.txt": robots}) as site:
        waves = [[site.url("/p/2")], [site.url("/p/3")], [site.url("/private/4")]]
        crawler = await crawl(
            [site.url("/p/1")], settings, ArrivingSpider, waves=waves, before=then
        )
    spider = spider_of(crawler)
    assert spider.got == [site.url("/p/1"), site.url("/p/3")]
    assert isinstance(spider.dropped[site.url("/p/2")], RobotsTxtUnreachable)
    assert isinstance(spider.dropped[site.url("/private/4")], ForbiddenByRobotsTxt)
    counts = stats(crawler)
    assert counts.get("robotstxt/dropped_early", 0) == (1 if wiring == "add-on" else 0)
    assert counts["robotstxt/requests_in_outage/closed"] == 1
    assert counts["robotstxt/requests_in_outage/last-copy"] == 2
    assert counts["robotstxt/cache/stale_used"] == 2
