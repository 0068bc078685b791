"""Issue 23 §1: every attempt at an origin's robots.txt goes the way its requests
go: through their proxy (credentials too), direct when they say
``meta["proxy"] = None``, through the environment's proxy only when they name
none. First attempt, quick retries, background retries, redirect hops; by-hand
setup and add-on."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.python.failure import Failure

from scrapy_rep.crawler.errors import RobotsTxtUnreachable

from .conftest import BY_HAND, ArrivingSpider, RecordingSpider, crawl, spider_of
from .servers import Reply, SiteServer

ROBOTS = b"User-agent: *\nDisallow: /private\n"
AUTH = "Basic dXNlcjpwYXNz"  # user:pass

SETUPS = {"by hand": BY_HAND, "add-on": {}}


@dataclass
class Proxy:
    """A forward proxy on 127.0.0.1 that answers itself: robots.txt with
    ``ROBOTS`` after ``failures`` 503s, pages with a page. Records each
    absolute URL asked and its Proxy-Authorization header."""

    failures: int = 0
    #: The proxy's own answer to every robots.txt ask (status, headers), if any.
    own_answer: tuple[int, dict[str, str]] | None = None
    #: absolute URL -> where the proxy's answer redirects it
    redirects: dict[str, str] = field(default_factory=dict)
    asked: list[tuple[str, str | None]] = field(default_factory=list)
    url: str = ""

    def robots_asks(self) -> list[tuple[str, str | None]]:
        return [(url, auth) for url, auth in self.asked if url.endswith("/robots.txt")]


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    state = Proxy()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with lock:
                state.asked.append((self.path, self.headers.get("Proxy-Authorization")))
                robots = self.path.endswith("/robots.txt")
                failing = robots and state.failures > 0
                if failing:
                    state.failures -= 1
            status, body = (503, b"busy") if failing else (200, ROBOTS if robots else b"page")
            own = state.own_answer if robots else None
            if own is not None:
                status, body = own[0], b"the proxy's own page"
            location = state.redirects.get(self.path)
            self.send_response(301 if location else status)
            for name, value in (own[1] if own else {}).items():
                self.send_header(name, value)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def forbidding_direct_visitors() -> SiteServer:
    """A site that answers 403 to everyone who comes to it directly."""
    site = SiteServer()
    site.routes["/robots.txt"] = Reply(403, b"no")
    for path in ("/p", "/private/secret", "/later"):
        site.routes[path] = Reply(403, b"no")
    return site


@pytest.mark.parametrize("setup", SETUPS)
@deferred_f_from_coro_f
async def test_scrapy_quick_retries_go_through_the_requests_proxy(setup: str, proxy: Proxy) -> None:
    """Finding 1: the proxy answers 503 twice; both quick retries go through
    it with the credentials, never direct (where the site's 403 would have
    meant allow-all), so its Disallow: /private holds."""
    proxy.failures = 2
    with forbidding_direct_visitors() as site:
        via = proxy.url.replace("http://", "http://user:pass@")
        requests = [Request(site.url(p), meta={"proxy": via}) for p in ("/p", "/private/secret")]
        settings = {**SETUPS[setup], "REP_UNREACHABLE_WAIT": 30, "REP_RETRY_BUSY_INITIAL": 0.05}
        crawler = await crawl(requests, settings)
        direct = site.paths()
    assert direct == []  # the crawler's own address never reached the site
    assert proxy.robots_asks() == [(site.url("/robots.txt"), AUTH)] * 3
    assert spider_of(crawler).got == [site.url("/p")]
    assert list(spider_of(crawler).dropped) == [site.url("/private/secret")]


class _Clock:
    """The crawl's clock (REP_CLOCK), moved by the spider."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def __deepcopy__(self, memo: dict[int, Any]) -> _Clock:
        return self  # Scrapy deep-copies settings: the crawl must read this one


