"""docs/spec.md §2's table, row by row, with real crawls against a real local server.

Each test asserts what reached the server (the robots.txt fetch, and which
pages) and what the spider got (responses, or our IgnoreRequest subclass).
"""

from __future__ import annotations

import gzip
import socket

import pytest
from reactor_choice import NONE, chosen_reactor
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUnreachable

from .conftest import WIRINGS, crawl, spider_of, stats
from .servers import Behaviour, Hang, Redirect, Reply, Reset, SiteServer, Truncated

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


async def run(
    robots: Behaviour, wiring: str = "add-on", **settings: object
) -> tuple[SiteServer, Crawler]:
    with SiteServer({"/robots.txt": robots}) as site:
        wired = {**WIRINGS[wiring], **settings}
        crawler = await crawl([site.url("/public"), site.url("/private")], wired)
    return site, crawler


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_status_2xx_rules_decide(wiring: str) -> None:
    site, crawler = await run(Reply(200, DISALLOW_PRIVATE), wiring)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/public"]
    assert spider.got == [site.url("/public")]
    error = spider.dropped[site.url("/private")]
    assert isinstance(error, ForbiddenByRobotsTxt)
    assert str(error).startswith("forbidden by rule /private at line 2")
    assert error.rule.line == 2
    assert stats(crawler)["robotstxt/forbidden"] == 1


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("status", [404, 401, 403, 410])
@deferred_f_from_coro_f
async def test_status_4xx_full_allow(status: int, wiring: str) -> None:
    # The body says "Disallow: /"; an unavailable robots.txt has no rules at all.
    site, crawler = await run(Reply(status, DISALLOW_ALL), wiring)
    spider = spider_of(crawler)
    assert site.count("/robots.txt") == 1
    assert sorted(site.paths()) == ["/private", "/public", "/robots.txt"]
    assert sorted(spider.got) == [site.url("/private"), site.url("/public")]
    assert not spider.dropped
    assert stats(crawler)[f"robotstxt/response_status_count/{status}"] == 1


def assert_unreachable(
    site: SiteServer, crawler: Crawler, reason: str, client_retries: int = 0
) -> None:
    spider = spider_of(crawler)
    # no page reached the server; one fetch of robots.txt, which the HTTP
    # client may send again on its own (``client_retries``)
    paths = site.paths()
    assert set(paths) == {"/robots.txt"} and len(paths) <= 1 + client_retries, paths
    assert spider.got == []
    assert set(spider.dropped) == {site.url("/public"), site.url("/private")}
    for error in spider.dropped.values():
        assert isinstance(error, RobotsTxtUnreachable)
        # docs/spec.md §2.2: the outage has begun; its first 12 hours are closed.
        assert str(error).startswith(f"robots.txt unreachable ({reason}) since ")
        assert str(error).endswith("(the first 12 h of an outage), or until robots.txt answers")
        assert "; closed: every request to it is dropped until " in str(error)
    assert stats(crawler)["robotstxt/unreachable"] == 2


@pytest.mark.parametrize("wiring", WIRINGS)
@pytest.mark.parametrize("status", [429, 500, 503])
@deferred_f_from_coro_f
async def test_status_429_5xx_full_disallow(status: int, wiring: str) -> None:
    site, crawler = await run(Reply(status, b"User-agent: *\nAllow: /\n"), wiring)
    assert_unreachable(site, crawler, f"HTTP {status}")


@deferred_f_from_coro_f
async def test_status_connection_reset_full_disallow() -> None:
    site, crawler = await run(Reset())
    # aiohttp (Scrapy's handler without a reactor) sends a request again, once,
    # when the connection is reset before an answer
    retries = 1 if chosen_reactor() == NONE else 0
    assert_unreachable(site, crawler, "connection reset", client_retries=retries)
    assert any(key.startswith("robotstxt/exception_count/") for key in stats(crawler))


@deferred_f_from_coro_f
async def test_status_timeout_full_disallow() -> None:
    site, crawler = await run(Hang(), DOWNLOAD_TIMEOUT=0.5)
    assert_unreachable(site, crawler, "timeout")


@deferred_f_from_coro_f
async def test_status_truncated_response_full_disallow() -> None:
    site, crawler = await run(Truncated(b"User-agent: *\nAllow: /\n", announced=10_000))
    assert_unreachable(site, crawler, "truncated response")


@deferred_f_from_coro_f
async def test_status_connection_refused_full_disallow() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    crawler = await crawl([f"http://127.0.0.1:{port}/page"])
    spider = spider_of(crawler)
    error = spider.dropped[f"http://127.0.0.1:{port}/page"]
    assert isinstance(error, RobotsTxtUnreachable)
    assert str(error).startswith("robots.txt unreachable (connection refused) since ")


