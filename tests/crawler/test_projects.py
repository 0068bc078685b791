"""Issue 19: scrapy_rep inside real projects (JOBDIR pause and resume, the
HTTP cache, per-request proxies), each against the same local servers a
project would crawl."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy import Request, signals
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from .conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from .servers import Reply, SiteServer

ROBOTS = b"User-agent: *\nDisallow: /private\n"


class ResumableSpider(RecordingSpider):
    """Sends its URLs on the first run only; a resumed run takes them from JOBDIR."""

    name = "resumable"

    async def start(self) -> AsyncIterator[Request]:
        state: dict[str, Any] = self.state  # type: ignore[attr-defined]
        if state.get("started"):
            return
        state["started"] = True
        for url in self.urls:
            assert isinstance(url, str)
            yield Request(url, callback=self.parse, errback=self.errback)


@deferred_f_from_coro_f
async def test_scrapy_pause_gives_waiting_requests_back_and_resume_continues(
    tmp_path: Path,
) -> None:
    """One graceful stop while robots.txt is slow: the stop does not wait for
    every parked request to be crawled, and the resumed run crawls the rest."""
    released = threading.Event()

    def slow_robots(host: str) -> Reply:
        released.wait(3)  # slow until the test says otherwise
        return Reply(200, ROBOTS)

    with SiteServer({"/robots.txt": slow_robots}) as site:
        urls = [site.url(f"/p{n}") for n in range(36)]
        urls += [site.url(f"/private/{n}") for n in range(4)]
        settings = {**SETTINGS, "JOBDIR": str(tmp_path / "job"), "CONCURRENT_REQUESTS": 4}

        first = get_crawler(ResumableSpider, settings)

        def stop_once_robots_is_asked(request: Request, **_: Any) -> None:
            if request.url.endswith("/robots.txt"):
                loop = asyncio.get_running_loop()
                loop.call_later(0.5, lambda: asyncio.ensure_future(first.stop_async()))
                loop.call_later(1.0, released.set)

        first.signals.connect(stop_once_robots_is_asked, signal=signals.request_reached_downloader)
        await first.crawl_async(urls=urls)
        first_pages = [path for path in site.paths() if path != "/robots.txt"]

        second = get_crawler(ResumableSpider, settings)
        await second.crawl_async(urls=urls)
        pages = [path for path in site.paths() if path != "/robots.txt"]

    assert stats(first)["finish_reason"] == "shutdown"
    assert len(first_pages) < 10, f"the stop crawled {len(first_pages)} pages first"
    assert stats(first).get("robotstxt/requeued_on_stop", 0) > 20
    # Nothing lost, nothing twice, nothing disallowed.
    assert sorted(pages) == sorted(f"/p{n}" for n in range(36))
    assert len(first.spider.got) + len(second.spider.got) == 36  # type: ignore[union-attr]


# --- quiet where nothing is wrong (issue 19 §4) -----------------------------------


@deferred_f_from_coro_f
async def test_scrapy_robotstxt_obey_false_is_info_not_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    class Unchecked(RecordingSpider):
        name = "unchecked"
        custom_settings: ClassVar[dict[str, Any]] = {"ROBOTSTXT_OBEY": False}

    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n")}) as site:
        crawler = await crawl([site.url("/page")], spidercls=Unchecked)
    assert spider_of(crawler).got == [site.url("/page")]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert "scrapy_rep's robots.txt middleware is off: ROBOTSTXT_OBEY is False" in caplog.text


@deferred_f_from_coro_f
async def test_scrapy_log_says_a_503_was_retried_into_rules(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 503 then a 200: one line saying both, not "every request dropped"."""
    caplog.set_level(logging.INFO, logger="scrapy_rep")
    answers = iter([Reply(503, b"busy"), Reply(200, ROBOTS)])

    def flaky(host: str) -> Reply:
        return next(answers, Reply(200, ROBOTS))

    with SiteServer({"/robots.txt": flaky}) as site:
        settings = {"REP_UNREACHABLE_WAIT": 10, "REP_RETRY_BUSY_INITIAL": 0.05}
        crawler = await crawl([site.url("/p"), site.url("/private/x")], settings)
    assert spider_of(crawler).got == [site.url("/p")]
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("robots.txt of")]
    assert lines == [
        f"robots.txt of http://127.0.0.1:{site.port}: HTTP 503, then HTTP 200 "
        "(1 quick retry) -> 1 rules for 1 agents, 0 sitemaps"
    ]
