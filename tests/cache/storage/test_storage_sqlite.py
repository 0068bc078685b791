"""The default store: one file, several processes, damage survived (docs/spec.md §2.3, §3.4)."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, another_process, run_workers

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord, PolicyConfig, decide, record_outcome
from scrapy_rep.cache.storage import open_storage
from scrapy_rep.cache.storage.sqlite.connection import SqliteConnection
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

BODY = b"User-agent: *\nDisallow: /private\n"


def sample(at: float = 1_700_000_000.0) -> OriginRecord:
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", at, at + 86400, BODY, at, 200)


def test_storage_sqlite_two_processes_share_one_file(tmp_path: Path) -> None:
    path = str(tmp_path / "robots.sqlite3")
    writes = run_workers(
        ["sqlite", path, "write", "https://a", "300"],
        ["sqlite", path, "write", "https://b", "300"],
    )
    assert writes == ["ok", "ok"]
    reads = run_workers(
        ["sqlite", path, "read", "https://a", "300"],
        ["sqlite", path, "read", "https://b", "300"],
    )
    assert reads == ["300", "300"]


def test_storage_sqlite_lock_one_winner_across_10_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "robots.sqlite3")
    run_workers(["sqlite", path, "read", "x", "0"])  # create the file first
    tried = tmp_path / "tried"
    tried.mkdir()
    results = run_workers(
        *(["sqlite", path, "lock", "https://new.example:443", str(tried), "10"] for _ in range(10))
    )
    assert sorted(results) == ["lost"] * 9 + ["won"]


@deferred_f_from_coro_f
async def test_storage_sqlite_wal_mode(tmp_path: Path) -> None:
    storage = await open_storage("sqlite", path=tmp_path / "robots.sqlite3")
    await storage.close()
    with sqlite3.connect(tmp_path / "robots.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@deferred_f_from_coro_f
async def test_storage_sqlite_the_loop_never_waits_for_another_process(tmp_path: Path) -> None:
    """Statements run on the loop with no busy timeout (a thread hop each cost
    a broad crawl 10% of its CPU, issue 28); one that finds another process
    writing moves to the thread, which waits for it."""
    import asyncio

    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    seen: list[tuple[str, str, int]] = []

    def spied(name: str, real: Any) -> Any:
        def spy(*args: Any) -> Any:
            timeout = storage._connection.db().execute("PRAGMA busy_timeout").fetchone()[0]
            seen.append((name, threading.current_thread().name, timeout))
            return real(*args)

        return spy

    storage._get = spied("read", storage._get)  # type: ignore[method-assign]
    storage._writes._write_batch = spied("write", storage._writes._write_batch)  # type: ignore[method-assign]
    loop_thread = threading.current_thread().name
    other = sqlite3.connect(path, isolation_level=None)
    try:
        async with another_process(path):  # whose store holds ``other``
            assert await storage.get("k") is None
            other.execute("BEGIN IMMEDIATE")  # another process writes
            put = asyncio.ensure_future(storage.put("k", sample(), 3600))
            for _ in range(20):
                await asyncio.sleep(0)  # the loop turns while the put waits
            assert not put.done()
            other.execute("COMMIT")
            await put
            assert await storage.get("k") == sample()
    finally:
        other.close()
        await storage.close()
    assert seen == [
        ("read", loop_thread, 0),
        ("write", loop_thread, 0),  # busy: nothing done, moved
        ("write", "scrapy_rep-sqlite", 30_000),
        ("read", loop_thread, 0),
    ]


@deferred_f_from_coro_f
async def test_storage_sqlite_checkpoints_in_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint syncs the disk: SQLite's automatic one would run on the
    loop, in the commit that crosses its threshold; the thread runs ours."""
    from scrapy_rep.cache.storage.sqlite import connection as backend

    monkeypatch.setattr(backend, "CHECKPOINT_EVERY", 10)
    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    where: list[str] = []
    checkpoint = storage._connection._checkpoint

    def spy() -> None:
        where.append(threading.current_thread().name)
        checkpoint()

    storage._connection._checkpoint = spy  # type: ignore[method-assign]
    try:
        assert storage._connection.db().execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        for n in range(35):
            await storage.put(f"https://o{n}.example:443", sample(), 3600)
    finally:
        await storage.close()
    assert where == ["scrapy_rep-sqlite"] * 3


