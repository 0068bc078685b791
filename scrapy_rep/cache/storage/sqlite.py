"""The default store: one SQLite file shared by every crawl of a project.

WAL mode lets several crawler processes read and write the file at once.
A statement here takes microseconds unless another process holds the write
lock, so the statements run on the event loop with a busy timeout of zero,
and the one that finds the file busy moves to a thread that may wait
(``worker``): the loop never waits for another process, and a crawl does
not pay a thread hop per statement. Nor does the loop ever sync the disk:
automatic WAL checkpoints are off, and the thread checkpoints every
``_CHECKPOINT_EVERY`` rows written. Each put keeps its place in a queue,
and the first of them to be reached writes every put queued by then in one
transaction: a put with none ahead of it commits alone, at once, and the
puts that queue behind a statement in the thread share a commit. The record
a fetch wrote (``put_and_release``) is not waited for: it commits with the
others of its ``_COMMIT_EVERY``, and a broad crawl pays one commit for many
new origins. A file
that is not a database, or is damaged, is moved aside with one warning and
a new one is started: a lost cache costs refetches, never a crawl. Fetch
locks are rows with their owner's token, renewed while held (``leases``),
once another process has the file open: a process alone with it
(``presence``) holds its locks in memory, and skips the read of a key it
knows the file does not have (``key_filter``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from scrapy_rep.cache import pace
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.errors import UnreadableRecords
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH, FORGOTTEN_KEEP, FORGOTTEN_MAX
from scrapy_rep.cache.storage.key_filter import KeyFilter
from scrapy_rep.cache.storage.leases import Leases, holder_gone, new_token
from scrapy_rep.cache.storage.presence import Presence
from scrapy_rep.cache.storage.sqlite_file import FileWatch, live_paces, merge_paces
from scrapy_rep.cache.storage.worker import Worker, WouldBlock

__all__ = ["SqliteStorage"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: A record waiting for the next write: key, record, expires_at, now, and the
#: token of our lock on the key to release with it (None: no lock).
_Write = tuple[str, OriginRecord, float, float, str | None]


class _Queued:
    """A write waiting in the queue, and how it went once a batch took it;
    ``awaited``: by its caller (``put``), else only logged if it fails."""

    __slots__ = ("awaited", "done", "error", "write")

    def __init__(self, write: _Write, awaited: bool = True) -> None:
        self.write = write
        self.awaited = awaited
        self.done = False
        self.error: BaseException | None = None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS origins (
    key TEXT PRIMARY KEY, data BLOB NOT NULL, expires_at REAL NOT NULL
) WITHOUT ROWID;
DROP INDEX IF EXISTS origins_by_expiry;
CREATE TABLE IF NOT EXISTS locks (
    key TEXT PRIMARY KEY, token TEXT NOT NULL, expires_at REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pace (
    key TEXT PRIMARY KEY, next_at REAL, paused_until REAL, went_at REAL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS forgotten (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, at REAL NOT NULL
);
"""
#: A lock on a key nobody has a row for: one statement, its own transaction.
_LOCK_IF_FREE = (
    "INSERT INTO locks (key, token, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING"
)
#: The same, unless the key has a live record (``_select``'s): a new origin's
#: lock, and the answer that there is nothing to read, in one statement.
_LOCK_IF_FREE_AND_UNRECORDED = (
    "INSERT INTO locks (key, token, expires_at) SELECT ?1, ?2, ?3 WHERE NOT EXISTS "
    "(SELECT 1 FROM origins WHERE key = ?1 AND expires_at > ?4) ON CONFLICT (key) DO NOTHING"
)
#: Seconds between two commits of the records a fetch wrote, while fetches
#: keep ending: a broad crawl stores a new origin every few milliseconds, and
#: a commit each cost about 5% of its CPU (docs/benchmarks.md).
_COMMIT_EVERY = 0.05
_BUSY_TIMEOUT_MS = 30_000  # other processes' writes are short; the thread waits for them
#: Rows written between two WAL checkpoints (in the thread): a few hundred
#: new origins, about the thousand pages SQLite's automatic checkpoint allows.
_CHECKPOINT_EVERY = 1_000
_OPEN_RETRY_S = 0.01  # between tries to open a file another process is converting
_PURGE_EVERY = 1_000  # puts between two sweeps of expired rows
#: Rows one sweep looks at (the next ones in key order, round the table):
#: twice what the puts between two sweeps can add, so the file shrinks back,
#: and short enough that a reader queued behind a sweep waits milliseconds.
#: No index on expiry: a put writes one B-tree, not two.
_PURGE_BATCH = 2 * _PURGE_EVERY
#: Seconds between two looks, while alone, for a process that opened the
#: file since (``presence``): what a newcomer waits before it starts.
_ALONE_CHECK_EVERY = 0.05
_SCAN_BATCH = 10_000  # keys read per trip to the thread when learning the file's keys


