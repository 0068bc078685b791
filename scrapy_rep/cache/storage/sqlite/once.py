"""One look or one forget in a crawl's SQLite file, for people's commands
(``scrapy-rep cache show|forget``, the Tester; docs/tester.md, "Safety").

``SqliteStorage`` is a crawl's store: opening it turns the file to WAL,
creates the tables, tells the other processes it is there (``presence``)
and moves a damaged file aside to start a new one, since a lost cache
costs a crawl only refetches. A person's look must do none of that:

- ``read_record`` opens the file read-only (SQLite's ``mode=ro``), and
  ``immutable`` when no process has it open (no ``-wal`` or ``-journal``
  beside it), so that SQLite creates no side file either;
- ``forget_record`` opens it read-write but never creates it, and writes
  what ``SqliteStorage.forget`` writes (the same statements,
  ``statements``): the record deleted, the origin logged for running
  crawls (``forgotten``), in one transaction;
- ``scan_records`` reads every record, read-only too, a batch of rows per
  read transaction (a crawl writing the file meanwhile is never held up,
  and its checkpoints go on between two batches), without the bodies
  unless asked: ``scrapy-rep report`` (docs/cli.md);
- they wait at most ``wait`` seconds for a process holding the file's lock
  (``StoreBusy``), and a damaged file raises ``StoreDamaged`` naming it:
  nothing is moved, renamed or created.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Final

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.errors import StorageError, UnreadableRecord
from scrapy_rep.cache.storage.scanned import Scanned, read_scanned
from scrapy_rep.cache.storage.sqlite.statements import (
    immediate,
    log_forgotten,
    records_after,
    select,
)

__all__ = [
    "DEFAULT_WAIT",
    "SCAN_BATCH",
    "StoreBusy",
    "StoreDamaged",
    "forget_record",
    "forget_records",
    "read_record",
    "scan_records",
]

#: How long a command waits for another process's write: a crawl's are short.
DEFAULT_WAIT: Final = 10.0
_BUSY: Final = (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED


class StoreDamaged(StorageError):
    """The file is not a SQLite database, or a damaged one."""


class StoreBusy(StorageError):
    """Another process held the file's lock for longer than the wait."""


def read_record(path: str | Path, key: str, now: float, wait: float) -> OriginRecord | None:
    """``key``'s record as a crawl would load it at ``now`` (None: none kept);
    a value that is not a record raises ``UnreadableRecord`` (a crawl treats
    it as absent; a person is told)."""
    path = Path(path)
    quiet = not any(Path(f"{path}{side}").exists() for side in ("-wal", "-journal"))
    try:
        data = _select(path, key, now, wait, quiet)
    except sqlite3.DatabaseError as exc:
        if not (quiet and Path(f"{path}-wal").exists()):
            raise _named(exc, path, wait) from None
        try:  # a crawl opened the file meanwhile: read it as it is now
            data = _select(path, key, now, wait, False)
        except sqlite3.DatabaseError as again:
            raise _named(again, path, wait) from None
    if data is None:
        return None
    try:
        return OriginRecord.from_bytes(data)
    except ValueError as exc:
        raise UnreadableRecord(
            f"{key}: the store {path} keeps a value that is not a record ({exc}); a crawl "
            "treats it as absent and fetches robots.txt again (cache forget removes it)"
        ) from None


#: Rows per read transaction of ``scan_records``: a few milliseconds of reading.
SCAN_BATCH: Final = 2_000


def scan_records(
    path: str | Path, now: float, wait: float, *, bodies: bool = False, batch: int = SCAN_BATCH
) -> Iterator[Scanned]:
    """Every record a crawl would load at ``now``, in key order, ``batch``
    rows per read transaction: memory holds one batch, and a crawl sharing
    the file writes and checkpoints between two. ``bodies``: read each
    record's body too (else only its size)."""
    path = Path(path)
    with _ScanConnection(path, wait) as reader:
        after: object = None
        while True:
            rows = reader.batch(after, now, batch, bodies)
            for key, data, size in rows:
                if not isinstance(key, str) or data is None:  # a foreign row
                    yield (key_name(key), None, 0)
                    continue
                yield (key, *read_scanned(bytes(data), int(size or 0)))
            if len(rows) < batch or rows[-1][0] is None:
                return
            after = rows[-1][0]


