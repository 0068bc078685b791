"""Issue 13 §1: header values never break a fetch.

`Cache-Control` and `Retry-After` arrive as Latin-1 text; `str.isdigit()`
accepts `²` (byte 0xB2) while `float()` rejects it. The exception escaped
recording the outcome, was taken for a store failure, robots.txt was fetched
again at once, and every request was dropped as unreachable.
"""

from __future__ import annotations

import pytest
from reactor_choice import NONE, chosen_reactor
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl, spider_of, stats
from .servers import Reply, SiteServer

ROBOTS = b"User-agent: *\nDisallow: /private\n"
ODD_VALUES = [
    "max-age=\u00b2",  # superscript two: isdigit() but not float()
    "max-age=\u00b9\u00b2\u00b3",
    "max-age=" + "9" * 400,  # huge
    "max-age=-5",
    "max-age=1e9",
    "s-maxage=\u00ff\u00fe, max-age=60",
    "max-age=\u00bd",  # a vulgar half: numeric, not an ASCII digit
    "no-store, max-age=\u00b2",
    "\u00ff" * 50,
    ",,,=,=",
]


@pytest.mark.parametrize("value", ODD_VALUES)
@deferred_f_from_coro_f
async def test_scrapy_odd_cache_control_still_applies_the_rules(value: str) -> None:
    reactorless = chosen_reactor() == NONE
    headers = {"Cache-Control": value, "Retry-After": "\u00b2", "Expires": "\u00b2\u00b2"}
    if reactorless:  # the odd value alone (below: what a byte past ASCII does there)
        headers = {"Cache-Control": value, "Retry-After": "-1", "Expires": "0"}
    with SiteServer({"/robots.txt": Reply(200, ROBOTS, headers)}) as site:
        crawler = await crawl([site.url("/page"), site.url("/private/x"), site.url("/other")])
        robots_requests = site.count("/robots.txt")
    spider = spider_of(crawler)
    if reactorless and not value.isascii():
        # Scrapy's aiohttp handler (reactorless) fails a download whose
        # headers hold a byte past ASCII (UnicodeEncodeError): robots.txt is
        # then unreachable and the origin closed, never open
        # (docs/troubleshooting.md, "reactorless mode").
        assert spider.got == []
        assert sorted(spider.dropped) == sorted(
            site.url(path) for path in ("/page", "/private/x", "/other")
        )
        assert stats(crawler)["robotstxt/unreachable"] == 3
        return
    assert sorted(spider.got) == [site.url("/other"), site.url("/page")]
    assert list(spider.dropped) == [site.url("/private/x")]
    assert robots_requests == 1
    assert "robotstxt/unreachable" not in stats(crawler)


@pytest.mark.parametrize(
    "retry_after", ["\u00b2", "9" * 400, "-1", "Wed, 21 Oct 99999999 07:28:00 GMT"]
)
@deferred_f_from_coro_f
async def test_scrapy_odd_retry_after_on_a_503_keeps_the_usual_back_off(retry_after: str) -> None:
    """A 503 with an unreadable Retry-After: unreachable, one request, no storm."""
    with SiteServer({"/robots.txt": Reply(503, b"busy", {"Retry-After": retry_after})}) as site:
        crawler = await crawl([site.url("/page")], {"REP_UNREACHABLE_WAIT": 0})
        robots_requests = site.count("/robots.txt")
    assert list(spider_of(crawler).dropped) == [site.url("/page")]
    assert robots_requests == 1


@deferred_f_from_coro_f
async def test_scrapy_a_failure_recording_the_answer_still_records_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Any failure after the response arrived: the rules still apply, robots.txt
    is not fetched again at once, and no store failure is reported."""
    from scrapy_rep.cache import policy

    real = policy.freshness

    def breaks_on_headers(cache_control: str | None, config: policy.PolicyConfig) -> object:
        if cache_control is not None:
            raise RuntimeError("a header nobody foresaw")
        return real(cache_control, config)

    monkeypatch.setattr(policy, "freshness", breaks_on_headers)
    headers = {"Cache-Control": "max-age=60"}
    with SiteServer({"/robots.txt": Reply(200, ROBOTS, headers)}) as site:
        crawler = await crawl([site.url("/page"), site.url("/private/x")])
        robots_requests = site.count("/robots.txt")
    spider = spider_of(crawler)
    assert spider.got == [site.url("/page")]
    assert list(spider.dropped) == [site.url("/private/x")]
    assert robots_requests == 1
