"""The errback of a request dropped before the scheduler (docs/decisions.md,
"Robots-aware scheduling"): it is called as for any drop, and what it gives
takes the request's place, whatever its kind (a request, an item, several,
none, from a plain function, a coroutine or an async generator); one that
fails is logged and the crawl goes on.

Real crawls through the add-on against a server on 127.0.0.1. The forbidden
requests are yielded from callbacks once the origin's rules are known: a
plain generator and an async generator.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from scrapy import Request, signals
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep import signals as rep_signals
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import SETTINGS, RecordingSpider, stats
from .servers import Reply, SiteServer

ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n")


class ErrbackSpider(RecordingSpider):
    """/sync and /async link forbidden pages, each with an errback of another kind."""

    name = "errbacks"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.failures: list[tuple[str, str]] = []  # (errback, URL of failure.request)

    async def start(self) -> AsyncIterator[Request]:
        base = self.urls[0]
        assert isinstance(base, str)
        self.base = base
        resolved = asyncio.Event()
        self.crawler.signals.connect(
            lambda **_: resolved.set(), rep_signals.robotstxt_resolved, weak=False
        )
        yield Request(base + "/sync", callback=self.parse_sync)
        yield Request(base + "/async", callback=self.parse_async)
        await asyncio.wait_for(resolved.wait(), 10)
        # among the start requests: what the errback gives goes the start's way
        yield Request(base + "/private/start", errback=self.none)
        yield Request(base + "/private/start-listed", errback=self.from_start)

    def _seen(self, name: str, failure: Failure) -> None:
        assert isinstance(failure.value, ForbiddenByRobotsTxt)
        self.failures.append((name, failure.request.url))  # type: ignore[attr-defined]

    def from_start(self, failure: Failure) -> list[Request]:
        self._seen("from_start", failure)
        return [self._page("/from/start")]

    def _page(self, path: str) -> Request:
        return Request(self.base + path, callback=self.parse)

    # --- a plain generator callback

    def parse_sync(self, response: Response) -> Iterator[Request]:
        self.got.append(response.url)
        base = self.base
        yield Request(base + "/private/many", errback=self.many)
        yield Request(base + "/private/one", errback=self.one)
        yield Request(base + "/private/none", errback=self.none)
        yield Request(base + "/private/fails", errback=self.fails)
        yield Request(base + "/private/awaited", errback=self.coroutine)
        yield Request(base + "/open/sync", callback=self.parse)

    def many(self, failure: Failure) -> list[Any]:
        self._seen("many", failure)
        return [self._page("/from/many"), {"from": "many"}]

    def one(self, failure: Failure) -> Request:
        self._seen("one", failure)
        return self._page("/from/one")

    def none(self, failure: Failure) -> None:
        self._seen("none", failure)

    def fails(self, failure: Failure) -> None:
        self._seen("fails", failure)
        raise ValueError("the errback's own bug")

    async def coroutine(self, failure: Failure) -> Request:
        self._seen("coroutine", failure)
        return self._page("/from/coroutine")

    # --- an async generator callback

    async def parse_async(self, response: Response) -> AsyncIterator[Request]:
        self.got.append(response.url)
        base = self.base
        yield Request(base + "/private/agen", errback=self.agen)
        yield Request(base + "/private/item", errback=self.item)
        yield Request(base + "/private/listed", errback=self.listed)
        yield Request(base + "/private/quiet", errback=self.quiet)
        yield Request(base + "/private/breaks", errback=self.breaks)
        yield Request(base + "/open/async", callback=self.parse)

    async def agen(self, failure: Failure) -> AsyncIterator[Request]:
        self._seen("agen", failure)
        yield self._page("/from/agen")

    async def item(self, failure: Failure) -> dict[str, str]:
        self._seen("item", failure)
        return {"from": "item"}

    def listed(self, failure: Failure) -> tuple[Request, ...]:
        self._seen("listed", failure)
        return (self._page("/from/listed"),)

    async def quiet(self, failure: Failure) -> None:
        self._seen("quiet", failure)

    async def breaks(self, failure: Failure) -> None:
        self._seen("breaks", failure)
        raise ValueError("the errback's own bug")


@deferred_f_from_coro_f
async def test_scrapy_errbacks_of_requests_dropped_early_give_what_takes_their_place(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.ERROR, logger="scrapy_rep")
    items: list[Any] = []
    with SiteServer({"/robots.txt": ROBOTS}) as site:
        crawler = get_crawler(ErrbackSpider, SETTINGS)
        crawler.signals.connect(
            lambda item, **_: items.append(item), signals.item_scraped, weak=False
        )
        await crawler.crawl_async(urls=[site.url("").rstrip("/")])
        paths = site.paths()
    spider = crawler.spider
    assert isinstance(spider, ErrbackSpider)
    assert not [path for path in paths if path.startswith("/private")]
    assert sorted(p for p in paths if p.startswith(("/from", "/open"))) == [
        "/from/agen",
        "/from/coroutine",
        "/from/listed",
        "/from/many",
        "/from/one",
        "/from/start",
        "/open/async",
        "/open/sync",
    ]
    assert sorted(items, key=str) == [{"from": "item"}, {"from": "many"}]
    # every errback got the dropped request on its failure, once
    assert sorted(spider.failures) == sorted(
        (name, site.url(path))
        for name, path in [
            ("many", "/private/many"),
            ("one", "/private/one"),
            ("none", "/private/none"),
            ("fails", "/private/fails"),
            ("coroutine", "/private/awaited"),
            ("agen", "/private/agen"),
            ("item", "/private/item"),
            ("listed", "/private/listed"),
            ("quiet", "/private/quiet"),
            ("breaks", "/private/breaks"),
            ("none", "/private/start"),
            ("from_start", "/private/start-listed"),
        ]
    )
    counts = stats(crawler)
    assert counts["robotstxt/forbidden"] == 12
    assert counts["robotstxt/dropped_early"] == 12  # none reached the scheduler
    for path in ("/private/fails", "/private/breaks"):
        assert f"The errback of <GET {site.url(path)}> failed" in caplog.text
    assert counts["finish_reason"] == "finished"
