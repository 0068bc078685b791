"""Issue 23 §3: a stop stops. After a pause or a close (``crawler.stop``, as
SIGINT does; CLOSESPIDER_*; ``engine.close_spider_async``) no robots.txt
download starts and no waiting request is downloaded: they go back to the
scheduler (JOBDIR keeps them)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.async_bridge import sleep

from .conftest import BY_HAND, SETTINGS, RecordingSpider, stats
from .servers import Reply, SiteServer

ORIGINS = 12
PAGES = 3
PLACES = 4  # CONCURRENT_REQUESTS

SETUPS = {"by hand": BY_HAND, "add-on": {}}


class Gate:
    """robots.txt held at the server until the test opens the gate."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    def __call__(self, host: str) -> Reply:
        self.opened.wait(20)
        return Reply(200, b"User-agent: *\nDisallow:\n")


@pytest.fixture
def sites() -> Iterator[tuple[list[SiteServer], Gate]]:
    """``ORIGINS`` origins (one server each), robots.txt held at the gate."""
    gate = Gate()
    with ExitStack() as stack:
        servers = [stack.enter_context(SiteServer({"/robots.txt": gate})) for _ in range(ORIGINS)]
        try:
            yield servers, gate
        finally:
            gate.opened.set()


def _robots_hits(servers: list[SiteServer]) -> list[float]:
    return [hit.at for site in servers for hit in list(site.hits) if hit.path == "/robots.txt"]


def _page_hits(servers: list[SiteServer]) -> list[str]:
    return [hit.path for site in servers for hit in list(site.hits) if hit.path != "/robots.txt"]


def _closing(crawler: Crawler) -> bool:
    engine = crawler.engine
    slot = getattr(engine, "_slot", None)
    return engine is not None and (not engine.running or getattr(slot, "closing", None) is not None)


STOPS = ("crawler.stop", "engine.close_spider", "CLOSESPIDER_TIMEOUT")


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("stop", STOPS)
@deferred_f_from_coro_f
async def test_scrapy_nothing_starts_after_a_stop(
    stop: str, setup: str, sites: tuple[list[SiteServer], Gate], tmp_path: Path
) -> None:
    """Findings 4 and 8: many origins, robots.txt held at the server, every
    place taken by a robots.txt download and every page waiting. The stop
    comes; then the held answers come. No robots.txt download starts after
    the stop, and no page is downloaded: they go back to the scheduler."""
    servers, gate = sites
    urls = [site.url(f"/p{n}") for site in servers for n in range(PAGES)]
    settings: dict[str, Any] = {
        **SETTINGS,
        **SETUPS[setup],
        "JOBDIR": str(tmp_path / "job"),
        "CONCURRENT_REQUESTS": PLACES,
    }
    if stop == "CLOSESPIDER_TIMEOUT":
        settings["CLOSESPIDER_TIMEOUT"] = 1.0
    crawler = get_crawler(RecordingSpider, settings)
    stopped_at: list[float] = []

    async def stop_when_every_place_waits() -> None:
        while len(_robots_hits(servers)) < PLACES:
            await sleep(0.01)
        await sleep(0.3)  # the pages are parked, the other fetches wait for a place
        assert crawler.engine is not None
        if stop == "crawler.stop":
            deferred_from_coro(crawler.stop_async())
        elif stop == "engine.close_spider":
            deferred_from_coro(crawler.engine.close_spider_async(reason="cancelled"))
        while not _closing(crawler):  # CLOSESPIDER_TIMEOUT fires on its own
            await sleep(0.01)
        stopped_at.append(time.monotonic())
        gate.opened.set()  # the held robots.txt answers come in after the stop

    watcher = deferred_from_coro(stop_when_every_place_waits())
    await crawler.crawl_async(urls=urls)
    await watcher
    robots = _robots_hits(servers)
    assert len(robots) == PLACES, f"{len(robots) - PLACES} robots.txt downloads after the stop"
    assert all(at < stopped_at[0] for at in robots)
    assert _page_hits(servers) == []  # no page downloaded after the stop
    reasons = {
        "crawler.stop": "shutdown",
        "engine.close_spider": "cancelled",
        "CLOSESPIDER_TIMEOUT": "closespider_timeout",
    }
    assert stats(crawler)["finish_reason"] == reasons[stop]
    assert stats(crawler).get("robotstxt/requeued_on_stop", 0) > 0