def _lapses_after(expires_at: object, now: float) -> bool:
    """A lock row's expiry is still ahead; one that is not a number never is."""
    return isinstance(expires_at, (int, float)) and not math.isnan(expires_at) and expires_at > now


def _time(value: object) -> float | None:
    """A stored time, or None for anything that is not a number (a tampered row)."""
    return float(value) if isinstance(value, (int, float)) else None


def _is_corruption(exc: sqlite3.Error) -> bool:
    """Damage, not contention: "file is not a database", "malformed"."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock a statement needs (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (5, 6)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


# One class past 250 lines: the calls (records, locks, pace, forget log) share one
# connection, its turns between the loop and the thread (``worker``) and its batches.
class SqliteStorage:
    """``Storage`` in one SQLite file; open it with ``await SqliteStorage.open(path)``."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ):
        self.path = Path(path)
        self._unreadable = UnreadableRecords(str(self.path))
        self._clock = clock
        self._worker = Worker("scrapy_rep-sqlite")
        self._db: sqlite3.Connection | None = None  # used by one side at a time (``worker``)
        self._waits = True  # the connection's busy timeout: on in the thread, off on the loop
        self._checkpoint_at = _CHECKPOINT_EVERY  # the connection's total_changes then
        self._leases = Leases(self._extend, sleep=sleep)
        self._puts = 0
        self._swept_to = ""  # the last key the previous sweep looked at
        #: Writes not yet taken by a batch (appended by the loop, taken by the worker).
        self._queued: deque[_Queued] = deque()
        #: The commit of the records written after a fetch: one per
        #: ``_COMMIT_EVERY`` at most, at ``_commit_at`` (``time.monotonic``).
        self._commit_timer: asyncio.TimerHandle | None = None
        self._commit_at = 0.0
        self._told_failed = False
        #: Alone with the file (``presence``): the fetch locks held, in memory
        #: only (key -> token, ttl); every key the file may hold, once known.
        self._presence: Presence | None = None
        self._alone = False
        self._alone_held: dict[str, tuple[str, float]] = {}
        self._keys: KeyFilter | None = KeyFilter()
        self._keys_known = False  # the keys there at open are in ``_keys``
        self._watch: asyncio.TimerHandle | None = None
        self._scan: asyncio.Task[None] | None = None
        self._file = FileWatch(self.path, self._reopen)  # the path deleted or replaced

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> SqliteStorage:
        storage = cls(path, clock=clock, sleep=sleep)
        try:
            await storage._run(storage._connect, here=False)  # opening may wait
        except BaseException:
            storage._worker.stop()
            if storage._presence is not None:
                storage._presence.close()
            raise
        storage._file.start()
        if storage._presence is not None and storage._presence.alone:
            storage._alone = True
            storage._watch_others()
            storage._scan = asyncio.get_running_loop().create_task(storage._learn_keys())
        return storage

    # --- the protocol ---------------------------------------------------------

    async def get(self, key: str) -> OriginRecord | None:
        keys = self._keys
        if keys is not None and self._keys_known and self._is_alone() and key not in keys:
            return None  # alone, and the file never had it
        return await self._run(self._get, key, self._clock())

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        if self._keys is not None:
            self._keys.add(key)
        now = self._clock()
        await self._write((key, record, now + ttl_seconds, now, None))

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record (not its lock) and log it (``forgotten_since``):
        every process sharing the file fetches robots.txt again. True if there was one."""
        return await self._run(self._delete, key, self._clock())

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The keys forgotten after ``cursor`` (``ForgetLog``): one indexed read."""
        after = None if cursor is None else int(cursor)
        last, keys = await self._run(self._forgotten_after, after)
        return str(last), keys

    async def lock(self, key: str, ttl: float) -> bool:
        if self._is_alone():
            return self._hold_alone(key, ttl)
        token = new_token()
        won, taken_from = await self._run(self._acquire, key, token, self._clock(), ttl)
        if won:
            self._leases.hold(key, token, ttl)
        if taken_from is not None:
            self._leases.took_over(key, taken_from)
        return won

    async def lock_and_get(self, key: str, ttl: float) -> tuple[bool, OriginRecord | None]:
        """``lock`` then ``get``, in one trip to the worker thread."""
        if self._is_alone():
            won = self._hold_alone(key, ttl)
            return won, await self.get(key)
        token = new_token()
        now = self._clock()
        won, taken_from, found = await self._run(self._acquire_and_get, key, token, now, ttl)
        if won:
            self._leases.hold(key, token, ttl)
        if taken_from is not None:
            self._leases.took_over(key, taken_from)
        return won, found

    async def put_and_release(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        """``put`` then ``release`` in one transaction, without waiting for it:
        the fetching process has the record already, and the others, waiting
        on the lock, see the record when the lock goes, with the next commit
        (within ``_COMMIT_EVERY``). The records of the fetches that end
        meanwhile share it. A failed commit is logged, and its locks lapse."""
        token = self._leases.drop(key)
        self._alone_held.pop(key, None)  # no row to release
        if self._keys is not None:
            self._keys.add(key)
        now = self._clock()
        self._queued.append(_Queued((key, record, now + ttl_seconds, now, token), awaited=False))
        if self._commit_timer is None:
            wait = max(self._commit_at - time.monotonic(), 0.0)
            self._commit_timer = asyncio.get_running_loop().call_later(wait, self._commit)

    async def flush(self) -> None:
        """Commit the records written after fetches now, not with the next
        commit (``close`` does too)."""
        if self._commit_timer is not None:
            self._commit_timer.cancel()
            self._commit_timer = None
        if self._queued:
            await self._run(self._write_queued, None)

    def _commit(self) -> None:
        self._commit_timer = None
        if self._queued:  # a failure is logged there; nobody awaits this
            done = self._worker.call(self._guarded, self._write_queued, None)
            done.add_done_callback(_checked_point)

    async def renew(self, key: str, ttl: float) -> bool:
        """Extend our lock on ``key`` by ``ttl``; False if it is not ours (any more)."""
        if key in self._alone_held:
            return True
        token = self._leases.token(key)
        return token is not None and await self._extend(key, token, ttl)

    async def release(self, key: str) -> None:
        self._alone_held.pop(key, None)
        token = self._leases.drop(key)
        if token is not None:
            await self._run(self._release, key, token)

    # --- the pace (``Pacing``): one transaction each, on this machine's clock ------

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        return await self._run(self._pace, key, "reserve", interval, max_ahead, not_before)

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        return await self._run(self._pace, key, "pause", seconds, max_ahead)

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        return await self._run(self._pace, key, "going", interval, max_ahead)

    async def close(self) -> None:
        """Release our locks first: the next process need not wait for them to lapse."""
        held = self._leases.drop_all()
        self._file.stop()
        self._stop_alone()
        self._alone_held.clear()
        try:
            with contextlib.suppress(sqlite3.Error, RuntimeError):  # logged
                await self.flush()  # the records written after fetches first
            if held:
                with contextlib.suppress(sqlite3.Error, RuntimeError):  # they lapse anyway
                    await self._run(self._release_all, held)
            await self._run(self._disconnect)
        finally:
            self._worker.stop()
            if self._presence is not None:
                self._presence.close()

    # --- alone with the file (``presence``) -------------------------------------

    def _is_alone(self) -> bool:
        """Alone still: another process that opened the file ends that, for good."""
        if self._alone and self._presence is not None and self._presence.others_here():
            self._share()
        return self._alone

    def _hold_alone(self, key: str, ttl: float) -> bool:
        """A fetch lock for this process alone: in memory, as a row would be."""
        if key in self._alone_held:
            return False
        self._alone_held[key] = (new_token(), ttl)
        return True

    def _watch_others(self) -> None:
        """Look for newcomers every ``_ALONE_CHECK_EVERY`` while alone: they wait for us."""
        self._watch = None
        if self._is_alone():
            self._watch = asyncio.get_running_loop().call_later(
                _ALONE_CHECK_EVERY, self._watch_others
            )

    def _share(self) -> None:
        """Another process opened the file: write the locks held in memory as
        rows, then let it in (``Presence.let_in``); from now on, rows only."""
        self._stop_alone()
        held, self._alone_held = self._alone_held, {}
        now = self._clock()
        for key, (token, ttl) in held.items():
            self._leases.hold(key, token, ttl)
        presence = self._presence
        assert presence is not None
        rows = [(key, token, now + ttl) for key, (token, ttl) in held.items()]
        written = self._worker.call(self._guarded, self._write_locks, rows)
        written.add_done_callback(lambda done: _then(done, presence.let_in))

    def _stop_alone(self) -> None:
        self._alone = False
        self._keys = None
        self._keys_known = False
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._scan is not None:
            self._scan.cancel()
            self._scan = None

    async def _learn_keys(self) -> None:
        """Read the keys the file holds, a batch per trip to the thread, into
        ``_keys``: then a load of any other key is answered without a read."""
        try:
            count = await self._run(self._count, here=False)
            found = KeyFilter(count)
            after: str | None = ""
            while after is not None and count:
                after = await self._run(self._scan_keys, found, after, here=False)
        except (sqlite3.Error, RuntimeError) as exc:  # every load reads, as before
            logger.debug("Reading the keys of %s failed: %r", self.path, exc)
            self._scan = None
            return
        if self._keys is not None:
            self._keys.merge(found)
            self._keys_known = True
        self._scan = None

    async def _extend(self, key: str, token: str, ttl: float) -> bool:
        return await self._run(self._prolong, key, token, self._clock() + ttl)

    async def _write(self, write: _Write) -> None:
        """Queue ``write`` and return once it is committed, as a put always did:
        a lock is released, and another process sees the record, only with the
        record written. Its trip keeps its place among the others (a load
        queued after it sees it); whichever trip comes first writes the batch."""
        queued = _Queued(write)
        self._queued.append(queued)
        await self._run(self._write_queued, queued)

    # --- the statements: on the loop, or in the worker thread ------------------

    async def _run(self, func: Callable[..., T], *args: object, here: bool = True) -> T:
        return await self._worker.call(self._guarded, func, *args, here=here)

    def _guarded(self, func: Callable[..., T], *args: object) -> T:
        """Run ``func``. On the loop, a busy file or a damaged one sends it to
        the thread (``WouldBlock``: nothing done yet); there, on damage, the
        file is moved aside once and ``func`` runs again."""
        in_thread = self._worker.in_thread()
        self._wait_for_others(in_thread)
        try:
            result = func(*args)
        except sqlite3.DatabaseError as exc:
            if not in_thread and (_is_busy(exc) or _is_corruption(exc)):
                raise WouldBlock from exc
            if not _is_corruption(exc):
                raise
            self._recover(exc)
            result = func(*args)
        self._checkpoint_when_due(in_thread)
        return result

    def _wait_for_others(self, waits: bool) -> None:
        """The busy timeout for this side: the thread waits, the loop never does."""
        if waits is not self._waits and self._db is not None:
            self._db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS if waits else 0}")
            self._waits = waits

    def _checkpoint_when_due(self, in_thread: bool) -> None:
        """Copy the WAL into the file every ``_CHECKPOINT_EVERY`` rows, in the
        thread: a checkpoint syncs the disk, which the loop must not wait for."""
        db = self._db
        if db is None or db.total_changes < self._checkpoint_at:
            return
        self._checkpoint_at = db.total_changes + _CHECKPOINT_EVERY
        if in_thread:
            self._checkpoint()
        else:
            self._worker.call(self._guarded, self._checkpoint, here=False).add_done_callback(
                _checked_point
            )

    def _checkpoint(self) -> None:
        """Without waiting for readers or writers (PASSIVE): what is left goes next time."""
        with contextlib.suppress(sqlite3.OperationalError):
            self._conn().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._presence is None:
            self._presence = Presence.enter(self.path)
        try:
            self._db = self._open_db()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._recover(exc)
            self._db = self._open_db()

    def _open_db(self) -> sqlite3.Connection:
        """Open, retrying "locked": SQLite skips the busy handler while
        another process turns a new file to WAL, so two crawls starting at
        once could otherwise fail on a healthy file."""
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                db = self._open_db_once()
                self._file.opened()
                return db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(_OPEN_RETRY_S)

    def _open_db_once(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,  # the loop and the thread take turns (``worker``)
        )
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA wal_autocheckpoint = 0")  # the thread checkpoints
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM origins WHERE key = ''").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def _recover(self, exc: sqlite3.Error) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._waits = True
        self._checkpoint_at = _CHECKPOINT_EVERY  # a new connection counts from zero
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(self._clock())}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                os.replace(source, Path(f"{aside}{suffix}"))
        logger.warning(
            "The robots.txt cache %s is damaged (%s): moved it to %s and started a new one",
            self.path,
            exc,
            aside,
        )
        self._db = self._open_db()

    async def _reopen(self) -> None:
        """The path names another file, or none: this store's turns to come,
        then the path opened again (the new file shared from the start)."""
        self._stop_alone()
        await self._run(self._reopen_file, here=False)

    def _reopen_file(self) -> None:
        paces = live_paces(self._conn(), self._clock())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        presence = Presence.enter(self.path)
        try:
            db = self._open_db()
        except BaseException:
            presence.close()
            raise
        self._disconnect()
        if self._presence is not None:
            self._presence.close()
        self._db, self._presence = db, presence
        self._waits, self._checkpoint_at = True, _CHECKPOINT_EVERY
        if presence.alone:
            presence.let_in()  # no longer alone with it: whoever comes shares at once
        merge_paces(db, paces)

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"the robots.txt cache {self.path} is closed")
        return self._db

    def _count(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM origins").fetchone()[0])

    def _scan_keys(self, into: KeyFilter, after: str) -> str | None:
        """Add the ``_SCAN_BATCH`` keys after ``after`` to ``into``: the last one,
        or None at the table's end."""
        rows = (
            self._conn()
            .execute(
                "SELECT key FROM origins WHERE key > ? ORDER BY key LIMIT ?", (after, _SCAN_BATCH)
            )
            .fetchall()
        )
        for (key,) in rows:
            into.add(str(key))
        return str(rows[-1][0]) if len(rows) == _SCAN_BATCH else None

    def _write_locks(self, rows: list[tuple[str, str, float]]) -> None:
        """The locks held while alone, as rows, in one transaction."""
        if not rows:
            return
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                "INSERT OR REPLACE INTO locks (key, token, expires_at) VALUES (?, ?, ?)", rows
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _select(self, key: str, now: float) -> bytes | None:
        row = (
            self._conn()
            .execute("SELECT data FROM origins WHERE key = ? AND expires_at > ?", (key, now))
            .fetchone()
        )
        return None if row is None else bytes(row[0])

    def _get(self, key: str, now: float) -> OriginRecord | None:
        """Read and decode in the worker: the loop thread only picks the record up."""
        data = self._select(key, now)
        if data is None:
            return None
        try:
            return OriginRecord.from_bytes(data)
        except ValueError as exc:
            self._unreadable.seen(key, exc)
            return None

    def _upsert(self, key: str, record: OriginRecord, expires_at: float, now: float) -> None:
        data = record.to_bytes()
        db = self._conn()
        db.execute(
            "INSERT INTO origins (key, data, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) "
            "DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at",
            (key, data, expires_at),
        )
        self._puts += 1
        if self._puts % _PURGE_EVERY == 0:
            self._sweep(db, now)

    def _sweep(self, db: sqlite3.Connection, now: float) -> None:
        """Delete the expired records among the next ``_PURGE_BATCH`` keys after
        the last sweep's, starting over at the end; and expired locks and paces."""
        start = self._swept_to
        row = db.execute(
            "SELECT key FROM origins WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?",
            (start, _PURGE_BATCH - 1),
        ).fetchone()
        if row is None:  # the table's end is near: to it, and start over next time
            self._swept_to = ""
            db.execute("DELETE FROM origins WHERE key > ? AND expires_at <= ?", (start, now))
        else:  # a key range, so that SQLite reads those rows only
            self._swept_to = str(row[0])
            db.execute(
                "DELETE FROM origins WHERE key > ? AND key <= ? AND expires_at <= ?",
                (start, self._swept_to, now),
            )
        db.execute("DELETE FROM locks WHERE expires_at <= ?", (now,))
        db.execute("DELETE FROM pace WHERE next_at <= ? AND paused_until <= ?", (now, now))

    def _delete(self, key: str, now: float) -> bool:
        """Delete and log in one transaction: a crawl that reads the entry finds
        the record gone. The log is trimmed here, by age and by count."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            deleted = db.execute("DELETE FROM origins WHERE key = ?", (key,)).rowcount > 0
            row = db.execute("INSERT INTO forgotten (key, at) VALUES (?, ?)", (key, now))
            db.execute(
                "DELETE FROM forgotten WHERE at < ? OR id <= ?",
                (now - FORGOTTEN_KEEP, (row.lastrowid or 0) - FORGOTTEN_MAX),
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return deleted

    def _forgotten_after(self, after: int | None) -> tuple[int, list[str]]:
        db = self._conn()
        last = int(db.execute("SELECT coalesce(max(id), 0) FROM forgotten").fetchone()[0])
        if after is None:
            return last, []
        if after > last:  # the log was trimmed empty, or the file is a new one
            after = 0
        rows = db.execute(
            "SELECT id, key FROM forgotten WHERE id > ? ORDER BY id LIMIT ?",
            (after, FORGOTTEN_BATCH),
        ).fetchall()
        return (int(rows[-1][0]) if rows else after), [str(key) for _, key in rows]

    def _acquire(self, key: str, token: str, now: float, ttl: float) -> tuple[bool, str | None]:
        """Take the lock unless a live holder has it: (won, the dead holder taken over).

        A lock that would outlive one ``ttl`` (an older version's, a tampered
        row) is cut down to it: outlived, not stolen. A key without a lock row
        (a new origin, almost always) takes one statement; the transaction
        that reads the row first is for a key that has one.
        """
        db = self._conn()
        if db.execute(_LOCK_IF_FREE, (key, token, now + ttl)).rowcount == 1:
            return True, None
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT token, expires_at FROM locks WHERE key = ?", (key,)).fetchone()
            # Our own token: this call ran before and was moved to the thread.
            held = row is not None and _lapses_after(row[1], now) and row[0] != token
            gone = held and holder_gone(str(row[0]))
            if held and not gone:
                db.execute(
                    "UPDATE locks SET expires_at = ? WHERE key = ? AND NOT expires_at <= ?",
                    (now + ttl, key, now + ttl),
                )
            else:
                db.execute(
                    "INSERT OR REPLACE INTO locks (key, token, expires_at) VALUES (?, ?, ?)",
                    (key, token, now + ttl),
                )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return not held or gone, str(row[0]) if gone else None

    def _acquire_and_get(
        self, key: str, token: str, now: float, ttl: float
    ) -> tuple[bool, str | None, OriginRecord | None]:
        """A key with neither lock row nor live record (a new origin) takes one
        statement and no read; any other, ``_acquire`` then ``_get``."""
        db = self._conn()
        if db.execute(_LOCK_IF_FREE_AND_UNRECORDED, (key, token, now + ttl, now)).rowcount == 1:
            return True, None, None
        won, taken_from = self._acquire(key, token, now, ttl)
        return won, taken_from, self._get(key, now)

    def _write_queued(self, queued: _Queued | None) -> None:
        """``queued``'s write (None: the writes nobody awaits): done by an
        earlier trip's batch, or now, with every write queued since, in one
        transaction."""
        if queued is None or not queued.done:
            batch: list[_Queued] = []
            while self._queued:  # deque: appends from the loop thread are safe
                batch.append(self._queued.popleft())
            if not batch:
                return
            writes = [item.write for item in batch]
            try:
                self._guarded(self._write_batch, writes)
            except WouldBlock:  # to the thread, which takes the batch again
                self._queued.extendleft(reversed(batch))
                raise
            except BaseException as exc:
                for item in batch:
                    item.error = exc
                if not all(item.awaited for item in batch):
                    self._failed(exc)
            for item in batch:
                item.done = True
            self._commit_at = time.monotonic() + _COMMIT_EVERY
        if queued is not None and queued.error is not None:
            raise queued.error

    def _failed(self, exc: BaseException) -> None:
        """Say (once, then at debug level) that records written after their fetches were lost."""
        level = logging.DEBUG if self._told_failed else logging.WARNING
        self._told_failed = True
        logger.log(
            level,
            "Storing robots.txt records in %s failed (%r): other processes fetch them again",
            self.path,
            exc,
        )

    def _write_batch(self, writes: list[_Write]) -> None:
        """The queued writes (and the lock releases that go with them), in one transaction."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        try:
            for key, record, expires_at, now, token in writes:
                self._upsert(key, record, expires_at, now)
                if token is not None:
                    self._release(key, token)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _pace(
        self,
        key: str,
        what: str,
        amount: float,
        max_ahead: float,
        not_before: float = 0.0,
    ) -> float:
        """Read, compute (``pace``), write, in one IMMEDIATE transaction, ``now``
        read once it holds the file: the processes sharing it take turns, never the same one."""
        db = self._conn()
        db.execute("BEGIN IMMEDIATE")
        now = self._clock()
        try:
            found = db.execute(
                "SELECT next_at, paused_until, went_at FROM pace WHERE key = ?", (key,)
            ).fetchone()
            stored = pace.Times(*(_time(value) for value in found)) if found else pace.Times()
            if what == "reserve":
                turn = pace.reserve(stored, now, amount, max_ahead, not_before)
            else:
                step = pace.pause if what == "pause" else pace.going
                turn = step(stored, now, amount, max_ahead)
            db.execute(
                "INSERT OR REPLACE INTO pace (key, next_at, paused_until, went_at) "
                "VALUES (?, ?, ?, ?)",
                (key, *turn.times),
            )
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return turn.wait

    def _prolong(self, key: str, token: str, expires_at: float) -> bool:
        cursor = self._conn().execute(
            "UPDATE locks SET expires_at = ? WHERE key = ? AND token = ?", (expires_at, key, token)
        )
        return cursor.rowcount == 1

    def _release(self, key: str, token: str) -> None:
        self._conn().execute("DELETE FROM locks WHERE key = ? AND token = ?", (key, token))

    def _release_all(self, held: dict[str, str]) -> None:
        for key, token in held.items():
            self._release(key, token)

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def _then(done: asyncio.Future[None], step: Callable[[], None]) -> None:
    """``step`` after ``done``, however it went (a failure is met again later)."""
    _checked_point(done)
    step()


def _checked_point(future: asyncio.Future[None]) -> None:
    """A call nobody awaits (a checkpoint, a commit): what it met is dealt with
    there, or met again by the next one."""
    if not future.cancelled():
        future.exception()
