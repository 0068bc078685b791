"""docs/spec.md §4 against hostile 2xx bodies: the rules they contain decide, within bounds.

A 2xx robots.txt is parsed whatever its bytes (docs/spec.md §2: success means the
rules decide); what the parser can take from hostile bytes is what applies.
Each crawl also proves the download and the parse stay bounded in memory
(conftest.MEMORY_BOUND) and time, and that the healthy origin is crawled.
"""

from __future__ import annotations

from scrapy.utils.defer import deferred_f_from_coro_f

from . import bodies
from .conftest import MEMORY_BOUND, assert_allow_all, assert_rules, run_fault
from .fault_server import gzip_bomb, huge, reply


@deferred_f_from_coro_f
async def test_rfc9309_gzip_bomb_is_inflated_only_up_to_500kib() -> None:
    """128 GiB of newlines in about 128 MB of gzip. Only the first 512,000 bytes may
    be inflated (docs/spec.md §4.3: a huge robots.txt is never read whole); the rules in them
    apply. The bomb is far bigger than loopback socket buffers, so the bytes sent
    tell whether the client stopped reading."""
    bomb = gzip_bomb(b"User-agent: *\nDisallow: /bomb\n", inflated=128 << 30)
    run = await run_fault(bomb, ["/bomb", "/page"])
    assert run.peak_growth < MEMORY_BOUND, (
        f"inflating the gzip bomb grew peak RSS by {run.peak_growth >> 20} MiB: "
        "decompression of robots.txt is not bounded by the 512,000-byte cut"
    )
    assert_rules(run, allowed=["/page"], forbidden=["/bomb"])
    assert run.bad.bytes_sent < 32 << 20, "the client kept reading the bomb"


@deferred_f_from_coro_f
async def test_rfc9309_50mb_chunked_body_cut_at_500kib() -> None:
    """Like the 50 MB test in tests/crawler, but chunked: no Content-Length to trust."""
    size = 50_000_000
    run = await run_fault(
        huge(size, b"User-agent: *\nDisallow: /early\n", use_chunked=True), ["/early", "/page"]
    )
    assert_rules(run, allowed=["/page"], forbidden=["/early"])
    assert run.bad.bytes_sent < size // 2, f"the server sent {run.bad.bytes_sent} bytes"


@deferred_f_from_coro_f
async def test_rfc9309_binary_garbage_yields_only_its_valid_lines() -> None:
    run = await run_fault(reply(200, bodies.binary_garbage()), ["/buried", "/page", "/private"])
    assert_rules(run, allowed=["/page", "/private"], forbidden=["/buried"])


@deferred_f_from_coro_f
async def test_rfc9309_utf16_with_bom_has_no_valid_line_full_allow() -> None:
    """docs/spec.md §4.1: the body is UTF-8. UTF-16 puts a NUL after every ASCII letter, so
    ``U\\0s\\0e\\0r\\0-\\0a\\0g\\0e\\0n\\0t\\0`` is no field and "Disallow: /" is never read."""
    body = bodies.utf16_with_bom("User-agent: *\nDisallow: /\n")
    run = await run_fault(reply(200, body, {"Content-Type": "text/plain; charset=utf-16"}))
    assert_allow_all(run)


@deferred_f_from_coro_f
async def test_rfc9309_latin1_bytes_are_tolerated() -> None:
    """docs/spec.md §4.1: bytes that are not UTF-8 do not make parsing fail. A Latin-1 é
    (0xE9) in a rule matches the URL byte %E9, not UTF-8's %C3%A9."""
    paths = ["/caf%E9", "/priv%E9/x", "/next", "/caf%C3%A9", "/ok"]
    run = await run_fault(reply(200, bodies.latin1()), paths)
    assert_rules(run, allowed=["/caf%C3%A9", "/ok"], forbidden=["/caf%E9", "/priv%E9/x", "/next"])


@deferred_f_from_coro_f
async def test_rfc9309_nul_bytes_are_tolerated() -> None:
    """A NUL is an ordinary byte of the value it sits in (``/next\\0`` is not ``/next``);
    lines of NULs and NULs in comments change nothing else."""
    paths = ["/a%00b", "/after", "/next", "/a", "/ok"]
    run = await run_fault(reply(200, bodies.nul_bytes()), paths)
    assert_rules(run, allowed=["/next", "/a", "/ok"], forbidden=["/a%00b", "/after"])


