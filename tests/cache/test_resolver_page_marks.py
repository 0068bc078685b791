"""A page that answers during an outage marks the origin's record (docs/spec.md
§2.2, "otherwise reachable"): the mark is saved for the next crawl, never over
a newer record another process saved meanwhile."""

from __future__ import annotations

from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import HOUR, OriginRecord

from .test_cache_resolver import BODY, DOWN, A, ManualClock, Server, SharedMemory, resolver


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
