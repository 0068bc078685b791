"""The one small interface every robots.txt store implements (docs/spec.md §2.3, §3.4)."""

from __future__ import annotations

from typing import Protocol, cast, runtime_checkable

from scrapy_rep.cache.policy import OriginRecord

__all__ = [
    "CombinedCalls",
    "ForgetLog",
    "Forgetting",
    "Pacing",
    "RollCall",
    "Storage",
    "combined_calls",
]


@runtime_checkable
class Storage(Protocol):
    """Where origin records live between fetches, runs and processes.

    Keys are origins (``"https://example.com:443"``). ``put`` keeps a record
    for ``ttl_seconds`` at most (the policy's ``retention``). ``lock`` is a
    try-lock for single flight across processes: True when this store
    instance now holds ``key``, False when someone else does; it never waits.
    ``ttl`` is short (``LOCK_TTL``): a store shared across processes should
    renew the lock while it holds it (the built-in ones do, every third of
    ``ttl``), so that a process that dies frees it within ``ttl``; one that
    does not renew risks a duplicate fetch, never a stall. ``release`` (and a
    renewal) touches the lock only while this instance holds it; ``close``
    releases what it holds. Coroutines of one process share one instance and
    should agree among themselves before locking.

    Optional, for a store whose calls are round trips (a thread, a server):
    ``lock_and_get(key, ttl) -> (won, record)`` and ``put_and_release(key,
    record, ttl_seconds)`` do what ``lock`` then ``get``, and ``put`` then
    ``release``, do, in one trip each; ``single_flight`` uses them when a
    store has them (``CombinedCalls``).
    """

    async def get(self, key: str) -> OriginRecord | None: ...

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None: ...

    async def lock(self, key: str, ttl: float) -> bool: ...

    async def release(self, key: str) -> None: ...

    async def close(self) -> None: ...


@runtime_checkable
class CombinedCalls(Protocol):
    """The optional pairs of ``Storage`` calls a store may make in one trip."""

    async def lock_and_get(self, key: str, ttl: float) -> tuple[bool, OriginRecord | None]: ...

    async def put_and_release(self, key: str, record: OriginRecord, ttl_seconds: float) -> None: ...


#: Store class -> has both ``CombinedCalls`` methods.
_COMBINED: dict[type, bool] = {}


def combined_calls(storage: object) -> CombinedCalls | None:
    """``storage`` as ``CombinedCalls`` if its class has both calls, else None.

    Asked once per class: ``isinstance`` against a runtime Protocol walks its
    members each time (tens of microseconds), and ``single_flight`` asks for
    every new origin.
    """
    kind = type(storage)
    combined = _COMBINED.get(kind)
    if combined is None:
        combined = _COMBINED[kind] = isinstance(storage, CombinedCalls)
    return cast(CombinedCalls, storage) if combined else None


@runtime_checkable
class Forgetting(Protocol):
    """A store that can delete one origin's record (``scrapy-rep cache forget``).

    Optional: a crawl never deletes; people do, to make every worker sharing
    the store fetch robots.txt again. Locks are left alone.
    """

    async def forget(self, key: str) -> bool: ...


@runtime_checkable
class Pacing(Protocol):
    """Optional: each origin's pace, shared by every process using the store (docs/politeness.md).

    Each call is one atomic step in the store (``scrapy_rep.cache.pace``
    says what it computes), with the store's own clock where it has one.
    Times are relative (seconds from the store's now), so the clocks of the
    processes never meet. ``max_ahead`` bounds any stored time: one beyond
    it is clamped.

    ``reserve``: the seconds until the next turn (``not_before`` at the
    earliest), which it takes; the turn after it is ``interval`` later.
    ``pause``: no turn for ``seconds`` (``Retry-After``); returns the pause
    left. ``going``: a request that waited would go now; returns how much
    longer it must wait (a pause began meanwhile, or the last request went
    less than ``interval`` ago), else 0 and records that it went.
    """

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float: ...

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float: ...

    async def going(self, key: str, interval: float, max_ahead: float) -> float: ...


@runtime_checkable
class ForgetLog(Protocol):
    """A store whose ``forget`` is also logged, so running crawls hear of it.

    ``forgotten_since(cursor)`` -> (the next cursor, the keys forgotten after
    ``cursor``, oldest first, a batch at most); ``None`` gives the log's end
    and no keys. Cursors are the store's own, opaque strings. Optional: a
    crawl on a store without it drops nothing until its copies expire.
    """

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]: ...


@runtime_checkable
class RollCall(Protocol):
    """A shared store that knows which workers use it (docs/politeness.md, "Faults").

    ``roll_call(worker, within)``: ``worker`` (a name unique to one store
    instance) is here now; returns how many workers said so within the last
    ``within`` seconds, ``worker`` included. While the store is away, each
    worker paces an origin as if that many were sending. Optional: without
    it, each worker keeps its own pace then.
    """

    async def roll_call(self, worker: str, within: float) -> int: ...
