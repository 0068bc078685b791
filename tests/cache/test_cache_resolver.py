"""The resolver on a hand-moved clock: storage -> policy -> access, without Scrapy."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import HOUR, OriginRecord, PolicyConfig
from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.engine.origin import Origin, robots_url

T0 = 1_700_000_000.0
A = Origin("http", "a.example", None)
B = Origin("http", "b.example", None)
BODY = b"User-agent: *\nDisallow: /private\n"


class ManualClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Server:
    """A fetch that answers from a script of outcomes and can be held open."""

    def __init__(self, clock: ManualClock, *answers: tuple[FetchKind, int, bytes]) -> None:
        self.clock = clock
        self.answers = list(answers)
        self.calls: list[Origin] = []
        self.gate: asyncio.Event | None = None

    async def __call__(self, origin: Origin) -> FetchOutcome:
        self.calls.append(origin)
        if self.gate is not None:
            await self.gate.wait()
        kind, status, body = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return FetchOutcome(
            kind, robots_url(origin), self.clock(), status, body, reason=f"HTTP {status}"
        )


OK = (FetchKind.SUCCESS, 200, BODY)
DOWN = (FetchKind.UNREACHABLE, 503, b"")


def resolver(
    fetch: Callable[[Origin], object],
    clock: ManualClock,
    storage: MemoryStorage | None = None,
    counts: list[str] | None = None,
    **policy: float,
) -> Resolver:
    return Resolver(
        fetch,  # type: ignore[arg-type]
        storage=storage if storage is not None else MemoryStorage(clock=clock),
        policy=PolicyConfig(retry_jitter=0, **policy),  # type: ignore[arg-type]
        clock=clock,
        count=(counts.append if counts is not None else None),
        random=lambda: 0.0,
    )


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


@deferred_f_from_coro_f
async def test_cache_3_1_fresh_hit_then_expired_refetch() -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    counts: list[str] = []
    rep = resolver(server, clock, counts=counts)
    first = await rep.access(A)
    clock.now += 23 * HOUR
    assert await rep.access(A) is first  # same Access object: nothing changed
    assert rep.current(A) is first
    clock.now += 2 * HOUR
    refreshed = await rep.access(A)
    assert len(server.calls) == 2
    assert refreshed is not first and refreshed.robots is first.robots  # same body, one parse
    assert counts == ["miss", "hit", "hit", "expired"]


@deferred_f_from_coro_f
async def test_cache_3_1_per_request_shortcut_never_outlives_its_record() -> None:
    """A busy origin's requests reuse an answer for a moment (the lifecycle's reused answer):
    a new record applies to the very next request, an expiry within a second."""
    clock = ManualClock()
    server = Server(clock, OK)
    counts: list[str] = []
    rep = resolver(server, clock, counts=counts)
    first = await rep.access(A)
    assert rep.current(A) is first and rep.peek(A) is first and rep.current(A) is first
    closed = b"User-agent: *\nDisallow: /\n"
    clock.now += 0.25  # still within the shortcut's second; a newer answer arrives
    assert await rep.seed(A, FetchOutcome(FetchKind.SUCCESS, robots_url(A), clock(), 200, closed))
    assert rep.current(A) is None  # not the shortcut's old answer: settle the new record
    newer = await rep.access(A)
    assert not newer.allowed("/", "bot") and rep.current(A) is newer
    clock.now += 24 * HOUR - 0.5  # half a second before the new record expires
    assert rep.current(A) is newer
    clock.now += 1.0
    assert rep.current(A) is None and rep.peek(A) is None  # expired: fetch again
    assert counts == ["miss", "hit", "hit", "hit", "hit", "hit"]


@deferred_f_from_coro_f
async def test_scrapy_prefetch_goes_no_further_ahead_than_memory_keeps() -> None:
    """Issue 14 §3's early fetches stop at half the in-process LRU, counting
    the answers fetched and not yet asked for: one fetched further ahead would
    be evicted before its requests came, and fetched again. The others are
    fetched when their requests come."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = Resolver(server, clock=clock, max_origins=8)  # room for 4 ahead
    origins = [Origin("http", f"o{n}.example", None) for n in range(10)]
    for origin in origins:
        rep.prefetch(origin)
    await settle()
    assert server.calls == origins[:4]
    server.gate.set()
    await settle()
    rep.prefetch(origins[4])  # landed but not asked for: still ahead
    await settle()
    assert server.calls == origins[:4]
    await rep.access(origins[0])
    rep.prefetch(origins[4])  # one was asked for: room again
    await settle()
    assert server.calls == origins[:5]
    assert all(rep.peek(origin) is not None for origin in origins[:5])


