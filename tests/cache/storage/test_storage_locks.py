"""Issue 13 §4, docs/spec.md §3.5: the fetch lock is a short lease, renewed while its
holder lives, checked against its owner, freed by a dead holder, released on
close, and never waited on without a bound.

Time rules run on injected clocks and renewal timers; Redis runs for real (its
expiry is the server's clock: the tests read PTTL, or shorten it, never wait).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from redis import asyncio as aioredis
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import ROOT, WORKER, FakeClock, RedisServer, another_process

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import LOCK_TTL, open_storage, single_flight
from scrapy_rep.cache.storage.leases import holder_gone, new_token
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

KEY = "https://new.example:443"
LOCK_KEY = f"t:lock:{KEY}"
TTL = 12.0


def sample(at: float = 1_700_000_000.0) -> OriginRecord:
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", at, at + 86400, b"", at, 200)


async def within(seconds: float, awaitable: Awaitable[Any]) -> Any:
    """Fail instead of hanging when the code waits for something that never comes."""
    return await asyncio.wait_for(awaitable, seconds)


class Ticks:
    """The renewal timer, stepped by the test; each step moves ``clock`` on."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.clock = clock
        self.asked: list[float] = []
        self.released = 0  # sleeps let end so far
        self._go: asyncio.Queue[None] = asyncio.Queue()
        self._waiting = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        self._waiting.set()
        await self._go.get()
        if self.clock is not None:
            self.clock.advance(seconds)

    def let_one_end(self) -> None:
        self.released += 1
        self._go.put_nowait(None)

    async def tick(self) -> None:
        """Let the next sleep end once it is asked, and wait until the renewal
        ran and sleeps again (however long the renewal's trip takes)."""
        await self._asked(self.released + 1)
        self.let_one_end()
        await self._asked(self.released + 1)

    async def _asked(self, count: int) -> None:
        while len(self.asked) < count:
            self._waiting.clear()
            await within(10, self._waiting.wait())


# --- renewal -----------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_lock_renewed_while_held(tmp_path: Path, clock: FakeClock) -> None:
    """Held for ten renewals (over three TTLs of time): nobody else gets it; then
    released, it is free at once and the renewals stop."""
    ticks = Ticks(clock)
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock, sleep=ticks)
    other = await SqliteStorage.open(path, clock=clock)
    try:
        assert await holder.lock(KEY, TTL)
        for _ in range(10):
            await ticks.tick()
            assert not await other.lock(KEY, TTL)
        assert ticks.asked == [TTL / 3] * 11
        await holder.release(KEY)
        assert await other.lock(KEY, TTL)
        ticks.let_one_end()
        await asyncio.sleep(0)
        assert len(ticks.asked) == 11  # no renewal after the release
    finally:
        await holder.close()
        await other.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_lock_not_renewed_lapses_in_one_ttl(
    tmp_path: Path, clock: FakeClock
) -> None:
    """What a killed holder leaves: a lock that lapses after one TTL."""
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))  # never ticks
    other = await SqliteStorage.open(path, clock=clock)
    try:
        assert await holder.lock(KEY, TTL)
        clock.advance(TTL - 0.1)
        assert not await other.lock(KEY, TTL)
        clock.advance(0.1)
        assert await other.lock(KEY, TTL)
    finally:
        await holder.close()
        await other.close()


async def redis_pair(server: RedisServer, ticks: Ticks | None = None) -> tuple[RedisStorage, Any]:
    """Our store and a raw client that plays the other processes."""
    sleep = ticks if ticks is not None else asyncio.sleep
    storage = await RedisStorage.open(server.url, prefix="t:", sleep=sleep)
    return storage, aioredis.Redis.from_url(server.url)


