"""Issue 26: each origin's pace as an atomic reservation in the store.

The pure steps (``scrapy_rep.cache.pace``) with the clock as an argument; the
memory and SQLite stores with an injected clock; Redis against a real server
on its own clock (TIME), so its tests look at the relative waits it returns.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sqlite3
from itertools import pairwise
from pathlib import Path

import pytest
from redis import asyncio as aioredis
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, RedisServer

from scrapy_rep.cache import pace
from scrapy_rep.cache.storage import MemoryStorage, open_storage
from scrapy_rep.cache.storage.fallback import FallbackStorage
from scrapy_rep.cache.storage.protocol import Pacing
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

NOW = 1_700_000_000.0
AHEAD = 3600.0
KEY = "https://site.example:443"


# --- the pure steps ------------------------------------------------------------------

EMPTY = pace.Times()


def test_pace_first_turn_is_now_and_the_next_one_interval_later() -> None:
    turn = pace.reserve(EMPTY, NOW, 2.0, AHEAD)
    assert turn == pace.Turn(0.0, pace.Times(NOW + 2.0, NOW, NOW))
    second = pace.reserve(turn.times, NOW + 0.5, 2.0, AHEAD)
    assert second.wait == pytest.approx(1.5)
    assert second.times.next_at == pytest.approx(NOW + 4.0, abs=1e-6)
    assert second.times.went_at == NOW  # it has not gone yet


def test_pace_turns_in_the_past_do_not_accumulate() -> None:
    turn = pace.reserve(pace.Times(NOW - 100, None, NOW - 101), NOW, 1.0, AHEAD)
    assert turn == pace.Turn(0.0, pace.Times(NOW + 1.0, NOW, NOW))


@pytest.mark.parametrize("stored", [NOW + 10 * 86400, math.inf, math.nan, -5.0, NOW - 1])
def test_pace_absurd_stored_times_are_clamped(stored: float) -> None:
    """A tampered key (far future, negative, not a number) costs at most max_ahead."""
    for step in (pace.reserve, pace.going):
        turn = step(pace.Times(stored, stored, stored), NOW, 1.0, AHEAD)
        assert 0.0 <= turn.wait <= AHEAD
        assert not any(math.isnan(t) or math.isinf(t) for t in turn.times[:2] if t is not None)
        assert turn.times.next_at is not None and turn.times.next_at <= NOW + AHEAD + 1.0


def test_pace_pause_holds_every_turn_and_keeps_a_longer_one() -> None:
    paused = pace.pause(EMPTY, NOW, 3.0, AHEAD)
    assert paused.wait == 3.0 and paused.times.paused_until == NOW + 3.0
    turn = pace.reserve(paused.times, NOW + 1, 0.5, AHEAD)
    assert turn.wait == pytest.approx(2.0)  # until the pause ends
    shorter = pace.pause(paused.times, NOW + 1, 1.0, AHEAD)
    assert shorter.times.paused_until == NOW + 3.0  # a shorter Retry-After does not cut it
    huge = pace.pause(EMPTY, NOW, 10 * 86400, AHEAD)
    assert huge.wait == AHEAD  # clamped


def test_pace_going_after_a_wait_sees_a_pause_begun_meanwhile() -> None:
    first = pace.reserve(EMPTY, NOW, 1.0, AHEAD)
    waited = pace.reserve(first.times, NOW, 1.0, AHEAD)  # its turn: NOW + 1
    paused = pace.pause(waited.times, NOW + 0.5, 3.0, AHEAD)
    going = pace.going(paused.times, NOW + 1, 1.0, AHEAD)
    assert going.wait == pytest.approx(2.5)  # the turn was handed out before the pause
    assert pace.going(going.times, NOW + 3.5, 1.0, AHEAD).wait == 0.0


def test_pace_a_late_request_holds_the_next_one_back() -> None:
    """Turns at NOW+1 and NOW+2 handed out; the first goes late (a busy loop,
    at NOW+1.4): the second waits until a full interval after it."""
    first = pace.reserve(EMPTY, NOW, 1.0, AHEAD)
    a = pace.reserve(first.times, NOW, 1.0, AHEAD)
    b = pace.reserve(a.times, NOW, 1.0, AHEAD)
    assert (a.wait, b.wait) == (1.0, 2.0)
    late = pace.going(b.times, NOW + 1.4, 1.0, AHEAD)
    assert late.wait == 0.0 and late.times.went_at == NOW + 1.4
    on_time = pace.going(late.times, NOW + 2.0, 1.0, AHEAD)
    assert on_time.wait == pytest.approx(0.4)
    assert pace.going(on_time.times, NOW + 2.4, 1.0, AHEAD).wait == 0.0


def test_pace_going_late_moves_the_next_turn() -> None:
    turn = pace.reserve(EMPTY, NOW, 1.0, AHEAD)
    late = pace.going(turn.times, NOW + 1.9, 1.0, AHEAD)
    assert late.wait == 0.0 and late.times.next_at == NOW + 2.9


# --- the stores with an injected clock --------------------------------------------------


async def check_store(store: Pacing, clock: FakeClock) -> None:
    assert await store.reserve(KEY, 2.0, AHEAD) == 0.0
    assert await store.reserve(KEY, 2.0, AHEAD) == pytest.approx(2.0)
    assert await store.reserve(KEY, 2.0, AHEAD) == pytest.approx(4.0)
    assert await store.reserve("https://other.example:443", 2.0, AHEAD) == 0.0  # per origin
    clock.advance(10)
    assert await store.reserve(KEY, 2.0, AHEAD) == 0.0
    assert await store.pause(KEY, 3.0, AHEAD) == pytest.approx(3.0)
    assert await store.going(KEY, 2.0, AHEAD) == pytest.approx(3.0)
    assert await store.reserve(KEY, 2.0, AHEAD) == pytest.approx(3.0)
    clock.advance(5)
    assert await store.going(KEY, 2.0, AHEAD) == 0.0


@deferred_f_from_coro_f
async def test_storage_memory_paces_with_the_injected_clock(clock: FakeClock) -> None:
    await check_store(MemoryStorage(clock=clock), clock)


@deferred_f_from_coro_f
async def test_storage_sqlite_paces_across_instances(tmp_path: Path, clock: FakeClock) -> None:
    """Two instances on one file are two processes: one pace between them."""
    path = tmp_path / "pace.sqlite3"
    first = await SqliteStorage.open(path, clock=clock)
    second = await SqliteStorage.open(path, clock=clock)
    try:
        await check_store(first, clock)
        clock.advance(100)
        assert await first.reserve(KEY, 1.0, AHEAD) == 0.0
        assert await second.reserve(KEY, 1.0, AHEAD) == pytest.approx(1.0)
        waits = await asyncio.gather(*(s.reserve(KEY, 1.0, AHEAD) for s in (first, second) * 5))
        assert sorted(waits) == pytest.approx([2.0 + n for n in range(10)])  # none shared
    finally:
        await first.close()
        await second.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_turn_counts_from_when_the_file_was_free(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A turn asked while another process holds the file is computed when the
    file is free, on the clock of then: computed from the time it was asked,
    it went 5 s later than the file said, and the next turn came at once."""
    path = tmp_path / "pace.sqlite3"
    first = await SqliteStorage.open(path, clock=clock)
    second = await SqliteStorage.open(path, clock=clock)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process writes for 5 s
        asked = asyncio.ensure_future(first.reserve(KEY, 1.0, AHEAD))
        for _ in range(5):
            await asyncio.sleep(0)  # the reservation waits for the file, in the thread
        clock.advance(5)
        other.execute("COMMIT")
        assert await asked == 0.0  # its turn: now, 5 s after it was asked
        assert await second.reserve(KEY, 1.0, AHEAD) == pytest.approx(1.0)
    finally:
        other.close()
        await first.close()
        await second.close()


