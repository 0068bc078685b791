"""crawler/internals.py finds what it reaches for in the Scrapy installed (issue 24 §5).

Each helper there degrades to doing nothing when Scrapy's internals look
different, so a Scrapy that moved them would lose a feature (parking, the
engine's wake-up, unplugging the built-in) without failing any crawl. This test fails
instead; CI runs it on the floor (``.ci/floor``) and on the latest Scrapy.
"""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.internals import (
    Parking,
    Slots,
    builtin_robotstxt_enabled,
)

from .conftest import BY_HAND, OURS, SETTINGS, RecordingSpider, spider_of
from .servers import Reply, SiteServer


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
