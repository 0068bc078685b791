"""The downloader middleware's edges as a crawl sees them (docs/spec.md §8):
a stop while requests wait for robots.txt and the resume from JOBDIR, the
spider's own robots.txt request, a store that cannot be opened, the word
when the middleware is off, and where the tokens come from.

Real crawls through the add-on against servers on 127.0.0.1; robots.txt is
held at the server (``Gate``) where a test needs requests waiting for it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.async_bridge import sleep
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtStorageUnavailable
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware

from .conftest import SETTINGS, ArrivingSpider, RecordingSpider, crawl, spider_of, stats
from .servers import Redirect, Reply, SiteServer
from .test_stops import Gate, _closing

PAGES = 4


class ResumableSpider(RecordingSpider):
    """Asks for its URLs on the first run only, without ``dont_filter``: a
    resumed run takes them from JOBDIR, where the duplicate filter keeps
    every request seen."""

    name = "resumable"

    async def start(self) -> AsyncIterator[Request]:
        state: dict[str, Any] = self.state  # type: ignore[attr-defined]
        if state.get("started"):
            return
        state["started"] = True
        for url in self.urls:
            assert isinstance(url, str)
            yield Request(url, callback=self.parse, errback=self.errback)


async def _stop_once_robots_txt_is_asked(site: SiteServer, crawler: Any, gate: Gate) -> None:
    """Stop the crawl while its requests wait for the held robots.txt; then let it answer."""
    while not any(hit.path == "/robots.txt" for hit in list(site.hits)):
        await sleep(0.01)
    await sleep(0.3)  # every request of the origin waits for that answer now
    deferred_from_coro(crawler.stop_async())  # as SIGINT does
    while not _closing(crawler):
        await sleep(0.01)
    gate.opened.set()  # the held answer comes in after the stop


@deferred_f_from_coro_f
async def test_scrapy_stop_while_pages_wait_for_robots_txt_then_resume_loses_none(
    tmp_path: Path,
) -> None:
    """docs/spec.md §8.3: pages waiting for their origin's robots.txt when the
    crawl stops are not downloaded and go back to the scheduler; the crawl
    resumed from JOBDIR downloads each of them once (asked without
    ``dont_filter``, a page given back as it was would be taken for a
    duplicate of itself and lost)."""
    gate = Gate()
    with SiteServer({"/robots.txt": gate}) as site:
        urls = [site.url(f"/p{n}") for n in range(PAGES)]
        settings = {**SETTINGS, "JOBDIR": str(tmp_path / "job")}
        first = get_crawler(ResumableSpider, settings)
        watcher = deferred_from_coro(_stop_once_robots_txt_is_asked(site, first, gate))
        await first.crawl_async(urls=urls)
        await watcher
        first_pages = [hit.path for hit in list(site.hits) if hit.path != "/robots.txt"]
        second = await crawl(urls, {"JOBDIR": str(tmp_path / "job")}, ResumableSpider)
        pages = [hit.path for hit in list(site.hits) if hit.path != "/robots.txt"]
    assert stats(first)["finish_reason"] == "shutdown"
    assert first_pages == [], "pages were downloaded after the stop"
    assert stats(first)["robotstxt/requeued_on_stop"] == PAGES
    assert sorted(pages) == [f"/p{n}" for n in range(PAGES)]  # none lost, none twice
    assert sorted(spider_of(second).got) == urls


@deferred_f_from_coro_f
async def test_scrapy_stop_while_the_spiders_own_robots_txt_waits_sends_it_back() -> None:
    """A spider's own robots.txt request waits for the fetch of that file the
    middleware makes; the crawl stops meanwhile: it goes back to the
    scheduler, not to the site a second time."""
    gate = Gate()
    with SiteServer({"/robots.txt": gate}) as site:
        crawler = get_crawler(RecordingSpider, SETTINGS)
        watcher = deferred_from_coro(_stop_once_robots_txt_is_asked(site, crawler, gate))
        await crawler.crawl_async(urls=[site.url("/robots.txt")])
        await watcher
    assert site.paths() == ["/robots.txt"]  # the middleware's fetch only
    assert spider_of(crawler).got == []
    assert stats(crawler)["robotstxt/requeued_on_stop"] == 1


@deferred_f_from_coro_f
async def test_scrapy_spiders_own_robots_txt_is_answered_from_the_fetch_it_waited_for() -> None:
    """The spider asks for /robots.txt before anything is known of the
    origin: the middleware's fetch answers it (one download), and its
    callback gets that file."""
    body = b"User-agent: *\nDisallow: /\n"
    got: list[bytes] = []

    class Spider(RecordingSpider):
        def parse(self, response: Any) -> None:
            super().parse(response)
            got.append(response.body)

    with SiteServer({"/robots.txt": Reply(200, body)}) as site:
        crawler = await crawl([site.url("/robots.txt")], spidercls=Spider)
    assert site.paths() == ["/robots.txt"]
    assert got == [body]
    assert stats(crawler)["robotstxt/cache/served"] == 1


@deferred_f_from_coro_f
async def test_scrapy_store_that_cannot_be_opened_sends_nothing(tmp_path: Path) -> None:
    """docs/storage.md: REP_STORAGE that cannot be opened closes the spider;
    its requests are dropped as such, and the site sees none of them, not
    even a robots.txt request."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    settings = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(blocker / "robots.sqlite3")}
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
        crawler = await crawl([site.url("/a"), site.url("/b")], settings)
    spider = spider_of(crawler)
    assert site.paths() == []
    assert spider.got == []
    assert all(isinstance(e, RobotsTxtStorageUnavailable) for e in spider.dropped.values())
    assert stats(crawler)["finish_reason"] == "robotstxt_storage_unavailable"


