"""Storage for origin records: one protocol, three backends, one factory.

``open_storage(kind, ...)`` is what the middleware calls with its settings:
``kind`` is ``"memory"``, ``"sqlite"`` (the default), ``"redis"`` or the
dotted path of a class implementing ``Storage``. Backends import their
clients lazily, so ``redis`` is only needed when it is chosen.

What is here: the factory (this module); what every backend shares
(``protocol``, the interface; ``errors``; ``leases``, fetch locks as leases;
``forgotten``, the forget log; ``parsed``, one parse per distinct body;
``scanned``, a record as a scan reads it); the backends, ``memory`` (one
module), ``sqlite/`` and ``redis/`` (a package each, their ``__init__``
says what is in it); and ``fallback``, the in-process stand-in for a
shared store that went away. A backend imports the shared modules only,
never another backend; ``fallback`` imports ``memory`` and reaches its
primary through ``protocol``; only the factory imports them all
(tests/test_layers.py).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.defaults import (
    MAX_ORIGINS,
    REDIS_PREFIX,
    REDIS_RETRY_INTERVAL,
    STORAGE_KIND,
    check_max_origins,
    store_bytes,
)
from scrapy_rep.cache.storage.errors import StorageError, StorageUnavailable
from scrapy_rep.cache.storage.fallback import FallbackStorage
from scrapy_rep.cache.storage.leases import LOCK_TTL, Sleep
from scrapy_rep.cache.storage.memory import MemoryStorage
from scrapy_rep.cache.storage.parsed import ParsedBodies
from scrapy_rep.cache.storage.protocol import (
    CombinedCalls,
    ForgetLog,
    Forgetting,
    Storage,
    combined_calls,
)

__all__ = [
    "LOCK_TTL",
    "MAX_WAIT",
    "STORAGE_KINDS",
    "CombinedCalls",
    "FallbackStorage",
    "ForgetLog",
    "Forgetting",
    "MemoryStorage",
    "ParsedBodies",
    "Sleep",
    "Storage",
    "StorageError",
    "StorageOptions",
    "StorageUnavailable",
    "combined_calls",
    "forget",
    "open_storage",
    "single_flight",
    "storage_kind",
]

logger = logging.getLogger(__name__)

STORAGE_KINDS = ("memory", "sqlite", "redis")
#: The longest a process waits for another's fetch before fetching itself.
MAX_WAIT = 600.0
ACCEPTED = (
    f"'{STORAGE_KIND}' (the default), 'memory', 'redis', "
    "or the dotted path of a class implementing scrapy_rep.cache.storage.Storage"
)
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def storage_kind(kind: object) -> str:
    """REP_STORAGE, checked (the one check, for the settings and ``open_storage``):
    a kind of ``STORAGE_KINDS``, or the dotted path of a class."""
    if isinstance(kind, str) and (kind in STORAGE_KINDS or _DOTTED.fullmatch(kind)):
        return kind
    raise StorageError(f"REP_STORAGE must be {ACCEPTED}; got {kind!r}")


@dataclass(frozen=True)
class StorageOptions:
    """What ``open_storage`` passes to a user's class (``from_options``)."""

    path: str | os.PathLike[str] | None = None
    redis_url: str | None = None
    max_origins: int = MAX_ORIGINS
    prefix: str = REDIS_PREFIX
    clock: Callable[[], float] = time.time
    extra: dict[str, Any] = field(default_factory=dict)


async def open_storage(
    kind: str = STORAGE_KIND,
    *,
    path: str | os.PathLike[str] | None = None,
    redis_url: str | None = None,
    max_origins: int = MAX_ORIGINS,
    prefix: str = REDIS_PREFIX,
    clock: Callable[[], float] = time.time,
    redis_retry_interval: float = REDIS_RETRY_INTERVAL,
    max_bytes: int = store_bytes(),
) -> Storage:
    """Open the store named by ``REP_STORAGE``; bad values raise naming the setting.

    ``redis`` checks the server at once (``StorageUnavailable`` naming the URL
    if it does not answer) and is wrapped so that losing it later degrades to
    memory instead of failing the crawl.
    """
    storage_kind(kind)
    try:
        check_max_origins(max_origins)
    except ValueError as exc:
        raise StorageError(str(exc)) from None
    if kind == "memory":
        return MemoryStorage(max_origins, clock=clock, max_bytes=max_bytes)
    if kind == "sqlite":
        return await _open_sqlite(path, clock)
    if kind == "redis":
        memory = MemoryStorage(max_origins, clock=clock, max_bytes=max_bytes)
        return await _open_redis(redis_url, prefix, memory, clock, redis_retry_interval)
    options = StorageOptions(path, redis_url, max_origins, prefix, clock)
    return await _open_custom(kind, options)


async def _open_sqlite(path: str | os.PathLike[str] | None, clock: Callable[[], float]) -> Storage:
    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    if not path:
        raise StorageError("REP_STORAGE = 'sqlite' needs a file: set REP_STORAGE_PATH")
    try:
        return await SqliteStorage.open(path, clock=clock)
    except OSError as exc:
        raise StorageError(f"REP_STORAGE_PATH: cannot open {os.fspath(path)!r}: {exc}") from exc


