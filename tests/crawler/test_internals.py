"""crawler/internals.py finds what it reaches for in the Scrapy installed.

Each helper there degrades to doing nothing when Scrapy's internals look
different, so a Scrapy that moved them would lose a feature (parking, the
engine's wake-up, unplugging the built-in, the pace's slots) without failing
any crawl. These tests fail instead; CI runs them on the floor (``.ci/floor``),
on the latest Scrapy and reactorless (``.ci/test``). And a Scrapy that moved
them gets a start-up warning naming each (``missing_internals``), shown here
with a downloader renamed as Scrapy's throttler (scrapy/scrapy#6931) would.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from scrapy import signals
from scrapy.core.downloader import Downloader
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.internals import (
    THROTTLER_SETTING,
    Parking,
    Slots,
    builtin_robotstxt_enabled,
    missing_internals,
)

from .conftest import BY_HAND, OURS, SETTINGS, RecordingSpider, spider_of
from .servers import Reply, SiteServer, page


def probe(crawler: Any, request: Request) -> dict[str, object]:
    """What each helper finds for a page as it reaches the downloader."""
    parking = Parking(crawler)
    parked = parking.park(request)  # needs the downloader's active set and its limit
    if parked:
        parking.unpark(request)
    nextcall = getattr(getattr(crawler.engine, "_slot", None), "nextcall", None)
    downloader = getattr(crawler.engine, "downloader", None)
    slot = getattr(downloader, "slots", {}).get(downloader.get_slot_key(request))
    return {
        "parked": parked,
        "stopping": parking.stopping,
        "wakes": callable(getattr(nextcall, "schedule", None)),
        # its slot is there, empty, with a transfer free: it would go at once
        "slot": (len(slot.queue), slot.free_transfer_slots() > 0, Slots(crawler).room(request)),
    }


@deferred_f_from_coro_f
async def test_scrapy_internals_find_the_downloader_slot_and_engine() -> None:
    settings = {**SETTINGS, "CONCURRENT_REQUESTS": 7}
    crawler = get_crawler(RecordingSpider, settings)
    found: list[dict[str, object]] = []

    def reached(request: Request, spider: object) -> None:
        if request.url.endswith("/page"):
            found.append(probe(crawler, request))

    crawler.signals.connect(reached, signal=signals.request_reached_downloader)
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
        await crawler.crawl_async(urls=[site.url("/page")])
    assert spider_of(crawler).got == [site.url("/page")]
    assert found == [
        {
            "parked": True,
            "stopping": False,
            "wakes": True,
            "slot": (0, True, True),
        }
    ]


def test_scrapy_internals_see_the_builtin_middleware_enabled() -> None:
    beside = {**SETTINGS, **BY_HAND, "DOWNLOADER_MIDDLEWARES": {OURS: 100}}
    crawler = get_crawler(RecordingSpider, beside)
    assert builtin_robotstxt_enabled(crawler.settings)
    crawler = get_crawler(RecordingSpider, {**SETTINGS, **BY_HAND})
    assert not builtin_robotstxt_enabled(crawler.settings)


@deferred_f_from_coro_f
async def test_scrapy_internals_all_there_at_start_up(caplog: pytest.LogCaptureFixture) -> None:
    """Every fact internals.py relies on, parking's and the pace's, is found
    when the spider opens, with no deprecation; nothing is said."""
    crawler = get_crawler(RecordingSpider, {**SETTINGS, "REP_CRAWL_DELAY": "obey"})
    seen: list[list[str]] = []

    def opened(spider: object) -> None:
        seen.append(missing_internals(crawler, pace=True))

    crawler.signals.connect(opened, signal=signals.spider_opened)
    with (
        SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site,
        caplog.at_level(logging.WARNING),
    ):
        await crawler.crawl_async(urls=[site.url("/page")])
    assert seen == [[]]
    assert not [r for r in caplog.records if "does not find in Scrapy" in r.getMessage()]
    assert THROTTLER_SETTING not in crawler.settings  # scrapy/scrapy#6931 has not landed


class ThrottlerLikeDownloader(Downloader):
    """A downloader as scrapy/scrapy#6931 would leave it: the request meta key
    that names a request's slot renamed (``throttling_scopes``), so
    ``download_slot`` is never set."""

    DOWNLOAD_SLOT = "throttling_scopes"


def slow_page(host: str) -> Reply:
    time.sleep(0.6)  # still downloading when the next request's turn comes
    return page("/slow")


@deferred_f_from_coro_f
async def test_scrapy_internals_renamed_are_named_at_start_up_and_the_pace_holds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The ``download_slot`` meta key renamed and the throttler's setting there:
    a WARNING at start-up names both, and a paced request waiting for its busy
    slot is still woken as the transfer before it ends (it looked for the
    slot by that key alone, and waited until CLOSESPIDER_TIMEOUT)."""
    settings = {
        **SETTINGS,
        "DOWNLOADER": ThrottlerLikeDownloader,
        THROTTLER_SETTING: {},
        "REP_CRAWL_DELAY": "obey",
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CLOSESPIDER_TIMEOUT": 20,  # a hang ends here, and fails below
    }
    robots = Reply(200, b"User-agent: *\nCrawl-delay: 0.2\n")
    routes = {"/robots.txt": robots, "/a": slow_page, "/b": slow_page}
    crawler = get_crawler(RecordingSpider, settings)
    with SiteServer(routes) as site, caplog.at_level(logging.WARNING):
        await crawler.crawl_async(urls=[site.url("/a"), site.url("/b")])
    assert sorted(spider_of(crawler).got) == [site.url("/a"), site.url("/b")]
    assert crawler.stats is not None
    assert crawler.stats.get_value("finish_reason") == "finished"
    said = [r.getMessage() for r in caplog.records if "does not find in Scrapy" in r.getMessage()]
    assert len(said) == 1
    assert "download_slot request meta key" in said[0]
    assert THROTTLER_SETTING in said[0]
    assert "Downloader.slots" not in said[0]  # what is there is not named