@deferred_f_from_coro_f
async def test_status_tls_failure_full_disallow() -> None:
    """https:// to a server that speaks plain HTTP: the handshake fails."""
    with SiteServer() as site:
        url = f"https://127.0.0.1:{site.port}/page"
        crawler = await crawl([url])
    error = spider_of(crawler).dropped[url]
    assert isinstance(error, RobotsTxtUnreachable)
    assert str(error).startswith("robots.txt unreachable (TLS failure) since ")
    assert site.paths() == []  # no HTTP request could be read by the server


@deferred_f_from_coro_f
async def test_status_2xx_gzip_encoded_body_is_decoded() -> None:
    body = gzip.compress(DISALLOW_PRIVATE)
    site, crawler = await run(Reply(200, body, {"Content-Encoding": "gzip"}))
    assert site.paths() == ["/robots.txt", "/public"]
    assert list(spider_of(crawler).dropped) == [site.url("/private")]


@deferred_f_from_coro_f
async def test_status_3xx_without_location_is_unreachable() -> None:
    site, crawler = await run(Reply(302, b""))
    assert_unreachable(site, crawler, "HTTP 302")


@deferred_f_from_coro_f
async def test_rfc9309_redirect_chain_of_5_hops_across_origins() -> None:
    """docs/spec.md §2.1: 5 hops, two origins; the rules found apply to the first origin only."""
    with SiteServer() as other, SiteServer() as site:
        site.routes.update(
            {
                "/robots.txt": Redirect(other.url("/hop1")),
                "/hop2": Redirect(other.url("/hop3"), 302),
                "/hop4": Redirect(other.url("/final"), 308),
            }
        )
        other.routes.update(
            {
                # the other origin's own robots.txt forbids everything, and the
                # hops on it are followed all the same (no rules exist yet)
                "/robots.txt": Reply(200, DISALLOW_ALL),
                "/hop1": Redirect(site.url("/hop2"), 307),
                "/hop3": Redirect(site.url("/hop4"), 303),
                "/final": Reply(200, DISALLOW_PRIVATE),
            }
        )
        crawler = await crawl(
            [site.url("/public"), site.url("/private")],
        )
        # The other origin's robots.txt is its own, not the chain's end.
        crawler2 = await crawl([other.url("/page"), other.url("/private-on-other")])
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/hop2", "/hop4", "/public"]
    assert other.paths()[:3] == ["/hop1", "/hop3", "/final"]
    assert spider.got == [site.url("/public")]
    assert isinstance(spider.dropped[site.url("/private")], ForbiddenByRobotsTxt)
    assert stats(crawler)["robotstxt/response_status_count/301"] == 1
    assert stats(crawler)["robotstxt/origins"] == 1
    other_spider = spider_of(crawler2)
    assert other_spider.got == []
    assert set(other_spider.dropped) == {other.url("/page"), other.url("/private-on-other")}
    assert other.paths()[3:] == ["/robots.txt"]


@deferred_f_from_coro_f
async def test_rfc9309_more_than_5_redirects_full_allow() -> None:
    routes: dict[str, Behaviour] = {"/robots.txt": Redirect("/r1")}
    routes.update({f"/r{i}": Redirect(f"/r{i + 1}") for i in range(1, 6)})
    routes["/r6"] = Reply(200, DISALLOW_ALL)  # 6th hop: never fetched
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/private")])
    assert site.paths() == ["/robots.txt", "/r1", "/r2", "/r3", "/r4", "/r5", "/private"]
    assert spider_of(crawler).got == [site.url("/private")]


@deferred_f_from_coro_f
async def test_rfc9309_redirect_limit_is_a_setting() -> None:
    routes: dict[str, Behaviour] = {
        "/robots.txt": Redirect("/r1"),
        "/r1": Redirect("/r2"),
        "/r2": Reply(200, DISALLOW_ALL),
    }
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/private")], {"REP_FOLLOW_REDIRECTS": 1})
    assert site.paths() == ["/robots.txt", "/r1", "/private"]
    assert spider_of(crawler).got == [site.url("/private")]


@deferred_f_from_coro_f
async def test_rfc9309_redirect_loop_full_allow() -> None:
    routes = {
        "/robots.txt": Redirect("/a"),
        "/a": Redirect("/b"),
        "/b": Redirect("/robots.txt"),
    }
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/private")])
    assert site.paths() == ["/robots.txt", "/a", "/b", "/private"]
    assert spider_of(crawler).got == [site.url("/private")]
