"""REP_CRAWL_DELAY = "obey": robots.txt crawl-delay paces its origin (crawler/pace/turns.py).

Real crawls, timed at the server. A gap is allowed a little slack (SLACK)
because the server stamps a request when it has read it, not when Scrapy
sent it. The pace is bounded above too (no slower than asked, give or take
the 50 ms margin of docs/politeness.md): the median gap of an origin is
under its delay + LATE, a median so that one request held up by a loaded
machine cannot fail the test, while a margin of 0.5 s would.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from crawler.servers import Reply, SiteServer, page
from scrapy_rep.crawler.config.settings import CrawlDelayConfig, SettingError
from scrapy_rep.crawler.pace.crawl_delay import clamp

from .conftest import (
    NO_DELAY_JITTER,
    SETTINGS,
    PagesSpider,
    SlotStamps,
    crawl,
    gaps,
    hits,
    spider_of,
    stats,
)

SLACK = 0.1
LATE = 0.3
OBEY = {"REP_CRAWL_DELAY": "obey"}


def robots(text: str) -> Reply:
    return Reply(200, text.encode(), {"Content-Type": "text/plain"})


def pages(site: SiteServer, count: int, host: str = "127.0.0.1") -> list[str]:
    return [site.url(f"/page{n}", host) for n in range(count)]


# --- real crawls -------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_slows_its_origin_and_no_other() -> None:
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 2\n")}) as slow,
        SiteServer({"/robots.txt": robots("User-agent: *\nDisallow: /private\n")}) as fast,
    ):
        crawler = await crawl(pages(slow, 3) + pages(fast, 3, "localhost"), OBEY)
    assert len(spider_of(crawler).got) == 6
    slow_hits = hits(slow)
    assert [hit.path for hit in slow_hits] == ["/robots.txt", "/page0", "/page1", "/page2"]
    assert all(gap >= 2 - SLACK for gap in gaps(slow_hits)), gaps(slow_hits)
    assert statistics.median(gaps(slow_hits)) < 2 + LATE, gaps(slow_hits)
    # three pages waited about 2 s each for their turns, and the stats say so
    assert stats(crawler)["robotstxt/pace/wait_seconds"] >= 3 * (2 - SLACK) - 1
    fast_hits = hits(fast, "localhost")
    assert len(fast_hits) == 4
    assert fast_hits[-1].at - fast_hits[0].at < 1.0  # not slowed by the other origin
    assert fast_hits[-1].at < slow_hits[1].at  # done before the slow origin's first page
    assert stats(crawler)["robotstxt/crawl_delay/applied"] == 1


@deferred_f_from_coro_f
async def test_scrapy_request_rate_paces_its_origin() -> None:
    """``request-rate: 1/1s`` is one request a second, like ``crawl-delay: 1``."""
    with SiteServer({"/robots.txt": robots("User-agent: *\nRequest-rate: 1/1s\n")}) as site:
        crawler = await crawl(pages(site, 2), OBEY)
    site_hits = hits(site)
    assert len(site_hits) == 3
    assert all(gap >= 1 - SLACK for gap in gaps(site_hits)), gaps(site_hits)
    assert stats(crawler)["robotstxt/crawl_delay/applied"] == 1


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_and_request_rate_in_one_group_the_slower_paces() -> None:
    """Both lines in one group: the longer interval holds, whichever line
    states it (docs/politeness.md), and no longer than that."""
    slower_delay = "User-agent: *\nCrawl-delay: 1.5\nRequest-rate: 2/1s\n"  # 1.5 s, 0.5 s
    slower_rate = "User-agent: *\nRequest-rate: 2/3s\nCrawl-delay: 0.5\n"  # 1.5 s, 0.5 s
    with (
        SiteServer({"/robots.txt": robots(slower_delay)}) as first,
        SiteServer({"/robots.txt": robots(slower_rate)}) as second,
    ):
        crawler = await crawl(pages(first, 3) + pages(second, 3), OBEY)
    assert len(spider_of(crawler).got) == 6
    for site in (first, second):
        site_gaps = gaps(hits(site))
        assert len(site_gaps) == 3
        assert all(gap >= 1.5 - SLACK for gap in site_gaps), site_gaps
        assert statistics.median(site_gaps) < 1.5 + LATE, site_gaps


class FollowingSpider(PagesSpider):
    """Asks for ``follow[path]`` once the page at ``path`` is back."""

    def __init__(self, follow: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.follow = follow

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        super().parse(response)
        later = self.follow.get("/" + response.url.rsplit("/", 1)[-1])
        if later is not None:
            yield Request(later, callback=self.parse, dont_filter=True)


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_pages_asked_while_the_slot_is_busy_or_after_the_delay() -> None:
    """Pages of a paced origin asked one at a time: /late while the origin's
    one transfer is busy (a slow page, CONCURRENT_REQUESTS_PER_DOMAIN = 1)
    waits for the slot, then its turn; /next and /last, asked more than a
    delay after the page before went, go at once. Each goes, in order."""

    def slow(seconds: float) -> Any:
        def route(host: str) -> Reply:
            time.sleep(seconds)
            return page("/")

        return route

    routes = {
        "/robots.txt": robots("User-agent: *\nCrawl-delay: 0.2\n"),
        "/slow": slow(1.0),
        "/late": slow(0.5),
        "/next": slow(0.5),
    }
    # /other comes back while /slow is on the wire (from 0.2 s to 1.2 s)
    others = {"/robots.txt": robots(""), "/other": slow(0.6)}
    with SiteServer(routes) as paced, SiteServer(others) as other:
        follow = {
            "/other": paced.url("/late"),
            "/late": paced.url("/next"),
            "/next": paced.url("/last"),
        }
        urls = [paced.url("/slow"), other.url("/other", "localhost")]
        settings = {**OBEY, "CONCURRENT_REQUESTS_PER_DOMAIN": 1, "DOWNLOAD_TIMEOUT": 10}
        crawler = await crawl(urls, settings, FollowingSpider, follow=follow)
    assert sorted(spider_of(crawler).got) == sorted([*urls, *follow.values()])
    paths = [hit.path for hit in hits(paced)]
    assert paths == ["/robots.txt", "/slow", "/late", "/next", "/last"]
    assert all(gap >= 0.2 - SLACK for gap in gaps(hits(paced))), gaps(hits(paced))
    assert stats(crawler)["robotstxt/pace/waited"] == 1  # /slow: the turns of the others had come


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_86400_is_clamped_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "User-agent: *\nCrawl-delay: 86400\nDisallow: /private\n"
    with SiteServer({"/robots.txt": robots(text)}) as site, caplog.at_level(logging.WARNING):
        started = time.monotonic()
        crawler = await crawl(
            [*pages(site, 3), site.url("/private")], {**OBEY, "REP_CRAWL_DELAY_MAX": 1}
        )
        elapsed = time.monotonic() - started
    assert elapsed < 10
    site_hits = hits(site)
    assert len(site_hits) == 4  # robots.txt and 3 pages; /private dropped, delay or not
    assert all(gap >= 1 - SLACK for gap in gaps(site_hits)), gaps(site_hits)
    warnings = [r for r in caplog.records if r.name == "scrapy_rep.crawler.pace.crawl_delay"]
    assert len(warnings) == 1  # once per origin, not per request
    message = warnings[0].getMessage()
    assert "86400" in message and "REP_CRAWL_DELAY_MAX" in message and site.url("") in message
    assert stats(crawler)["robotstxt/crawl_delay/clamped"] == 1
    assert stats(crawler)["robotstxt/forbidden"] == 1


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_never_lowers_a_larger_download_delay() -> None:
    """Scrapy's slot lets robots.txt and the two pages go 1.5 s apart: checked
    on stamps beside the sender (``SlotStamps``), exactly. At the site only
    with half the delay to spare: a loaded machine delayed a request's arrival
    there by 0.12 s against the next (1.38 s gaps)."""
    stamps = SlotStamps()
    with SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 0.2\n")}) as site:
        settings = {**OBEY, "DOWNLOAD_DELAY": 1.5, **NO_DELAY_JITTER, **stamps.settings()}
        crawler = get_crawler(PagesSpider, {**SETTINGS, **settings})
        stamps.connect(crawler)
        await crawler.crawl_async(urls=pages(site, 2))
    assert sorted(stamps.handed) == sorted([site.url("/robots.txt"), *pages(site, 2)])
    assert stamps.too_close(1.5) == []
    site_hits = hits(site)
    assert len(site_hits) == 3
    assert all(gap >= 1.5 / 2 for gap in gaps(site_hits)), gaps(site_hits)
    assert stats(crawler)["robotstxt/crawl_delay/applied"] == 1


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_is_the_floor_of_autothrottle() -> None:
    """AutoThrottle halves the delay after each fast response; the floor holds."""
    with SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 1\n")}) as site:
        settings = {
            **OBEY,
            "AUTOTHROTTLE_ENABLED": True,
            "AUTOTHROTTLE_START_DELAY": 0,
            "AUTOTHROTTLE_TARGET_CONCURRENCY": 8,
        }
        await crawl(pages(site, 4), settings)
    site_hits = hits(site)
    assert len(site_hits) == 5
    assert all(gap >= 1 - SLACK for gap in gaps(site_hits)), gaps(site_hits)


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_of_the_spiders_own_group() -> None:
    """The group chosen for the spider's token (testbot) gives the delay, not ``*``."""
    text = (
        "User-agent: *\nCrawl-delay: 20\nDisallow: /private\n\n"
        "User-agent: testbot\nCrawl-delay: 0.7\nDisallow: /private\n"
    )
    with SiteServer({"/robots.txt": robots(text)}) as site:
        await crawl(pages(site, 2), OBEY)
    site_hits = hits(site)
    assert len(site_hits) == 3
    assert all(0.7 - SLACK <= gap < 3 for gap in gaps(site_hits)), gaps(site_hits)


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_ignored_by_default(caplog: pytest.LogCaptureFixture) -> None:
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 5\n")}) as site,
        caplog.at_level(logging.WARNING),
    ):
        crawler = await crawl(pages(site, 3))
    site_hits = hits(site)
    assert len(site_hits) == 4
    assert site_hits[-1].at - site_hits[0].at < 1.0
    assert "robotstxt/crawl_delay/applied" not in stats(crawler)
    # installed but off (as the add-on leaves them): not a word
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_without_robotstxt_obey_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nCrawl-delay: 5\n")}) as site,
        caplog.at_level(logging.WARNING),
    ):
        settings = {**OBEY, "ROBOTSTXT_OBEY": False, "REP_FOLLOW_SITEMAPS": True}
        crawler = await crawl(pages(site, 2), settings)
    assert len(spider_of(crawler).got) == 2 and site.count("/robots.txt") == 0
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("scrapy_rep")]
    assert messages == [
        "REP_CRAWL_DELAY='obey' has no effect: ROBOTSTXT_OBEY is False",
        "REP_FOLLOW_SITEMAPS has no effect: ROBOTSTXT_OBEY is False",
    ]


