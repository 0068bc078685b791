"""Where a request waiting for its turn stands (docs/politeness.md): its
place in CONCURRENT_REQUESTS, and its origin's line.

A request that waits gives its place up (``Seat.leave``: parked, as
requests waiting for robots.txt are) and takes one again before it goes
(``Seat.sit``). The store's last word on its turn comes after that, so a
turn is never spent while the request still waits for a place: the gap to
the next request of its origin counts from when it really went.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_rep.crawler.internals import Parking

__all__ = ["Lead", "Seat"]


class _Where(Enum):
    SEATED = "seated"  # in the downloader's ``active`` set, counted as a place
    PARKED = "parked"  # out of ``active``: holds no place
    HOLDING = "holding"  # in ``active`` (no room to park it), not counted as a place


class Seat:
    """A waiting request's place: given up while it waits, taken before it goes."""

    __slots__ = ("_parking", "_request", "_where")

    def __init__(self, parking: Parking, request: Request) -> None:
        self._parking = parking
        self._request = request
        self._where = _Where.SEATED

    @property
    def seated(self) -> bool:
        return self._where is _Where.SEATED

    def leave(self) -> None:
        """Hold no place while waiting: other origins keep the downloader busy."""
        if self._where is not _Where.SEATED:
            return
        if self._parking.park(self._request):
            self._where = _Where.PARKED
        else:
            self._parking.holding += 1
            self._where = _Where.HOLDING

    def take_free(self) -> bool:
        """Seated already, or seated now in a place free this moment (no wait)."""
        if self._where is not _Where.SEATED and self._parking.free_place():
            self.finish()
        return self._where is _Where.SEATED

    async def sit(self) -> bool:
        """A place again, once one is free; False: the crawl is stopping."""
        if self._where is _Where.SEATED:
            return True
        if not await self._parking.place(ahead=True):
            return False
        self.finish()  # at once: the place is this request's from here
        return True

    def finish(self) -> None:
        """Back in ``active``, as the downloader expects it, whatever happened."""
        if self._where is _Where.PARKED:
            self._parking.unpark(self._request)
        elif self._where is _Where.HOLDING:
            self._parking.holding -= 1
        self._where = _Where.SEATED


class Lead:
    """The head of an origin's line: leaves it once, whichever path sees it go."""

    __slots__ = ("_leave", "head", "lined")

    def __init__(self, leave: Callable[[], None], lined: bool) -> None:
        self._leave: Callable[[], None] | None = leave
        #: The origin has a crawl-delay: its requests go one at a time, in line.
        self.lined = lined
        #: This request leads its line (False while it waits behind another).
        self.head = lined

    def leave(self) -> None:
        leave, self._leave = self._leave, None
        if leave is not None and self.head:
            leave()
