"""docs/spec.md §2's table for statuses and headers a hostile server may choose.

Plain 2xx/401/403/404/410/429/500/503 are covered in tests/crawler; here:
rare and non-standard codes, odd headers, an interim 1xx, and status lines
that are not HTTP at all (invalid response: unreachable).
"""

from __future__ import annotations

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import assert_allow_all, assert_closed, assert_rules, run_fault
from .fault_server import head, raw, reply

RULES = b"User-agent: *\nDisallow: /private\n"
PATHS = ("/page", "/private")


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (200, {"Content-Type": "text/html; charset=utf-16"}),  # the charset is not obeyed
        (200, {"Content-Type": "application/octet-stream", "Content-Disposition": "attachment"}),
        (200, [("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("X-Robots-Tag", "noindex")]),
        (203, {}),
        (206, {"Content-Range": f"bytes 0-{len(RULES) - 1}/{len(RULES)}"}),
        (299, {}),
    ],
)
@deferred_f_from_coro_f
async def test_status_any_2xx_with_any_headers_rules_decide(
    status: int, headers: dict[str, str]
) -> None:
    run = await run_fault(reply(status, RULES, headers), PATHS)
    assert_rules(run, allowed=["/page"], forbidden=["/private"])


@deferred_f_from_coro_f
async def test_status_204_no_content_full_allow() -> None:
    """A success with no body has no rules."""
    run = await run_fault(reply(204), PATHS)
    assert_allow_all(run)


@pytest.mark.parametrize("status", [400, 405, 418, 451, 499])
@deferred_f_from_coro_f
async def test_status_rare_4xx_full_allow(status: int) -> None:
    run = await run_fault(reply(status, b"User-agent: *\nDisallow: /\n"), PATHS)
    assert_allow_all(run)


@pytest.mark.parametrize("status", [501, 502, 504, 508, 599])
@deferred_f_from_coro_f
async def test_status_rare_5xx_full_disallow(status: int) -> None:
    run = await run_fault(reply(status, b"User-agent: *\nAllow: /\n"), PATHS)
    assert_closed(run, f"HTTP {status}")


@deferred_f_from_coro_f
async def test_status_503_with_retry_after_and_repeated_headers_full_disallow() -> None:
    headers = [("Retry-After", "3600"), ("Retry-After", "garbage"), ("Cache-Control", "max-age=0")]
    run = await run_fault(reply(503, b"", headers), PATHS)
    assert_closed(run, "HTTP 503")


@deferred_f_from_coro_f
async def test_status_interim_100_continue_then_2xx_rules_decide() -> None:
    """A 1xx is interim: the 200 that follows it is the answer."""
    final = head(200, {"Content-Length": str(len(RULES))}) + RULES
    run = await run_fault(raw(b"HTTP/1.1 100 Continue\r\n\r\n" + final), PATHS)
    assert_rules(run, allowed=["/page"], forbidden=["/private"])


@pytest.mark.parametrize(
    "answer",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n",  # not HTTP at all
        b"HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",  # status is not a number
        b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n",  # a 100 kB header line
        b"",  # the connection closes without a byte
    ],
    ids=["not-http", "bad-status", "huge-header", "empty"],
)
@deferred_f_from_coro_f
async def test_status_invalid_response_full_disallow(answer: bytes) -> None:
    run = await run_fault(raw(answer), PATHS)
    assert_closed(run)
