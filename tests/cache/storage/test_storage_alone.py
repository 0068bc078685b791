"""A SQLite store alone with its file (``presence``): fetch locks in memory,
no read for a key the file never had (``key_filter``), and the handshake that
turns both off when another process opens the file (docs/spec.md §3.5)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, another_process

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.sqlite import alone as backend
from scrapy_rep.cache.storage.sqlite.key_filter import KeyFilter
from scrapy_rep.cache.storage.sqlite.presence import Presence
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

KEY = "https://a.example:443"
TTL = 15.0


def sample(at: float = 1_700_000_000.0) -> OriginRecord:
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", at, at + 86400, b"", at, 200)


def statements_of(storage: SqliteStorage) -> list[str]:
    """What the store's connection runs from now on, PRAGMAs left out when read."""
    seen: list[str] = []
    storage._connection.db().set_trace_callback(seen.append)
    return seen


def ran(seen: list[str]) -> list[str]:
    """The statements run, each as its first words."""
    return [text.split(" (")[0][:20] for text in seen if not text.startswith("PRAGMA")]


# --- presence -------------------------------------------------------------------------


def test_storage_3_5_presence_first_is_alone_until_another_enters(tmp_path: Path) -> None:
    path = tmp_path / "robots.sqlite3"
    first = Presence.enter(path)
    try:
        assert first.alone and not first.others_here()
        entered: list[Presence] = []
        newcomer = threading.Thread(target=lambda: entered.append(Presence.enter(path)))
        newcomer.start()
        deadline = time.monotonic() + 10
        while not first.others_here():  # waiting for a thread to start, not a time rule
            assert time.monotonic() < deadline
            time.sleep(0.001)
        assert newcomer.is_alive()  # kept out until the first lets it in
        first.let_in()
        newcomer.join(10)
        assert not newcomer.is_alive() and not first.alone
        second = entered[0]
        try:
            assert not second.alone and second.others_here()
            third = Presence.enter(path)  # two are sharing: it joins at once
            assert not third.alone
            third.close()
        finally:
            second.close()
        assert not first.others_here()  # the others left
    finally:
        first.close()
    again = Presence.enter(path)
    assert again.alone  # the kernel dropped every lock with its descriptor
    again.close()


def test_storage_3_5_presence_kept_out_in_vain_shares_and_stops_anyone_being_alone(
    tmp_path: Path,
) -> None:
    """A process alone that never lets the newcomer in (stalled): the newcomer
    goes on after its wait, sharing, and no later process is alone beside it."""
    path = tmp_path / "robots.sqlite3"
    stalled = Presence.enter(path)
    newcomer = Presence.enter(path, wait=0.0)
    try:
        assert stalled.alone and not newcomer.alone and stalled.others_here()
        stalled.close()
        later = Presence.enter(path)
        assert not later.alone and later.others_here()
        later.close()
    finally:
        newcomer.close()


# --- the key filter ---------------------------------------------------------------------


def test_storage_3_5_key_filter_never_says_no_for_a_key_added() -> None:
    keys = KeyFilter(capacity=1_000)  # grows through several layers
    added = [f"https://o{n}.example:443" for n in range(50_000)]
    for key in added:
        keys.add(key)
    assert all(key in keys for key in added)
    others = [f"https://n{n}.example:443" for n in range(50_000)]
    maybe = sum(key in keys for key in others)
    assert len(keys._layers) == 6  # 1,000 keys, then twice as many each time
    assert maybe < len(others) * 0.005 * 6  # under 0.5% a layer read for nothing
    assert 42 not in keys


def test_storage_3_5_key_filter_merge_answers_for_both() -> None:
    mine, found = KeyFilter(), KeyFilter(3)
    mine.add("a")
    for key in "bcd":
        found.add(key)
    mine.merge(found)
    assert all(key in mine for key in "abcd")


