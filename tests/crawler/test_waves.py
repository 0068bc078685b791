"""Issue 23 §4: CONCURRENT_REQUESTS holds however many requests wait for a
robots.txt, the ones that could not be parked ("holding") included."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.crawler.async_bridge import sleep, wait
from scrapy_rep.crawler.internals import Parking

from .conftest import BY_HAND, SETTINGS, RecordingSpider, spider_of
from .servers import Reply, SiteServer

PLACES = 2  # CONCURRENT_REQUESTS
PAGES = 6


def _places_taken(crawler: Crawler) -> bool:
    try:
        engine = crawler.engine
    except RuntimeError:  # not set before the crawl starts
        return False
    return engine is not None and len(engine.downloader.active) >= PLACES


class HeldPages:
    """Pages answered only once the test releases them; the most at once."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.in_flight = 0
        self.peak = 0
        self._lock = threading.Lock()

    def __call__(self, host: str) -> Reply:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        self.released.wait(20)
        with self._lock:
            self.in_flight -= 1
        return Reply(200, b"page")


@pytest.mark.parametrize(
    "setup",
    [BY_HAND, {}],
    ids=["by hand", "add-on"],
)
@deferred_f_from_coro_f
async def test_scrapy_requests_holding_for_robots_txt_take_a_place_to_download(
    setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 5 made deterministic: PARKED_PER_SLOT is 1, so with two places
    two requests are parked and the others hold theirs. The store is slow
    (held until every request waits), so they all learn the answer at once;
    pages are held at the server. At most two pages may be at the server."""
    monkeypatch.setattr(Parking, "PARKED_PER_SLOT", 1)
    store_gate: Deferred[None] = Deferred()
    get = MemoryStorage.get

    async def slow_get(self: MemoryStorage, key: str) -> OriginRecord | None:
        if not store_gate.called:
            await wait(store_gate)
        return await get(self, key)

    monkeypatch.setattr(MemoryStorage, "get", slow_get)
    pages = HeldPages()
    with SiteServer({f"/p{n}": pages for n in range(PAGES)}) as site:
        urls: list[str | Request] = [site.url(f"/p{n}") for n in range(PAGES)]
        settings = {**SETTINGS, **setup, "CONCURRENT_REQUESTS": PLACES}
        crawler = get_crawler(RecordingSpider, settings)

        async def release() -> None:
            # Every place is taken by a request waiting for robots.txt (the
            # downloader's active set is full): only now does the store answer.
            while not _places_taken(crawler) or pages.in_flight:
                await sleep(0.01)
            await sleep(0.2)  # and the engine has pulled what it could
            store_gate.callback(None)
            while pages.in_flight < PLACES:
                await sleep(0.01)
            await sleep(0.5)  # anything that skipped the limit reaches the server now
            pages.released.set()

        releasing = deferred_from_coro(release())
        await crawler.crawl_async(urls=urls)
        await releasing
    assert sorted(spider_of(crawler).got) == sorted(str(url) for url in urls)
    assert pages.peak <= PLACES, f"{pages.peak} pages at once with CONCURRENT_REQUESTS = {PLACES}"