@deferred_f_from_coro_f
async def test_storage_3_5_redis_lock_renewed_while_held(redis_server: RedisServer) -> None:
    ticks = Ticks()
    storage, raw = await redis_pair(redis_server, ticks)
    try:
        assert await storage.lock(KEY, TTL)
        assert 0 < await raw.pttl(LOCK_KEY) <= TTL * 1000  # a short lease, not 18.5 minutes
        for _ in range(3):
            await raw.pexpire(LOCK_KEY, 1_000)  # as if time passed
            await ticks.tick()
            assert (TTL - 1) * 1000 < await raw.pttl(LOCK_KEY) <= TTL * 1000
        await storage.release(KEY)
        assert await raw.exists(LOCK_KEY) == 0
    finally:
        await storage.close()
        await raw.aclose()


# --- the owner check ---------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_others_never_renew_or_release_our_lock(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock)
    stranger = await SqliteStorage.open(path, clock=clock)
    third = await SqliteStorage.open(path, clock=clock)
    try:
        assert await holder.lock(KEY, TTL)
        assert not await stranger.renew(KEY, TTL)
        await stranger.release(KEY)
        clock.advance(TTL - 1)
        assert not await stranger.lock(KEY, TTL)  # neither freed nor extended
        clock.advance(1)  # the holder stalled past its lease: taken over
        assert await stranger.lock(KEY, TTL)
        assert not await holder.renew(KEY, TTL)  # the successor's lock is not extended
        await holder.release(KEY)  # nor released
        assert not await third.lock(KEY, TTL)
        assert await stranger.renew(KEY, TTL)
    finally:
        for store in (holder, stranger, third):
            await store.close()


@deferred_f_from_coro_f
async def test_storage_3_5_redis_others_never_renew_or_release_our_lock(
    redis_server: RedisServer,
) -> None:
    """Our lease lapsed and another process took the key: not extended, not deleted."""
    storage, raw = await redis_pair(redis_server)
    other = await RedisStorage.open(redis_server.url, prefix="t:")
    try:
        assert await storage.lock(KEY, TTL)
        assert not await other.renew(KEY, TTL)
        await other.release(KEY)
        assert await raw.exists(LOCK_KEY) == 1
        await raw.set(LOCK_KEY, b"successor", px=5_000)
        assert not await storage.renew(KEY, TTL)
        assert await raw.pttl(LOCK_KEY) <= 5_000
        await storage.release(KEY)
        assert await raw.get(LOCK_KEY) == b"successor"
    finally:
        await storage.close()
        await other.close()
        await raw.aclose()


# --- locks no one will ever release --------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_redis_lock_without_expiry_is_cut_to_one_ttl(
    redis_server: RedisServer,
) -> None:
    """A key with no TTL (an older version crashed, or a hostile peer) or an absurd
    one lasts one short TTL more at most: outlived, not stolen."""
    storage, raw = await redis_pair(redis_server)
    try:
        await raw.set(LOCK_KEY, b"crashed-long-ago")
        assert not await storage.lock(KEY, TTL)
        assert 0 < await raw.pttl(LOCK_KEY) <= TTL * 1000
        await raw.set(LOCK_KEY, b"absurd", ex=86_400)
        assert not await storage.lock(KEY, TTL)
        assert 0 < await raw.pttl(LOCK_KEY) <= TTL * 1000
        assert await raw.get(LOCK_KEY) == b"absurd"
        await raw.delete(LOCK_KEY)
        await raw.hset(LOCK_KEY, "not", "a lock")  # a foreign key of another type
        assert await storage.lock(KEY, TTL)
    finally:
        await storage.close()
        await raw.aclose()


