"""Every gap between two pages of one origin is at least its crawl-delay, from
the first page on, for every store (docs/politeness.md). 200 origins at
once, and several processes: tests/distributed/test_pace.py.

Real crawls against local servers, timed by the site's own clock. Once the
first page is back, the spider asks for slow pages of other hosts that hold
every place in CONCURRENT_REQUESTS for ``HOG`` seconds: the turns that come
due meanwhile wait for a place, and the next turn of each origin must count
from when its page really went, not from when its turn came. The pace
spaces two pages ``crawl-delay + 50 ms`` apart; those 50 ms are for the
time between a turn and the site reading the request.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from local_redis import RedisServer
from paced_site import PacedSite
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import PagesSpider, crawl, spider_of, stats

DELAY = 0.5


class HoggingSpider(PagesSpider):
    """Asks for ``hogs`` (before anything else) once ``after`` paced pages came back."""

    def __init__(self, hogs: list[str], after: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hogs = hogs
        self.after = after

    def parse(self, response: Response) -> Iterator[Request]:  # type: ignore[override]
        super().parse(response)
        if response.url.rsplit("/", 1)[-1].startswith("p"):  # a paced page, /p<n>
            self.after -= 1
        if self.after == 0:
            hogs, self.hogs = self.hogs, []
            for url in hogs:
                yield Request(url, callback=super().parse, dont_filter=True, priority=100)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    if request.param == "sqlite":
        yield {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3")}
    elif request.param == "redis":
        server = RedisServer(tmp_path)
        server.start()
        try:
            yield {"REP_STORAGE": "redis", "REP_REDIS_URL": server.url}
        finally:
            server.kill()
    else:
        yield {"REP_STORAGE": "memory"}


@pytest.mark.parametrize(("origins", "places"), [(1, 1), (3, 2)])
@deferred_f_from_coro_f
async def test_crawl_delay_holds_from_the_first_page_when_turns_wait_for_a_place(
    storage: dict[str, Any], origins: int, places: int
) -> None:
    pages = 3
    with PacedSite(origins, DELAY) as site:
        urls, hogs, warm = site.pages(pages), site.slow(places), site.warm(places)
        settings = {"REP_CRAWL_DELAY": "obey", "CONCURRENT_REQUESTS": places, **storage}
        crawler = await crawl([*warm, *urls], settings, HoggingSpider, hogs=hogs, after=1)
    assert sorted(spider_of(crawler).got) == sorted([*warm, *urls, *hogs])
    assert len(site.stamps) == origins * pages
    short = [gap for gap in site.gaps() if gap < DELAY]
    assert short == [], sorted(short)
    assert stats(crawler)["robotstxt/pace/waited"] >= origins
    assert site.hosts.peak <= places  # a page that waited took a place to go
    assert "robotstxt/pace/requeued_on_stop" not in stats(crawler)  # nor went back


class KillingSpider(PagesSpider):
    """Kills ``server`` (the Redis the crawl shares) when its first page comes."""

    def __init__(self, server: RedisServer, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.server = server

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.server.kill()


@deferred_f_from_coro_f
async def test_turns_taken_while_redis_is_down_are_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis goes away after the first page: the turns are this process's own
    from then on (docs/politeness.md, Faults), at the same pace, and counted."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        with PacedSite(1, DELAY) as site, caplog.at_level(logging.WARNING):
            urls = site.pages(4)
            settings = {
                "REP_CRAWL_DELAY": "obey",
                "REP_STORAGE": "redis",
                "REP_REDIS_URL": server.url,
            }
            crawler = await crawl(urls, settings, KillingSpider, server=server)
    finally:
        server.kill()
    assert sorted(spider_of(crawler).got) == sorted(urls)
    assert [gap for gap in site.gaps() if gap < DELAY] == []
    # page 1 reserved its turn as page 0 left, Redis still up; pages 2 and 3 here
    assert stats(crawler)["robotstxt/pace/local"] == 2
    said = [r for r in caplog.records if "is unreachable" in r.getMessage()]
    assert len(said) == 1


class DeletingSpider(PagesSpider):
    """Deletes the folder of the store's file when its ``after``-th page comes,
    and sets ``deleted``."""

    def __init__(self, folder: Path, after: int, deleted: asyncio.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.folder, self.after, self.deleted = folder, after, deleted

    def parse(self, response: Response) -> None:
        super().parse(response)
        if len(self.got) == self.after:
            shutil.rmtree(self.folder)  # rm -rf .scrapy, mid-crawl
            self.deleted.set()


@deferred_f_from_coro_f
async def test_a_store_file_deleted_mid_crawl_is_shared_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One crawl has the SQLite file open; it is deleted, and a second crawl
    starts on the path (a new file). The first notices, says so once, and
    opens the path again with its turns: the two keep one pace. Before,
    the first kept the deleted file and nothing said so."""
    folder = tmp_path / "scrapy"
    settings = {
        "REP_CRAWL_DELAY": "obey",
        "REP_STORAGE": "sqlite",
        "REP_STORAGE_PATH": str(folder / "robotstxt.sqlite3"),
    }
    deleted = asyncio.Event()
    with PacedSite(1, DELAY) as site, caplog.at_level(logging.WARNING):
        urls = site.pages(16)
        first = asyncio.ensure_future(
            crawl(urls[:8], settings, DeletingSpider, folder=folder, after=2, deleted=deleted)
        )
        await deleted.wait()
        second = await crawl(urls[8:], settings)
        await first
    assert len(site.stamps) == 16 and len(spider_of(second).got) == 8
    assert [gap for gap in site.gaps() if gap < DELAY] == []
    said = [r.getMessage() for r in caplog.records if "deleted or replaced" in r.getMessage()]
    assert len(said) == 1 and "opened it again" in said[0]