@pytest.mark.parametrize(
    "garbage",
    [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 4000],
)
@deferred_f_from_coro_f
async def test_storage_sqlite_corrupt_file_moved_aside_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, clock: FakeClock, garbage: bytes
) -> None:
    path = tmp_path / "robots.sqlite3"
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="scrapy_rep.cache.storage.sqlite"):
        storage = await open_storage("sqlite", path=path, clock=clock)
        try:
            await storage.put("https://a.example:443", sample(), 3600)
            assert await storage.get("https://a.example:443") == sample()
        finally:
            await storage.close()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    aside = tmp_path / f"robots.sqlite3.corrupt-{int(clock.now)}"
    assert aside.read_bytes() == garbage
    assert str(aside) in warnings[0].getMessage() and "damaged" in warnings[0].getMessage()


@deferred_f_from_coro_f
async def test_storage_sqlite_unreadable_record_is_a_miss(tmp_path: Path) -> None:
    storage = await open_storage("sqlite", path=tmp_path / "robots.sqlite3")
    try:
        await storage.put("k", sample(), 3600)
        with sqlite3.connect(tmp_path / "robots.sqlite3") as db:
            db.execute("UPDATE origins SET data = ? WHERE key = 'k'", (b"garbage",))
        assert await storage.get("k") is None
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_2_3_outage_survives_a_restart(tmp_path: Path) -> None:
    """12 h closed holds across crawl runs: the outage start is read back."""
    from scrapy_rep.cache.outcome import AccessState, FetchOutcome

    config = PolicyConfig()
    t0 = 1_700_000_000.0
    url = "https://a.example/robots.txt"
    good = record_outcome(None, FetchOutcome(FetchKind.SUCCESS, url, t0, 200, BODY), t0, config)
    failed = record_outcome(
        good,
        FetchOutcome(FetchKind.UNREACHABLE, url, t0 + 86400, 503, reason="HTTP 503"),
        t0 + 86400,
        config,
        random=lambda: 0.0,
    )
    first = await open_storage("sqlite", path=tmp_path / "robots.sqlite3")
    await first.put("https://a.example:443", failed, 31 * 86400)
    await first.close()
    second = await open_storage("sqlite", path=tmp_path / "robots.sqlite3")
    try:
        again = await second.get("https://a.example:443")
    finally:
        await second.close()
    assert again == failed
    assert decide(again, t0 + 86400 + 6 * 3600, config).state is AccessState.CLOSED
    assert decide(again, t0 + 86400 + 13 * 3600, config).body == BODY


@deferred_f_from_coro_f
async def test_storage_3_2_no_store_body_not_written_to_disk(tmp_path: Path) -> None:
    storage = await open_storage("sqlite", path=tmp_path / "robots.sqlite3")
    secret = b"User-agent: *\nDisallow: /do-not-store\n"
    record = OriginRecord(
        FetchKind.SUCCESS, 200, "HTTP 200", 1.0, 61.0, secret, 1.0, 200, no_store=True
    )
    try:
        await storage.put("k", record, 3600)
        await storage.put("other", sample(), 3600)
        back = await storage.get("k")
    finally:
        await storage.close()
    assert back is not None and back.good_body is None and back.no_store
    on_disk = b"".join(p.read_bytes() for p in tmp_path.glob("robots.sqlite3*"))
    assert BODY in on_disk and secret not in on_disk


