"""The SQLite store's statements: plain functions of a connection.

The tables (``SCHEMA``), and each step the store takes on them, as it runs on
whichever side of the connection has it (the loop or the thread,
``connection``). A step that reads then writes holds the file from the
start (``immediate``), so processes sharing it take turns, never the same one.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final

from scrapy_rep.cache import pace
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH, FORGOTTEN_KEEP, FORGOTTEN_MAX
from scrapy_rep.cache.storage.leases import holder_gone
from scrapy_rep.cache.storage.sqlite.key_filter import KeyFilter

__all__ = [
    "SCHEMA",
    "acquire",
    "count",
    "delete_and_log",
    "forgotten_after",
    "immediate",
    "lock_if_free_and_unrecorded",
    "log_forgotten",
    "pace_step",
    "prolong",
    "records_after",
    "release",
    "scan_keys",
    "select",
    "stored_time",
    "sweep",
    "upsert",
    "write_locks",
]

SCHEMA: Final = """
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
_LOCK_IF_FREE: Final = (
    "INSERT INTO locks (key, token, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING"
)
#: The same, unless the key has a live record (``select``'s): a new origin's
#: lock, and the answer that there is nothing to read, in one statement.
_LOCK_IF_FREE_AND_UNRECORDED: Final = (
    "INSERT INTO locks (key, token, expires_at) SELECT ?1, ?2, ?3 WHERE NOT EXISTS "
    "(SELECT 1 FROM origins WHERE key = ?1 AND expires_at > ?4) ON CONFLICT (key) DO NOTHING"
)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One transaction holding the file from its start; undone on any error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def stored_time(value: object) -> float | None:
    """A stored time, or None for anything that is not a number (a tampered row)."""
    return float(value) if isinstance(value, (int, float)) else None


def _lapses_after(expires_at: object, now: float) -> bool:
    """A lock row's expiry is still ahead; one that is not a number never is."""
    return isinstance(expires_at, (int, float)) and not math.isnan(expires_at) and expires_at > now


# --- records ----------------------------------------------------------------------


def select(db: sqlite3.Connection, key: str, now: float) -> bytes | None:
    """The record's bytes: a value stored as TEXT (a foreign writer) is read
    as its bytes too, and decoding it says whether it is a record."""
    row = db.execute(
        "SELECT CAST(data AS BLOB) FROM origins WHERE key = ? AND expires_at > ?", (key, now)
    ).fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


def upsert(db: sqlite3.Connection, key: str, data: bytes, expires_at: float) -> None:
    db.execute(
        "INSERT INTO origins (key, data, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) "
        "DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at",
        (key, data, expires_at),
    )


def sweep(db: sqlite3.Connection, start: str, now: float, batch: int) -> str:
    """Delete the expired records among the ``batch`` keys after ``start``
    (starting over at the table's end), and expired locks and paces; where
    the next sweep starts."""
    row = db.execute(
        "SELECT key FROM origins WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?", (start, batch - 1)
    ).fetchone()
    if row is None:  # the table's end is near: to it, and start over next time
        swept_to = ""
        db.execute("DELETE FROM origins WHERE key > ? AND expires_at <= ?", (start, now))
    else:  # a key range, so that SQLite reads those rows only
        swept_to = str(row[0])
        db.execute(
            "DELETE FROM origins WHERE key > ? AND key <= ? AND expires_at <= ?",
            (start, swept_to, now),
        )
    db.execute("DELETE FROM locks WHERE expires_at <= ?", (now,))
    db.execute("DELETE FROM pace WHERE next_at <= ? AND paused_until <= ?", (now, now))
    return swept_to


def count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM origins").fetchone()[0])


def scan_keys(db: sqlite3.Connection, into: KeyFilter, after: object, batch: int) -> object:
    """Add the ``batch`` keys after ``after`` to ``into``: the last one as
    read, or None at the table's end. Paging goes on from the key as read:
    a foreign writer's BLOB key, turned to text, sorts before every BLOB
    again, and the scan would never end."""
    rows = db.execute(
        "SELECT key FROM origins WHERE key > ? ORDER BY key LIMIT ?", (after, batch)
    ).fetchall()
    for (key,) in rows:
        into.add(str(key))
    return rows[-1][0] if len(rows) == batch else None


#: The records after a key, in key order, with the header line and the
#: body's size, cut in SQLite (a body is not copied out), or the whole value.
#: Values are read as bytes whatever their type (``CAST``: a TEXT value of a
#: foreign writer is not a record, and decoding it says so).
_RECORDS: Final = (
    "SELECT key, {}, length(CAST(data AS BLOB)) - instr(CAST(data AS BLOB), X'0A') "
    "FROM origins WHERE {} expires_at > ? ORDER BY key LIMIT ?"
)
_HEAD: Final = "substr(CAST(data AS BLOB), 1, instr(CAST(data AS BLOB), X'0A'))"
_WHOLE: Final = "CAST(data AS BLOB)"
_AFTER: Final = "key > ? AND"


