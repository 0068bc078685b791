"""The default store: one SQLite file shared by every crawl of a project.

WAL mode lets several crawler processes read and write the file at once.
The store's jobs, each in its own module: the connection and its two sides,
the loop and a thread that may wait (``connection``); the statements
(``statements``); the writes, queued and committed in batches
(``writes``); being alone with the file until another process opens
it (``alone``); and the file deleted or replaced under a crawl
(``file``). Fetch locks are rows with their owner's token, renewed
while held (``leases``), once another process has the file open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.errors import UnreadableRecords
from scrapy_rep.cache.storage.leases import Leases, new_token
from scrapy_rep.cache.storage.sqlite import statements as sql
from scrapy_rep.cache.storage.sqlite.alone import Alone
from scrapy_rep.cache.storage.sqlite.connection import SqliteConnection
from scrapy_rep.cache.storage.sqlite.file import FileWatch, live_paces, merge_paces
from scrapy_rep.cache.storage.sqlite.presence import Presence
from scrapy_rep.cache.storage.sqlite.writes import WriteQueue

__all__ = ["SqliteStorage"]

T = TypeVar("T")


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
        self._file = FileWatch(self.path, self._reopen)  # the path deleted or replaced
        self._connection = SqliteConnection(self.path, clock, self._file.opened)
        self._leases = Leases(self._extend, sleep=sleep)
        self._writes = WriteQueue(self._connection)
        self._alone = Alone(self._connection, self._leases, clock)

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
            storage._connection.worker.stop()
            storage._alone.close()
            raise
        storage._file.start()
        storage._alone.start()
        return storage

    # --- the protocol ---------------------------------------------------------

    async def get(self, key: str) -> OriginRecord | None:
        if self._alone.never_had(key):
            return None  # alone, and the file never had it
        return await self._run(self._get, key, self._clock())

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        self._alone.noted(key)
        now = self._clock()
        await self._writes.write((key, record, now + ttl_seconds, now, None))

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record (not its lock) and log it (``forgotten_since``):
        every process sharing the file fetches robots.txt again. True if there was one."""
        return await self._connection.step(sql.delete_and_log, key, self._clock())

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The keys forgotten after ``cursor`` (``ForgetLog``): one indexed read."""
        after = None if cursor is None else int(cursor)
        last, keys = await self._connection.step(sql.forgotten_after, after)
        return str(last), keys

    async def lock(self, key: str, ttl: float) -> bool:
        if self._alone.is_alone():
            return self._alone.hold(key, ttl)
        token = new_token()
        args = (key, token, self._clock(), ttl)
        won, taken_from = await self._connection.step(sql.acquire, *args)
        self._held(key, token, ttl, won, taken_from)
        return won

    async def lock_and_get(self, key: str, ttl: float) -> tuple[bool, OriginRecord | None]:
        """``lock`` then ``get``, in one trip to the worker thread."""
        if self._alone.is_alone():
            won = self._alone.hold(key, ttl)
            return won, await self.get(key)
        token = new_token()
        now = self._clock()
        won, taken_from, found = await self._run(self._acquire_and_get, key, token, now, ttl)
        self._held(key, token, ttl, won, taken_from)
        return won, found

    async def put_and_release(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        """``put`` then ``release`` in one transaction, without waiting for it:
        the fetching process has the record already, and the others, waiting
        on the lock, see the record when the lock goes, with the next commit
        (``writes``). A failed commit is logged, and its locks lapse."""
        token = self._leases.drop(key)
        self._alone.held.pop(key, None)  # no row to release
        self._alone.noted(key)
        now = self._clock()
        self._writes.later((key, record, now + ttl_seconds, now, token))

    async def flush(self) -> None:
        """Commit the records written after fetches now, not with the next
        commit (``close`` does too)."""
        await self._writes.flush()

    async def renew(self, key: str, ttl: float) -> bool:
        """Extend our lock on ``key`` by ``ttl``; False if it is not ours (any more)."""
        if key in self._alone.held:
            return True
        token = self._leases.token(key)
        return token is not None and await self._extend(key, token, ttl)

    async def release(self, key: str) -> None:
        self._alone.held.pop(key, None)
        token = self._leases.drop(key)
        if token is not None:
            await self._connection.step(sql.release, key, token)

    # --- the pace (``Pacing``): one transaction each, on this machine's clock ------

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        return await self._pace(key, "reserve", interval, max_ahead, not_before)

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        return await self._pace(key, "pause", seconds, max_ahead)

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        return await self._pace(key, "going", interval, max_ahead)

    async def close(self) -> None:
        """Release our locks first: the next process need not wait for them to lapse."""
        held = self._leases.drop_all()
        self._file.stop()
        self._alone.stop()
        self._alone.held.clear()
        try:
            with contextlib.suppress(sqlite3.Error, RuntimeError):  # logged
                await self.flush()  # the records written after fetches first
            if held:
                with contextlib.suppress(sqlite3.Error, RuntimeError):  # they lapse anyway
                    await self._run(self._release_all, held)
            await self._run(self._connection.disconnect)
        finally:
            self._connection.worker.stop()
            self._alone.close()

    # --- the steps, on whichever side of the connection has it --------------------

    async def _run(self, func: Callable[..., T], *args: object, here: bool = True) -> T:
        return await self._connection.run(func, *args, here=here)

    async def _pace(self, key: str, what: str, *amounts: float) -> float:
        return await self._connection.step(sql.pace_step, self._clock, key, what, *amounts)

    def _held(self, key: str, token: str, ttl: float, won: bool, taken_from: str | None) -> None:
        if won:
            self._leases.hold(key, token, ttl)
        if taken_from is not None:
            self._leases.took_over(key, taken_from)

    def _get(self, key: str, now: float) -> OriginRecord | None:
        """Read and decode in the worker: the loop thread only picks the record up."""
        data = sql.select(self._connection.db(), key, now)
        if data is None:
            return None
        try:
            return OriginRecord.from_bytes(data)
        except ValueError as exc:
            self._unreadable.seen(key, exc)
            return None

    def _acquire_and_get(
        self, key: str, token: str, now: float, ttl: float
    ) -> tuple[bool, str | None, OriginRecord | None]:
        """A key with neither lock row nor live record (a new origin) takes one
        statement and no read; any other, ``acquire`` then ``_get``."""
        db = self._connection.db()
        if sql.lock_if_free_and_unrecorded(db, key, token, now, ttl):
            return True, None, None
        won, taken_from = sql.acquire(db, key, token, now, ttl)
        return won, taken_from, self._get(key, now)

    def _release_all(self, held: dict[str, str]) -> None:
        db = self._connection.db()
        for key, token in held.items():
            sql.release(db, key, token)

    async def _extend(self, key: str, token: str, ttl: float) -> bool:
        expires_at = self._clock() + ttl
        return await self._connection.step(sql.prolong, key, token, expires_at)

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._alone.enter()  # before the file is open: a newcomer waits to be let in
        self._connection.connect()

    async def _reopen(self) -> None:
        """The path names another file, or none: this store's turns to come,
        then the path opened again (the new file shared from the start)."""
        self._alone.stop()
        await self._run(self._reopen_file, here=False)

    def _reopen_file(self) -> None:
        paces = live_paces(self._connection.db(), self._clock())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        presence = Presence.enter(self.path)
        try:
            db = self._connection.open()
        except BaseException:
            presence.close()
            raise
        self._connection.replace(db)
        self._alone.moved(presence)
        merge_paces(db, paces)
