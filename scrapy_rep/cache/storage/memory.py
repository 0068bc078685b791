"""A bounded in-process store: for tests, one-off runs and as Redis's stand-in.

Least recently used origins are evicted past ``max_origins``, or when the
distinct bodies held, current and earlier versions alike (docs/versions.md),
pass ``max_bytes``. Records are kept as objects (never serialised), and
equal bodies are stored once: many origins serve the same robots.txt, and
the parsed form is shared per body too (``ParsedBodies``), so an origin
costs a few hundred bytes.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace

from scrapy_rep.cache import pace
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.defaults import MAX_ORIGINS, check_max_origins, store_bytes
from scrapy_rep.cache.storage.forgotten import ForgottenLog
from scrapy_rep.cache.versions import Version

__all__ = ["MemoryStorage"]


class _BodyPool:
    """One copy of each distinct body, dropped when no record holds it."""

    __slots__ = ("_bodies", "_holders", "bytes")

    def __init__(self) -> None:
        self._bodies: dict[bytes, bytes] = {}
        self._holders: dict[bytes, int] = {}
        self.bytes = 0  # of the distinct bodies held

    def hold(self, body: bytes) -> bytes:
        shared = self._bodies.setdefault(body, body)
        if shared is body and body not in self._holders:
            self.bytes += len(body)
        self._holders[shared] = self._holders.get(shared, 0) + 1
        return shared

    def drop(self, body: bytes) -> None:
        left = self._holders[body] - 1
        if left:
            self._holders[body] = left
        else:
            del self._holders[body], self._bodies[body]
            self.bytes -= len(body)

    def __len__(self) -> int:
        return len(self._bodies)


class MemoryStorage:
    """``Storage`` in a dict: LRU-bounded, TTL on every entry, in-process locks."""

    def __init__(
        self,
        max_origins: int = MAX_ORIGINS,
        *,
        clock: Callable[[], float] = time.time,
        max_bytes: int = store_bytes(),
    ) -> None:
        self.max_origins = check_max_origins(max_origins)
        self.max_bytes = max_bytes  # of distinct bodies kept, earlier versions' too
        self._clock = clock
        self._entries: OrderedDict[str, tuple[OriginRecord, float]] = OrderedDict()
        self._bodies = _BodyPool()
        self._locks: dict[str, tuple[str, float]] = {}
        self._held: dict[str, str] = {}
        self._tokens = itertools.count()
        self._pace: dict[str, pace.Times] = {}
        self._forgotten = ForgottenLog()
        #: Called after each forget: this process's crawl reads the log at once.
        self.on_forget: list[Callable[[], object]] = []

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def distinct_bodies(self) -> int:
        return len(self._bodies)

    async def get(self, key: str) -> OriginRecord | None:
        return self.get_now(key)

    def get_now(self, key: str) -> OriginRecord | None:
        """``get`` without a coroutine, for callers that cannot await."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[1] <= self._clock():
            self._remove(key)
            return None
        self._entries.move_to_end(key)
        return entry[0]

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        self.put_now(key, record, ttl_seconds)

    def put_now(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        if key in self._entries:
            self._remove(key)
        record = self._hold(record)
        self._entries[key] = (record, self._clock() + ttl_seconds)
        while len(self._entries) > 1 and (
            len(self._entries) > self.max_origins or self._bodies.bytes > self.max_bytes
        ):
            self._remove(next(iter(self._entries)))

    def _hold(self, record: OriginRecord) -> OriginRecord:
        """``record`` with its bodies, current and earlier, the pool's copies."""
        if record.good_body is not None:
            shared = self._bodies.hold(record.good_body)
            if shared is not record.good_body:
                record = replace(record, good_body=shared)
        if record.earlier:
            record = replace(record, earlier=tuple(map(self._hold_version, record.earlier)))
        return record

    def _hold_version(self, version: Version) -> Version:
        if version.body is None:
            return version
        shared = self._bodies.hold(version.body)
        return version if shared is version.body else replace(version, body=shared)

    def _remove(self, key: str) -> None:
        record, _ = self._entries.pop(key)
        if record.good_body is not None:
            self._bodies.drop(record.good_body)
        for version in record.earlier:
            if version.body is not None:
                self._bodies.drop(version.body)

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record (not its lock), and log it for the running
        crawl (``forgotten_since``); True if there was one."""
        self._forgotten.append(key, self._clock())
        found = key in self._entries
        if found:
            self._remove(key)
        for hook in self.on_forget:
            hook()
        return found

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The keys forgotten after ``cursor`` (``ForgetLog``)."""
        return self._forgotten.since(cursor)

    async def lock(self, key: str, ttl: float) -> bool:
        now = self._clock()
        held = self._locks.get(key)
        if held is not None and held[1] > now:
            return False
        token = str(next(self._tokens))  # in-process: a serial tells holders apart
        self._locks[key] = (token, now + ttl)
        self._held[key] = token
        return True

    async def release(self, key: str) -> None:
        token = self._held.pop(key, None)
        held = self._locks.get(key)
        if token is not None and held is not None and held[0] == token:
            del self._locks[key]

    # --- the pace (``Pacing``): one process is one worker -----------------------

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        return self.reserve_now(key, interval, max_ahead, not_before)

    def reserve_now(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        now = self._clock()
        turn = pace.reserve(self._times(key), now, interval, max_ahead, not_before)
        self._keep_pace(key, turn, now)
        return turn.wait

    def own_wait(self, key: str, interval: float, max_ahead: float) -> float:
        """How long this process's own turns alone would hold a request (nothing kept)."""
        return pace.going(self._times(key), self._clock(), interval, max_ahead).wait

    def follow(self, key: str, wait: float, interval: float, max_ahead: float) -> None:
        """Keep a turn a shared store gave (``pace.follow``): the stand-in's times."""
        now = self._clock()
        times = pace.follow(self._times(key), now, wait, interval, max_ahead)
        self._keep_pace(key, pace.Turn(wait, times), now)

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        now = self._clock()
        turn = pace.pause(self._times(key), now, seconds, max_ahead)
        self._keep_pace(key, turn, now)
        return turn.wait

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        now = self._clock()
        turn = pace.going(self._times(key), now, interval, max_ahead)
        self._keep_pace(key, turn, now)
        return turn.wait

    def _times(self, key: str) -> pace.Times:
        return self._pace.get(key) or pace.Times()

    def _keep_pace(self, key: str, turn: pace.Turn, now: float) -> None:
        self._pace[key] = turn.times
        if len(self._pace) > self.max_origins:  # forget the origins whose turns are past
            self._pace = {
                k: v
                for k, v in self._pace.items()
                if max(v.next_at or now, v.paused_until or now) > now
            }

    async def close(self) -> None:
        self._pace.clear()
        self._entries.clear()
        self._bodies = _BodyPool()
        self._locks.clear()
        self._held.clear()