async def reopened(store: SqliteStorage, caplog: pytest.LogCaptureFixture) -> bool:
    """Until ``store`` has its path open again with its turns carried over (it
    looks every 0.25 s, and says so once it is done: the path is the new file
    a moment before the turns are in it)."""
    for _ in range(200):
        if not store._file.moved() and "deleted or replaced" in caplog.text:
            return True
        await asyncio.sleep(0.025)  # waiting for the store, not a time rule
    return False


@deferred_f_from_coro_f
async def test_storage_sqlite_file_deleted_under_a_crawl_is_opened_again(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The file deleted (``rm -rf .scrapy``) while a process has it open, and
    another process opening the path: the first one notices, says so once,
    opens the path again with its turns, and the two share one pace."""
    path = tmp_path / "cache" / "pace.sqlite3"
    first = await SqliteStorage.open(path, clock=clock)
    second: SqliteStorage | None = None
    try:
        assert await first.reserve(KEY, 1.0, AHEAD) == 0.0
        for name in path.parent.iterdir():
            name.unlink()
        path.parent.rmdir()
        with caplog.at_level(logging.WARNING, logger="scrapy_rep.cache.storage.sqlite"):
            second = await SqliteStorage.open(path, clock=clock)  # a new file
            assert await reopened(first, caplog)
            assert await second.reserve(KEY, 1.0, AHEAD) == pytest.approx(1.0)  # first's turn
            assert await first.reserve(KEY, 1.0, AHEAD) == pytest.approx(2.0)
        said = [r.getMessage() for r in caplog.records if "deleted or replaced" in r.getMessage()]
        assert len(said) == 1 and str(path) in said[0]
    finally:
        await first.close()
        if second is not None:
            await second.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_tampered_pace_row_is_clamped(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = await SqliteStorage.open(tmp_path / "pace.sqlite3", clock=clock)
    try:
        await store.reserve(KEY, 1.0, AHEAD)
        await store._run(
            lambda: store._connection.db().execute(
                "UPDATE pace SET next_at = 'soon', paused_until = 1e300"
            )
        )
        assert await store.reserve(KEY, 1.0, AHEAD) == AHEAD  # not 1e300, no error
    finally:
        await store.close()


# --- Redis, on its own clock -------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_redis_paces_on_its_own_clock(redis_server: RedisServer) -> None:
    store = await RedisStorage.open(redis_server.url)
    try:
        assert await store.reserve(KEY, 2.0, AHEAD) == 0.0
        second = await store.reserve(KEY, 2.0, AHEAD)
        third = await store.reserve(KEY, 2.0, AHEAD)
        assert 1.9 <= second <= 2.0 and 3.9 <= third <= 4.0  # relative: no worker clock
        assert await store.pause(KEY, 30.0, AHEAD) == pytest.approx(30.0, abs=0.1)
        assert await store.going(KEY, 2.0, AHEAD) == pytest.approx(30.0, abs=0.1)
        assert await store.reserve(KEY, 2.0, AHEAD) == pytest.approx(30.0, abs=0.1)
        ttl = await store._client.pttl("scrapy_rep:pace:" + KEY)
        assert 0 < ttl <= 40_000  # the key expires after its last turn
    finally:
        await store.close()


@deferred_f_from_coro_f
async def test_storage_redis_tampered_pace_key_is_clamped(redis_server: RedisServer) -> None:
    store = await RedisStorage.open(redis_server.url)
    raw = aioredis.Redis.from_url(redis_server.url)
    key = "scrapy_rep:pace:" + KEY
    try:
        await raw.hset(key, mapping={"n": "99999999999999999", "p": "-5", "w": "junk"})
        assert await store.reserve(KEY, 1.0, 60.0) == pytest.approx(60.0, abs=0.01)
        await raw.hset(key, mapping={"n": "not a number", "p": "nan"})
        assert await store.reserve(KEY, 1.0, 60.0) == 0.0
        await raw.delete(key)
        await raw.set(key, "a string, not a hash")
        assert await store.reserve(KEY, 1.0, 60.0) == 0.0
        assert await raw.type(key) == b"hash"
    finally:
        await raw.aclose()
        await store.close()


@deferred_f_from_coro_f
async def test_storage_redis_down_paces_per_process_then_heals(
    redis_server: RedisServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis lost: one warning, this process's own turns (never faster); back: shared."""
    storage = await open_storage(
        "redis", redis_url=redis_server.url, clock=clock, redis_retry_interval=5
    )
    assert isinstance(storage, FallbackStorage)
    try:
        assert await storage.reserve(KEY, 2.0, AHEAD) == 0.0
        redis_server.kill()
        with caplog.at_level(logging.WARNING, logger="scrapy_rep.cache.storage.fallback"):
            # The turn Redis handed out is kept: no faster than one process.
            assert await storage.reserve(KEY, 2.0, AHEAD) == pytest.approx(2.0)
            assert await storage.reserve(KEY, 2.0, AHEAD) == pytest.approx(4.0)
        assert len(caplog.records) == 1 and "unreachable" in caplog.records[0].getMessage()
        redis_server.start()  # empty
        clock.advance(10)  # the probe is due
        assert await storage.reserve(KEY, 2.0, AHEAD) == 0.0  # Redis answers again
        assert not storage.degraded
        assert await storage.reserve(KEY, 2.0, AHEAD) > 1.9  # and keeps the turns
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_fallback_workers_take_turns_at_the_pace(clock: FakeClock) -> None:
    """Two processes, each a FallbackStorage over one shared store: their own
    turns (kept for an outage) never veto a turn the shared store gave, so
    neither loses turns to the other (they once did, forever) and the shared
    store's word holds: one request a second, every second."""
    shared = MemoryStorage(clock=clock)
    workers = [
        FallbackStorage(shared, MemoryStorage(clock=clock), name="shared", clock=clock)
        for _ in range(2)
    ]
    start = clock.now
    action = {n: ("reserve", start) for n in range(2)}
    went: list[float] = []
    while clock.now < start + 20:
        n = min(action, key=lambda k: action[k][1])
        what, at = action[n]
        clock.now = at
        step = workers[n].reserve if what == "reserve" else workers[n].going
        wait = await step(KEY, 1.0, AHEAD)
        if wait <= 0:
            went.append(clock.now)
            action[n] = ("reserve", clock.now + 0.01)  # its next request
        else:
            action[n] = ("going", clock.now + wait)
    gaps = [b - a for a, b in pairwise(went)]
    assert min(gaps) >= 1.0 - 1e-9
    assert len(went) >= 19  # at the pace: no turn lost


@deferred_f_from_coro_f
async def test_storage_fallback_own_turns_never_veto_a_shared_one(clock: FakeClock) -> None:
    """This process's own last request at t, another's at t+0.4 (the shared
    store's): the request goes at t+1.4. Asking memory after the shared store
    had said "go" (and recorded it) once made each veto the other forever."""
    shared, own = MemoryStorage(clock=clock), MemoryStorage(clock=clock)
    worker = FallbackStorage(shared, own, name="shared", clock=clock)
    t = clock.now
    own.reserve_now(KEY, 1.0, AHEAD)  # went at t (this process)
    clock.advance(0.4)
    await shared.reserve(KEY, 1.0, AHEAD)  # went at t + 0.4 (another process)
    clock.advance(0.6)
    went = None
    for _ in range(10):
        wait = await worker.going(KEY, 1.0, AHEAD)
        if wait <= 0:
            went = clock.now
            break
        clock.advance(wait)
    assert went == pytest.approx(t + 1.4, abs=1e-6)


@deferred_f_from_coro_f
async def test_storage_redis_lost_the_first_local_turn_is_an_interval_after_the_last_shared(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    """Redis gave this process a turn now and one 0.5 s ahead, then died: the
    first turn taken without it is an interval after the last one Redis gave
    (1.0 s from now), not with it or before it."""
    storage = await open_storage(
        "redis", redis_url=redis_server.url, clock=clock, redis_retry_interval=5
    )
    assert isinstance(storage, FallbackStorage)
    try:
        assert await storage.reserve(KEY, 0.5, AHEAD) == 0.0
        # Ahead by Redis's own clock: under 0.5 by however long the first call
        # took to come back, which a busy machine can stretch; only its sign matters.
        shared = await storage.reserve(KEY, 0.5, AHEAD)
        assert 0.0 < shared <= 0.5
        redis_server.kill()
        assert await storage.reserve(KEY, 0.5, AHEAD) == pytest.approx(shared + 0.5)
        assert storage.local_turns == 1
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_fallback_a_turn_given_ahead_is_not_a_request_gone(clock: FakeClock) -> None:
    """A request went at t; another was given a turn at t+0.5 (at t+0.3, by
    the shared store). When its turn comes it goes: this process's own times
    must not count the turn it was given as a request that went at t+0.3."""
    shared = MemoryStorage(clock=clock)
    worker = FallbackStorage(shared, MemoryStorage(clock=clock), name="shared", clock=clock)
    assert await worker.reserve(KEY, 0.5, AHEAD) == 0.0
    clock.advance(0.3)
    assert await worker.reserve(KEY, 0.5, AHEAD) == pytest.approx(0.2)
    clock.advance(0.2)
    assert await worker.going(KEY, 0.5, AHEAD) == 0.0
