"""A page that answers during an outage marks the origin's record (docs/spec.md
§2.2, "otherwise reachable"): the mark is saved for the next crawl, never over
a newer record another process saved meanwhile, nor lost while a retry's
record is being saved."""

from __future__ import annotations

import asyncio

from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import HOUR, OriginRecord

from .test_cache_resolver import BODY, DOWN, A, ManualClock, Server, SharedMemory, resolver, settle


@deferred_f_from_coro_f
async def test_a_page_answering_during_an_outage_is_saved_for_the_next_crawl() -> None:
    clock = ManualClock()
    store = SharedMemory(clock=clock)
    rep = resolver(Server(clock, DOWN), clock, store, unreachable_wait=0)
    await rep.access(A)  # the outage starts
    clock.now += 60
    await rep.site_answered(A)
    stored = await store.get(str(A))
    assert stored is not None and stored.in_outage and stored.site_reachable_at == clock.now


@deferred_f_from_coro_f
async def test_a_page_answering_during_an_outage_leaves_another_processs_newer_record() -> None:
    clock = ManualClock()
    store = SharedMemory(clock=clock)
    rep = resolver(Server(clock, DOWN), clock, store, unreachable_wait=0)
    await rep.access(A)  # the outage starts, as this process knows it
    clock.now += 60
    newer = OriginRecord(
        FetchKind.SUCCESS, 200, "HTTP 200", clock.now, clock.now + 24 * HOUR, BODY, clock.now, 200
    )
    await store.put(str(A), newer, 24 * HOUR)  # another process's fetch ended it
    clock.now += 1
    await rep.site_answered(A)
    assert await store.get(str(A)) == newer


class HeldWrites(SharedMemory):
    """A shared store whose next write can be held, as a network holds it."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock=clock)
        self.hold_next: asyncio.Event | None = None
        self.holding = asyncio.Event()

    async def put(self, key: str, record: OriginRecord, ttl: float) -> None:
        hold, self.hold_next = self.hold_next, None
        if hold is not None:
            self.holding.set()
            await hold.wait()
        await super().put(key, record, ttl)


@deferred_f_from_coro_f
async def test_a_page_answering_while_a_retrys_record_is_being_saved_keeps_its_mark() -> None:
    clock = ManualClock()
    store = HeldWrites(clock)
    server = Server(clock, DOWN)
    rep = resolver(server, clock, store, unreachable_wait=0)
    await rep.access(A)  # the outage starts
    clock.now += 13 * HOUR  # robots.txt is asked again first
    release = store.hold_next = asyncio.Event()
    asking = asyncio.ensure_future(rep.access(A))
    await asyncio.wait_for(store.holding.wait(), 10)  # it failed again; its record is being saved
    await rep.site_answered(A)
    release.set()
    await asking
    await settle()
    stored = await store.get(str(A))
    assert stored is not None and stored.failures == 2 and stored.site_reachable_at == clock.now