# --- the pure part -------------------------------------------------------------------


def test_scrapy_crawl_delay_clamp() -> None:
    assert clamp(86400.0, 30.0) == 30.0
    assert clamp(float("inf"), 30.0) == 30.0
    assert clamp(2.0, 30.0) == 2.0


# --- settings ----------------------------------------------------------------------


def test_scrapy_crawl_delay_settings_defaults() -> None:
    config = CrawlDelayConfig.from_settings({})
    assert config == CrawlDelayConfig(obey=False, max_delay=30.0)
    assert CrawlDelayConfig.from_settings({"REP_CRAWL_DELAY": " Obey "}).obey


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("REP_CRAWL_DELAY", "sometimes", "'ignore' or 'obey'"),
        ("REP_CRAWL_DELAY", True, "'ignore' or 'obey'"),
        ("REP_CRAWL_DELAY_MAX", -1, "a number of seconds > 0"),
        ("REP_CRAWL_DELAY_MAX", "soon", "a number of seconds > 0"),
        ("REP_CRAWL_DELAY_MAX", float("inf"), "a number of seconds > 0"),
        ("REP_RETRY_AFTER", "sometimes", "'ignore' or 'obey'"),
    ],
)
def test_scrapy_crawl_delay_bad_setting_is_named(name: str, value: object, accepted: str) -> None:
    with pytest.raises(SettingError, match=name) as error:
        CrawlDelayConfig.from_settings({name: value})
    assert accepted in str(error.value)


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_bad_setting_fails_the_crawl_at_start() -> None:
    with SiteServer() as site, pytest.raises(SettingError, match="REP_CRAWL_DELAY="):
        await crawl(pages(site, 1), {"REP_CRAWL_DELAY": "always"})
    assert site.hits == []


