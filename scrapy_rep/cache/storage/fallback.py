"""Keep crawling when a shared store goes away, and rejoin it when it returns.

Every record read from or written to the primary store is also kept in an
in-process ``MemoryStorage``. When the primary raises ``StorageUnavailable``
the wrapper warns once and serves from memory: records this process knew stay
known, so no request is let through on a forgotten outage and none is lost.
While degraded it probes the primary at most every ``retry_interval``
seconds; on the first success it writes back what changed meanwhile and
logs that it recovered.

The pace goes on from this process's own turns meanwhile, each origin's
delay times the workers the primary last counted (``RollCall``): they all
send, none knows when the others do, so together they keep the delay on
average (docs/politeness.md, "Faults").
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from scrapy_rep.cache.policy import OriginRecord, PolicyConfig
from scrapy_rep.cache.storage.defaults import REDIS_RETRY_INTERVAL
from scrapy_rep.cache.storage.errors import StorageUnavailable
from scrapy_rep.cache.storage.leases import new_token
from scrapy_rep.cache.storage.memory import MemoryStorage
from scrapy_rep.cache.storage.protocol import ForgetLog, Forgetting, Pacing, RollCall, Storage

__all__ = ["FallbackStorage"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: How long memory keeps a record read from the primary: as long as the store would.
_KEEP = PolicyConfig().cache_keep
#: A paced worker answers the roll call this often (seconds, with a turn);
#: one silent for ``SEEN_WITHIN`` no longer counts (a crawl that ended).
ROLL_CALL_EVERY: Final = 1.0
SEEN_WITHIN: Final = 30.0
#: The most workers a count is trusted for (a tampered key): as ``max_ahead``'s.
MAX_WORKERS: Final = 64


class FallbackStorage:
    """``primary`` while it answers, ``fallback`` (memory) while it does not."""

    def __init__(
        self,
        primary: Storage,
        fallback: MemoryStorage,
        *,
        name: str,
        retry_interval: float = REDIS_RETRY_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.name = name  # for messages: "Redis at redis://host:6379/0"
        self.retry_interval = retry_interval
        self._clock = clock
        self.degraded = False
        self._probe_at = 0.0
        self._dirty: dict[str, float] = {}  # key -> ttl, written while degraded
        self._locked_by: dict[str, Storage] = {}
        #: Turns reserved here, the primary down (``robotstxt/pace/local``).
        self.local_turns = 0
        #: Workers the primary last counted, this one too (``RollCall``).
        self.workers = 1
        self._worker = new_token()
        self._roll_call_at = 0.0  # when the next roll call is due
        self._most_at = -SEEN_WITHIN  # when ``workers`` was last the largest count

    async def _try(self, call: Callable[[], Awaitable[T]]) -> tuple[bool, T | None]:
        """Run ``call`` on the primary if it is (or may be) up: (answered, result)."""
        if self.degraded and self._clock() < self._probe_at:
            return False, None
        try:
            result = await call()
        except StorageUnavailable as exc:
            self._degrade(exc)
            return False, None
        if self.degraded:
            await self._recover()
        return True, result

    def _degrade(self, exc: StorageUnavailable) -> None:
        self._probe_at = self._clock() + self.retry_interval
        if not self.degraded:
            self.degraded = True
            logger.warning(
                "%s is unreachable (%s): using an in-process robots.txt cache until it returns",
                self.name,
                exc.__cause__ or exc,
            )

    async def _recover(self) -> None:
        self.degraded = False
        self._roll_call_at = 0.0  # answer at once: a store started afresh has no roll
        dirty, self._dirty = self._dirty, {}
        for key, ttl in dirty.items():
            record = self.fallback.get_now(key)
            if record is None:
                continue
            try:
                # Another worker may have written a newer record meanwhile:
                # never write an older one over it (docs/storage.md, "When a store fails").
                there = await self.primary.get(key)
                if there is None or there.fetched_at < record.fetched_at:
                    await self.primary.put(key, record, ttl)
            except StorageUnavailable as exc:
                self._dirty.update(dirty)
                self._degrade(exc)
                return
        logger.info("%s is back: %d record(s) written back", self.name, len(dirty))

    async def get(self, key: str) -> OriginRecord | None:
        answered, record = await self._try(lambda: self.primary.get(key))
        if answered and record is not None:
            self.fallback.put_now(key, record, _KEEP)
            return record
        return self.fallback.get_now(key)

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        self.fallback.put_now(key, record, ttl_seconds)
        answered, _ = await self._try(lambda: self.primary.put(key, record, ttl_seconds))
        if not answered:
            self._dirty[key] = ttl_seconds

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record in both stores; True if either had one."""
        self._dirty.pop(key, None)
        here = await self.fallback.forget(key)
        primary = self.primary
        if not isinstance(primary, Forgetting):
            return here
        answered, there = await self._try(lambda: primary.forget(key))
        if not answered:
            raise StorageUnavailable(f"{self.name} is unreachable: the record was not deleted")
        return bool(there) or here

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The primary's log (``ForgetLog``); what it names leaves memory too,
        or the next ``get`` would find the old copy here. While the primary is
        down: nothing new (its one warning said so), asked again later."""
        primary = self.primary
        if not isinstance(primary, ForgetLog):
            raise StorageUnavailable(f"{self.name} keeps no log of forgotten records")
        answered, found = await self._try(lambda: primary.forgotten_since(cursor))
        if not answered or found is None:
            if cursor is None:
                raise StorageUnavailable(f"{self.name} is unreachable")
            return cursor, []
        for key in found[1]:
            self._dirty.pop(key, None)
            await self.fallback.forget(key)
        return found

    async def lock(self, key: str, ttl: float) -> bool:
        answered, won = await self._try(lambda: self.primary.lock(key, ttl))
        store: Storage = self.primary
        if not answered:
            store = self.fallback
            won = await self.fallback.lock(key, ttl)
        if won:
            self._locked_by[key] = store
        return bool(won)

    async def release(self, key: str) -> None:
        store = self._locked_by.pop(key, None)
        if store is None:
            return
        with contextlib.suppress(StorageUnavailable):  # the lock expires on its own
            await store.release(key)

    # --- the pace: shared while the primary answers, this process's own meanwhile ----
    # Memory keeps this process's own turns (``follow``), so that an outage,
    # and the return from one, go on from them: never faster than one process.
    # Its word is asked first and passed on (``not_before``), never applied
    # after the primary has given a turn: that turn would be lost.

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        floor = max(not_before, self.fallback.own_wait(key, interval, max_ahead))
        primary = self.primary
        if isinstance(primary, Pacing):
            # Before the turn: a round trip between a turn given "now" and its
            # request leaving would shorten the gap to the next one.
            await self._roll_call()
            answered, shared = await self._try(
                lambda: primary.reserve(key, interval, max_ahead, floor)
            )
            if answered and shared is not None:
                self.fallback.follow(key, shared, interval, max_ahead)
                return shared
        self.local_turns += 1
        return self.fallback.reserve_now(key, self._as_all(interval), max_ahead, floor)

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        local = await self.fallback.pause(key, seconds, max_ahead)
        primary = self.primary
        if not isinstance(primary, Pacing):
            return local
        answered, shared = await self._try(lambda: primary.pause(key, seconds, max_ahead))
        return max(local, shared) if answered and shared is not None else local

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        alone = self._as_all(interval) if self.degraded else interval
        own = self.fallback.own_wait(key, alone, max_ahead)
        if own > 0:
            return own
        primary = self.primary
        if isinstance(primary, Pacing):
            answered, shared = await self._try(lambda: primary.going(key, interval, max_ahead))
            if answered and shared is not None:
                if shared <= 0:
                    self.fallback.follow(key, 0.0, interval, max_ahead)
                return shared
        return await self.fallback.going(key, self._as_all(interval), max_ahead)

    def _as_all(self, interval: float) -> float:
        """An origin's delay for this process alone, the primary away: every
        worker it last counted may be sending too, so the site still sees one
        request per ``interval`` on average (docs/politeness.md, "Faults")."""
        return interval * self.workers

    async def _roll_call(self) -> None:
        """Tell the primary this worker is here, every ``ROLL_CALL_EVERY``, and
        learn how many are. A count smaller than one of the last
        ``SEEN_WITHIN`` seconds waits that long: after a restart the store
        learns the workers again, one roll call at a time."""
        now = self._clock()
        primary = self.primary
        if now < self._roll_call_at or not isinstance(primary, RollCall):
            return
        self._roll_call_at = now + ROLL_CALL_EVERY
        answered, count = await self._try(lambda: primary.roll_call(self._worker, SEEN_WITHIN))
        if not answered or count is None:
            return
        count = min(max(count, 1), MAX_WORKERS)
        if count >= self.workers or now - self._most_at >= SEEN_WITHIN:
            self.workers, self._most_at = count, now

    async def close(self) -> None:
        try:
            await self.primary.close()
        finally:
            await self.fallback.close()