@deferred_f_from_coro_f
async def test_scrapy_middleware_off_says_so_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """ROBOTSTXT_OBEY = False: the add-on's middleware steps aside and says
    why, at INFO (a choice, not a problem); the site sees no robots.txt request."""
    with (
        caplog.at_level(logging.INFO, logger="scrapy_rep"),
        SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n")}) as site,
    ):
        crawler = await crawl([site.url("/a")], {"ROBOTSTXT_OBEY": False})
    assert site.paths() == ["/a"]
    assert spider_of(crawler).got == [site.url("/a")]
    said = [r for r in caplog.records if "ROBOTSTXT_OBEY is False" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]


@pytest.mark.parametrize(
    ("settings", "source"),
    [
        ({}, "USER_AGENT"),
        ({"ROBOTSTXT_USER_AGENT": "otherbot"}, "ROBOTSTXT_USER_AGENT"),
    ],
)
@deferred_f_from_coro_f
async def test_scrapy_tokens_source_names_the_setting_they_come_from(
    settings: dict[str, Any], source: str
) -> None:
    """docs/spec.md §5.7: other components (``scrapy robots`` shows it) read
    where the tokens come from on the middleware."""
    sources: list[str] = []

    def opened(spider: Any) -> None:
        middleware = spider.crawler.get_downloader_middleware(RobotsTxtMiddleware)
        sources.append(middleware.tokens_source)

    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
        crawler = get_crawler(RecordingSpider, {**SETTINGS, **settings})
        crawler.signals.connect(opened, signal=signals.spider_opened, weak=False)
        await crawler.crawl_async(urls=[site.url("/a")])
    assert sources == [source]


@deferred_f_from_coro_f
async def test_scrapy_robots_txt_redirected_to_another_origins_answers_for_it_too(
    tmp_path: Path,
) -> None:
    """docs/decisions.md: a robots.txt that redirects to another origin's own
    /robots.txt (http to https, say) answers for that origin too: that
    origin's requests that come later meet its rules without a fetch (cache
    hits), and so does a crawl that comes after, from the store."""
    rules = b"User-agent: *\nDisallow: /private\n"
    store = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(tmp_path / "robots.sqlite3")}
    with SiteServer({"/robots.txt": Reply(200, rules)}) as target, SiteServer() as site:
        site.routes["/robots.txt"] = Redirect(target.url("/robots.txt", "localhost"))
        later = [target.url("/open", "localhost"), target.url("/private/x", "localhost")]
        crawler = await crawl([site.url("/a")], store, ArrivingSpider, waves=[later])
        again = await crawl([later[1]], store)
        asked = target.count("/robots.txt")
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/a"]
    assert target.paths() == ["/robots.txt", "/open"]  # asked once, for both origins
    assert sorted(spider.got) == [site.url("/a"), target.url("/open", "localhost")]
    assert isinstance(spider.dropped[later[1]], ForbiddenByRobotsTxt)
    assert stats(crawler)["robotstxt/cache/hit"] == 2  # the other origin's two requests
    assert isinstance(spider_of(again).dropped[later[1]], ForbiddenByRobotsTxt)
    assert stats(again).get("robotstxt/request_count", 0) == 0
    assert asked == 1  # the store had it