class _LaterSpider(RecordingSpider):
    """Its first request is dropped (robots.txt unreachable); then, an hour on
    the injected clock later, it asks for one more page of the origin."""

    name = "later"

    def __init__(self, clock: _Clock, later: Request, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.clock = clock
        self.later: Request | None = later

    def errback(self, failure: Failure) -> Iterator[Request]:
        super().errback(failure)
        if self.later is not None:
            self.clock.now += 3600  # the background retry is due
            yield self.later.replace(callback=self.parse, errback=self.errback)
            self.later = None


@pytest.mark.parametrize("setup", SETUPS)
@deferred_f_from_coro_f
async def test_scrapy_background_retry_goes_through_the_requests_proxy(
    setup: str, proxy: Proxy
) -> None:
    """Finding 1, with the add-on: during an outage the background retry a
    request starts goes through that request's proxy, not direct."""
    proxy.failures = 2
    clock = _Clock()
    with forbidding_direct_visitors() as site:
        via = proxy.url.replace("http://", "http://user:pass@")
        first = Request(site.url("/p"), meta={"proxy": via})
        later = Request(site.url("/later"), meta={"proxy": via})
        settings = {**SETUPS[setup], "REP_CLOCK": clock}
        crawler = await crawl([first], settings, spidercls=_LaterSpider, clock=clock, later=later)
        direct = site.paths()
    assert direct == []
    # The first fetch, then the background retry the later request started.
    assert proxy.robots_asks() == [(site.url("/robots.txt"), AUTH)] * 2
    assert sorted(spider_of(crawler).dropped) == [site.url("/later"), site.url("/p")]


@pytest.mark.parametrize("setup", SETUPS)
@deferred_f_from_coro_f
async def test_scrapy_redirect_hops_go_through_the_requests_proxy(setup: str, proxy: Proxy) -> None:
    """A robots.txt that redirects: the next hop is asked of the proxy too."""
    with SiteServer() as other, forbidding_direct_visitors() as site:
        requests = [
            Request(site.url(p), meta={"proxy": proxy.url}, headers={"Proxy-Authorization": AUTH})
            for p in ("/p", "/private/secret")
        ]
        proxy.redirects[site.url("/robots.txt")] = other.url("/robots.txt")
        other.routes["/robots.txt"] = Reply(200, b"User-agent: *\nDisallow:\n")  # if asked direct
        crawler = await crawl(requests, SETUPS[setup])
        direct = site.paths() + other.paths()
    assert direct == []
    hops = [site.url("/robots.txt"), other.url("/robots.txt")]
    assert proxy.robots_asks() == [(hop, AUTH) for hop in hops]
    assert spider_of(crawler).got == [site.url("/p")]


# --- the environment's proxy (finding 2) -----------------------------------------


@pytest.fixture
def environment_proxy(proxy: Proxy, monkeypatch: pytest.MonkeyPatch) -> Proxy:
    """``http_proxy`` names the test's proxy for this crawl only; it answers
    503 to every robots.txt."""
    for name in ("http_proxy", "HTTP_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", proxy.url)
    proxy.failures = 1_000
    return proxy


@pytest.mark.parametrize("setup", SETUPS)
@deferred_f_from_coro_f
async def test_scrapy_proxy_none_means_robots_txt_goes_direct_too(
    setup: str, environment_proxy: Proxy
) -> None:
    """Finding 2: pages saying ``meta["proxy"] = None`` go direct, and so does
    their robots.txt, whatever ``http_proxy`` says."""
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        paths = ("/a", "/b", "/private/c")
        requests = [Request(site.url(p), meta={"proxy": None}) for p in paths]
        settings = {**SETUPS[setup], "REP_UNREACHABLE_WAIT": 30, "REP_RETRY_BUSY_INITIAL": 0.05}
        crawler = await crawl(requests, settings)
        direct = site.paths()
    assert environment_proxy.asked == []
    assert sorted(direct) == ["/a", "/b", "/robots.txt"]
    assert list(spider_of(crawler).dropped) == [site.url("/private/c")]


@deferred_f_from_coro_f
async def test_scrapy_requests_naming_no_proxy_take_the_environments(
    environment_proxy: Proxy,
) -> None:
    """Requests that name no proxy go through ``http_proxy``: so does robots.txt."""
    environment_proxy.failures = 0
    with SiteServer() as site:
        crawler = await crawl([site.url("/a"), site.url("/private/b")])
        direct = site.paths()
    assert direct == []
    assert [url for url, _ in environment_proxy.asked] == [site.url("/robots.txt"), site.url("/a")]
    assert list(spider_of(crawler).dropped) == [site.url("/private/b")]


@deferred_f_from_coro_f
async def test_scrapy_no_proxy_keeps_robots_txt_direct(
    environment_proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``no_proxy`` names the host: pages and robots.txt go direct."""
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        crawler = await crawl([site.url("/a"), site.url("/private/b")])
        direct = site.paths()
    assert environment_proxy.asked == []
    assert sorted(direct) == ["/a", "/robots.txt"]
    assert list(spider_of(crawler).dropped) == [site.url("/private/b")]


# --- which request's proxy wins --------------------------------------------------


class _InOrder(RecordingSpider):
    """Yields its requests one at a time, each after the previous one's answer."""

    name = "in_order"

    async def start(self) -> AsyncIterator[Request]:
        first, *self.rest = self.urls
        assert isinstance(first, Request)
        yield first.replace(callback=self.parse, errback=self.errback)

    def parse(self, response: Any) -> Iterator[Request]:
        super().parse(response)
        if self.rest:
            nxt = self.rest.pop(0)
            assert isinstance(nxt, Request)
            yield nxt.replace(callback=self.parse, errback=self.errback)


@pytest.mark.parametrize("setup", SETUPS)
@deferred_f_from_coro_f
async def test_scrapy_the_request_that_starts_the_fetch_names_its_proxy(
    setup: str, proxy: Proxy
) -> None:
    """Requests of one origin naming different routes: the one that asks first
    (here the direct one) decides how robots.txt is fetched."""
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /x\n")}) as site:
        requests = [
            Request(site.url("/a"), meta={"proxy": None}),
            Request(site.url("/b"), meta={"proxy": proxy.url}),
        ]
        crawler = await crawl(requests, SETUPS[setup], spidercls=_InOrder)
        direct = site.paths()
    assert direct == ["/robots.txt", "/a"]
    assert [url for url, _ in proxy.asked] == [site.url("/b")]
    assert spider_of(crawler).got == [site.url("/a"), site.url("/b")]


@pytest.mark.parametrize(
    ("status", "headers", "said"),
    [
        (407, {"Proxy-Authenticate": 'Basic realm="pool"'}, "Proxy Authentication Required"),
        (403, {"Proxy-Status": "pool; error=destination_ip_prohibited"}, "Proxy-Status error"),
    ],
    ids=["407", "proxy-status"],
)
@deferred_f_from_coro_f
async def test_scrapy_a_proxys_own_answer_is_not_the_sites(
    status: int,
    headers: dict[str, str],
    said: str,
    proxy: Proxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/proxies.md: the proxy that carried robots.txt answered for itself.
    Not the site's 4xx (which would allow everything for 24 h): a failed
    fetch, so the origin is closed, nothing is kept as a copy, and the log
    says why."""
    proxy.own_answer = (status, headers)
    store = tmp_path / "robots.sqlite"
    with SiteServer() as site:
        requests = [
            Request(site.url(path), meta={"proxy": proxy.url}) for path in ("/private/a", "/b")
        ]
        settings = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(store)}
        crawler = await crawl(requests, settings)
    asked = [url for url, _ in proxy.asked]
    assert asked == [site.url("/robots.txt")]  # no page went: the origin is closed
    assert sorted(spider_of(crawler).dropped) == sorted(r.url for r in requests)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if said in w and "not the site" in w]) == 1
    show = ["cache", "show", site.url("/"), "--store", str(store)]
    shown = subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", *show],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stdout
    assert "good copy   never" in shown
    assert "outcome     unreachable" in shown


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (407, {"Proxy-Authenticate": 'Basic realm="pool"'}),
        (502, {"Proxy-Status": "pool; error=connection_refused"}),
    ],
    ids=["407", "502 proxy-status"],
)
@deferred_f_from_coro_f
async def test_scrapy_an_origin_closed_by_its_proxy_reopens_after_the_proxy_recovers(
    status: int, headers: dict[str, str], setup: str, proxy: Proxy
) -> None:
    """docs/proxies.md: the proxy's own answer closes the origin (a failed
    fetch), and like any outage it is retried on its schedule: the proxy
    recovers, the clock passes the retry's wait, the next request starts the
    retry (through the proxy) and the requests after its answer are crawled
    under the site's rules."""
    proxy.own_answer = (status, headers)
    clock = _Clock()

    async def then(spider: ArrivingSpider, wave: int) -> None:
        if wave == 1:
            proxy.own_answer = None
            clock.now += 60  # past the retry's wait (30 s)
        else:
            await spider.until_rules(timeout=5)

    settings = {
        **SETUPS[setup],
        "REP_CLOCK": clock,
        # longer than any crawl here in real time: no retry but one asked for
        "REP_RETRY_INITIAL": 30,
        "REP_RETRY_MAX": 30,
        "REP_RETRY_BUSY_INITIAL": 30,
        "REP_RETRY_BUSY_MAX": 30,
        "REP_RETRY_JITTER": 0,
    }
    with forbidding_direct_visitors() as site:

        def via(*paths: str) -> list[str | Request]:
            return [Request(site.url(path), meta={"proxy": proxy.url}) for path in paths]

        waves = [via("/p/2"), via("/open", "/private/x")]
        crawler = await crawl(via("/p/1"), settings, ArrivingSpider, waves=waves, before=then)
        direct = site.paths()
    spider = spider_of(crawler)
    assert direct == []
    assert [url for url, _ in proxy.asked] == [
        site.url("/robots.txt"),
        site.url("/robots.txt"),
        site.url("/open"),
    ]
    assert spider.got == [site.url("/open")]
    for path in ("/p/1", "/p/2"):
        assert isinstance(spider.dropped.pop(site.url(path)), RobotsTxtUnreachable)
    assert list(spider.dropped) == [site.url("/private/x")]
