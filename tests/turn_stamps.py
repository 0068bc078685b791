"""When each paced request's turn was given and when it left, stamped in the
process that sent it (``distributed/pace_worker.py``, or the test's own
crawl), for the pace tests.

The site stamps a request when its thread reads it: on a loaded machine that
can be 0.3 s after the worker sent it, late for one request and not the
next, so a gap at the site says little about the pace. What the pace
controls is in the worker: the store hands an origin's turns out at least
``interval`` apart by its clock (``scrapy_rep.cache.pace``), each inside
one call to the store, and the request leaves (Scrapy's
``request_reached_downloader``) right after its turn. Both ends are stamped
on ``time.monotonic()``, one clock for every process of the machine.

A turn's *window* runs from the moment the call that gave it was made to
the moment its request left: the store gave the turn inside it. Two turns of
one origin given ``interval`` apart have windows whose far ends are at least
``interval`` apart, however late a busy process ran (``spaced``): load
widens windows, it cannot bring two turns closer.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from itertools import combinations, pairwise
from typing import Any, NamedTuple


class Turn(NamedTuple):
    origin: str
    path: str
    asked: float  # the call to the store that gave the turn was made
    given: float  # ... and came back
    left: float  # the request left for Scrapy's downloader


class TurnStamps:
    """Worker side: records turns given by the store and requests leaving."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, str, float, float]] = []

    def install(self, crawler: Any, patch: Callable[[Any, str, Any], None] = setattr) -> None:
        """Wraps ``PaceStore``'s two calls that give turns (``patch``: a test's
        ``monkeypatch.setattr``, to undo it after the test; a worker process
        keeps it) and listens for requests reaching Scrapy's downloader."""
        from scrapy import signals

        from scrapy_rep.crawler.pace.turn_store import PaceStore

        for name in ("reserve", "going"):
            patch(PaceStore, name, self._stamped(getattr(PaceStore, name), name))
        crawler.signals.connect(self._left, signal=signals.request_reached_downloader)

    def _stamped(
        self, call: Callable[..., Awaitable[float]], name: str
    ) -> Callable[..., Awaitable[float]]:
        async def stamped(store: object, origin: object, interval: float) -> float:
            asked = time.monotonic()
            wait = await call(store, origin, interval)
            # A turn: the store counted the request as gone now. ``going`` with
            # no interval only marks a turn it gave already as gone again.
            if wait <= 0 and (name == "reserve" or interval > 0):
                self._events.append(("given", str(origin), "", asked, time.monotonic()))
            return wait

        return stamped

    def _left(self, request: Any, spider: Any = None) -> None:
        from scrapy_rep.engine.origin import origin_of

        origin = origin_of(request.url)
        path = request.url.split("/", 3)[-1]
        if origin is not None and not path.startswith("robots.txt"):
            self._events.append(("left", str(origin), "/" + path, time.monotonic(), 0.0))

    def turns(self) -> list[list[Any]]:
        """Each request that left after a turn, with its turn: an origin's
        requests take their turns one at a time in a process (in line), so
        its turns and departures pair up in order."""
        given: dict[str, list[tuple[float, float]]] = {}
        found: list[list[Any]] = []
        for kind, origin, path, at, done in self._events:
            if kind == "given":
                given.setdefault(origin, []).append((at, done))
            elif given.get(origin):
                asked, came = given[origin].pop(0)
                found.append([origin, path, asked, came, at])
        return found


# --- test side ---------------------------------------------------------------------


def turns_of(reports: list[dict[str, Any]]) -> list[Turn]:
    return [Turn(*turn) for report in reports for turn in report["turns"]]


def by_origin(turns: list[Turn]) -> dict[str, list[Turn]]:
    found: dict[str, list[Turn]] = {}
    for turn in sorted(turns, key=lambda t: t.left):
        found.setdefault(turn.origin, []).append(turn)
    return found


def too_close(turns: list[Turn], interval: float) -> list[tuple[Turn, Turn]]:
    """Pairs of one origin's turns that cannot have been given ``interval``
    apart: both windows' far ends closer than that (empty: the pace held)."""
    return [
        (a, b)
        for same in by_origin(turns).values()
        for a, b in combinations(same, 2)
        if max(b.left - a.asked, a.left - b.asked) < interval
    ]


def left_gaps(turns: list[Turn]) -> list[float]:
    """Seconds between two requests of one origin leaving their workers."""
    return [
        later.left - earlier.left
        for same in by_origin(turns).values()
        for earlier, later in pairwise(same)
    ]