# --- the store alone --------------------------------------------------------------------


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_alone_a_new_origin_costs_no_statement_but_its_write(
    tmp_path: Path, clock: FakeClock
) -> None:
    """Alone, a new origin's load, lock and answer read nothing and lock nothing:
    its record is the one write, and a second lock on it in this process still
    loses, as a row's would."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    try:
        while storage._alone._scan is not None:  # the empty file's keys: none
            await storage._alone._scan
        seen = statements_of(storage)
        assert await storage.get(KEY) is None
        assert await storage.lock_and_get(KEY, TTL) == (True, None)
        assert await storage.lock_and_get(KEY, TTL) == (False, None)
        assert await storage.renew(KEY, TTL)
        assert ran(seen) == []
        await storage.put_and_release(KEY, sample(clock.now), 3600.0)
        await storage.flush()
        assert ran(seen) == ["BEGIN IMMEDIATE", "INSERT INTO origins", "COMMIT"]
        assert await storage.get(KEY) == sample(clock.now)  # a key it wrote: read
        assert await storage.lock(KEY, TTL)  # released with the write
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_alone_reads_the_keys_the_file_had(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records of an earlier crawl are found, whichever batch of the keys read
    at open they were in; a key the file never had is not read."""
    monkeypatch.setattr(backend, "_SCAN_BATCH", 3)
    path = tmp_path / "robots.sqlite3"
    keys = [f"https://o{n}.example:443" for n in range(7)]
    earlier = await SqliteStorage.open(path, clock=clock)
    for key in keys:
        await earlier.put(key, sample(clock.now), 3600.0)
    await earlier.close()
    storage = await SqliteStorage.open(path, clock=clock)
    try:
        while storage._alone._scan is not None:
            await storage._alone._scan
        assert storage._alone._known
        seen = statements_of(storage)
        assert [await storage.get(key) for key in keys] == [sample(clock.now)] * 7
        assert len(ran(seen)) == 7
        seen.clear()
        # The filter hashes with this process's hash(): one key in a few
        # hundred is a "maybe" (read, rightly); take one it rules out.
        known = storage._alone._keys
        assert known is not None
        absent = next(
            f"https://new{n}.example:443"
            for n in range(100)
            if f"https://new{n}.example:443" not in known
        )
        assert await storage.get(absent) is None
        assert ran(seen) == []
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_alone_a_newcomer_finds_the_locks_held_in_memory(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A fetch under way while alone, then another process opens the file: the
    lock becomes a row before the newcomer's open returns, the newcomer waits
    for the record, and both read every key from then on."""
    path = tmp_path / "robots.sqlite3"
    holder = await SqliteStorage.open(path, clock=clock)
    try:
        assert holder._alone
        assert await holder.lock_and_get(KEY, TTL) == (True, None)
        async with another_process(path, clock) as other:
            assert not holder._alone.active and not other._alone.active
            assert await other.lock_and_get(KEY, TTL) == (False, None)
            record = sample(clock.now)
            await holder.put_and_release(KEY, record, 3600.0)
            await holder.flush()
            assert await other.lock_and_get(KEY, TTL) == (True, record)
            await other.put_and_release("https://b.example:443", record, 3600.0)
            await other.flush()
            assert await holder.get("https://b.example:443") == record
        assert not holder._alone.active  # sharing, for good
    finally:
        await holder.close()


@deferred_f_from_coro_f
async def test_storage_3_5_sqlite_alone_reads_past_foreign_blob_keys(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file with keys another writer stored as BLOBs, more than one batch
    of them: learning the keys at open ends (paging from the key as read;
    as text, every BLOB sorted after it again and the scan never ended)."""
    import sqlite3

    monkeypatch.setattr(backend, "_SCAN_BATCH", 3)
    path = tmp_path / "robots.sqlite3"
    earlier = await SqliteStorage.open(path, clock=clock)
    await earlier.put("https://o.example:443", sample(clock.now), 3600.0)
    await earlier.close()
    with sqlite3.connect(path) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(origins)")]
        row = db.execute("SELECT * FROM origins").fetchone()
        for n in range(10):
            foreign = dict(zip(columns, row), key=f"blob{n}".encode())
            marks = ", ".join("?" * len(columns))
            db.execute(
                f"INSERT INTO origins ({', '.join(columns)}) VALUES ({marks})",
                [foreign[c] for c in columns],
            )
    storage = await SqliteStorage.open(path, clock=clock)
    try:
        scan = storage._alone._scan
        if scan is not None:
            await asyncio.wait_for(asyncio.shield(scan), 10)
        assert storage._alone._known
        assert await storage.get("https://o.example:443") == sample(clock.now)
    finally:
        await storage.close()