def records_after(
    db: sqlite3.Connection, after: object, now: float, batch: int, *, bodies: bool = False
) -> list[tuple[object, bytes | None, int | None]]:
    """The ``batch`` live records after the key ``after`` (None: from the
    first), in key order: (key, the header line or with ``bodies`` the whole
    value, the body's size). ``after`` is a key as read, of any type: SQLite
    orders TEXT before BLOB, so a BLOB key named by its text would be
    "after" itself, and the scan would never end."""
    statement = _RECORDS.format(_WHOLE if bodies else _HEAD, "" if after is None else _AFTER)
    values = (now, batch) if after is None else (after, now, batch)
    return db.execute(statement, values).fetchall()


# --- the forget log ----------------------------------------------------------------


def delete_and_log(db: sqlite3.Connection, key: str, now: float) -> bool:
    """Delete and log in one transaction: a crawl that reads the entry finds
    the record gone. The log is trimmed here, by age and by count."""
    with immediate(db):
        deleted = db.execute("DELETE FROM origins WHERE key = ?", (key,)).rowcount > 0
        log_forgotten(db, key, now)
    return deleted


def log_forgotten(db: sqlite3.Connection, key: str, now: float) -> None:
    """The entry running crawls read, and the log trimmed by age and by count."""
    row = db.execute("INSERT INTO forgotten (key, at) VALUES (?, ?)", (key, now))
    db.execute(
        "DELETE FROM forgotten WHERE at < ? OR id <= ?",
        (now - FORGOTTEN_KEEP, (row.lastrowid or 0) - FORGOTTEN_MAX),
    )


def forgotten_after(db: sqlite3.Connection, after: int | None) -> tuple[int, list[str]]:
    last = int(db.execute("SELECT coalesce(max(id), 0) FROM forgotten").fetchone()[0])
    if after is None:
        return last, []
    if after > last:  # the log was trimmed empty, or the file is a new one
        after = 0
    rows = db.execute(
        "SELECT id, key FROM forgotten WHERE id > ? ORDER BY id LIMIT ?", (after, FORGOTTEN_BATCH)
    ).fetchall()
    return (int(rows[-1][0]) if rows else after), [str(key) for _, key in rows]


# --- fetch locks -------------------------------------------------------------------


def acquire(
    db: sqlite3.Connection, key: str, token: str, now: float, ttl: float
) -> tuple[bool, str | None]:
    """Take the lock unless a live holder has it: (won, the dead holder taken over).

    A lock that would outlive one ``ttl`` (an older version's, a tampered
    row) is cut down to it: outlived, not stolen. A key without a lock row
    (a new origin, almost always) takes one statement; the transaction
    that reads the row first is for a key that has one.
    """
    if db.execute(_LOCK_IF_FREE, (key, token, now + ttl)).rowcount == 1:
        return True, None
    with immediate(db):
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
    return not held or gone, str(row[0]) if gone else None


def lock_if_free_and_unrecorded(
    db: sqlite3.Connection, key: str, token: str, now: float, ttl: float
) -> bool:
    """A key with neither lock row nor live record (a new origin): locked in
    one statement, with nothing to read."""
    args = (key, token, now + ttl, now)
    return bool(db.execute(_LOCK_IF_FREE_AND_UNRECORDED, args).rowcount == 1)


def write_locks(db: sqlite3.Connection, rows: list[tuple[str, str, float]]) -> None:
    """Locks held in memory (alone with the file), as rows, in one transaction."""
    if rows:
        with immediate(db):
            db.executemany(
                "INSERT OR REPLACE INTO locks (key, token, expires_at) VALUES (?, ?, ?)", rows
            )


def prolong(db: sqlite3.Connection, key: str, token: str, expires_at: float) -> bool:
    cursor = db.execute(
        "UPDATE locks SET expires_at = ? WHERE key = ? AND token = ?", (expires_at, key, token)
    )
    return cursor.rowcount == 1


def release(db: sqlite3.Connection, key: str, token: str) -> None:
    db.execute("DELETE FROM locks WHERE key = ? AND token = ?", (key, token))


# --- the pace ----------------------------------------------------------------------


def pace_step(
    db: sqlite3.Connection,
    clock: Callable[[], float],
    key: str,
    what: str,
    amount: float,
    max_ahead: float,
    not_before: float = 0.0,
) -> float:
    """Read, compute (``cache/pace.py``), write, in one transaction, ``now``
    read once it holds the file: the wait of this ``reserve``, ``pause`` or
    ``going``."""
    with immediate(db):
        now = clock()
        found = db.execute(
            "SELECT next_at, paused_until, went_at FROM pace WHERE key = ?", (key,)
        ).fetchone()
        stored = pace.Times(*(stored_time(value) for value in found)) if found else pace.Times()
        if what == "reserve":
            turn = pace.reserve(stored, now, amount, max_ahead, not_before)
        else:
            step = pace.pause if what == "pause" else pace.going
            turn = step(stored, now, amount, max_ahead)
        db.execute(
            "INSERT OR REPLACE INTO pace (key, next_at, paused_until, went_at) VALUES (?, ?, ?, ?)",
            (key, *turn.times),
        )
    return turn.wait
