"""docs/spec.md §8 and the Scrapy integration: what the crawler sees, settings, signals, add-on."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy import Spider
from scrapy import signals as scrapy_signals
from scrapy.http import Request
from scrapy.robotstxt import RobotParser
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import signals
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtDisallowed
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware

from .conftest import (
    BUILTIN,
    BY_HAND,
    SETTINGS,
    WIRINGS,
    ArrivingSpider,
    RecordingSpider,
    crawl,
    spider_of,
    stats,
)
from .servers import Hang, Reply, SiteServer

DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


@deferred_f_from_coro_f
async def test_scrapy_dont_obey_robotstxt_meta_skips_the_check() -> None:
    with SiteServer({"/robots.txt": Reply(200, DISALLOW_ALL)}) as site:
        request = Request(site.url("/page"), meta={"dont_obey_robotstxt": True})
        crawler = await crawl([request])
    assert spider_of(crawler).got == [site.url("/page")]
    assert site.paths() == ["/page"]  # robots.txt not even fetched


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_spec_8_3_burst_of_concurrent_requests_none_passes(wiring: str) -> None:
    """The built-in lets most of a burst through a pending fetch; none may pass."""

    def slow_robots(host: str) -> Reply:
        time.sleep(0.2)  # keep the fetch pending while the burst arrives
        return Reply(200, DISALLOW_ALL)

    with SiteServer({"/robots.txt": slow_robots}) as site:
        urls = [site.url(f"/page{i}") for i in range(30)]
        settings = {"CONCURRENT_REQUESTS": 32, "CONCURRENT_REQUESTS_PER_DOMAIN": 32}
        crawler = await crawl(urls, {**WIRINGS[wiring], **settings})
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt"]
    assert spider.got == []
    assert len(spider.dropped) == 30
    assert stats(crawler)["robotstxt/forbidden"] == 30
    assert stats(crawler)["robotstxt/request_count"] == 1


@deferred_f_from_coro_f
async def test_scrapy_hanging_robots_txt_does_not_delay_other_origins() -> None:
    """Requests waiting for one origin's robots.txt must not hold the crawl's
    concurrency: the other origin is crawled while the first one hangs."""
    with SiteServer({"/robots.txt": Hang()}) as hanging, SiteServer() as healthy:
        urls = [hanging.url(f"/p{i}") for i in range(12)] + [healthy.url("/fast")]
        started = time.monotonic()
        crawler = await crawl(urls, {"DOWNLOAD_TIMEOUT": 1, "CONCURRENT_REQUESTS": 4})
        fast = next(hit for hit in healthy.hits if hit.path == "/fast")
    spider = spider_of(crawler)
    assert fast.at - started < 0.8, "the healthy origin waited for the hanging one"
    assert spider.got == [healthy.url("/fast")]
    assert len(spider.dropped) == 12  # unreachable after the timeout
    assert hanging.paths() == ["/robots.txt"]


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_spec_8_3_requests_arriving_later_meet_the_verdict_fetched_once(
    wiring: str,
) -> None:
    """Requests that come wave after wave, as in a live crawl: robots.txt is
    fetched once, for the first; every later one is checked against that
    verdict. With the add-on, a forbidden one that comes once the verdict is
    known is dropped before the scheduler."""
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n")}) as site:
        waves = [[site.url("/private/1"), site.url("/b")], [site.url("/c"), site.url("/private/2")]]
        crawler = await crawl(
            [site.url("/a")], WIRINGS[wiring], ArrivingSpider, waves=waves, gap=0.1
        )
    spider = spider_of(crawler)
    assert isinstance(spider, ArrivingSpider) and spider.arrived == [0, 1, 2]
    assert site.paths() == ["/robots.txt", "/a", "/b", "/c"]
    assert spider.got == [site.url("/a"), site.url("/b"), site.url("/c")]
    assert sorted(spider.dropped) == [site.url("/private/1"), site.url("/private/2")]
    assert stats(crawler)["robotstxt/forbidden"] == 2
    assert stats(crawler).get("robotstxt/dropped_early", 0) == (2 if wiring == "add-on" else 0)


@deferred_f_from_coro_f
async def test_scrapy_robots_txt_fetch_times_out_on_its_own_setting() -> None:
    """REP_ROBOTSTXT_TIMEOUT, not the pages' DOWNLOAD_TIMEOUT, bounds a
    robots.txt download (docs/decisions.md): a hanging robots.txt closes its
    origin after 1 s, where DOWNLOAD_TIMEOUT would wait 120 s."""
    sent: list[Request] = []
    with SiteServer({"/robots.txt": Hang()}) as hanging:
        started = time.monotonic()
        crawler = get_crawler(
            RecordingSpider,
            {
                **SETTINGS,
                "DOWNLOAD_TIMEOUT": 120,
                "REP_ROBOTSTXT_TIMEOUT": 1,
                "REP_UNREACHABLE_WAIT": 0,
            },
        )

        def reached(request: Request, **_: Any) -> None:
            sent.append(request)

        crawler.signals.connect(reached, signal=scrapy_signals.request_reached_downloader)
        await crawler.crawl_async(urls=[hanging.url("/p")])
        elapsed = time.monotonic() - started
    assert elapsed < 60  # would be 120 s and more with DOWNLOAD_TIMEOUT alone
    robots = [request for request in sent if request.url.endswith("/robots.txt")]
    assert robots and all(request.meta["download_timeout"] == 1 for request in robots)
    assert spider_of(crawler).got == []
    assert crawler.stats.get_value("robotstxt/unreachable") == 1


class SitemapSpider(RecordingSpider):
    def robotstxt_sitemaps(
        self, sitemaps: tuple[str, ...], robotstxt_url: str
    ) -> Iterator[Request]:
        self.sitemap_calls = [*getattr(self, "sitemap_calls", []), (sitemaps, robotstxt_url)]
        for url in sitemaps:
            yield Request(url, callback=self.parse, dont_filter=True)


@deferred_f_from_coro_f
async def test_spec_7_2_sitemaps_reach_the_spider_by_signal_and_method() -> None:
    with SiteServer() as site:
        robots = (
            f"Sitemap: {site.url('/sitemap-a.xml')}\n"
            "User-agent: *\nDisallow: /private\n"
            f"Sitemap: {site.url('/sitemap-b.xml')}\n"
            f"Sitemap: {site.url('/sitemap-a.xml')}\n"
            "Sitemap: /relative.xml\n"
        ).encode()
        site.routes["/robots.txt"] = Reply(200, robots)
        received: list[dict[str, Any]] = []
        crawler = get_crawler(SitemapSpider, SETTINGS)
        crawler.signals.connect(
            lambda **kw: received.append(kw), signal=signals.sitemaps_found, weak=False
        )
        await crawler.crawl_async(urls=[site.url("/a"), site.url("/b"), site.url("/private")])
    expected = (site.url("/sitemap-a.xml"), site.url("/sitemap-b.xml"))
    assert len(received) == 1  # once per origin, though three requests asked
    assert received[0]["sitemaps"] == expected
    assert received[0]["robotstxt_url"] == site.url("/robots.txt")
    assert received[0]["spider"] is crawler.spider
    spider = crawler.spider
    assert isinstance(spider, SitemapSpider)
    assert spider.sitemap_calls == [(expected, site.url("/robots.txt"))]
    assert site.count("/sitemap-a.xml") == 1 and site.count("/sitemap-b.xml") == 1
    assert set(expected) <= set(spider.got)


class Alpha(RecordingSpider):
    name = "alpha"
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_USER_AGENT": "alpha"}  # noqa: RUF012 (Scrapy API)


class Beta(RecordingSpider):
    name = "beta"
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_USER_AGENT": "beta"}  # noqa: RUF012 (Scrapy API)


class Careless(RecordingSpider):
    name = "careless"
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_OBEY": False}  # noqa: RUF012 (Scrapy API)


@deferred_f_from_coro_f
async def test_spec_8_4_per_spider_settings_in_one_process() -> None:
    robots = b"User-agent: alpha\nDisallow: /x\n\nUser-agent: beta\nDisallow: /y\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        urls = [site.url("/x"), site.url("/y")]
        crawlers = [get_crawler(cls, SETTINGS) for cls in (Alpha, Beta, Careless)]
        await asyncio.gather(*(c.crawl_async(urls=urls) for c in crawlers))
    alpha, beta, careless = (spider_of(c) for c in crawlers)
    assert alpha.got == [site.url("/y")] and list(alpha.dropped) == [site.url("/x")]
    assert beta.got == [site.url("/x")] and list(beta.dropped) == [site.url("/y")]
    assert sorted(careless.got) == sorted(urls) and not careless.dropped
    assert site.count("/robots.txt") == 2  # per crawler; the careless one fetches none


class Gamma(RecordingSpider):
    name = "gamma"
    custom_settings: dict[str, Any] | None = {"ROBOTSTXT_USER_AGENT": "alpha"}  # noqa: RUF012 (Scrapy API)
    robotstxt_user_agent = ("gamma", "beta")  # the attribute beats the setting


class Sloppy(RecordingSpider):
    name = "sloppy"
    robotstxt_user_agent = ("gamma", 42)


@deferred_f_from_coro_f
async def test_spec_8_4_spider_attribute_gives_the_tokens() -> None:
    robots = b"User-agent: alpha\nDisallow: /x\n\nUser-agent: beta\nDisallow: /y\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        crawler = await crawl([site.url("/x"), site.url("/y")], spidercls=Gamma)
    spider = spider_of(crawler)
    assert spider.got == [site.url("/x")] and list(spider.dropped) == [site.url("/y")]
    middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
    assert middleware is not None
    assert middleware.tokens_for(Request(site.url("/"))) == ("gamma", "beta")


@deferred_f_from_coro_f
async def test_spec_8_4_bad_spider_attribute_closes_the_spider(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
        crawler = await crawl([site.url("/x")], spidercls=Sloppy)
    assert site.paths() == []  # nothing crawled with tokens it did not ask for
    assert stats(crawler)["finish_reason"] == "robotstxt_bad_setting"
    assert "Sloppy.robotstxt_user_agent" in caplog.text


@deferred_f_from_coro_f
async def test_spec_5_7_token_from_user_agent_header_else_user_agent_setting() -> None:
    robots = b"User-agent: testbot\nDisallow: /t\n\nUser-agent: otherbot\nDisallow: /o\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        other = {"User-Agent": "OtherBot/2.0 (+http://127.0.0.1/)"}
        requests: list[str | Request] = [
            site.url("/t"),  # no header yet (we run before UserAgentMiddleware): USER_AGENT
            site.url("/o"),
            Request(site.url("/o?h"), headers=other),
            Request(site.url("/t?h"), headers=other),
        ]
        crawler = await crawl(requests)
    spider = spider_of(crawler)
    assert sorted(spider.got) == sorted([site.url("/o"), site.url("/t?h")])
    assert set(spider.dropped) == {site.url("/t"), site.url("/o?h")}


@deferred_f_from_coro_f
async def test_spec_5_7_robotstxt_user_agent_tokens_in_preference_order() -> None:
    robots = (
        b"User-agent: mybot\nDisallow: /general\n\n"
        b"User-agent: mybot-images\nDisallow: /images-only\n"
    )
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        urls = [site.url("/general"), site.url("/images-only")]
        crawler = await crawl(urls, {"ROBOTSTXT_USER_AGENT": ["mybot-images", "mybot"]})
    spider = spider_of(crawler)
    assert spider.got == [site.url("/general")]
    assert list(spider.dropped) == [site.url("/images-only")]


@deferred_f_from_coro_f
async def test_scrapy_robotstxt_obey_false_disables_the_middleware() -> None:
    with SiteServer({"/robots.txt": Reply(200, DISALLOW_ALL)}) as site:
        crawler = await crawl([site.url("/page")], {"ROBOTSTXT_OBEY": False})
    assert site.paths() == ["/page"]
    assert spider_of(crawler).got == [site.url("/page")]


@deferred_f_from_coro_f
async def test_spec_8_1_stats_signals_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    robots = b"User-agent: *\nAllow: /private/ok\nDisallow: /private\n"
    dropped: list[dict[str, Any]] = []
    parsers: list[dict[str, Any]] = []
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        crawler = get_crawler(RecordingSpider, SETTINGS)
        crawler.signals.connect(
            lambda **kw: dropped.append(kw), signal=signals.request_dropped, weak=False
        )
        crawler.signals.connect(
            lambda **kw: parsers.append(kw), signal=scrapy_signals.robots_parsed, weak=False
        )
        with caplog.at_level(logging.DEBUG, "scrapy_rep"):
            urls = [site.url("/private/a"), site.url("/private/b"), site.url("/private/ok")]
            await crawler.crawl_async(urls=urls)
    values = stats(crawler)
    assert values["robotstxt/request_count"] == 1
    assert values["robotstxt/response_count"] == 1
    assert values["robotstxt/response_status_count/200"] == 1
    assert values["robotstxt/forbidden"] == 2
    assert values["robotstxt/origins"] == 1
    assert "robotstxt/unreachable" not in values

    assert [kw["request"].url for kw in dropped] == [site.url("/private/a"), site.url("/private/b")]
    assert all(kw["spider"] is crawler.spider for kw in dropped)
    assert dropped[0]["reason"].startswith("forbidden by rule /private at line 3")
    assert isinstance(dropped[0]["exception"], ForbiddenByRobotsTxt)

    assert len(parsers) == 1
    parser = parsers[0]["robotparser"]
    assert isinstance(parser, RobotParser)
    assert not parser.allowed(site.url("/private/x"), "testbot")
    assert parser.allowed(site.url("/private/ok"), b"testbot")
    assert parsers[0]["request"].url == site.url("/private/a")

    drop_lines = [
        r
        for r in caplog.records
        if r.name == "scrapy_rep.crawler.middleware" and r.levelno == logging.DEBUG
    ]
    assert len(drop_lines) == 2
    assert "/private/a" in drop_lines[0].getMessage()
    assert "rule /private at line 3" in drop_lines[0].getMessage()
    info_lines = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("scrapy_rep") and r.levelno == logging.INFO
    ]
    # The start-up line naming the token, then one line for the origin's fetch.
    assert info_lines[0] == (
        "robots.txt token 'testbot' from USER_AGENT; a robots.txt download times out after "
        "5 s (REP_ROBOTSTXT_TIMEOUT), so a request waits at most 60 s for its robots.txt "
        "(docs/decisions.md)"
    )
    assert len(info_lines) == 2 and "HTTP 200" in info_lines[1]


@deferred_f_from_coro_f
async def test_scrapy_dropped_requests_can_be_rescheduled_from_the_signal() -> None:
    """docs/spec.md §2.4: a spider sees why and may persist or retry what was dropped."""
    seen: list[RobotsTxtDisallowed] = []

    class Rescheduler(RecordingSpider):
        @classmethod
        def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Rescheduler:
            spider = super().from_crawler(crawler, *args, **kwargs)
            crawler.signals.connect(spider.on_dropped, signal=signals.request_dropped, weak=False)
            return spider

        def on_dropped(self, request: Request, reason: str, spider: Spider) -> None:
            seen.append(RobotsTxtDisallowed(reason, request.url))

    with SiteServer({"/robots.txt": Reply(503)}) as site:
        crawler = await crawl([site.url("/page")], spidercls=Rescheduler)
    assert len(seen) == 1
    assert seen[0].reason.startswith("robots.txt unreachable (HTTP 503) since ")
    assert seen[0].reason.endswith("(the first 12 h of an outage), or until robots.txt answers")
    assert stats(crawler)["robotstxt/unreachable"] == 1


@deferred_f_from_coro_f
async def test_scrapy_addon_enables_ours_and_disables_the_builtin() -> None:
    settings = {"ADDONS": {"scrapy_rep.Addon": 0}, "DOWNLOADER_MIDDLEWARES": {}}
    # A 404 whose body says "Disallow: /": the built-in would obey the body.
    with SiteServer({"/robots.txt": Reply(404, DISALLOW_ALL)}) as site:
        crawler = await crawl([site.url("/page")], settings)
    assert spider_of(crawler).got == [site.url("/page")]
    middlewares = crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert middlewares[BUILTIN] is None
    assert middlewares["scrapy_rep.RobotsTxtMiddleware"] == 100
    assert stats(crawler)["robotstxt/origins"] == 1


@deferred_f_from_coro_f
async def test_scrapy_builtin_beside_ours_is_disabled_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = {**BY_HAND, "DOWNLOADER_MIDDLEWARES": {"scrapy_rep.RobotsTxtMiddleware": 100}}
    with (
        SiteServer({"/robots.txt": Reply(404, DISALLOW_ALL)}) as site,
        caplog.at_level(logging.WARNING),
    ):
        crawler = await crawl([site.url("/page"), site.url("/other")], settings)
    assert site.count("/robots.txt") == 1  # fetched once, not twice
    assert sorted(spider_of(crawler).got) == sorted([site.url("/page"), site.url("/other")])
    warnings = [r for r in caplog.records if "built-in RobotsTxtMiddleware" in r.getMessage()]
    assert len(warnings) == 1


def test_scrapy_middleware_is_not_configured_without_obey() -> None:
    from scrapy.exceptions import NotConfigured

    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": False})
    with pytest.raises(NotConfigured):
        RobotsTxtMiddleware.from_crawler(crawler)


def test_scrapy_bad_setting_fails_at_start_up() -> None:
    from scrapy_rep.crawler.config.settings import SettingError

    crawler = get_crawler(Spider, {"ROBOTSTXT_OBEY": True, "REP_FOLLOW_REDIRECTS": "lots"})
    with pytest.raises(SettingError, match="REP_FOLLOW_REDIRECTS"):
        RobotsTxtMiddleware.from_crawler(crawler)


def test_scrapy_rep_robot_parser_works_as_robotstxt_parser() -> None:
    """``ROBOTSTXT_PARSER = "scrapy_rep.crawler.middleware.RepRobotParser"`` for the built-in."""
    from scrapy_rep.crawler.robot_parser import RepRobotParser

    crawler = get_crawler(Spider, {"USER_AGENT": "TestBot/1.0"})
    body = b"User-agent: testbot\nDisallow: /t\n\nUser-agent: *\nDisallow: /all\n"
    parser = RepRobotParser.from_crawler(crawler, body)
    assert not parser.allowed("http://h/t", b"TestBot/1.0")
    assert parser.allowed("http://h/all", "TestBot/1.0")
    assert not parser.allowed(b"http://h/all", "OtherBot")
    assert parser.allowed("http://h/robots.txt", "testbot")  # docs/spec.md §6.9


@deferred_f_from_coro_f
async def test_scrapy_cache_stats_count_every_request_across_batches() -> None:
    """Per-request counts reach the stats in batches (``Reporter.count``); by the
    end of the crawl every request is counted once, over several batches."""
    pages = [f"/p/{n}" for n in range(250)]
    replies = {"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private/\n")}
    replies.update({path: Reply(200, b"<html></html>") for path in [*pages, "/private/x"]})
    with SiteServer(replies) as site:
        urls = [site.url(path) for path in [*pages, "/private/x"]]
        crawler = await crawl(urls, {"CONCURRENT_REQUESTS": 4})  # a small test server
    counted = stats(crawler)
    assert counted["robotstxt/cache/hit"] + counted["robotstxt/cache/miss"] == 251
    assert counted["robotstxt/cache/miss"] >= 1 and counted["robotstxt/forbidden"] == 1
    assert len(spider_of(crawler).got) == 250, spider_of(crawler).failed