@pytest.mark.parametrize("expires", [1110.0, "soon", b"\x00"], ids=["18.5min", "text", "blob"])
@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_lock_row_that_would_never_lapse(
    tmp_path: Path, clock: FakeClock, expires: object
) -> None:
    """An older version's 18.5-minute lock lasts one TTL at most; an expiry that
    is not a number is no lock at all."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    value = clock.now + expires if isinstance(expires, float) else expires
    await storage._run(
        lambda: storage._connection.db().execute(
            "INSERT INTO locks (key, token, expires_at) VALUES (?, 'old', ?)", (KEY, value)
        )
    )
    try:
        async with another_process(storage.path):  # the older version's crawl, still here
            if isinstance(expires, float):
                assert not await storage.lock(KEY, TTL)
                clock.advance(TTL - 0.1)
                assert not await storage.lock(KEY, TTL)
                clock.advance(0.1)
            assert await storage.lock(KEY, TTL)
    finally:
        await storage.close()


# --- a dead holder on this machine ---------------------------------------------------


def test_storage_3_5_holder_gone_only_when_sure() -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        mine = new_token()
        host, space, pid, _ = mine.split("|")
        assert pid == str(os.getpid())
        assert not holder_gone(mine)  # this very process
        assert not holder_gone(f"{host}|{space}|{running.pid}|x")
        assert holder_gone(f"{host}|{space}|{ended.pid}|x")
        assert not holder_gone(f"elsewhere|{space}|{ended.pid}|x")  # another machine
        assert not holder_gone(f"{host}|pid:[1]|{ended.pid}|x")  # another container
        assert not holder_gone(uuid.uuid4().hex)  # an older version's token
        assert not holder_gone(f"{host}|{space}|-{ended.pid}|x")
        running.send_signal(signal.SIGKILL)
        assert _wait_zombie(running.pid)
        assert holder_gone(f"{host}|{space}|{running.pid}|x")  # killed, not yet reaped
    finally:
        running.kill()
        running.wait()


def _token_in_a_fork(pipe: Any) -> None:
    pipe.send(new_token())


def test_storage_3_5_a_fork_names_itself_in_its_tokens() -> None:
    """Who a process is, looked up once, is looked up again after a fork: a
    child's token must not name its parent (whose lock would then look alive)."""
    mine = new_token()
    parent, child = multiprocessing.get_context("fork").Pipe()
    fork = multiprocessing.get_context("fork").Process(target=_token_in_a_fork, args=(child,))
    fork.start()
    theirs = parent.recv()
    fork.join()
    assert theirs.split("|")[2] == str(fork.pid) != mine.split("|")[2]
    assert theirs.split("|")[:2] == mine.split("|")[:2]  # same machine, same namespace
    assert new_token() != mine and new_token().split("|")[:3] == mine.split("|")[:3]
    assert holder_gone(theirs)  # it has ended


def _wait_zombie(pid: int) -> bool:
    """Until the killed child is a zombie (nobody reaps it here)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        if stat.rpartition(b")")[2].split()[:1] == [b"Z"]:
            return True
        time.sleep(0.005)  # waiting for a process to end, not a time rule
    return False


def hold_in_a_process(kind: str, where: str, tmp_path: Path) -> None:
    """A separate process takes the lock (a robots.txt that never ends), and is
    killed with SIGKILL: no close, no release."""
    marker = tmp_path / "holding"
    holder = subprocess.Popen(
        [sys.executable, str(WORKER), kind, where, "hold", KEY, "600", str(marker)],
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and holder.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # waiting for a process to start, not a time rule
        assert marker.exists(), holder.communicate()[1].decode(errors="replace")
    finally:
        holder.kill()
        holder.communicate()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_storage_3_5_lock_of_a_killed_process_is_taken_over_at_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    """Even one taken for ten minutes (an older caller's TTL): its holder is gone."""
    if kind == "redis":
        where = request.getfixturevalue("redis_server").url
        hold_in_a_process(kind, where, tmp_path)
        storage = await open_storage("redis", redis_url=where, prefix="test:")
    else:  # the holder shares the file (alone, its lock would be in its memory only)
        where = str(tmp_path / "robots.sqlite3")
        storage = await open_storage("sqlite", path=where)
        async with another_process(Path(where)):
            hold_in_a_process(kind, where, tmp_path)
    try:
        with caplog.at_level(logging.INFO, "scrapy_rep.cache.storage"):
            assert await storage.lock(KEY, TTL)
        told = [r for r in caplog.records if "fetch lock" in r.getMessage()]
        assert len(told) == 1 and told[0].levelno == logging.INFO
        assert KEY in told[0].getMessage() and "taken over" in told[0].getMessage()
    finally:
        await storage.close()


# --- close releases --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_storage_3_5_close_releases_held_locks(
    kind: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("redis_server").url if kind == "redis" else None
    ticks = Ticks(clock)

    async def opened(ticks: Ticks) -> Any:
        if kind == "redis":
            return await RedisStorage.open(str(url), sleep=ticks)
        return await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock, sleep=ticks)

    holder, other = await opened(ticks), await opened(Ticks(clock))
    try:
        assert await holder.lock(KEY, TTL)
        assert await holder.lock("https://b.example:443", TTL)
        await holder.close()
        asked = len(ticks.asked)
        assert await other.lock(KEY, TTL)  # at once: no waiting for the lease
        assert await other.lock("https://b.example:443", TTL)
        ticks.let_one_end()
        await asyncio.sleep(0)
        assert len(ticks.asked) == asked  # the closed store's renewals stopped
    finally:
        await other.close()


