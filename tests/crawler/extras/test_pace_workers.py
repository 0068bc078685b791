"""Two crawls in one process sharing a store file: two workers of one
crawl, as two processes would be (docs/politeness.md). What one learns
about an origin (a Retry-After pause) holds the other's pages that wait
for their crawl-delay turns, though they were handed out before; and a
page one worker sent keeps the other's page, whose turn came before but
waited for a place, a crawl-delay behind it.

Real crawls against a local server, timed by the site's own clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from crawler.servers import Reply, SiteServer, page
from scrapy_rep.crawler.async_bridge import sleep

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


class _TurnSpider(PagesSpider):
    """Once ``/gate`` is back, asks for ``/p1`` (origin 1), ``/p2`` (origin 2,
    the same host: one download slot) and ``/r`` (another host), in that order."""

    def __init__(self, later: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.later = later

    def parse(self, response: Any) -> Any:  # type: ignore[override]
        super().parse(response)
        if response.url.endswith("/gate"):
            for n, url in enumerate(self.later):
                yield Request(url, callback=super().parse, dont_filter=True, priority=-n)


#: Set when the site has read worker B's page; ``_HoldPlace`` waits for it.
_Q_CAME = threading.Event()


class _HoldPlace:
    """Keeps ``/p1``'s place in CONCURRENT_REQUESTS (its response not through
    the downloader yet) until the site read worker B's page."""

    async def process_response(self, request: Request, response: Any, spider: Any = None) -> Any:
        for _ in range(1000):
            if _Q_CAME.is_set() or not request.url.endswith("/p1"):
                break
            await sleep(0.01)
        return response


#: Worker A: two places, one transfer per host; /p2 pulled before /r by
#: priority alone, though its slot is busy.
_TWO_PLACES: dict[str, Any] = {
    "CONCURRENT_REQUESTS": 2,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
    "DOWNLOADER_MIDDLEWARES": {_HoldPlace: 950},
}


def _robots(host: str) -> Reply:
    """Origins on 127.0.0.1 ask for the delay; ``localhost`` for nothing."""
    if host == "localhost":
        return Reply(200, b"User-agent: *\nDisallow:\n", {"Content-Type": "text/plain"})
    text = f"User-agent: *\nCrawl-delay: {DELAY}\nDisallow: /private\n".encode()
    return Reply(200, text, {"Content-Type": "text/plain"})


def _after(event: threading.Event, reply: Reply, seconds: float = 0.0) -> Any:
    """Answered once ``event`` is set (10 s at most), ``seconds`` after it."""

    def route(host: str) -> Reply:
        event.wait(10)
        threading.Event().wait(seconds)
        return reply

    return route


def _q(host: str) -> Reply:
    _Q_CAME.set()
    return page("/q")


@deferred_f_from_coro_f
async def test_a_turn_that_waited_for_a_place_keeps_the_delay_after_another_workers_page(
    tmp_path: Path,
) -> None:
    """Worker A's ``/p2`` (origin 2) waits for its download slot, busy with
    ``/p1`` (origin 1, the same host). ``/p1`` leaves the slot: ``/p2`` gets
    its turn at once from the store, which counts it as gone then, and waits
    for a place (``/p1`` and ``/r`` hold both until the site read ``/q``).
    Worker B starts as ``/p1`` leaves the slot; its ``/q`` (origin 2) gets
    the turn after ``/p2``'s and goes meanwhile. ``/p2`` then goes a
    crawl-delay after ``/q``, not right behind it."""
    _Q_CAME.clear()
    robots_came = threading.Event()
    with SiteServer({}) as site_one, SiteServer({}) as site_two:
        served: set[int] = set()  # which of the two 127.0.0.1 origins had its robots.txt

        def counted_robots(site: int) -> Callable[[str], Reply]:
            def robots(host: str) -> Reply:
                if host != "localhost":
                    served.add(site)
                if served == {1, 2}:  # whichever came first
                    robots_came.set()
                return _robots(host)

            return robots

        site_one.routes["/robots.txt"] = counted_robots(1)
        site_two.routes.update(
            {
                "/robots.txt": counted_robots(2),
                # the first pages' turns are due: a delay after the robots.txt fetches
                "/gate": _after(robots_came, page("/gate"), DELAY + 0.3),
                "/q": _q,
                "/r": _after(_Q_CAME, page("/r")),
            }
        )
        # in the slot still when /p2 comes: /p2 waits for the slot, not for its turn
        site_one.routes["/p1"] = _slow(site_one, 0.3, page("/p1"))
        settings = {
            **SETTINGS,
            "REP_CRAWL_DELAY": "obey",
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3"),
        }
        first = get_crawler(_TurnSpider, {**settings, **_TWO_PLACES})
        second = get_crawler(PagesSpider, settings)
        started: list[Deferred[None]] = []

        def start_the_second(request: Request, spider: object) -> None:
            if request.url.endswith("/p1") and not started:
                crawl = second.crawl_async(urls=[site_two.url("/q")])
                started.append(deferred_from_coro(crawl))

        first.signals.connect(start_the_second, signal=signals.request_left_downloader)
        start = [site_one.url("/private"), site_two.url("/private")]
        later = [site_one.url("/p1"), site_two.url("/p2"), site_two.url("/r", "localhost")]
        await first.crawl_async(urls=[*start, site_two.url("/gate", "localhost")], later=later)
        assert started, "/p1 never went"
        await maybe_deferred_to_future(started[0])
        at = [(hit.path, hit.at) for hit in hits(site_two) if hit.path in ("/q", "/p2")]

    assert spider_of(second).got == [site_two.url("/q")]
    assert second.stats is not None
    assert second.stats.get_value("robotstxt/pace/waited") == 1  # its turn came after /p2's
    assert [path for path, _ in at] == ["/q", "/p2"], at
    assert at[1][1] - at[0][1] >= DELAY, at
