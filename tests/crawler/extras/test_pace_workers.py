"""Two crawls in one process sharing a store file: two workers of one
crawl, as two processes would be (docs/politeness.md). What one learns
about an origin (a Retry-After pause) holds the other's pages that wait
for their crawl-delay turns, though they were handed out before.

Real crawls against a local server, timed by the site's own clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from crawler.servers import Reply, SiteServer, page

from .conftest import SETTINGS, PagesSpider, hits, spider_of

PAUSE = 1.0
DELAY = 0.5
#: The 503 is answered this long after the site read its request: the other
#: worker has been given its turns meanwhile (its second one DELAY later).
SLOW = 0.7
#: From the 503's answer to the store having the pause (the worker reads the
#: answer, then writes it): a page the site reads meanwhile went before it.
LEARN = 0.3
PAGES = 4


def _slow(site: SiteServer, seconds: float, reply: Reply) -> Any:
    def route(host: str) -> Reply:
        site.stopping.wait(seconds)
        return reply

    return route


@deferred_f_from_coro_f
async def test_a_pause_one_worker_saw_holds_the_turns_the_other_was_given(
    tmp_path: Path,
) -> None:
    """Worker A's page gets a 503 with ``Retry-After: 1``, ``SLOW`` after it
    went; worker B, started as that page went, was given its turns meanwhile
    (``DELAY`` apart): none of its pages goes within the pause."""
    robots = Reply(
        200, f"User-agent: *\nCrawl-delay: {DELAY}\n".encode(), {"Content-Type": "text/plain"}
    )
    busy = Reply(503, b"busy", {"Retry-After": f"{PAUSE:.0f}"})
    routes: dict[str, Any] = {"/robots.txt": robots}
    with SiteServer(routes) as site:
        site.routes["/a0"] = _slow(site, SLOW, busy)
        for n in range(PAGES):
            site.routes[f"/b{n}"] = page(f"/b{n}")
        settings = {
            **SETTINGS,
            "REP_CRAWL_DELAY": "obey",
            "REP_RETRY_AFTER": "obey",
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3"),
        }
        first = get_crawler(PagesSpider, settings)
        second = get_crawler(PagesSpider, settings)
        started: list[Deferred[None]] = []

        def start_the_second(request: Request, spider: object) -> None:
            if request.url.endswith("/a0") and not started:
                urls = [site.url(f"/b{n}") for n in range(PAGES)]
                started.append(deferred_from_coro(second.crawl_async(urls=urls)))

        first.signals.connect(start_the_second, signal=signals.request_reached_downloader)
        await first.crawl_async(urls=[site.url("/a0")])
        assert started, "the first page never went"
        await maybe_deferred_to_future(started[0])
        at = {hit.path: hit.at for hit in hits(site)}

    assert len(spider_of(second).got) == PAGES
    answered = at.pop("/a0") + SLOW
    within = {path: at[path] - answered for path in at if LEARN < at[path] - answered < PAUSE}
    assert within == {}, at


@deferred_f_from_coro_f
async def test_a_robots_txt_one_worker_fetched_counts_as_a_request_for_the_other(
    tmp_path: Path,
) -> None:
    """Worker A fetches the origin's robots.txt (its page is disallowed);
    worker B, started as that robots.txt came back, reads it from the store
    and waits a crawl-delay after A's fetch before its first page."""
    delay = 2.0
    text = f"User-agent: *\nCrawl-delay: {delay:g}\nDisallow: /a\n".encode()
    robots = Reply(200, text, {"Content-Type": "text/plain"})
    with SiteServer({"/robots.txt": robots, "/b0": page("/b0")}) as site:
        settings = {
            **SETTINGS,
            "REP_CRAWL_DELAY": "obey",
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3"),
        }
        first = get_crawler(PagesSpider, settings)
        second = get_crawler(PagesSpider, settings)
        started: list[Deferred[None]] = []

        def start_the_second(response: object, request: Request, spider: object) -> None:
            if request.url.endswith("/robots.txt") and not started:
                crawl = second.crawl_async(urls=[site.url("/b0")])
                started.append(deferred_from_coro(crawl))

        first.signals.connect(start_the_second, signal=signals.response_received)
        await first.crawl_async(urls=[site.url("/a0")])
        assert started, "the robots.txt never came"
        await maybe_deferred_to_future(started[0])
        at = [(hit.path, hit.at) for hit in hits(site)]

    assert [path for path, _ in at] == ["/robots.txt", "/b0"]  # one fetch, shared
    assert at[1][1] - at[0][1] >= delay - 0.1, at