@deferred_f_from_coro_f
async def test_scrapy_prefetch_leaves_room_for_the_answers_requests_wait_for() -> None:
    """The answers of fetches that requests wait for need keeping as much as
    those fetched ahead: with as many under way as the room, none goes ahead."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = Resolver(server, clock=clock, max_origins=8)  # room for 4
    origins = [Origin("http", f"o{n}.example", None) for n in range(6)]
    waiting = [asyncio.ensure_future(rep.access(origin)) for origin in origins[:4]]
    await settle()
    rep.prefetch(origins[4])
    await settle()
    assert server.calls == origins[:4]
    server.gate.set()
    await asyncio.gather(*waiting)
    rep.prefetch(origins[4])
    await settle()
    assert server.calls == origins[:5]


@deferred_f_from_coro_f
async def test_scrapy_prefetch_first_burst_fits_the_byte_budget() -> None:
    """Before any robots.txt is known each may be as big as the parse limit:
    the crawl's first burst fetches ahead only what the byte budget holds
    (a CI run fetched 680 for 400 origins when it assumed them small)."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = Resolver(server, clock=clock, max_origins=10_000, max_bytes=4 * 2**20)
    origins = [Origin("http", f"o{n}.example", None) for n in range(40)]
    for origin in origins[:20]:
        rep.prefetch(origin)
    await settle()
    assert server.calls == origins[:4]  # 4 MiB holds 8 bodies of 512,000 bytes
    server.gate.set()
    await settle()
    for origin in origins[:4]:
        await rep.access(origin)
    for origin in origins[4:]:  # the small bodies seen since: much more room
        rep.prefetch(origin)
    await settle()
    assert server.calls == origins


@deferred_f_from_coro_f
async def test_spec_3_4_the_byte_budget_counts_robots_txt_bytes_only() -> None:
    """Issue 28: a kilobyte counted per origin besides its body held a 32 MiB
    budget to ~30,000 origins, and a breadth-first crawl past that evicted each
    answer just before its origin's second page. 2,000 small answers fit in
    1 MiB (they did not: about 900 did), and the body the record and the fetch
    share counts once."""
    clock = ManualClock()
    server = Server(clock, *[OK] * 2_000)
    rep = Resolver(server, clock=clock, max_origins=100_000, max_bytes=2**20)
    origins = [Origin("http", f"o{n}.example", None) for n in range(2_000)]
    for origin in origins:
        await rep.access(origin)
    assert all(rep.peek(origin) is not None for origin in origins)
    assert rep._known_origins.bytes == 2_000 * len(BODY)
    assert len(server.calls) == 2_000


@deferred_f_from_coro_f
async def test_status_5xx_outage_drops_at_once_and_retries_in_the_background() -> None:
    """docs/spec.md §2.2: during an outage nobody waits; retries follow the back-off."""
    clock = ManualClock()
    server = Server(clock, DOWN)
    counts: list[str] = []
    rep = resolver(server, clock, counts=counts, unreachable_wait=0)
    closed = await rep.access(A)
    assert closed.state is AccessState.CLOSED and len(server.calls) == 1
    clock.now += 1  # the next retry is 2 s after the 503
    assert rep.current(A) is closed and len(server.calls) == 1
    clock.now += 1.5
    server.gate = asyncio.Event()
    assert rep.current(A) is closed  # answered now; the retry runs meanwhile
    await settle()
    assert len(server.calls) == 2 and rep.pending(A)
    server.answers = [OK]
    server.gate.set()
    await settle()
    assert not rep.pending(A)
    assert (await rep.access(A)).state is AccessState.RULES  # the retry succeeded
    assert counts.count("requests_in_outage/closed") == 3


