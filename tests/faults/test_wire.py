"""docs/spec.md §2, unreachable row, on the wire: resets, hangs, drips, bad lengths, bad chunking.

Each robots.txt answer below breaks HTTP in a way the existing middleware
tests do not (they cover a reset before any byte, a hang before headers and a
body shorter than its Content-Length followed by a clean close). Unreachable
means full disallow: no page of the origin may reach its server.
"""

from __future__ import annotations

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import assert_closed, assert_not_delayed, assert_rules, run_fault
from .fault_server import (
    BROKEN_CHUNKS,
    broken_chunked,
    chunked,
    drip,
    hang_mid_body,
    hang_mid_headers,
    reply,
    reset_mid_body,
    wrong_length,
)

RULES = b"User-agent: *\nDisallow: /private\n"
PATHS = ("/page", "/private", "/other")
LOST = {"connection reset", "connection lost", "truncated response"}


@deferred_f_from_coro_f
async def test_status_reset_mid_body_full_disallow() -> None:
    run = await run_fault(reset_mid_body(RULES, after=10), PATHS)
    assert_closed(run, LOST)


@deferred_f_from_coro_f
async def test_status_reset_right_after_headers_full_disallow() -> None:
    run = await run_fault(reset_mid_body(RULES, after=0), PATHS)
    assert_closed(run, LOST)


@deferred_f_from_coro_f
async def test_status_hang_mid_headers_timeout_full_disallow() -> None:
    run = await run_fault(hang_mid_headers(), PATHS, settings={"DOWNLOAD_TIMEOUT": 1})
    assert_closed(run, "timeout")
    assert_not_delayed(run)


@deferred_f_from_coro_f
async def test_status_hang_mid_body_timeout_full_disallow() -> None:
    run = await run_fault(hang_mid_body(RULES, after=14), PATHS, settings={"DOWNLOAD_TIMEOUT": 1})
    assert_closed(run, "timeout")
    assert_not_delayed(run)
    assert run.finished - run.started < 5


@deferred_f_from_coro_f
async def test_status_drip_one_byte_per_second_beyond_timeout_full_disallow() -> None:
    """A server that never stops sending, too slowly: DOWNLOAD_TIMEOUT bounds the
    whole download, not the gap between bytes."""
    run = await run_fault(drip(RULES, interval=1.0), PATHS, settings={"DOWNLOAD_TIMEOUT": 1.5})
    assert_closed(run, "timeout")
    assert_not_delayed(run)
    robots_at = run.bad.hits_for("/robots.txt")[0].at
    decided = run.decided_at()
    assert 1.4 < decided - robots_at < 4


@deferred_f_from_coro_f
async def test_status_2xx_slow_drip_within_timeout_rules_decide() -> None:
    """Slowness alone is no fault: a body complete before the timeout is parsed."""
    run = await run_fault(drip(RULES, interval=0.02), PATHS, settings={"DOWNLOAD_TIMEOUT": 3})
    assert_rules(run, allowed=["/page", "/other"], forbidden=["/private"])


@deferred_f_from_coro_f
async def test_status_content_length_longer_than_body_then_hang_full_disallow() -> None:
    run = await run_fault(
        wrong_length(RULES, announced=len(RULES) + 100, then_hang=True),
        PATHS,
        settings={"DOWNLOAD_TIMEOUT": 1},
    )
    assert_closed(run, "timeout")
    assert_not_delayed(run)


@deferred_f_from_coro_f
async def test_status_content_length_shorter_than_body_parses_what_it_announced() -> None:
    """A client cannot tell a short Content-Length from a complete body: the bytes
    it announced are the robots.txt (here, up to "/priv"), the rest is ignored."""
    body = RULES + b"Disallow: /other\n"
    announced = len(b"User-agent: *\nDisallow: /priv")
    run = await run_fault(wrong_length(body, announced=announced), PATHS)
    assert_rules(run, allowed=["/page", "/other"], forbidden=["/private"])


@pytest.mark.parametrize("how", sorted(BROKEN_CHUNKS))
@deferred_f_from_coro_f
async def test_status_broken_chunked_encoding_full_disallow(how: str) -> None:
    run = await run_fault(broken_chunked(how), PATHS)
    assert_closed(run)


@deferred_f_from_coro_f
async def test_status_2xx_valid_chunked_encoding_rules_decide() -> None:
    """The control for the broken ones: the same framing, well formed, is parsed."""
    run = await run_fault(chunked([RULES[:5], RULES[5:17], RULES[17:]]), PATHS)
    assert_rules(run, allowed=["/page", "/other"], forbidden=["/private"])


@deferred_f_from_coro_f
async def test_status_content_encoding_that_does_not_decode_full_disallow() -> None:
    """``Content-Encoding: gzip`` on a body that is not gzip at all is an invalid
    response (docs/spec.md §2: unreachable), not an empty robots.txt that allows everything."""
    run = await run_fault(reply(200, RULES, {"Content-Encoding": "gzip"}), PATHS)
    assert_closed(run)
