"""A stop while requests wait for their crawl-delay turn (docs/politeness.md):
they are not sent, they go back to the scheduler, and a crawl resumed from
JOBDIR crawls each of them once: nothing lost, nothing twice.

Real crawls against a local server; the pages are asked without
``dont_filter``, so a request given back without it would be dropped by the
duplicate filter JOBDIR keeps.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from crawler.servers import Reply, SiteServer

from .conftest import SETTINGS, PagesSpider, crawl, hits, spider_of, stats

PAGES = 6
SLACK = 0.1
TEXT = {"Content-Type": "text/plain"}


class ResumableSpider(PagesSpider):
    """Asks for its pages on the first run only; a resumed run takes them from JOBDIR."""

    name = "resumable-paced"

    async def start(self) -> AsyncIterator[Request]:
        state: dict[str, Any] = self.state  # type: ignore[attr-defined]
        if state.get("started"):
            return
        state["started"] = True
        for url in self.urls:
            yield Request(url, callback=self.parse)


@deferred_f_from_coro_f
async def test_a_stop_while_pages_wait_their_turn_requeues_them_and_a_resume_loses_none(
    tmp_path: Path,
) -> None:
    robots = Reply(200, b"User-agent: *\nCrawl-delay: 1\n", {"Content-Type": "text/plain"})
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url(f"/p{n}") for n in range(PAGES)]
        settings = {"REP_CRAWL_DELAY": "obey", "JOBDIR": str(tmp_path / "job")}
        stopping: list[object] = []

        def stop_at_the_first_page(request: Request, spider: object) -> None:
            if request.url.endswith("/robots.txt") or stopping:
                return
            # the other pages wait for their turns, a second apart
            stopping.append(_later(0.2, first))

        first = _crawler(settings, stop_at_the_first_page)
        await first.crawl_async(urls=urls)
        first_pages = [hit.path for hit in hits(site) if hit.path != "/robots.txt"]
        second = await crawl(urls, settings, ResumableSpider)
        pages = [hit.path for hit in hits(site) if hit.path != "/robots.txt"]

    assert stats(first)["finish_reason"] == "shutdown"
    assert first_pages == ["/p0"], "pages were sent after the stop"
    assert stats(first)["robotstxt/pace/requeued_on_stop"] == PAGES - 1
    assert sorted(pages) == sorted(f"/p{n}" for n in range(PAGES))  # none lost, none twice
    assert len(spider_of(first).got) + len(spider_of(second).got) == PAGES


def _crawler(settings: dict[str, Any], on_request: Callable[..., None]) -> Crawler:
    crawler = get_crawler(ResumableSpider, {**SETTINGS, **settings})
    crawler.signals.connect(on_request, signal=signals.request_reached_downloader)
    return crawler


@deferred_f_from_coro_f
async def test_a_resume_sharing_the_store_waits_one_turn_not_one_per_page_requeued(
    tmp_path: Path,
) -> None:
    """Only the first page of an origin waiting in a process holds a turn in
    the store (docs/politeness.md): after a stop, a crawl resumed on the same
    store file sends its first page a turn or two after the last page (or
    as soon as it has started), not after a turn kept for each page that was
    waiting. Each crawl stops at its first page."""
    delay, pages = 0.5, 10
    robots = Reply(200, f"User-agent: *\nCrawl-delay: {delay}\n".encode(), TEXT)
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url(f"/p{n}") for n in range(pages)]
        settings = {
            "REP_CRAWL_DELAY": "obey",
            "JOBDIR": str(tmp_path / "job"),
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3"),
        }
        opened: list[float] = []  # when the second crawl's engine started

        def started() -> None:
            opened.append(time.monotonic())

        await _crawler(settings, _stop_after_the_first_page).crawl_async(urls=urls)
        second = _crawler(settings, _stop_after_the_first_page)
        second.signals.connect(started, signals.engine_started)
        await second.crawl_async(urls=urls)
        got = [hit.at for hit in hits(site) if hit.path != "/robots.txt"]

    assert len(got) == 2
    assert got[1] - got[0] >= delay - SLACK
    # late by this much at most: a turn and a moment, not the turns of 9 pages
    late = got[1] - max(opened[0], got[0] + delay)
    assert late < 4 * delay, (got, opened)


def _stop_after_the_first_page(request: Request, spider: Any) -> None:
    if request.url.endswith("/robots.txt"):
        return
    crawler = spider.crawler
    if not getattr(crawler, "stop_asked", False):
        crawler.stop_asked = True
        _later(0.1, crawler)


def _later(seconds: float, crawler: Crawler) -> asyncio.TimerHandle:
    """Stop ``crawler`` in ``seconds``, on the loop the crawl runs on: the
    asyncio reactor's, or the one loop of Scrapy's reactorless mode (where
    importing Twisted's reactor is refused)."""
    loop = asyncio.get_running_loop()
    return loop.call_later(seconds, lambda: asyncio.ensure_future(crawler.stop_async()))