@deferred_f_from_coro_f
async def test_status_5xx_page_answer_during_a_retry_is_not_lost() -> None:
    """docs/spec.md §2.2's "otherwise reachable": a page that answers while a background
    retry of robots.txt is under way keeps its mark when the retry lands."""
    clock = ManualClock()
    server = Server(clock, DOWN)
    rep = resolver(server, clock, unreachable_wait=0)
    await rep.access(A)  # the outage starts
    clock.now += 13 * HOUR  # past the first 12 hours: robots.txt is asked again first
    server.gate = asyncio.Event()
    asking = asyncio.ensure_future(rep.access(A))  # waits for that fetch
    await settle()
    assert rep.pending(A) and not asking.done()
    await rep.site_answered(A)  # a page of A answered meanwhile
    server.gate.set()
    await settle()
    assert (await asking).state is AccessState.ALLOW_ALL  # it failed again; no copy: allowed
    assert not rep.pending(A) and len(server.calls) == 2
    record = rep.record(A)
    assert record is not None and record.failures == 2
    assert record.site_reachable_at == clock.now
    assert await rep.storage.get(str(A)) == record  # and it is what the store keeps


class SlowLoads(MemoryStorage):
    """A store whose next read can be held open, as a thread or a network holds it."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__(clock=clock)
        self.hold_next: asyncio.Event | None = None

    async def get(self, key: str) -> OriginRecord | None:
        found = await super().get(key)
        hold, self.hold_next = self.hold_next, None
        if hold is not None:
            await hold.wait()
        return found


@deferred_f_from_coro_f
async def test_status_5xx_page_answer_never_overwrites_the_fetch_that_ended_a_outage() -> None:
    """A page answers during an outage while the robots.txt fetch that ends it is
    under way, and the page's store read is slow: the fetch's record stays in
    the store, not the outage's with the page's mark (the next crawl would
    fetch robots.txt again)."""
    clock = ManualClock()
    server = Server(clock, DOWN)
    store = SlowLoads(clock)
    rep = resolver(server, clock, store, unreachable_wait=0)
    await rep.access(A)  # the outage starts
    clock.now += 13 * HOUR
    server.answers = [OK]
    server.gate = asyncio.Event()
    # past the first 12 hours: robots.txt is asked again, and waits at the server
    asking = asyncio.ensure_future(rep.access(A))
    await settle()
    assert rep.pending(A)
    release = store.hold_next = asyncio.Event()
    answered = asyncio.ensure_future(rep.site_answered(A))
    await settle()
    server.gate.set()  # the fetch succeeds meanwhile
    await settle()
    release.set()
    await answered
    assert (await asking).state is AccessState.RULES
    await settle()
    assert not rep.pending(A)
    stored = await store.get(str(A))
    assert stored is not None and not stored.in_outage  # the fetch's, not the outage's


class SharedMemory(MemoryStorage):
    """A memory store that two resolvers share, as processes share SQLite or
    Redis (a crawl's own memory store is its own: it skips the store's lock)."""


@deferred_f_from_coro_f
async def test_storage_3_5_two_resolvers_sharing_a_store_fetch_once() -> None:
    """Two processes (two resolvers, one store): the lock makes one fetch."""
    clock = ManualClock()
    store = SharedMemory(clock=clock)
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    first, second = resolver(server, clock, store), resolver(server, clock, store)
    waiting = [asyncio.ensure_future(r.access(A)) for r in (first, second, first, second)]
    await settle()
    assert len(server.calls) == 1 and not any(w.done() for w in waiting)
    server.gate.set()
    accesses = await asyncio.gather(*waiting)
    assert len(server.calls) == 1
    assert all(not a.allowed("/private", "bot") and a.allowed("/", "bot") for a in accesses)


@deferred_f_from_coro_f
async def test_cache_3_4_record_from_the_store_is_used_and_parsed_once() -> None:
    """A record another process stored: no fetch; equal bodies share one parse."""
    clock = ManualClock()
    store = MemoryStorage(clock=clock)
    record = OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", T0, T0 + HOUR, BODY, T0, 200)
    await store.put(str(A), record, HOUR)
    await store.put(str(B), record, HOUR)
    server = Server(clock, OK)
    rep = resolver(server, clock, store)
    a, b = await rep.access(A), await rep.access(B)
    assert server.calls == []
    assert a.robots is not None and a.robots is b.robots
    replay = rep.last_answer(A)
    assert replay is not None and (replay.status, replay.body) == (200, BODY)


@deferred_f_from_coro_f
async def test_cache_3_2_no_store_record_without_body_is_fetched_again() -> None:
    clock = ManualClock()
    store = MemoryStorage(clock=clock)
    stored = OriginRecord.from_bytes(
        OriginRecord(
            FetchKind.SUCCESS, 200, "HTTP 200", T0, T0 + 60, BODY, T0, 200, no_store=True
        ).to_bytes()
    )
    assert stored.good_body is None  # what sqlite or Redis give back
    await store.put(str(A), stored, HOUR)
    server = Server(clock, OK)
    access = await resolver(server, clock, store).access(A)
    assert len(server.calls) == 1 and not access.allowed("/private", "bot")


class BrokenStore(MemoryStorage):
    async def get(self, key: str) -> OriginRecord | None:
        raise RuntimeError("disk on fire")

    async def lock(self, key: str, ttl: float) -> bool:
        raise RuntimeError("disk on fire")


@deferred_f_from_coro_f
async def test_storage_errors_cost_sharing_never_a_verdict(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    rep = resolver(server, clock, BrokenStore(clock=clock))
    with caplog.at_level(logging.WARNING, "scrapy_rep.crawler.access.resolver"):
        accesses: list[Access] = [await rep.access(origin) for origin in (A, B, A)]
    assert [a.allowed("/private", "bot") for a in accesses] == [False] * 3
    assert len(server.calls) == 2
    assert len(caplog.records) == 1 and "disk on fire" in caplog.records[0].getMessage()


@deferred_f_from_coro_f
async def test_storage_3_5_waiting_on_another_process_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two processes (two resolvers, one sqlite file): the second waits for the
    first's fetches, saying so at INFO the first time, then at DEBUG."""
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    path = tmp_path / "robots.sqlite3"

    async def poll(_: float) -> None:
        await asyncio.sleep(0.005)  # polling the other process's result, not a time rule

    stores = [await SqliteStorage.open(path, clock=clock) for _ in range(2)]
    first, second = (
        Resolver(server, storage=store, clock=clock, sleep=poll)  # type: ignore[arg-type]
        for store in stores
    )

    async def until(done: Callable[[], bool]) -> None:
        while not done():
            await poll(0)

    def told() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "Another process" in r.getMessage()]

    caplog.set_level(logging.DEBUG, "scrapy_rep.crawler.access.resolver")
    try:
        fetching = [asyncio.ensure_future(first.access(origin)) for origin in (A, B)]
        await asyncio.wait_for(until(lambda: len(server.calls) == 2), 10)
        waiting = [asyncio.ensure_future(second.access(origin)) for origin in (A, B)]
        await asyncio.wait_for(until(lambda: len(told()) == 2), 10)
        assert not any(task.done() for task in fetching + waiting)
        server.gate.set()
        accesses = await asyncio.gather(*fetching, *waiting)
    finally:
        await first.close()
        await second.close()
    assert len(server.calls) == 2
    assert all(not access.allowed("/private", "bot") for access in accesses)
    assert [r.levelno for r in told()] == [logging.INFO, logging.DEBUG]
    assert str(A) in told()[0].getMessage() and str(B) in told()[1].getMessage()
