"""Issue 13 §1: no header value breaks a robots.txt fetch.

Header values arrive as bytes and are read as Latin-1: `str.isdigit()` takes
"²" (0xB2) that `float()` refuses, Scrapy decodes some of them as UTF-8, a
number may overflow. Whatever a header of the robots.txt answer holds (odd
bytes, NUL, huge numbers, negatives, garbage), the answer is recorded once:
robots.txt is fetched exactly once per origin, its rules apply (a disallowed
page dropped, an allowed one fetched), and nothing is logged as an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import GOOD_PATHS, FaultRun, assert_closed, assert_rules, run_fault
from .fault_server import Scenario, Send, head, reply

RULES = b"User-agent: *\nDisallow: /private\n"
PATHS = ("/page", "/private")

#: What a hostile or broken server may put in a header value.
ODD = {
    "superscript-two": "\xb2",
    "vulgar-half": "\xbd",
    "latin-1-ff": "\xff\xfe",
    "nul": "\x00",
    "nul-inside": "6\x000",
    "huge": "9" * 400,
    "huge-20-digits": "99999999999999999999",
    "negative": "-5",
    "float": "1e309",
    "garbage": '=,;"\\\t=',
    "empty": "",
}


@pytest.fixture(autouse=True)
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """No ERROR record (a traceback, a store failure) may be logged by the test."""
    yield
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert logged == [], logged


def with_header(name: str, value: str, body: bytes = RULES) -> Scenario:
    """A 200 carrying one hostile header (any byte but CR/LF) beside sound ones."""
    sound = {"Content-Type": "text/plain", "Content-Length": str(len(body))}
    headers = [(key, sound_value) for key, sound_value in sound.items() if key != name]
    return Scenario((Send(head(200, [*headers, (name, value)]) + body),), f"{name}: {value!r}")


#: (header, how its value is put) for a 200 answer whose rules must apply.
HEADERS = {
    "cache-control-max-age": ("Cache-Control", "max-age={}"),
    "cache-control-s-maxage": ("Cache-Control", "s-maxage={}, max-age=60"),
    "cache-control-bare": ("Cache-Control", "{}"),
    "cache-control-no-store": ("Cache-Control", "no-store, max-age={}"),
    "retry-after": ("Retry-After", "{}"),
    "expires": ("Expires", "{}"),
    "location": ("Location", "{}"),
    "content-encoding": ("Content-Encoding", "{}"),
    "content-type": ("Content-Type", "text/plain; charset={}"),
    "content-type-bare": ("Content-Type", "{}"),
    "content-disposition": ("Content-Disposition", "attachment; filename={}"),
}


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@pytest.mark.parametrize("header", HEADERS.values(), ids=HEADERS.keys())
@deferred_f_from_coro_f
async def test_scrapy_odd_header_value_on_a_2xx_the_rules_apply(
    header: tuple[str, str], value: str
) -> None:
    name, form = header
    run = await run_fault(with_header(name, form.format(value)), PATHS)
    assert_rules(run, allowed=["/page"], forbidden=["/private"])
    assert run.bad.paths().count("/robots.txt") == 1
    assert run.stat("robotstxt/unreachable") is None


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@deferred_f_from_coro_f
async def test_status_odd_content_length_invalid_response_full_disallow(value: str) -> None:
    """A Content-Length that is not a length (or one the body never reaches)
    makes the answer invalid: unreachable (docs/spec.md §2), once, never an error."""
    run = await run_fault(
        with_header("Content-Length", value), PATHS, settings={"REP_UNREACHABLE_WAIT": 0}
    )
    assert_closed(run, {"connection lost", "truncated response"})
    assert run.bad.paths().count("/robots.txt") == 1


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@deferred_f_from_coro_f
async def test_status_5xx_odd_retry_after_the_usual_back_off(value: str) -> None:
    """A 503 with an unreadable Retry-After: unreachable, closed, one fetch."""
    run = await run_fault(
        reply(503, b"busy", {"Retry-After": value}), PATHS, settings={"REP_UNREACHABLE_WAIT": 0}
    )
    assert_closed(run, "HTTP 503")
    assert run.bad.paths().count("/robots.txt") == 1


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@deferred_f_from_coro_f
async def test_rfc9309_redirect_with_odd_bytes_in_location_the_target_rules_apply(
    value: str,
) -> None:
    """A Location whose query holds odd bytes is followed; its target's rules apply."""
    redirect = Scenario((Send(head(301, {"Location": f"/rules.txt?{value}"})),))
    run = await run_fault(redirect, PATHS, routes={"/rules.txt": reply(200, RULES)})
    assert_verdicts(run, allowed=["/page"], forbidden=["/private"])
    assert [path.split("?")[0] for path in run.bad.paths()].count("/rules.txt") == 1
    assert run.bad.paths().count("/robots.txt") == 1


@pytest.mark.parametrize("value", ODD.values(), ids=ODD.keys())
@deferred_f_from_coro_f
async def test_rfc9309_redirect_to_an_odd_location_ends_in_one_state(value: str) -> None:
    """A Location that is nothing but odd bytes is a relative URL, followed:
    the page found there has no rules (full allow). An empty one is a 3xx
    without a target: an invalid answer (unreachable). One fetch, no error."""
    redirect = Scenario((Send(head(302, {"Location": value, "Content-Length": "0"})),))
    run = await run_fault(redirect, PATHS, settings={"REP_UNREACHABLE_WAIT": 0})
    if value:
        assert_verdicts(run, allowed=PATHS, forbidden=())
    else:
        assert_closed(run, "HTTP 302")
    assert run.bad.paths().count("/robots.txt") == 1
    assert len(run.bad.paths()) <= 2 + len(PATHS)  # robots.txt, one hop, the pages


def assert_verdicts(run: FaultRun, allowed: Sequence[str], forbidden: Sequence[str]) -> None:
    """``assert_rules`` for a redirect whose hop is not a route of the bad server."""
    spider = run.spider
    assert not spider.failed, spider.failed
    assert sorted(p for p in run.bad.paths() if p in PATHS) == sorted(allowed)
    assert set(spider.got) >= {run.bad.url(p) for p in allowed}
    dropped = run.bad_dropped()
    assert set(dropped) == {run.bad.url(p) for p in forbidden}
    assert all(isinstance(error, ForbiddenByRobotsTxt) for error in dropped.values())
    assert sorted(run.good.paths()) == sorted(["/robots.txt", *GOOD_PATHS])
