"""Pages whose robots.txt answer came while they waited go before the other
origins' robots.txt fetches waiting for a place, even ones that asked first:
an origin's pages go while its answer is fresh (docs/decisions.md, "Waiting
for robots.txt")."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.async_bridge import sleep

from .conftest import SETTINGS, ArrivingSpider, spider_of
from .servers import Reply, SiteServer
from .test_waves import PLACES, HeldPages
from .test_waves_next_origin_gets_the_places import HeldRobots

ALLOW = Reply(200, b"User-agent: *\nAllow: /\n")


class StagedSpider(ArrivingSpider):
    """Yields each stage once the test's ``ready(stage)`` says so."""

    name = "staged"

    def __init__(
        self, stages: list[list[str]], ready: Callable[[int], bool], **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.stages = stages
        self.ready = ready

    async def start(self) -> AsyncIterator[Request]:
        for number, stage in enumerate(self.stages):
            await self.until(partial(self.ready, number), 20)
            for url in stage:
                yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)


def _active(crawler: Crawler) -> int:
    engine = crawler.engine
    return 0 if engine is None else len(engine.downloader.active)


@deferred_f_from_coro_f
async def test_pages_answered_while_they_waited_go_before_robots_txt_fetches_that_asked_first() -> (
    None
):
    """Two places. A's robots.txt is held at the server while A's two pages
    wait; C's page, held too, takes the other place; then B's and D's
    robots.txt fetches wait for one. A's answer comes: one place goes round
    (C's page still holds the other), and A's pages get it before D's
    robots.txt, the second fetch that waited (B's may go first, if a place
    was given before A's pages asked)."""
    order: list[str] = []
    lock = threading.Lock()

    def seen(label: str, reply: Reply) -> Callable[[str], Reply]:
        def answer(host: str) -> Reply:
            with lock:
                order.append(label)
            return reply

        return answer

    robots_a = HeldRobots()
    held_c = HeldPages()
    with (
        SiteServer(
            {
                "/robots.txt": robots_a,
                "/p0": seen("a", Reply(200, b"page")),
                "/p1": seen("a", Reply(200, b"page")),
            }
        ) as a,
        SiteServer({"/robots.txt": ALLOW, "/p0": held_c}) as c,
        SiteServer({"/robots.txt": seen("robots b", ALLOW)}) as b,
        SiteServer({"/robots.txt": seen("robots d", ALLOW)}) as d,
    ):
        crawler: Crawler | None = None

        def ready(stage: int) -> bool:
            assert crawler is not None
            if stage == 0:
                return True
            if stage == 1:  # A's robots.txt asked, its pages waiting
                return robots_a.asked.is_set() and _active(crawler) == 1
            return held_c.in_flight == 1  # C's page holds the other place

        stages = [[a.url("/p0"), a.url("/p1")], [c.url("/p0")], [b.url("/p0"), d.url("/p0")]]
        crawler = get_crawler(StagedSpider, {**SETTINGS, "CONCURRENT_REQUESTS": PLACES})

        async def release() -> None:
            assert crawler is not None
            # A's robots.txt, C's page, B's and D's robots.txt fetches waiting.
            while _active(crawler) < 4:
                await sleep(0.01)
            robots_a.released.set()
            while "robots d" not in order:
                await sleep(0.01)
            held_c.released.set()

        releasing = deferred_from_coro(release())
        await crawler.crawl_async(stages=stages, ready=ready)
        await releasing
    got = spider_of(crawler).got
    assert sorted(got) == sorted(url for stage in stages for url in stage), got
    assert order.index("a") < order.index("robots d"), order
