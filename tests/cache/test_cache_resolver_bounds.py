"""The resolver's bounds on a hand-moved clock: how far ahead it fetches, how
often a process waiting on another's fetch looks at the store, how many
parsed bodies it keeps (docs/spec.md §3.4, §3.5)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import Access, FetchKind, FetchOutcome
from scrapy_rep.cache.storage.parsed import cost
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.engine.origin import Origin, robots_url

from .test_cache_resolver import BODY, OK, A, B, ManualClock, Server, settle


@deferred_f_from_coro_f
async def test_scrapy_prefetch_of_an_origin_under_way_is_not_counted_ahead() -> None:
    """A second request of an origin whose robots.txt a first request waits
    for joins that fetch: the answer is not one fetched ahead, and takes none
    of the room the other origins have for fetching ahead."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = Resolver(server, clock=clock, max_origins=8)  # room for 4 ahead
    origins = [Origin("http", f"o{n}.example", None) for n in range(6)]
    waiting = asyncio.ensure_future(rep.access(origins[0]))
    await settle()
    rep.prefetch(origins[0])
    server.gate.set()
    await waiting
    for origin in origins[1:]:
        rep.prefetch(origin)
    await settle()
    assert server.calls == origins[:5]


@deferred_f_from_coro_f
async def test_storage_3_5_a_waiting_process_looks_at_the_store_often_then_less(
    tmp_path: Path,
) -> None:
    """Two processes on one sqlite file: the one waiting for the other's fetch
    looks at the store after 50 ms, then half as long again each time, never
    waiting more than a second between two looks (docs/storage.md)."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    asked: list[float] = []

    async def wait(seconds: float) -> None:
        asked.append(seconds)
        if len(asked) >= 12:
            server.gate.set()  # type: ignore[union-attr]
        await asyncio.sleep(0.005)  # the other process's turn, not a time rule

    stores = [await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock) for _ in range(2)]
    first, second = (
        Resolver(server, storage=store, clock=clock, sleep=wait)  # type: ignore[arg-type]
        for store in stores
    )
    try:
        fetching = asyncio.ensure_future(first.access(A))
        while not server.calls:
            await asyncio.sleep(0.005)
        waited = await asyncio.wait_for(second.access(A), 10)
        await fetching
    finally:
        await first.close()
        await second.close()
    assert len(server.calls) == 1 and not waited.allowed("/private", "bot")
    assert asked[:4] == pytest.approx([0.05, 0.075, 0.1125, 0.16875])
    assert max(asked) == 1.0 and asked[-1] == 1.0


@deferred_f_from_coro_f
async def test_spec_3_4_parsed_rules_are_kept_within_their_share_of_the_memory_budget() -> None:
    """Origins serving the same robots.txt share one parse while the parsed
    bodies fit in their share of REP_MEMORY_MAX_BYTES; past it the oldest
    body is let go, and parsed again when an origin serves it next."""
    clock = ManualClock()
    c = Origin("http", "c.example", None)

    async def crawl(budget: int) -> list[Access]:
        # Bodies of this crawl's own: the parsed ones are shared process-wide.
        one, two = (f"User-agent: *\nDisallow: /{budget}/{n}\n".encode() for n in (1, 2))
        bodies = {A: one, B: two, c: one}

        async def fetch(origin: Origin) -> FetchOutcome:
            return FetchOutcome(FetchKind.SUCCESS, robots_url(origin), clock(), 200, bodies[origin])

        rep = Resolver(fetch, clock=clock, parsed_max_bytes=budget)
        return [await rep.access(origin) for origin in (A, B, c)]

    roomy = await crawl(10 * cost(BODY))
    assert roomy[0].robots is roomy[2].robots
    tight = await crawl(cost(BODY))  # one body at a time
    assert tight[0].robots is not tight[2].robots
    assert [a.allowed(f"/{cost(BODY)}/1", "bot") for a in tight] == [False, True, False]