@deferred_f_from_coro_f
async def test_rfc9309_100000_groups_parsed_up_to_500kib() -> None:
    """3.9 MB of groups: the first 512,000 bytes (about 14,000 groups) are parsed, and
    a group for our agent there applies; the same agent's group at 99,999 is beyond."""
    body = bodies.many_groups(100_000, ours=(100, 99_999))
    paths = ["/ours-100", "/ours-99999", "/g5", "/ok"]
    run = await run_fault(reply(200, body), paths)
    assert_rules(run, allowed=["/ours-99999", "/g5", "/ok"], forbidden=["/ours-100"])
    assert run.finished - run.started < 10


@deferred_f_from_coro_f
async def test_rfc9309_1mb_lines_cut_at_500kib() -> None:
    """A 1 MiB comment line straddles the 512,000-byte cut: what follows it is never read."""
    paths = ["/before", "/after", "/longxxx", "/ok"]
    run = await run_fault(reply(200, bodies.long_lines(1 << 20)), paths)
    assert_rules(run, allowed=["/after", "/longxxx", "/ok"], forbidden=["/before"])


@deferred_f_from_coro_f
async def test_rfc9309_long_lines_within_500kib_are_parsed() -> None:
    """Lines of 200,000 bytes each, all inside the cut: the rule after them applies
    (``/longxxx`` is allowed: the long rule needs 200,000 x's)."""
    paths = ["/before", "/after", "/longxxx", "/ok"]
    run = await run_fault(reply(200, bodies.long_lines(200_000)), paths)
    assert_rules(run, allowed=["/longxxx", "/ok"], forbidden=["/before", "/after"])


@deferred_f_from_coro_f
async def test_rfc9309_thousands_of_stars_in_one_pattern_are_matched_quickly() -> None:
    """docs/spec.md §6.8: 1,001 and 5,001 ``*`` in one pattern, against 1,500-character paths."""
    allowed = ["/" + "a" * 1500, "/" + "a" * 999 + "b", "/endy", "/ok"]
    forbidden = ["/" + "a" * 1500 + "b", "/stars", "/starsxyz", "/endz"]
    run = await run_fault(reply(200, bodies.many_stars(5_000)), allowed + forbidden)
    assert_rules(run, allowed=allowed, forbidden=forbidden)
    assert run.finished - run.started < 5


@deferred_f_from_coro_f
async def test_rfc9309_6_8_check_too_costly_to_finish_is_dropped_with_its_reason() -> None:
    """docs/spec.md §6.8, issue 13 §2: 21,952 wildcard rules and a URL on which each
    fails only on its middle piece. The check gives up within its bound and
    fails closed; the other pages of the origin are decided as the rules say."""
    hostile, matched = bodies.middle_pieces_path(), "/a3xb4yc5z"
    run = await run_fault(reply(200, bodies.middle_pieces()), [hostile, matched, "/page"])
    assert_rules(run, allowed=["/page"], forbidden=[hostile, matched])
    reasons = {url: str(error) for url, error in run.bad_dropped().items()}
    assert "cost bound" in reasons[run.bad.url(hostile)]
    assert "forbidden by rule /*a3x*b4y*c5z at line" in reasons[run.bad.url(matched)]


@deferred_f_from_coro_f
async def test_rfc9309_6_8_grid_of_rules_is_answered_not_refused() -> None:
    """docs/spec.md §6.8, issue 13 §2: 22,500 rules ``/*t<i>x*t<j>y`` and a URL with
    every ``t<j>y`` before every ``t<i>x``, which no rule matches: allowed,
    exactly (it was refused within the cost bound before the index filed
    rules by their last piece too)."""
    hostile, matched = bodies.grid_path(), "/t3xt4y"
    run = await run_fault(reply(200, bodies.grid()), [hostile, matched, "/page"])
    assert_rules(run, allowed=[hostile, "/page"], forbidden=[matched])
