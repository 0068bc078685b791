"""docs/spec.md §2.1 with hostile redirects: loops across origins, dead or closed targets,
schemes that must never be fetched. The rules at the end of the chain (or the
state it ends in) apply to the original origin.

Already covered in tests/crawler: a 5-hop chain over two origins, more than
5 hops, a loop on one origin, the hop limit setting, a 3xx without Location.
"""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import (
    assert_allow_all,
    assert_closed,
    assert_not_delayed,
    assert_rules,
    run_fault,
)
from .fault_server import FaultServer, hang_before_headers, redirect, reply

RULES = b"User-agent: *\nDisallow: /private\n"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"
PATHS = ("/page", "/private")


@deferred_f_from_coro_f
async def test_rfc9309_redirect_loop_across_origins_full_allow() -> None:
    """A/robots.txt -> B/x -> B/y -> A/robots.txt: a loop, so as if 404."""
    bad = FaultServer()
    with FaultServer() as other:
        other.routes.update(
            {"/x": redirect(other.url("/y"), 302), "/y": redirect(bad.url("/robots.txt"), 307)}
        )
        run = await run_fault(redirect(other.url("/x")), PATHS, bad=bad)
    assert_allow_all(run)
    assert run.bad.paths().count("/robots.txt") == 1
    assert other.paths() == ["/x", "/y"]


@deferred_f_from_coro_f
async def test_rfc9309_redirect_to_itself_full_allow() -> None:
    run = await run_fault(redirect("/robots.txt", 308), PATHS)
    assert_allow_all(run)
    assert run.bad.paths().count("/robots.txt") == 1


@deferred_f_from_coro_f
async def test_status_redirect_to_a_hanging_origin_full_disallow() -> None:
    """The chain's end times out: the ORIGINAL origin is unreachable."""
    with FaultServer({"/robots.txt": hang_before_headers()}) as other:
        run = await run_fault(
            redirect(other.url("/robots.txt")), PATHS, settings={"DOWNLOAD_TIMEOUT": 1}
        )
    assert_closed(run, "timeout")
    assert_not_delayed(run)
    assert other.paths() == ["/robots.txt"]


@deferred_f_from_coro_f
async def test_status_redirect_to_503_on_another_origin_full_disallow() -> None:
    with FaultServer({"/down": reply(503, b"", {"Retry-After": "120"})}) as other:
        run = await run_fault(redirect(other.url("/down"), 302), PATHS)
    assert_closed(run, "HTTP 503 after 1 redirect")


@deferred_f_from_coro_f
async def test_rfc9309_redirect_to_404_on_another_origin_full_allow() -> None:
    with FaultServer({"/gone": reply(404, DISALLOW_ALL)}) as other:
        run = await run_fault(redirect(other.url("/gone")), PATHS)
    assert_allow_all(run)


@deferred_f_from_coro_f
async def test_rfc9309_protocol_relative_redirect_to_another_origin() -> None:
    """``Location: //host:port/path`` keeps the scheme and changes the origin."""
    with FaultServer({"/rules": reply(200, RULES)}) as other:
        run = await run_fault(redirect(f"//127.0.0.1:{other.port}/rules"), PATHS)
    assert_rules(run, allowed=["/page"], forbidden=["/private"])
    assert other.paths() == ["/rules"]


@deferred_f_from_coro_f
async def test_spec_2_1_redirect_to_a_local_file_is_never_read(tmp_path: Path) -> None:
    """A server must not make the crawler read its own disk: ``file:`` is not followed
    (the redirect leads nowhere, so as if 404), and the file's rules never apply."""
    secret = tmp_path / "robots.txt"
    secret.write_bytes(DISALLOW_ALL)
    run = await run_fault(redirect(secret.as_uri()), PATHS)
    assert_allow_all(run)


@deferred_f_from_coro_f
async def test_status_redirect_with_a_malformed_location_full_disallow() -> None:
    """``Location: http://[::1`` cannot be a URL: an invalid response (unreachable)."""
    run = await run_fault(redirect("http://[::1"), PATHS)
    assert_closed(run)


@deferred_f_from_coro_f
async def test_scrapy_malformed_location_is_handled_by_the_fetcher_not_logged_as_a_crash() -> None:
    """What a server sends is not a bug in the crawler: no ERROR log, no traceback;
    the fetcher counts it like any other invalid response."""
    run = await run_fault(redirect("http://[::1"), PATHS)
    assert run.stat("log_count/ERROR") is None, "a malformed Location escaped Fetcher.fetch"
    assert run.stat("robotstxt/response_status_count/301") == 1