# --- the bounded wait ------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_wait_for_a_live_holder_is_bounded(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A holder that lives and renews but never finishes: after ``max_wait`` the
    waiter fetches itself, having said once that it waits."""
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))
    waiter = await SqliteStorage.open(path, clock=clock)
    fetched: list[float] = []
    told: list[str] = []
    start = clock.now

    async def poll(seconds: float) -> None:
        clock.advance(seconds)
        await holder.renew(KEY, TTL)  # the live holder keeps its lease meanwhile

    async def fetch() -> OriginRecord:
        fetched.append(clock.now)
        return sample(clock.now)

    try:
        assert await holder.lock(KEY, TTL)
        with caplog.at_level(logging.WARNING, "scrapy_rep.cache.storage"):
            record = await within(
                10,
                single_flight(
                    waiter,
                    KEY,
                    fetch,
                    lambda _: 3600.0,
                    max_wait=30.0,
                    poll=1.0,
                    sleep=poll,
                    clock=clock,
                    on_wait=told.append,
                ),
            )
        assert fetched == [record.fetched_at] and 30.0 <= fetched[0] - start < 31.0
        assert told == [KEY]
        assert await waiter.get(KEY) == record  # stored for the others
        assert [r.levelno for r in caplog.records] == [logging.WARNING]
        assert KEY in caplog.records[0].getMessage()
    finally:
        await holder.close()
        await waiter.close()


@deferred_f_from_coro_f
async def test_storage_3_5_waiter_takes_over_when_the_lease_lapses(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The holder stopped renewing (it died elsewhere): one TTL later the waiter
    holds the lock and fetches, long before ``max_wait``."""
    path = tmp_path / "robots.sqlite3"
    dead = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))  # never renews
    waiter = await SqliteStorage.open(path, clock=clock)
    start = clock.now

    async def poll(seconds: float) -> None:
        clock.advance(seconds)
        await asyncio.sleep(0)

    async def fetch() -> OriginRecord:
        assert not await dead.renew(KEY, TTL)  # the lock is the waiter's now
        return sample(clock.now)

    try:
        assert await dead.lock(KEY, TTL)
        record = await within(
            10,
            single_flight(waiter, KEY, fetch, lambda _: 3600.0, poll=1.0, sleep=poll, clock=clock),
        )
        assert TTL <= record.fetched_at - start < TTL + 1.5
    finally:
        await dead.close()
        await waiter.close()