async def _open_redis(
    url: str | None,
    prefix: str,
    memory: MemoryStorage,
    clock: Callable[[], float],
    retry_interval: float,
) -> Storage:
    if not url:
        raise StorageError("REP_STORAGE = 'redis' needs REP_REDIS_URL (or REDIS_URL)")
    try:
        from scrapy_rep.cache.storage.redis.store import RedisStorage
    except ImportError as exc:
        raise StorageError(
            f"REP_STORAGE = 'redis' needs the redis package ({exc}): "
            "pip install 'scrapy-rep[redis]'"
        ) from exc
    primary = await RedisStorage.open(url, prefix=prefix)
    return FallbackStorage(
        primary,
        memory,
        name=primary.where,
        retry_interval=retry_interval,
        clock=clock,
    )


async def _open_custom(path: str, options: StorageOptions) -> Storage:
    module_name, _, class_name = path.rpartition(".")
    try:
        cls = getattr(import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise StorageError(
            f"REP_STORAGE = {path!r} cannot be imported ({exc}); use {ACCEPTED}"
        ) from exc
    factory = getattr(cls, "from_options", None)
    made = factory(options) if factory is not None else cls()
    storage = await made if inspect.isawaitable(made) else made
    if not isinstance(storage, Storage):
        raise StorageError(
            f"REP_STORAGE = {path!r} does not give a Storage: it needs async get, put, "
            "lock, release and close"
        )
    return storage


async def forget(storage: Storage, key: str) -> bool:
    """Delete ``key``'s record so that every process sharing ``storage`` fetches
    its robots.txt again; True if there was one. Raises ``StorageError`` for a
    store that cannot delete."""
    if not isinstance(storage, Forgetting):
        raise StorageError(f"{type(storage).__name__} cannot forget a record (no forget method)")
    return await storage.forget(key)


async def single_flight(
    storage: Storage,
    key: str,
    fetch: Callable[[], Awaitable[OriginRecord]],
    ttl_seconds: Callable[[OriginRecord], float],
    *,
    newer_than: float | None = None,
    lock_ttl: float = LOCK_TTL,
    max_wait: float = MAX_WAIT,
    poll: float = 0.05,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_wait: Callable[[str], object] | None = None,
) -> OriginRecord:
    """Fetch ``key`` once across every process sharing ``storage`` (docs/spec.md §3.5).

    The process that wins the lock runs ``fetch`` and stores the record (the
    store renews the lock meanwhile); the others poll until a record fetched
    after ``newer_than`` appears, and take over if the lock is freed or
    lapses without one (the winner died). No one waits more than
    ``max_wait`` by ``clock``: then it fetches too, a duplicate fetch being
    cheaper than a stalled crawl. ``on_wait(key)`` is called when waiting on
    another holder starts. Pass the stale record's ``fetched_at`` as
    ``newer_than`` when refreshing; with None any stored record will do.
    Within one process, callers should share one call of this per key.
    """

    def fresh(found: OriginRecord | None) -> bool:
        return found is not None and (newer_than is None or found.fetched_at > newer_than)

    combined = combined_calls(storage)
    since: float | None = None
    while True:
        # The record is read after the lock either way: a winner checks that
        # another process did not just finish; a loser, whether it has.
        if combined is not None:
            won, found = await combined.lock_and_get(key, lock_ttl)
        else:
            won, found = await storage.lock(key, lock_ttl), None
        if won:
            return await _holding_the_lock(storage, combined, key, found, fresh, fetch, ttl_seconds)
        if combined is None:
            found = await storage.get(key)
        if found is not None and fresh(found):
            return found
        if since is None:
            since = clock()
            if on_wait is not None:
                on_wait(key)
        elif clock() - since >= max_wait:
            message = "Waited %.0f s for another process to fetch the robots.txt of %s; %s"
            logger.warning(message, max_wait, key, "fetching it here too")
            record = await fetch()
            await storage.put(key, record, ttl_seconds(record))
            return record
        await sleep(poll)


async def _holding_the_lock(
    storage: Storage,
    combined: CombinedCalls | None,
    key: str,
    found: OriginRecord | None,
    fresh: Callable[[OriginRecord | None], bool],
    fetch: Callable[[], Awaitable[OriginRecord]],
    ttl_seconds: Callable[[OriginRecord], float],
) -> OriginRecord:
    """This process holds ``key``'s lock: a record another process has just
    stored will do; else fetch and store one. The lock is released either way
    (with the write, where the store combines the two)."""
    released = False
    try:
        if combined is None:
            found = await storage.get(key)
        if found is not None and fresh(found):
            return found
        record = await fetch()
        if combined is None:
            await storage.put(key, record, ttl_seconds(record))
        else:
            await combined.put_and_release(key, record, ttl_seconds(record))
            released = True
        return record
    finally:
        if not released:
            await storage.release(key)
