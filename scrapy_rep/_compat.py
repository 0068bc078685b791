"""Every reach into Scrapy beyond its documented API, in one place.

Each helper degrades to doing nothing (and says so by its return value) when
Scrapy's internals look different, so a Scrapy upgrade cannot break a crawl
through this module; it can only lose the optimisation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from scrapy.settings import BaseSettings

BUILTIN_ROBOTSTXT: Final = "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"


def builtin_robotstxt_enabled(settings: BaseSettings) -> bool:
    """Would Scrapy's own RobotsTxtMiddleware run for these settings?"""
    if not settings.getbool("ROBOTSTXT_OBEY"):
        return False  # it raises NotConfigured then
    builtin = load_object(BUILTIN_ROBOTSTXT)
    for component in build_component_list(settings.getwithbase("DOWNLOADER_MIDDLEWARES")):
        cls = load_object(component) if isinstance(component, str) else component
        if isinstance(cls, type) and issubclass(cls, builtin):
            return True
    return False


def unplug_builtin_robotstxt(crawler: Crawler) -> bool:
    """Take the built-in middleware's ``process_request`` out of the chain.

    Returns False if it could not be found (nothing was changed).
    """
    builtin = load_object(BUILTIN_ROBOTSTXT)
    manager = getattr(getattr(crawler.engine, "downloader", None), "middleware", None)
    methods = getattr(manager, "methods", {}).get("process_request")
    if methods is None:
        return False
    found = [m for m in methods if isinstance(getattr(m, "__self__", None), builtin)]
    for method in found:
        methods.remove(method)
    return bool(found)


class Parking:
    """Let requests that wait for a robots.txt not count against CONCURRENT_REQUESTS.

    A request waiting in a downloader middleware sits in the downloader's
    ``active`` set, and the engine stops scheduling when that set is full: a
    dozen requests for one origin with a hanging robots.txt would stall every
    other origin until the timeout. Parking takes such a request out of
    ``active`` while it waits and puts it back before it moves on.

    Only requests that follow a fetch already under way are parked (the first
    request of an origin keeps its slot, so robots.txt fetches stay within
    CONCURRENT_REQUESTS), and at most ``PARKED_PER_SLOT`` times
    CONCURRENT_REQUESTS of them, so the scheduler is not emptied into memory.
    """

    PARKED_PER_SLOT: Final = 10

    def __init__(self, crawler: Crawler) -> None:
        self._crawler = crawler
        self.count = 0

    def park(self, request: Request) -> bool:
        active = self._active()
        downloader = getattr(self._crawler.engine, "downloader", None)
        limit = getattr(downloader, "total_concurrency", 0) * self.PARKED_PER_SLOT
        if active is None or request not in active or not limit or self.count >= limit:
            return False
        active.discard(request)
        self.count += 1
        self.wake_engine()
        return True

    def unpark(self, request: Request) -> None:
        active = self._active()
        if active is not None:
            active.add(request)
        self.count -= 1

    def _active(self) -> set[Any] | None:
        active = getattr(getattr(self._crawler.engine, "downloader", None), "active", None)
        return active if isinstance(active, set) else None

    def wake_engine(self) -> None:
        """Let the engine look at its slots (and idleness) now, not at its next heartbeat."""
        slot = getattr(self._crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        schedule = getattr(nextcall, "schedule", None)
        if callable(schedule):
            schedule()
