"""The SQLite store's writes: queued, and committed in batches.

Each put keeps its place in a queue, and the first of them to be reached
writes every put queued by then in one transaction: a put with none ahead of
it commits alone, at once, and the puts that queue behind a statement in the
thread share a commit. The record a fetch wrote (``later``) is not waited
for: it commits with the others of its ``COMMIT_EVERY``, and a broad crawl
pays one commit for many new origins (docs/benchmarks.md). Expired rows are
swept every ``_PURGE_EVERY`` puts, a key range at a time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Final

from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.storage.sqlite.connection import SqliteConnection, checked_point
from scrapy_rep.cache.storage.sqlite.statements import immediate, release, sweep, upsert
from scrapy_rep.cache.storage.sqlite.worker import WouldBlock

__all__ = ["Write", "WriteQueue"]

logger = logging.getLogger("scrapy_rep.cache.storage.sqlite")  # said as the store

#: A record waiting for the next write: key, record, expires_at, now, and the
#: token of our lock on the key to release with it (None: no lock).
Write = tuple[str, OriginRecord, float, float, str | None]

#: Seconds between two commits of the records a fetch wrote, while fetches
#: keep ending: a broad crawl stores a new origin every few milliseconds, and
#: a commit each cost about 5% of its CPU (docs/benchmarks.md).
COMMIT_EVERY: Final = 0.05
_PURGE_EVERY: Final = 1_000  # puts between two sweeps of expired rows
#: Rows one sweep looks at (the next ones in key order, round the table):
#: twice what the puts between two sweeps can add, so the file shrinks back,
#: and short enough that a reader queued behind a sweep waits milliseconds.
#: No index on expiry: a put writes one B-tree, not two.
_PURGE_BATCH: Final = 2 * _PURGE_EVERY


class _Queued:
    """A write waiting in the queue, and how it went once a batch took it;
    ``awaited``: by its caller (``put``), else only logged if it fails."""

    __slots__ = ("awaited", "done", "error", "write")

    def __init__(self, write: Write, awaited: bool = True) -> None:
        self.write = write
        self.awaited = awaited
        self.done = False
        self.error: BaseException | None = None


class WriteQueue:
    """The writes not yet committed, and the batches that commit them."""

    def __init__(self, connection: SqliteConnection) -> None:
        self._connection = connection
        #: Writes not yet taken by a batch (appended by the loop, taken by the worker).
        self._queued: deque[_Queued] = deque()
        #: The commit of the records written after a fetch: one per
        #: ``COMMIT_EVERY`` at most, at ``_commit_at`` (``time.monotonic``).
        self._commit_timer: asyncio.TimerHandle | None = None
        self._commit_at = 0.0
        self._told_failed = False
        self._puts = 0
        self._swept_to = ""  # the last key the previous sweep looked at

    async def write(self, write: Write) -> None:
        """Queue ``write`` and return once it is committed, as a put always did:
        a lock is released, and another process sees the record, only with the
        record written. Its trip keeps its place among the others (a load
        queued after it sees it); whichever trip comes first writes the batch."""
        queued = _Queued(write)
        self._queued.append(queued)
        await self._connection.run(self._take, queued)

    def later(self, write: Write) -> None:
        """Queue ``write`` without waiting: it commits within ``COMMIT_EVERY``."""
        self._queued.append(_Queued(write, awaited=False))
        if self._commit_timer is None:
            wait = max(self._commit_at - time.monotonic(), 0.0)
            self._commit_timer = asyncio.get_running_loop().call_later(wait, self._commit)

    async def flush(self) -> None:
        """Commit what is queued now, not with the next commit."""
        if self._commit_timer is not None:
            self._commit_timer.cancel()
            self._commit_timer = None
        if self._queued:
            await self._connection.run(self._take, None)

    def _commit(self) -> None:
        self._commit_timer = None
        if self._queued:  # a failure is logged there; nobody awaits this
            connection = self._connection
            done = connection.worker.call(connection.guarded, self._take, None)
            done.add_done_callback(checked_point)

    def _take(self, queued: _Queued | None) -> None:
        """``queued``'s write (None: the writes nobody awaits): done by an
        earlier trip's batch, or now, with every write queued since, in one
        transaction."""
        if queued is None or not queued.done:
            batch: list[_Queued] = []
            while self._queued:  # deque: appends from the loop thread are safe
                batch.append(self._queued.popleft())
            if not batch:
                return
            try:
                self._connection.guarded(self._write_batch, [item.write for item in batch])
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
            self._commit_at = time.monotonic() + COMMIT_EVERY
        if queued is not None and queued.error is not None:
            raise queued.error

    def _write_batch(self, writes: list[Write]) -> None:
        """The queued writes (and the lock releases that go with them), in one transaction."""
        with immediate(self._connection.db()) as db:
            for key, record, expires_at, now, token in writes:
                upsert(db, key, record.to_bytes(), expires_at)
                self._puts += 1
                if self._puts % _PURGE_EVERY == 0:
                    self._swept_to = sweep(db, self._swept_to, now, _PURGE_BATCH)
                if token is not None:
                    release(db, key, token)

    def _failed(self, exc: BaseException) -> None:
        """Say (once, then at debug level) that records written after their fetches were lost."""
        level = logging.DEBUG if self._told_failed else logging.WARNING
        self._told_failed = True
        logger.log(
            level,
            "Storing robots.txt records in %s failed (%r): other processes fetch them again",
            self._connection.path,
            exc,
        )