@deferred_f_from_coro_f
async def test_storage_sqlite_damage_found_mid_crawl_recovers_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    """Damage met by a query (not at open) also moves the file aside, once."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3", clock=clock)
    await storage.put("old", sample(), 3600)
    damaged = storage._connection._db

    def query() -> str:  # the damage lasts until the file is moved aside
        if storage._connection._db is damaged:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return "answered"

    try:
        with caplog.at_level(logging.WARNING, logger="scrapy_rep.cache.storage.sqlite"):
            assert await storage._run(query) == "answered"
        assert len(caplog.records) == 1
        assert (tmp_path / f"robots.sqlite3.corrupt-{int(clock.now)}").exists()
        assert await storage.get("old") is None  # a new, empty cache
        await storage.put("new", sample(), 3600)
        assert await storage.get("new") == sample()
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_contention_is_not_damage(tmp_path: Path) -> None:
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3")

    def busy() -> None:
        raise sqlite3.OperationalError("database is locked")

    try:
        with pytest.raises(sqlite3.OperationalError):
            await storage._run(busy)
        assert not list(tmp_path.glob("*.corrupt-*"))
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_open_retries_a_file_another_process_is_converting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite answers "locked" without waiting while another process turns a
    # new file to WAL (seen in CI: 2 of 1,800 simultaneous opens failed).
    real = SqliteConnection._open_once
    tries: list[int] = []

    def locked_twice(self: SqliteConnection) -> sqlite3.Connection:
        tries.append(1)
        if len(tries) <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(self)

    monkeypatch.setattr(SqliteConnection, "_open_once", locked_twice)
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3")
    await storage.put("https://a.example:443", sample(), 300)
    assert (await storage.get("https://a.example:443")) is not None
    await storage.close()
    assert len(tries) == 3


@deferred_f_from_coro_f
async def test_storage_sqlite_open_does_not_retry_other_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tries: list[int] = []

    def unwritable(self: SqliteConnection) -> sqlite3.Connection:
        tries.append(1)
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(SqliteConnection, "_open_once", unwritable)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await SqliteStorage.open(tmp_path / "robots.sqlite3")
    assert tries == [1]


@pytest.fixture
def small_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep every 10 puts, looking at 20 keys (1,000 and 2,000 in a crawl)."""
    from scrapy_rep.cache.storage.sqlite import writes as backend

    monkeypatch.setattr(backend, "_PURGE_EVERY", 10)
    monkeypatch.setattr(backend, "_PURGE_BATCH", 20)


@deferred_f_from_coro_f
@pytest.mark.usefixtures("small_sweeps")
async def test_storage_sqlite_sweeps_expired_rows_in_bounded_batches(tmp_path: Path) -> None:
    # A sweep of a million expired rows in one statement kept every reader
    # waiting behind it for seconds; a sweep now deletes a bounded batch.
    clock = FakeClock()
    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path, clock=clock)
    for i in range(49):  # the 50th put would sweep
        await storage.put(f"https://old{i}.example:443", sample(clock.now), 60)
    clock.advance(120)
    await storage.put("https://old49.example:443", sample(clock.now - 120), -1)
    for i in range(9):  # no second sweep
        await storage.put(f"https://new{i}.example:443", sample(clock.now), 60)
    await storage.close()
    with sqlite3.connect(path) as db:
        old = db.execute("SELECT count(*) FROM origins WHERE key LIKE '%old%'").fetchone()[0]
        new = db.execute("SELECT count(*) FROM origins WHERE key LIKE '%new%'").fetchone()[0]
    assert (old, new) == (50 - 20, 9)


