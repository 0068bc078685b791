"""A 429/503 with ``Retry-After`` pauses its origin: every request of it,
queued or not, whatever the value within the bounds (docs/politeness.md).

Real crawls against a local server, timed by the site's own clock: no page
of the origin reaches the site within the pause, counted from when the site
answered the 503, but those already on their way with it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import Hit, Reply, SiteServer, page

from .conftest import NO_DELAY_JITTER, PagesSpider, crawl, hits, spider_of, stats

ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n", {"Content-Type": "text/plain"})


class BusyOnce:
    """The first page request the site reads gets ``status`` with ``Retry-After:
    value``; every page takes ``slow`` seconds to answer, but that one."""

    def __init__(self, site: SiteServer, value: str, status: int = 503, slow: float = 0.0) -> None:
        self._site = site
        self._value = value
        self._status = status
        self._slow = slow
        self._lock = threading.Lock()
        self.busy_path: str | None = None

    def route(self, path: str) -> Any:
        def answer(host: str) -> Reply:
            with self._lock:
                first = self.busy_path is None
                if first:
                    self.busy_path = path
            if first:
                return Reply(self._status, b"busy", {"Retry-After": self._value})
            self._site.stopping.wait(self._slow)  # the site is slow
            return page(path)

        return answer


def site_with(
    count: int, value: str, status: int = 503, slow: float = 0.0
) -> tuple[SiteServer, BusyOnce, list[str]]:
    site = SiteServer({"/robots.txt": ROBOTS})
    busy = BusyOnce(site, value, status, slow)
    paths = [f"/page{n}" for n in range(count)]
    for path in paths:
        site.routes[path] = busy.route(path)
    return site, busy, [site.url(path) for path in paths]


def after_the_busy_one(site: SiteServer, busy: BusyOnce) -> tuple[Hit, list[Hit]]:
    page_hits = [hit for hit in hits(site) if hit.path.startswith("/page")]
    first = next(hit for hit in page_hits if hit.path == busy.busy_path)
    return first, [hit for hit in page_hits if hit.at > first.at]


PAST = format_datetime(datetime.now(timezone.utc) - timedelta(days=1), usegmt=True)


@pytest.mark.parametrize(
    ("value", "pause"),
    [("0", 1.0), ("1", 1.0), pytest.param(PAST, 1.0, id="past-date"), ("2", 2.0)],
)
@deferred_f_from_coro_f
async def test_retry_after_under_the_minimum_pauses_for_the_minimum(
    value: str, pause: float, caplog: pytest.LogCaptureFixture
) -> None:
    """``Retry-After: 0``, ``1`` or a past date still say "not now": the origin
    rests REP_RETRY_AFTER_MIN (1 s); before, they were not heeded at all."""
    site, busy, urls = site_with(4, value, status=429)
    with site, caplog.at_level(logging.WARNING):
        settings = {"REP_RETRY_AFTER": "obey", "RETRY_ENABLED": True}
        crawler = await crawl(urls, {**settings, "CONCURRENT_REQUESTS_PER_DOMAIN": 1})
    assert sorted(spider_of(crawler).got) == sorted(urls)  # the 429 retried after the pause
    first, later = after_the_busy_one(site, busy)
    assert len(later) == 4
    assert min(hit.at - first.at for hit in later) >= pause
    assert stats(crawler)["robotstxt/pace/paused"] == 1
    said = [r.getMessage() for r in caplog.records if "Retry-After" in r.getMessage()]
    assert len(said) == 1 and f"for {pause:.0f} s" in said[0] and "REP_RETRY_AFTER_MIN" in said[0]


@deferred_f_from_coro_f
async def test_retry_after_holds_the_requests_queued_in_the_download_slot() -> None:
    """One request at a time per domain: the others wait in Scrapy's download
    slot, past the middleware. None of them may go before the pause ends."""
    site, busy, urls = site_with(6, "3")
    with site:
        settings = {"REP_RETRY_AFTER": "obey", "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
        crawler = await crawl(urls, settings)
    first, later = after_the_busy_one(site, busy)
    assert len(later) == 5
    assert min(hit.at - first.at for hit in later) >= 3.0, [h.at - first.at for h in later]
    assert len(spider_of(crawler).got) == 5


@deferred_f_from_coro_f
async def test_retry_after_holds_every_request_not_yet_sent() -> None:
    """Scrapy's default concurrency: 8 requests of the origin go at once (the
    503 one with them), the others wait in the slot's queue or parked. Only
    those sent with it reach the site before the pause ends."""
    site, busy, urls = site_with(30, "3", slow=0.3)
    with site:
        crawler = await crawl(urls, {"REP_RETRY_AFTER": "obey"})
    first, later = after_the_busy_one(site, busy)
    # Sent with it: read by the site before any of its slow (0.3 s) pages
    # answered, so before a slot freed but the 503's own; a loaded machine
    # delays their arrival (0.16 s seen in CI). One request more sent on the
    # 503's freed slot would make them 8.
    sent_with_it = [hit for hit in later if hit.at - first.at < 0.3]
    assert len(sent_with_it) <= 7  # CONCURRENT_REQUESTS_PER_DOMAIN - 1
    rest = [hit.at - first.at for hit in later if hit not in sent_with_it]
    assert len(rest) == 29 - len(sent_with_it)
    assert min(rest) >= 3.0, sorted(rest)[:10]
    assert len(spider_of(crawler).got) == 29


def after(site: SiteServer, seconds: float, reply: Reply) -> Callable[[str], Reply]:
    """``reply``, ``seconds`` after the site read the request (a slow site)."""

    def route(host: str) -> Reply:
        site.stopping.wait(seconds)
        return reply

    return route


class FollowingSpider(PagesSpider):
    """Requests ``urls``; the response of the first one asks for ``then``."""

    def __init__(self, then: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.then = then

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        super().parse(response)
        if response.url == self.urls[0]:
            yield Request(self.then, callback=super().parse, dont_filter=True)


@deferred_f_from_coro_f
async def test_retry_after_holds_the_request_waiting_out_the_download_delay() -> None:
    """With a DOWNLOAD_DELAY a request that comes while its slot sends another
    waits in the slot's queue for the delay, past the middleware. When the
    one sent answers 503, the pause holds the slot's queue too."""
    site = SiteServer({"/robots.txt": ROBOTS})
    site.routes["/slow"] = after(site, 0.8, page("/slow"))
    site.routes["/busy"] = after(site, 0.4, Reply(503, b"busy", {"Retry-After": "3"}))
    with site:
        settings = {"REP_RETRY_AFTER": "obey", "DOWNLOAD_DELAY": 0.5, **NO_DELAY_JITTER}
        urls = [site.url("/slow"), site.url("/busy")]
        crawler = await crawl(urls, settings, FollowingSpider, then=site.url("/next"))
    at = {hit.path: hit.at for hit in hits(site)}
    assert at["/busy"] < at["/next"]  # it came while /busy was on its way
    assert at["/next"] - at["/busy"] >= 3.0
    assert stats(crawler)["robotstxt/pace/paused"] == 1