#: REP_MEMORY_MAX_BYTES at its floor (16 MiB): a quarter of it for the copies
#: each origin's state keeps (docs/storage.md, "Memory").
MEMORY = 16 * 1024 * 1024
BIG = 400_000  # a robots.txt's bytes: ten of them fit in the quarter, eleven do not


@deferred_f_from_coro_f
async def test_spec_3_4_origins_held_are_bounded_by_a_quarter_of_the_memory_budget() -> None:
    """docs/storage.md, "Memory": the robots.txt copies held per origin take
    at most a quarter of REP_MEMORY_MAX_BYTES; twelve origins with big files
    are crawled and, at the end, ten are held (``robotstxt/origins_now/known``)."""
    body = b"User-agent: *\nDisallow: /private\n#" + b"x" * BIG
    with ExitStack() as stack:
        sites = [
            stack.enter_context(SiteServer({"/robots.txt": Reply(200, body)})) for _ in range(12)
        ]
        crawler = await crawl([site.url("/a") for site in sites], {"REP_MEMORY_MAX_BYTES": MEMORY})
    assert len(spider_of(crawler).got) == 12
    assert stats(crawler)["robotstxt/origins_now/known"] == (MEMORY // 4) // len(body) == 10


@deferred_f_from_coro_f
async def test_scrapy_spiders_own_robots_txt_goes_to_the_site_when_it_is_unreachable() -> None:
    """docs/decisions.md: the robots.txt URL itself is always allowed. Its
    origin known to be unreachable (503: a page is dropped), the spider's own
    request for it that comes next is not dropped, not even before the
    scheduler: with no answer to replay, it goes to the site, and the spider
    sees the 503. A URL with a query is not the robots.txt URL (docs/spec.md
    §1.2): dropped before the scheduler like any page of the origin."""
    with SiteServer({"/robots.txt": Reply(503)}) as site:
        robots, queried = site.url("/robots.txt"), site.url("/robots.txt?x=1")
        crawler = await crawl([site.url("/p")], {}, ArrivingSpider, waves=[[robots, queried]])
    spider = spider_of(crawler)
    assert sorted(spider.dropped) == [site.url("/p"), queried]
    assert stats(crawler)["robotstxt/dropped_early"] == 1
    assert site.paths() == ["/robots.txt", "/robots.txt"]  # the middleware's, the spider's
    assert list(spider.failed) == [robots]  # HTTP 503, Scrapy's own error


@deferred_f_from_coro_f
async def test_spec_3_4_the_origin_asked_again_is_the_last_let_go() -> None:
    """Memory (and the memory store) hold two origins (REP_MEMORY_MAX_ORIGINS):
    the one let go for a third is the one asked for least recently, not the
    one held longest, so an origin asked for again keeps its robots.txt."""
    with ExitStack() as stack:
        a, b, c = (stack.enter_context(SiteServer({})) for _ in range(3))
        waves = [[b.url("/1")], [a.url("/2")], [c.url("/1")], [a.url("/3")]]
        settings = {"REP_MEMORY_MAX_ORIGINS": 2}
        crawler = await crawl([a.url("/1")], settings, ArrivingSpider, waves=waves)
    assert a.paths() == ["/robots.txt", "/1", "/2", "/3"]
    assert (b.paths(), c.paths()) == (["/robots.txt", "/1"], ["/robots.txt", "/1"])
    assert len(spider_of(crawler).got) == 5