class Clock:
    """REP_CLOCK for the cache: real time plus what the test adds."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def __deepcopy__(self, memo: dict[int, Any]) -> Clock:
        return self  # Scrapy deep-copies settings; the test must move this one


class RefreshingSpider(PagesSpider):
    """Fetches its pages one after the other; after page ``n`` in ``expire_after``
    the cached robots.txt expires (the clock jumps two days), so the next
    request makes the middleware refresh it."""

    def __init__(self, clock: Clock, expire_after: tuple[int, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock
        self.expire_after = expire_after

    async def start(self) -> AsyncIterator[Request]:
        yield Request(self.urls[0], callback=self.parse, cb_kwargs={"n": 0})

    def parse(self, response: Response, n: int = 0) -> Iterator[Request]:  # type: ignore[override]
        self.got.append(response.url)
        if n in self.expire_after:
            self.clock.offset += 2 * 86400
        if n + 1 < len(self.urls):
            yield Request(self.urls[n + 1], callback=self.parse, cb_kwargs={"n": n + 1})


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_reapplied_when_robots_txt_is_refreshed() -> None:
    """A longer delay holds from the next request on; a shorter one once the wait
    Scrapy has already armed for the slot (with the old delay) has run out."""
    bodies = iter(
        [
            "User-agent: *\nDisallow: /private\n",  # no crawl-delay at first
            "User-agent: *\nCrawl-delay: 1\nDisallow: /private\n",  # slow down
            "User-agent: *\nDisallow: /private\n",  # the delay is gone
        ]
    )
    clock = Clock()
    with SiteServer({"/robots.txt": lambda host: robots(next(bodies))}) as site:
        crawler = await crawl(
            pages(site, 5),
            {**OBEY, "REP_CLOCK": clock},
            RefreshingSpider,
            clock=clock,
            expire_after=(0, 2),
        )
    paths = [hit.path for hit in hits(site)]
    assert paths == [
        "/robots.txt",
        "/page0",
        "/robots.txt",
        "/page1",
        "/page2",
        "/robots.txt",
        "/page3",
        "/page4",
    ]
    page_hits = [hit for hit in hits(site) if hit.path != "/robots.txt"]
    page0_to_1, page1_to_2, page2_to_3, page3_to_4 = gaps(page_hits)
    assert page0_to_1 >= 1 - SLACK and page1_to_2 >= 1 - SLACK  # after the first refresh
    assert page2_to_3 < 1 + 1 + 0.5  # the wait armed with 1 s, then the robots.txt fetch
    assert page3_to_4 < 0.5  # after the second refresh
    assert stats(crawler)["robotstxt/crawl_delay/applied"] == 1


# --- Retry-After (issue 26) ---------------------------------------------------------


def busy_once(retry_after: str) -> tuple[Any, list[int]]:
    """/page1: 429 with Retry-After the first time, then the page."""
    served: list[int] = []

    def route(host: str) -> Reply:
        served.append(1)
        if len(served) == 1:
            return Reply(429, b"slow down", {"Retry-After": retry_after})
        return page("/page1")

    return route, served


@pytest.mark.parametrize(("mode", "paused"), [("obey", True), ("ignore", False)])
@deferred_f_from_coro_f
async def test_scrapy_retry_after_pauses_the_origin(
    mode: str, paused: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The retry of a 429 with ``Retry-After: 2`` waits 2 s (by the site's clock)."""
    busy, _ = busy_once("2")
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /private\n"), "/page1": busy}
    with SiteServer(routes) as site, caplog.at_level(logging.WARNING):
        crawler = await crawl(pages(site, 3), {"REP_RETRY_AFTER": mode, "RETRY_ENABLED": True})
    assert sorted(spider_of(crawler).got) == sorted(pages(site, 3))
    page1 = [hit.at for hit in hits(site) if hit.path == "/page1"]
    assert len(page1) == 2
    pause = page1[1] - page1[0]
    said = [r for r in caplog.records if "Retry-After" in r.getMessage()]
    if paused:
        assert pause >= 2.0, pause
        assert len(said) == 1 and site.url("") in said[0].getMessage()
        assert stats(crawler)["robotstxt/pace/paused"] == 1
    else:
        assert pause < 1.0, pause
        assert said == [] and "robotstxt/pace/paused" not in stats(crawler)


