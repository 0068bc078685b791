"""Places a wave of requests held while it waited for robots.txt are all
given back: the next origin's wave, waiting for its own robots.txt while the
places are taken, then downloads with every place, and no more
(docs/decisions.md, "Waiting for robots.txt")."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.async_bridge import sleep
from scrapy_rep.crawler.internals import Parking

from .conftest import BY_HAND, SETTINGS, ArrivingSpider, spider_of, stats
from .servers import Reply, SiteServer
from .test_waves import PLACES, HeldPages

PAGES = 5  # a wave: more than the places and the parking spots together


class HeldRobots:
    """A robots.txt (allow all) answered only once the test releases it."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.released = threading.Event()

    def __call__(self, host: str) -> Reply:
        self.asked.set()
        self.released.wait(20)
        return Reply(200, b"User-agent: *\nAllow: /\n")


def _places_taken(crawler: Crawler) -> bool:
    engine = crawler.engine
    return engine is not None and len(engine.downloader.active) >= PLACES


@pytest.mark.parametrize("setup", [BY_HAND, {}], ids=["by hand", "add-on"])
@deferred_f_from_coro_f
async def test_next_origins_wave_downloads_with_every_place_a_wave_before_held(
    setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """PARKED_PER_SLOT is 1: of each wave two requests are parked and the
    others hold their place while robots.txt is held at the server. The first
    origin's wave ends; the second origin's robots.txt is answered once its
    wave fills the places, and its pages are held at the server: two of them
    (CONCURRENT_REQUESTS) reach it together, never three. No request that
    got its place is sent back to the scheduler: nothing stopped."""
    monkeypatch.setattr(Parking, "PARKED_PER_SLOT", 1)
    robots = (HeldRobots(), HeldRobots())
    pages = HeldPages()
    with (
        SiteServer({"/robots.txt": robots[0]}) as first,
        SiteServer({"/robots.txt": robots[1], **{f"/p{n}": pages for n in range(PAGES)}}) as second,
    ):
        waves = [[site.url(f"/p{n}") for n in range(PAGES)] for site in (first, second)]
        settings = {**SETTINGS, **setup, "CONCURRENT_REQUESTS": PLACES}
        crawler = get_crawler(ArrivingSpider, settings)

        async def release() -> None:
            for held in robots:
                # The wave waits for its robots.txt with every place taken.
                while not held.asked.is_set() or not _places_taken(crawler):
                    await sleep(0.01)
                await sleep(0.2)  # and the engine has pulled what it could
                held.released.set()
            deadline = time.monotonic() + 10  # a bound, should a place never come back
            while pages.in_flight < PLACES and time.monotonic() < deadline:
                await sleep(0.01)
            await sleep(0.5)  # a page past the limit reaches the server now
            pages.released.set()

        releasing = deferred_from_coro(release())
        await crawler.crawl_async(urls=waves[0], waves=waves[1:])
        await releasing
    assert sorted(spider_of(crawler).got) == sorted(waves[0] + waves[1])
    assert "robotstxt/requeued_on_stop" not in stats(crawler)  # nothing stopped: none sent back
    assert pages.peak == PLACES, (
        f"{pages.peak} pages of the second origin at once with CONCURRENT_REQUESTS = {PLACES}"
    )
