"""Requests waiting for their origin's robots.txt: parked, and stop-aware.

A waiting request gives its place in CONCURRENT_REQUESTS to other origins:
only the robots.txt download holds one. A stop (a pause, a close) ends the
wait: the request goes back to the scheduler (JOBDIR keeps it) rather than
keep the stop waiting or be downloaded after it (docs/decisions.md,
"Waiting for robots.txt").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scrapy_rep.crawler.async_bridge import FetchStopped

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.crawler.access.resolver import Resolver
    from scrapy_rep.crawler.internals import Parking
    from scrapy_rep.engine.origin import Origin

__all__ = ["DecideRequest", "Waiting"]

#: Decide a request once its origin's access is known: return to pass, raise to drop.
DecideRequest = Callable[["Request", "Origin", "Access"], None]


class Waiting:
    """Wait for an origin's access on behalf of a request (docs/spec.md §8.3)."""

    def __init__(self, resolver: Resolver, parking: Parking) -> None:
        self._resolver = resolver
        self._parking = parking
        #: The first waiting request per origin (Scrapy's ``robots_parsed`` names it).
        self.triggers: dict[Origin, Request] = {}

    async def access(
        self, origin: Origin, request: Request, check: DecideRequest | None = None
    ) -> Access | None:
        """The origin's access: loaded, or fetched. None: the crawl is stopping.

        ``check``: decide the request then (a drop raises); one that passes
        waits for a place in CONCURRENT_REQUESTS again before it downloads.
        """
        parking = self._parking
        parked = parking.park(request)
        if not parked:
            parking.holding += 1
        self.triggers.setdefault(origin, request)
        try:
            access = await self._resolver.access(origin, request, parking.stop_signal)
            if parking.stopping:
                return None
            if check is not None:
                check(request, origin, access)  # a drop needs no place
                # Every origin answering at once must not overfill the places:
                # a parked request took none while it waited, nor did one
                # holding its slot in ``active`` (docs/decisions.md, "Waiting for robots.txt").
                if not await parking.place(ahead=True):
                    return None
            return access
        except FetchStopped:
            return None
        finally:
            if self.triggers.get(origin) is request:
                del self.triggers[origin]
            if parked:
                parking.unpark(request)
            else:
                parking.holding -= 1