def key_name(key: object) -> str:
    """A key that is not text, named for people: a BLOB as SQL writes it."""
    if isinstance(key, bytes):
        return f"x'{key[:32].hex()}'" + ("..." if len(key) > 32 else "")
    return "NULL" if key is None else repr(key) if not isinstance(key, str) else key


class _ScanConnection:
    """One read-only connection for a whole scan: immutable while no process
    has the file open (no side file is created), plain read-only from the
    batch after one opens it (a crawl may start in the middle of a scan)."""

    def __init__(self, path: Path, wait: float) -> None:
        self.path = path
        self.wait = wait
        self._db: sqlite3.Connection | None = None
        self._quiet = False

    def __enter__(self) -> _ScanConnection:
        return self

    def __exit__(self, *_: object) -> None:
        if self._db is not None:
            self._db.close()

    def _open(self) -> sqlite3.Connection:
        if self._db is not None and not (self._quiet and self._others_here()):
            return self._db
        if self._db is not None:
            self._db.close()
        self._quiet = not self._others_here()
        self._db = _connect(self.path, self.wait, "ro&immutable=1" if self._quiet else "ro")
        return self._db

    def _others_here(self) -> bool:
        return any(Path(f"{self.path}{side}").exists() for side in ("-wal", "-journal"))

    def batch(
        self, after: object, now: float, batch: int, bodies: bool
    ) -> list[tuple[object, bytes | None, int | None]]:
        try:
            db = self._open()
            if "origins" not in _tables(db):
                return []
            return records_after(db, after, now, batch, bodies=bodies)
        except sqlite3.DatabaseError as exc:
            if self._quiet and self._others_here():  # a crawl opened it meanwhile
                return self.batch(after, now, batch, bodies)
            raise _named(exc, self.path, self.wait) from None


def forget_record(path: str | Path, key: str, now: float, wait: float) -> bool:
    """Delete ``key``'s record and log it for running crawls, as
    ``SqliteStorage.forget`` does; True if one was kept. A file no crawl has
    written to (no tables) is left as it is; one without the log (a version
    before it) has no crawl reading it, since a crawl's store creates it."""
    return forget_records(path, [key], now, wait) > 0


def forget_records(path: str | Path, keys: Sequence[str], now: float, wait: float) -> int:
    """``forget_record`` of each key, in one transaction (the Tester's Refetch
    of every origin of a report's filter); how many records were kept."""
    path = Path(path)
    try:
        with closing(_connect(path, wait, mode="rw")) as db:
            tables = _tables(db)
            if "origins" not in tables:
                return 0
            deleted = 0
            with immediate(db):
                for key in keys:
                    deleted += db.execute("DELETE FROM origins WHERE key = ?", (key,)).rowcount
                    if "forgotten" in tables:
                        log_forgotten(db, key, now)
            return deleted
    except sqlite3.DatabaseError as exc:
        raise _named(exc, path, wait) from None


def _select(path: Path, key: str, now: float, wait: float, quiet: bool) -> bytes | None:
    mode = "ro&immutable=1" if quiet else "ro"
    with closing(_connect(path, wait, mode)) as db:
        return select(db, key, now) if "origins" in _tables(db) else None


def _connect(path: Path, wait: float, mode: str) -> sqlite3.Connection:
    """A URI that never creates the file (``mode=ro`` or ``rw``, not ``rwc``)."""
    uri = f"{path.resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=max(wait, 0.0), isolation_level=None)


def _tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {str(name) for (name,) in rows}


def _named(exc: sqlite3.DatabaseError, path: Path, wait: float) -> StorageError:
    """What went wrong, naming the file and what to do; nothing was changed."""
    code = getattr(exc, "sqlite_errorcode", None)
    busy = code is not None and code & 0xFF in _BUSY
    if busy or (code is None and "locked" in str(exc)):
        return StoreBusy(
            f"the store {path} is locked by another process (waited {wait:g} s): "
            "nothing was changed; try again once its write is done, or wait longer (--wait)"
        )
    if not isinstance(exc, sqlite3.OperationalError):  # "not a database", "malformed"
        return StoreDamaged(
            f"the store {path} is damaged ({exc}): nothing was changed. A crawl that opens "
            f"it moves it aside (to {path.name}.corrupt-<time>) and starts a new one; "
            "copy it first if you want to keep it, or delete it to start afresh"
        )
    return StorageError(f"cannot use the store {path}: {exc}")
