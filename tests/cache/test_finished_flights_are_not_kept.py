"""A crawl of many origins keeps no flight once it has landed: what the
resolver holds stays within its bound of origins (docs/spec.md §3.4), under
asyncio's loop and under a Twisted reactor without one."""

from __future__ import annotations

import asyncio
import gc
import threading

from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.defer import Deferred

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.engine.origin import Origin, robots_url

from .test_cache_resolver import BODY, OK, ManualClock, Server, settle

BOUND = 4  # max_origins
ORIGINS = [Origin("http", f"o{n}.example", None) for n in range(40)]


def _flights_alive() -> int:
    """Flights' tasks (asyncio) still alive once garbage is collected."""
    gc.collect()
    return sum(
        1
        for thing in gc.get_objects()
        if isinstance(thing, asyncio.Task)
        and getattr(thing.get_coro(), "__qualname__", "") == "SingleFlight._run"
    )


@deferred_f_from_coro_f
async def test_a_crawl_of_many_origins_keeps_none_of_their_landed_flights() -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()  # each fetch lands a loop turn later, not at once
    rep = Resolver(server, storage=MemoryStorage(clock=clock), clock=clock, max_origins=BOUND)
    alive_before = _flights_alive()
    for origin in ORIGINS:
        asking = asyncio.ensure_future(rep.access(origin))
        await settle()
        server.gate.set()
        await asking
        server.gate.clear()
    await settle()
    assert server.calls == ORIGINS  # a flight for each
    assert not rep.busy
    assert _flights_alive() - alive_before == 0, "landed flights kept"


def test_without_an_asyncio_loop_a_crawl_of_many_origins_keeps_none_of_their_flights() -> None:
    """Under a Twisted reactor other than asyncio's a flight is a Deferred:
    the Deferreds alive after the first origins are as many after forty.
    (Run in a thread of its own: the test's thread has asyncio's loop running.)"""
    alive: list[int] = []

    def crawl_without_asyncio() -> None:
        clock = ManualClock()
        gate: list[Deferred[None]] = []  # the fetch under way's only
        fetched: list[Origin] = []

        async def held(origin: Origin) -> FetchOutcome:
            fetched.append(origin)
            gate[:] = [Deferred()]
            await gate[0]
            return FetchOutcome(FetchKind.SUCCESS, robots_url(origin), clock(), 200, BODY)

        rep = Resolver(held, storage=MemoryStorage(clock=clock), clock=clock, max_origins=BOUND)
        for number, origin in enumerate(ORIGINS):
            asking = Deferred.fromCoroutine(rep.access(origin))
            gate[0].callback(None)
            assert asking.called
            del asking
            if number in (BOUND * 2, len(ORIGINS) - 1):
                gc.collect()
                alive.append(sum(1 for thing in gc.get_objects() if isinstance(thing, Deferred)))
        alive.append(len(fetched))

    thread = threading.Thread(target=crawl_without_asyncio)
    thread.start()
    thread.join(10)
    assert len(alive) == 3 and alive[2] == len(ORIGINS)  # the crawl ran, a fetch per origin
    assert alive[1] - alive[0] <= BOUND, f"{alive[1] - alive[0]} more Deferreds kept"
