"""A SQLite store alone with its file, until another process opens it (docs/storage.md).

The first store on a file is alone (``presence``): it keeps its fetch locks
in memory, and learns the file's keys in the background (``key_filter``), so
that a new origin costs its share of a batched write and nothing else. When
another process opens the file, the alone store writes its locks as rows and
lets the newcomer in; from then on both use lock rows and read every key.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from typing import Final

from scrapy_rep.cache.storage.leases import Leases, new_token
from scrapy_rep.cache.storage.sqlite.connection import SqliteConnection, checked_point
from scrapy_rep.cache.storage.sqlite.key_filter import KeyFilter
from scrapy_rep.cache.storage.sqlite.presence import Presence
from scrapy_rep.cache.storage.sqlite.statements import count, scan_keys, write_locks

__all__ = ["Alone"]

logger = logging.getLogger("scrapy_rep.cache.storage.sqlite")  # said as the store

#: Seconds between two looks, while alone, for a process that opened the
#: file since (``presence``): what a newcomer waits before it starts.
_CHECK_EVERY: Final = 0.05
_SCAN_BATCH: Final = 10_000  # keys read per trip to the thread when learning the file's keys


class Alone:
    """Whether this store is alone with its file, and what it keeps meanwhile."""

    def __init__(
        self, connection: SqliteConnection, leases: Leases, clock: Callable[[], float]
    ) -> None:
        self._connection = connection
        self._leases = leases
        self._clock = clock
        self.presence: Presence | None = None
        self.active = False
        #: The fetch locks held while alone, in memory only: key -> (token, ttl).
        self.held: dict[str, tuple[str, float]] = {}
        #: Every key the file may hold, once known (``_known``).
        self._keys: KeyFilter | None = KeyFilter()
        self._known = False
        self._watch: asyncio.TimerHandle | None = None
        self._scan: asyncio.Task[None] | None = None

    def enter(self) -> None:
        """Say this process is here (before it opens the file; in the thread:
        a newcomer waits to be let in)."""
        if self.presence is None:
            self.presence = Presence.enter(self._connection.path)

    def start(self) -> None:
        """Once the file is open: alone, look for newcomers and learn the keys."""
        if self.presence is not None and self.presence.alone:
            self.active = True
            self._watch_others()
            self._scan = asyncio.get_running_loop().create_task(self._learn_keys())

    def is_alone(self) -> bool:
        """Alone still: another process that opened the file ends that, for good."""
        if self.active and self.presence is not None and self.presence.others_here():
            self._share()
        return self.active

    def never_had(self, key: str) -> bool:
        """Alone, and the file never had ``key``: a load needs no read."""
        keys = self._keys
        return keys is not None and self._known and self.is_alone() and key not in keys

    def noted(self, key: str) -> None:
        """``key`` is written: it is one of the file's keys now."""
        if self._keys is not None:
            self._keys.add(key)

    def hold(self, key: str, ttl: float) -> bool:
        """A fetch lock for this process alone: in memory, as a row would be."""
        if key in self.held:
            return False
        self.held[key] = (new_token(), ttl)
        return True

    def moved(self, presence: Presence) -> None:
        """The path opened again (``FileWatch``): here, but never alone there."""
        self.stop()
        if self.presence is not None:
            self.presence.close()
        self.presence = presence
        if presence.alone:
            presence.let_in()  # whoever comes shares at once

    def stop(self) -> None:
        self.active = False
        self._keys = None
        self._known = False
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._scan is not None:
            self._scan.cancel()
            self._scan = None

    def close(self) -> None:
        self.stop()
        self.held.clear()
        if self.presence is not None:
            self.presence.close()

    def _watch_others(self) -> None:
        """Look for newcomers every ``_CHECK_EVERY`` while alone: they wait for us."""
        self._watch = None
        if self.is_alone():
            self._watch = asyncio.get_running_loop().call_later(_CHECK_EVERY, self._watch_others)

    def _share(self) -> None:
        """Another process opened the file: write the locks held in memory as
        rows, then let it in (``Presence.let_in``); from now on, rows only."""
        self.stop()
        held, self.held = self.held, {}
        now = self._clock()
        for key, (token, ttl) in held.items():
            self._leases.hold(key, token, ttl)
        presence = self.presence
        assert presence is not None
        rows = [(key, token, now + ttl) for key, (token, ttl) in held.items()]
        connection = self._connection
        written = connection.worker.call(
            connection.guarded, lambda: write_locks(connection.db(), rows)
        )

        def let_in(done: asyncio.Future[None]) -> None:
            checked_point(done)  # a failure is met again by the next statement
            presence.let_in()

        written.add_done_callback(let_in)

    def _count(self) -> int:
        return count(self._connection.db())

    def _scan_keys(self, into: KeyFilter, after: object) -> object:
        return scan_keys(self._connection.db(), into, after, _SCAN_BATCH)

    async def _learn_keys(self) -> None:
        """Read the keys the file holds, a batch per trip to the thread: then a
        load of any other key is answered without a read."""
        connection = self._connection
        try:
            total = await connection.run(self._count, here=False)
            found = KeyFilter(total)
            after: object = ""
            while after is not None and total:
                after = await connection.run(self._scan_keys, found, after, here=False)
        except (sqlite3.Error, RuntimeError) as exc:  # every load reads, as before
            logger.debug("Reading the keys of %s failed: %r", connection.path, exc)
            self._scan = None
            return
        if self._keys is not None:
            self._keys.merge(found)
            self._known = True
        self._scan = None
