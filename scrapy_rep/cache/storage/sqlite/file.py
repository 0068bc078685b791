"""The SQLite store's file going away under a crawl (docs/storage.md).

A process keeps using the file it opened even once its path is deleted or
replaced (``rm -rf .scrapy``, a restore): it writes on, but a process that
opens the path now gets another file, and the two no longer share records
or turns. Each store looks at its path now and then (``FileWatch``); when
the path no longer names its file, it reopens the path, carrying the
origins' pace over (``live_paces`` then ``merge_paces``), so that every
process that does the same shares again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from scrapy_rep.cache.storage.sqlite.statements import immediate, stored_time

__all__ = ["FileWatch", "live_paces", "merge_paces"]

logger = logging.getLogger("scrapy_rep.cache.storage.sqlite")  # said as the store

#: Seconds between two looks at the path: a process that opens it meanwhile
#: shares nothing with this one until then.
CHECK_EVERY: Final = 0.25

#: An origin's turns as a row of the file's pace table: (key, next_at, paused_until, went_at).
PaceRow = tuple[str, float | None, float | None, float | None]


def _identity(path: Path) -> tuple[int, int] | None:
    """The file a path names (device, inode); None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


class FileWatch:
    """Whether a store's path still names the file it opened; if not, reopen
    it (``reopen``, which the store runs in its thread) and say so, once."""

    __slots__ = ("_opened", "_reopen", "_stopped", "_timer", "path")

    def __init__(self, path: Path, reopen: Callable[[], Awaitable[None]]) -> None:
        self.path = path
        self._reopen = reopen
        self._opened: tuple[int, int] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = False

    def opened(self) -> None:
        """The store has just opened its path: that is its file."""
        self._opened = _identity(self.path)

    def moved(self) -> bool:
        """The path names no file or another one (one ``stat``)."""
        return self._opened is not None and _identity(self.path) != self._opened

    def start(self) -> None:
        """Look every ``CHECK_EVERY`` seconds, on the running loop, until ``stop``."""
        if not self._stopped:
            self._timer = asyncio.get_running_loop().call_later(CHECK_EVERY, self._look)

    def stop(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _look(self) -> None:
        self._timer = None
        if not self.moved():
            self.start()
            return
        reopening = asyncio.ensure_future(self._reopen())
        reopening.add_done_callback(self._reopened)

    def _reopened(self, done: asyncio.Future[None]) -> None:
        if done.cancelled() or self._stopped:  # the store closed meanwhile
            return
        error = done.exception()
        if error is not None:
            logger.warning(
                "The robots.txt cache %s was deleted or replaced while this crawl had it "
                "open, and opening it again failed (%r): this crawl keeps the old file, "
                "and shares no record and no turn with the processes that open it now",
                self.path,
                error,
            )
            return
        logger.warning(
            "The robots.txt cache %s was deleted or replaced while this crawl had it open: "
            "opened it again, so that every process that does shares records and each "
            "origin's pace again (this crawl's turns carried over)",
            self.path,
        )
        self.start()


def live_paces(db: sqlite3.Connection, now: float) -> list[PaceRow]:
    """The pace rows still ahead (a turn or a pause to come)."""
    rows = db.execute(
        "SELECT key, next_at, paused_until, went_at FROM pace "
        "WHERE next_at > ? OR paused_until > ?",
        (now, now),
    ).fetchall()
    return [
        (str(key), stored_time(at), stored_time(paused), stored_time(went))
        for key, at, paused, went in rows
    ]


def merge_paces(db: sqlite3.Connection, rows: list[PaceRow]) -> None:
    """Keep the later of each time, row by row, in one transaction: another
    process may have written the new file meanwhile."""
    if not rows:
        return
    with immediate(db):
        for key, *times in rows:
            found = db.execute(
                "SELECT next_at, paused_until, went_at FROM pace WHERE key = ?", (key,)
            ).fetchone()
            there = [stored_time(value) for value in found] if found else [None, None, None]
            merged = [_later(mine, theirs) for mine, theirs in zip(times, there)]
            db.execute(
                "INSERT OR REPLACE INTO pace (key, next_at, paused_until, went_at) "
                "VALUES (?, ?, ?, ?)",
                (key, *merged),
            )


def _later(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return b if a is None else a
    return max(a, b)