# --- the crawl says what robots.txt asks, applied or not (docs/crawl-delay.md) ---------


def _pace_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and " asks group " in r.getMessage()
    ]


@deferred_f_from_coro_f
async def test_scrapy_crawl_delay_ignored_by_default_is_said_once_per_origin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "User-agent: testbot\nCrawl-delay: 1\n\nUser-agent: *\nCrawl-delay: 9\n"
    with (
        SiteServer({"/robots.txt": robots(text)}) as site,
        SiteServer({"/robots.txt": robots("User-agent: *\nDisallow: /x\n")}) as plain,
        caplog.at_level(logging.INFO),
    ):
        crawler = await crawl([*pages(site, 3), *pages(plain, 2)], {"LOG_LEVEL": "INFO"})
    lines = _pace_lines(caplog)
    assert lines == [
        f"robots.txt of {site.url('').rstrip('/')} asks group 'testbot' for Crawl-delay: 1 s "
        'between requests: not applied: REP_CRAWL_DELAY is "ignore" (the default), so only '
        'DOWNLOAD_DELAY spaces this origin\'s requests; set REP_CRAWL_DELAY = "obey" to apply it'
    ]
    assert "robotstxt/crawl_delay/applied" not in stats(crawler)


@deferred_f_from_coro_f
async def test_scrapy_request_rate_obeyed_is_said_with_its_value_and_waits_summed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        SiteServer({"/robots.txt": robots("User-agent: *\nRequest-rate: 1/1s\n")}) as site,
        caplog.at_level(logging.INFO),
    ):
        crawler = await crawl(pages(site, 3), {**OBEY, "LOG_LEVEL": "INFO"})
    (line,) = _pace_lines(caplog)
    assert line.endswith(
        "asks group '*' for Request-rate: one request every 1 s: applied: 1 s between this "
        'origin\'s requests (REP_CRAWL_DELAY = "obey")'
    )
    found = stats(crawler)
    summed = found["robotstxt/pace/wait_seconds_summed"]
    assert found["robotstxt/pace/wait_seconds"] == summed  # the old name, kept as an alias
    assert 0 < found["robotstxt/pace/wait_seconds_longest"] <= summed
