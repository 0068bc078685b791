"""Robots-aware scheduling: a spider middleware in front of the scheduler.

The downloader middleware stays the authority and checks every request when
it is downloaded. This one sees each request the spider yields, before the
scheduler does:

- a request whose origin already has a verdict that forbids it is dropped
  there (same exception, log line, signal and stats as in the downloader,
  plus ``robotstxt/dropped_early``), so the scheduler, JOBDIR's disk queues
  and scrapy-redis's shared queue never hold URLs that will be dropped; the
  request's errback is called as for any drop;
- the first request of an origin nobody has asked about starts that origin's
  robots.txt fetch at once, so the verdict is usually known before the
  request leaves the scheduler.

It never delays, reorders or loses a request it does not drop, and starts a
robots.txt fetch only for a request the downloader would check: not one that
Scrapy's offsite filter will drop.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from typing import TYPE_CHECKING, Any

from scrapy.downloadermiddlewares.offsite import OffsiteMiddleware
from scrapy.http import Request
from twisted.python.failure import Failure

from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
from scrapy_rep.crawler.reporting import Drop

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

__all__ = ["RobotsTxtSpiderMiddleware"]

logger = logging.getLogger(__name__)


class RobotsTxtSpiderMiddleware:
    """Drop known-forbidden requests before the scheduler; fetch robots.txt early."""

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        # Found once the engine exists (every request would look them up).
        self._rep: RobotsTxtMiddleware | None = None
        self._offsite_filter: OffsiteMiddleware | None = None
        self._looked_up = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # Every request the spider yields passes here: the pass-through path makes
    # no generator of its own per item (an async generator costs far more
    # than the check); only a dropped request's errback output gets one.
    # Only the asynchronous form exists: Scrapy from 2.18 on (the floor,
    # docs/development.md) hands every spider middleware an async iterable and
    # refuses a synchronous-only one, so a plain-iterator twin is never called.

    def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        return self.process_spider_output(None, start)

    async def process_spider_output(
        self, response: Response | None, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        async for item in result:
            drop = self._early(item) if isinstance(item, Request) else None
            if drop is None:
                yield item
                continue
            self._announce(drop, item)
            if item.errback is not None:  # what it gives takes the request's place
                async for produced in _errback_outputs(drop, item, item.errback):
                    yield produced

    def _announce(self, drop: Drop, request: Request) -> None:
        middleware = self._middleware()
        assert middleware is not None
        middleware.announce_early(drop, request)

    def _early(self, request: Request) -> Drop | None:
        middleware = self._middleware()
        if middleware is None or self._offsite(request):
            return None
        return middleware.early(request)

    def _middleware(self) -> RobotsTxtMiddleware | None:
        if not self._looked_up and self._crawler.engine is not None:
            self._looked_up = True
            self._rep = self._crawler.get_downloader_middleware(RobotsTxtMiddleware)
            self._offsite_filter = self._crawler.get_downloader_middleware(OffsiteMiddleware)
        return self._rep

    def _offsite(self, request: Request) -> bool:
        """Would Scrapy's offsite filter drop it? Then it is none of our business."""
        if request.dont_filter or request.meta.get("allow_offsite"):
            return False
        offsite = self._offsite_filter
        spider = self._crawler.spider
        if offsite is None or spider is None:
            return False
        if type(offsite) is OffsiteMiddleware and not getattr(spider, "allowed_domains", None):
            return False  # Scrapy's own filter follows everything then: skip its URL parsing
        return not offsite.should_follow(request, spider)


async def _errback_outputs(
    drop: Drop, request: Request, errback: Callable[[Failure], Any]
) -> AsyncIterator[Any]:
    """What a dropped request's errback gives (a failing errback is logged)."""
    try:
        async for produced in _outputs(errback(_failure(drop, request))):
            yield produced
    except Exception:
        logger.exception("The errback of %s failed", request)


def _failure(drop: Drop, request: Request) -> Failure:
    """The failure an errback gets for a drop, as Scrapy makes it (``.request`` set)."""
    failure = Failure(drop.error)  # type: ignore[no-untyped-call]
    failure.request = request  # type: ignore[attr-defined]
    return failure


async def _outputs(result: object) -> AsyncIterator[Any]:
    """What an errback gave: None, one object, or a (async) iterable of them."""
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        return
    if hasattr(result, "__aiter__"):
        async for item in result:
            yield item
    elif isinstance(result, Iterable) and not isinstance(result, (str, bytes, dict)):
        for item in result:
            yield item
    else:
        yield result
