"""Issue 19: scrapy_rep inside real projects (JOBDIR pause and resume, the
HTTP cache, per-request proxies), each against the same local servers a
project would crawl."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from scrapy import Request, signals
from scrapy.utils.asyncio import call_later
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from .conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from .servers import Redirect, Reply, SiteServer

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
            if request.url.endswith("/robots.txt"):  # under any reactor, or none
                call_later(0.5, lambda: deferred_from_coro(first.stop_async()))
                call_later(1.0, released.set)

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
        "(1 quick retry) -> 1 rule for 1 agent, 0 sitemaps"
    ]


# --- the HTTP cache and per-request proxies (issue 19 §1, §2) -------------------


@deferred_f_from_coro_f
async def test_scrapy_http_cache_never_keeps_a_robots_txt_answer(tmp_path: Path) -> None:
    """HTTPCACHE_ENABLED with a 503 once, then 200: the 503 is not stored and
    replayed to the retries (the origin stayed closed, run after run)."""
    answers = iter([Reply(503, b"busy")])

    def flaky(host: str) -> Reply:
        return next(answers, Reply(200, ROBOTS))

    settings = {
        "HTTPCACHE_ENABLED": True,
        "HTTPCACHE_DIR": str(tmp_path / "httpcache"),
        "REP_UNREACHABLE_WAIT": 10,
        "REP_RETRY_BUSY_INITIAL": 0.05,
    }
    with SiteServer({"/robots.txt": flaky}) as site:
        urls = [site.url("/p1"), site.url("/p2"), site.url("/private/no")]
        first = await crawl(urls, settings)
        second = await crawl(urls, settings)  # a later run, the HTTP cache kept
        robots_hits = site.count("/robots.txt")
    for crawler in (first, second):
        assert sorted(spider_of(crawler).got) == [site.url("/p1"), site.url("/p2")]
        assert list(spider_of(crawler).dropped) == [site.url("/private/no")]
    assert robots_hits == 3  # 503 and its retry, then the second run's own fetch


class _Proxy(BaseHTTPRequestHandler):
    """A forward proxy that answers itself and records the absolute URLs asked."""

    seen: ClassVar[list[str]] = []
    authorizations: ClassVar[dict[str, str | None]] = {}

    def do_GET(self) -> None:
        type(self).seen.append(self.path)
        type(self).authorizations[self.path] = self.headers.get("Proxy-Authorization")
        body = ROBOTS if self.path.endswith("/robots.txt") else b"via proxy"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@deferred_f_from_coro_f
async def test_scrapy_robots_txt_goes_through_the_requests_own_proxy() -> None:
    """meta["proxy"] set by the spider: robots.txt takes the same proxy."""
    _Proxy.seen = []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=proxy.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    proxy_url = f"http://127.0.0.1:{proxy.server_address[1]}"
    try:
        with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
            requests = [
                Request(site.url(path), meta={"proxy": proxy_url}) for path in ("/p", "/private/x")
            ]
            crawler = await crawl(requests)
            direct = site.paths()
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert direct == []  # nothing went around the proxy
    assert sorted(_Proxy.seen) == sorted([site.url("/robots.txt"), site.url("/p")])
    assert list(spider_of(crawler).dropped) == [site.url("/private/x")]  # the proxy's rules


@deferred_f_from_coro_f
async def test_scrapy_redirect_to_another_origins_own_robots_txt_is_fetched_once(
    tmp_path: Path,
) -> None:
    """http -> https style: A's robots.txt redirects to B's /robots.txt. That
    answer is B's own, so B's pages need no fetch of their own (issue 19 §4)."""
    store = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(tmp_path / "robots.sqlite3")}
    with SiteServer() as b_site, SiteServer() as a_site:
        b_site.routes["/robots.txt"] = Reply(200, b"User-agent: *\nDisallow: /b-private\n")
        a_site.routes["/robots.txt"] = Redirect(b_site.url("/robots.txt"))
        first = await crawl([a_site.url("/a"), a_site.url("/b-private/1")], store)
        second = await crawl([b_site.url("/b"), b_site.url("/b-private/2")], store)
        b_robots = b_site.count("/robots.txt")
    assert spider_of(first).got == [a_site.url("/a")]  # A follows B's rules (docs/spec.md §2.1)
    assert spider_of(second).got == [b_site.url("/b")]
    assert list(spider_of(second).dropped) == [b_site.url("/b-private/2")]
    assert b_robots == 1  # through A's redirect only


@pytest.mark.parametrize(
    ("in_url", "header"),
    [(True, None), (False, "Basic dXNlcjpwYXNz")],
    ids=["credentials in the proxy URL", "a Proxy-Authorization header"],
)
@deferred_f_from_coro_f
async def test_scrapy_robots_txt_takes_the_proxy_credentials_too(
    in_url: bool, header: str | None
) -> None:
    _Proxy.seen, _Proxy.authorizations = [], {}
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=proxy.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    port = proxy.server_address[1]
    proxy_url = f"http://user:pass@127.0.0.1:{port}" if in_url else f"http://127.0.0.1:{port}"
    headers = {"Proxy-Authorization": header} if header else {}
    try:
        with SiteServer() as site:
            request = Request(site.url("/p"), meta={"proxy": proxy_url}, headers=headers)
            await crawl([request])
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert _Proxy.authorizations[site.url("/robots.txt")] == "Basic dXNlcjpwYXNz"
