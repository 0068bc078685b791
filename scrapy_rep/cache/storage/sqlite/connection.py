"""The SQLite store's one connection, and its two sides: the loop and a thread.

A statement takes microseconds unless another process holds the write
lock, so statements run on the event loop with a busy timeout of zero, and
one that finds the file busy moves to a thread that may wait (``worker``):
the loop never waits for another process, and a crawl does not pay a
thread hop per statement. Nor does the loop ever sync the disk: automatic
WAL checkpoints are off, and the thread checkpoints every
``CHECKPOINT_EVERY`` rows written. A file that is not a database, or is
damaged, is moved aside with one warning and a new one is started: a lost
cache costs refetches, never a crawl.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, Final, ParamSpec, TypeVar

from scrapy_rep.cache.storage.sqlite.statements import SCHEMA
from scrapy_rep.cache.storage.sqlite.worker import Worker, WouldBlock

__all__ = ["CHECKPOINT_EVERY", "SqliteConnection", "checked_point"]

logger = logging.getLogger("scrapy_rep.cache.storage.sqlite")  # said as the store

T = TypeVar("T")
P = ParamSpec("P")

BUSY_TIMEOUT_MS: Final = 30_000  # other processes' writes are short; the thread waits for them
#: Rows written between two WAL checkpoints (in the thread): a few hundred
#: new origins, about the thousand pages SQLite's automatic checkpoint allows.
CHECKPOINT_EVERY: Final = 1_000
_OPEN_RETRY_S: Final = 0.01  # between tries to open a file another process is converting


def _is_corruption(exc: sqlite3.Error) -> bool:
    """Damage, not contention: "file is not a database", "malformed"."""
    return isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)


def _is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock a statement needs (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (5, 6)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def checked_point(future: asyncio.Future[Any]) -> None:
    """A call nobody awaits (a checkpoint, a commit): what it met is dealt with
    there, or met again by the next one."""
    if not future.cancelled():
        future.exception()


class SqliteConnection:
    """The connection to ``path``, used by one side at a time (``worker``)."""

    def __init__(self, path: Path, clock: Callable[[], float], opened: Callable[[], None]) -> None:
        self.path = path
        self._clock = clock  # names a damaged file moved aside
        self._opened = opened  # told each time the path is opened (``FileWatch``)
        self.worker = Worker("scrapy_rep-sqlite")
        self._db: sqlite3.Connection | None = None
        self._waits = True  # the busy timeout: on in the thread, off on the loop
        self._checkpoint_at = CHECKPOINT_EVERY  # the connection's total_changes then

    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"the robots.txt cache {self.path} is closed")
        return self._db

    async def run(self, func: Callable[..., T], *args: object, here: bool = True) -> T:
        """``func(*args)`` on the loop (``here``) unless the file is busy, else in the thread."""
        return await self.worker.call(self.guarded, func, *args, here=here)

    async def step(
        self,
        statement: Callable[Concatenate[sqlite3.Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """A statement of ``statements`` on this connection, as ``run`` runs it."""

        def on_db() -> T:
            return statement(self.db(), *args, **kwargs)

        return await self.run(on_db)

    def guarded(self, func: Callable[..., T], *args: object) -> T:
        """Run ``func``. On the loop, a busy file or a damaged one sends it to
        the thread (``WouldBlock``: nothing done yet); there, on damage, the
        file is moved aside once and ``func`` runs again."""
        in_thread = self.worker.in_thread()
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

    def connect(self) -> None:
        """Open the path (in the thread: opening may wait), moving a damaged file aside."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self.open()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._recover(exc)

    def open(self) -> sqlite3.Connection:
        """A new connection to the path, retrying "locked": SQLite skips the busy
        handler while another process turns a new file to WAL, so two crawls
        starting at once could otherwise fail on a healthy file."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                db = self._open_once()
                self._opened()
                return db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(_OPEN_RETRY_S)

    def replace(self, db: sqlite3.Connection) -> None:
        """Use ``db`` (the path opened again) from now on, the old one closed."""
        self.disconnect()
        self._db = db
        self._waits, self._checkpoint_at = True, CHECKPOINT_EVERY

    def disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _open_once(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,  # the loop and the thread take turns (``worker``)
        )
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA wal_autocheckpoint = 0")  # the thread checkpoints
            db.executescript(SCHEMA)
            db.execute("SELECT count(*) FROM origins WHERE key = ''").fetchone()
        except BaseException:
            db.close()
            raise
        return db

    def _recover(self, exc: sqlite3.Error) -> None:
        self.disconnect()
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
        self.replace(self.open())  # a new connection counts its rows from zero

    def _wait_for_others(self, waits: bool) -> None:
        """The busy timeout for this side: the thread waits, the loop never does."""
        if waits is not self._waits and self._db is not None:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS if waits else 0}")
            self._waits = waits

    def _checkpoint_when_due(self, in_thread: bool) -> None:
        """Copy the WAL into the file every ``CHECKPOINT_EVERY`` rows, in the
        thread: a checkpoint syncs the disk, which the loop must not wait for."""
        db = self._db
        if db is None or db.total_changes < self._checkpoint_at:
            return
        self._checkpoint_at = db.total_changes + CHECKPOINT_EVERY
        if in_thread:
            self._checkpoint()
        else:
            self.worker.call(self.guarded, self._checkpoint, here=False).add_done_callback(
                checked_point
            )

    def _checkpoint(self) -> None:
        """Without waiting for readers or writers (PASSIVE): what is left goes next time."""
        with contextlib.suppress(sqlite3.OperationalError):
            self.db().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