# --- fewer trips -------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_new_origin_costs_two_trips(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A new origin's single flight: lock and read back in one trip to the
    worker thread, store and unlock in another (it was four), nothing held after."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    other = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    trips: list[str] = []
    run = storage._connection.run

    async def counted(func: Any, *args: object, here: bool = True) -> Any:
        trips.append(func.__name__)
        return await run(func, *args, here=here)

    storage._connection.run = counted  # type: ignore[method-assign]
    try:
        fetch = lambda: _now(sample(clock.now))  # noqa: E731
        record = await single_flight(storage, KEY, fetch, lambda _: 3600.0)
        assert trips == ["_acquire_and_get"]  # the write goes with the next commit
        assert await other.get(KEY) is None and not await other.lock(KEY, TTL)
        await storage.flush()
        assert trips == ["_acquire_and_get", "_take"]
        assert await other.get(KEY) == record
        assert await other.lock(KEY, TTL)  # released
        assert storage._leases.token(KEY) is None  # and no renewal left running
    finally:
        await storage.close()
        await other.close()


async def _now(record: OriginRecord) -> OriginRecord:
    return record


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_free_lock_is_one_statement(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A key without a lock row (a broad crawl's new origin) is locked by one
    statement; a key with one goes through the transaction that reads it."""
    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))
    other = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))
    statements: list[str] = []
    for store in (storage, other):
        store._connection.db().set_trace_callback(statements.append)
    try:
        assert await storage.lock(KEY, TTL)
        ran = [s for s in statements if not s.startswith("PRAGMA")]
        assert len(ran) == 1 and ran[0].startswith("INSERT INTO locks")
        statements.clear()
        assert not await other.lock(KEY, TTL)  # held: read, then left alone
        ran = [s for s in statements if not s.startswith("PRAGMA")]
        assert ran[1] == "BEGIN IMMEDIATE" and ran[-1] == "COMMIT"
        assert any(s.startswith("SELECT token") for s in ran)
    finally:
        await storage.close()
        await other.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_new_origin_lock_and_get_is_one_statement(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A key with neither lock nor live record (a broad crawl's new origin),
    while another process shares the file: the lock, and the answer that
    there is no record, in one statement. A live record is still read and
    returned with the lock; an expired one is no record."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    statements: list[str] = []
    storage._connection.db().set_trace_callback(statements.append)
    try:
        async with another_process(storage.path):
            statements.clear()
            assert await storage.lock_and_get(KEY, TTL) == (True, None)
            ran = [s for s in statements if not s.startswith("PRAGMA")]
            assert len(ran) == 1 and ran[0].startswith("INSERT INTO locks")
            record = sample(clock.now)
            await storage.put_and_release(KEY, record, 60.0)
            await storage.flush()
            assert await storage.lock_and_get(KEY, TTL) == (True, record)
            await storage.release(KEY)
            clock.advance(61)  # the record expired: a new fetch, in one statement again
            statements.clear()
            assert await storage.lock_and_get(KEY, TTL) == (True, None)
            assert len([s for s in statements if not s.startswith("PRAGMA")]) == 1
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_combined_calls_keep_the_lock_rules(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))
    other = await SqliteStorage.open(path, clock=clock, sleep=Ticks(clock))
    try:
        assert await holder.lock_and_get(KEY, TTL) == (True, None)
        assert await other.lock_and_get(KEY, TTL) == (False, None)
        await other.put_and_release(KEY, sample(clock.now), 3600.0)  # it holds nothing
        await other.flush()
        assert not await other.lock(KEY, TTL)  # so the holder's lock stands
        record = sample(clock.now + 1)
        await holder.put_and_release(KEY, record, 3600.0)
        await holder.flush()
        assert await other.lock_and_get(KEY, TTL) == (True, record)
    finally:
        await holder.close()
        await other.close()


def test_storage_3_5_default_lock_is_short() -> None:
    """The default lease: what a holder that dies on another machine costs."""
    assert 10.0 <= LOCK_TTL <= 30.0