@deferred_f_from_coro_f
@pytest.mark.usefixtures("small_sweeps")
async def test_storage_sqlite_sweeps_go_round_the_table_without_an_expiry_index(
    tmp_path: Path,
) -> None:
    # An index on expiry cost every put a second B-tree to write (a tenth of
    # the store's time). Without it, each sweep looks at the next keys in
    # order and starts over at the end, so every expired row is reached.
    from scrapy_rep.cache.storage.sqlite import statements as backend

    path = tmp_path / "robots.sqlite3"
    with sqlite3.connect(path) as db:  # a file from a version that had the index
        db.executescript(backend.SCHEMA.replace("DROP INDEX IF EXISTS origins_by_expiry;", ""))
        db.execute("CREATE INDEX origins_by_expiry ON origins (expires_at)")
    clock = FakeClock()
    storage = await SqliteStorage.open(path, clock=clock)
    for i in range(50):
        await storage.put(f"https://a{i:02}.example:443", sample(clock.now), 60)
    clock.advance(120)  # every a row expired
    left: list[int] = []
    for i in range(80):
        await storage.put(f"https://z{i:02}.example:443", sample(clock.now), 3_600)
        if i % 10 == 9:  # just swept
            with sqlite3.connect(path) as db:
                expired = "SELECT count(*) FROM origins WHERE key < 'https://z'"
                left.append(db.execute(expired).fetchone()[0])
    await storage.close()
    with sqlite3.connect(path) as db:
        live = db.execute("SELECT count(*) FROM origins WHERE key >= 'https://z'").fetchone()[0]
        indexes = db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'origins' "
            "AND sql IS NOT NULL"
        ).fetchone()[0]
    assert all(before - after <= 20 for before, after in zip([50, *left], left))  # bounded
    assert left[-1] == 0  # every expired row reached
    assert live == 80  # and no live one touched
    assert indexes == 0


@deferred_f_from_coro_f
async def test_storage_sqlite_puts_that_arrive_together_share_one_transaction(
    tmp_path: Path,
) -> None:
    # A put with none ahead of it commits at once, on the loop (its caller
    # goes on in the same turn: issue 28). Puts that queue meanwhile, here
    # behind one waiting in the thread for another process, share one.
    import asyncio

    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    batches: list[int] = []
    write_batch = storage._writes._write_batch

    def counted(writes: list[Any]) -> None:
        write_batch(writes)
        batches.append(len(writes))  # committed

    storage._writes._write_batch = counted  # type: ignore[method-assign]
    keys = [f"https://o{n}.example:443" for n in range(50)]
    other = sqlite3.connect(path, isolation_level=None)
    try:
        await storage.put("https://alone.example:443", sample(), 3600)
        assert batches == [1]
        other.execute("BEGIN IMMEDIATE")
        puts = [asyncio.ensure_future(storage.put(key, sample(), 3600)) for key in keys]
        for _ in range(5):
            await asyncio.sleep(0)
        other.execute("COMMIT")
        await asyncio.gather(*puts)
        assert sum(batches) == 51
        assert len(batches) <= 3, batches
        assert [await storage.get(key) for key in keys] == [sample()] * 50
    finally:
        other.close()
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_close_finishes_the_writes_under_way(tmp_path: Path) -> None:
    import asyncio

    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    writes = [
        asyncio.ensure_future(storage.put(f"https://o{n}.example:443", sample(), 3600))
        for n in range(20)
    ]
    await asyncio.sleep(0)  # under way, not committed
    await storage.close()
    await asyncio.gather(*writes)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM origins").fetchone() == (20,)


def _disk_error(writes: list[Any]) -> None:
    """A ``_write_batch`` on a failing disk."""
    raise sqlite3.OperationalError("disk I/O error")


@deferred_f_from_coro_f
async def test_storage_sqlite_a_failed_batch_fails_each_of_its_puts(tmp_path: Path) -> None:
    import asyncio

    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3")
    write_batch = storage._writes._write_batch
    storage._writes._write_batch = _disk_error  # type: ignore[method-assign]
    try:
        results = await asyncio.gather(
            *(storage.put(f"https://o{n}.example:443", sample(), 3600) for n in range(5)),
            return_exceptions=True,
        )
        assert [type(result) for result in results] == [sqlite3.OperationalError] * 5
        storage._writes._write_batch = write_batch  # type: ignore[method-assign]
        await storage.put("https://after.example:443", sample(), 3600)  # the next batch goes
        assert await storage.get("https://after.example:443") == sample()
        assert await storage.get("https://o0.example:443") is None
    finally:
        await storage.close()


# --- the records a fetch writes share a commit (issue 28) ---------------------------


def _transactions(statements: list[str]) -> list[list[str]]:
    """The statements between each BEGIN and its COMMIT."""
    found: list[list[str]] = []
    for statement in statements:
        if statement.startswith("BEGIN"):
            found.append([])
        elif statement != "COMMIT" and found and not statement.startswith("PRAGMA"):
            found[-1].append(" ".join(statement.split()[:3]))
    return found


@deferred_f_from_coro_f
async def test_storage_sqlite_a_fetch_record_commits_at_the_next_turn_when_none_did_lately(
    tmp_path: Path,
) -> None:
    """``put_and_release`` does not wait for its commit; with no commit in the
    last ``_COMMIT_EVERY``, the commit comes at the loop's next turn, and the
    lock goes with it."""
    import asyncio

    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    other = await SqliteStorage.open(path)
    try:
        assert await storage.lock("https://a.example:443", 30)
        await storage.put_and_release("https://a.example:443", sample(), 3600)
        assert not await other.lock("https://a.example:443", 30)  # not committed yet
        for _ in range(3):
            await asyncio.sleep(0)
        assert await other.get("https://a.example:443") == sample()
        assert await other.lock("https://a.example:443", 30)  # released with it
    finally:
        await storage.close()
        await other.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_fetch_records_of_one_interval_share_one_commit(
    tmp_path: Path,
) -> None:
    """After a commit, the records of the fetches that end within
    ``_COMMIT_EVERY`` wait for the next one, all in one transaction with
    their locks' releases; ``flush`` commits them at once."""
    import asyncio
    import time

    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3")
    statements: list[str] = []
    storage._connection.db().set_trace_callback(statements.append)
    keys = [f"https://o{n}.example:443" for n in range(3)]
    try:
        async with another_process(storage.path):  # so the locks are rows
            for key in keys:
                assert await storage.lock(key, 30)
            storage._writes._commit_at = time.monotonic() + 3600  # as if one had just been made
            statements.clear()
            for key in keys:
                await storage.put_and_release(key, sample(), 3600)
            for _ in range(3):
                await asyncio.sleep(0)
            assert statements == [] and await storage.get(keys[0]) is None
            await storage.flush()
            assert _transactions(statements) == [["INSERT INTO origins", "DELETE FROM locks"] * 3]
            assert [await storage.get(key) for key in keys] == [sample()] * 3
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_storage_sqlite_close_commits_the_fetch_records_waiting(tmp_path: Path) -> None:
    import time

    path = tmp_path / "robots.sqlite3"
    storage = await SqliteStorage.open(path)
    storage._writes._commit_at = time.monotonic() + 3600
    await storage.put_and_release("https://a.example:443", sample(), 3600)
    await storage.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM origins").fetchone() == (1,)


@deferred_f_from_coro_f
async def test_storage_sqlite_a_failed_commit_of_fetch_records_is_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Nobody awaits those records: a commit that fails is logged, once at
    WARNING, and the next one goes on."""
    storage = await SqliteStorage.open(tmp_path / "robots.sqlite3")
    write_batch = storage._writes._write_batch
    storage._writes._write_batch = _disk_error  # type: ignore[method-assign]
    try:
        with caplog.at_level(logging.DEBUG, logger="scrapy_rep.cache.storage.sqlite"):
            for n in range(2):
                await storage.put_and_release(f"https://o{n}.example:443", sample(), 3600)
                await storage.flush()
        failed = [r for r in caplog.records if "failed" in r.getMessage()]
        assert [r.levelno for r in failed] == [logging.WARNING, logging.DEBUG]
        assert "disk I/O error" in failed[0].getMessage()
        storage._writes._write_batch = write_batch  # type: ignore[method-assign]
        await storage.put_and_release("https://after.example:443", sample(), 3600)
        await storage.flush()
        assert await storage.get("https://after.example:443") == sample()
    finally:
        await storage.close()
