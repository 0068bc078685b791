"""Every record of a crawl's store, as one iterator: what ``scrapy-rep report``
and the Tester's report page read (docs/cli.md, docs/tester.md).

A SQLite file is read read-only, a batch per read transaction
(``sqlite.once.scan_records``); a Redis store (one server, Sentinel, a
Cluster's every primary) with ``SCAN`` (``redis.scan``), on an event loop
in a thread of its own that hands over a few steps at a time: memory holds
a few hundred records whatever the store's size, and the caller's code
stays plain iteration. No Scrapy here.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator
from typing import Final

from scrapy_rep.cache.storage.errors import StorageError
from scrapy_rep.cache.storage.scanned import Scanned
from scrapy_rep.cache.storage.sqlite.once import scan_records
from scrapy_rep.tools.store.view import StoreName

__all__ = ["scan_store"]

#: Steps of a Redis scan read ahead of the caller.
_AHEAD: Final = 4
_DONE: Final = object()


def scan_store(store: StoreName, now: float, *, bodies: bool = False) -> Iterator[Scanned]:
    """Each record ``store`` keeps (key, record or None if unreadable, body
    bytes), as a crawl would load it at ``now``; ``bodies``: read the bodies
    too (else a kept body is ``b""``, its size given)."""
    if store.kind == "sqlite":
        yield from scan_records(store.file(), now, store.wait, bodies=bodies)
        return
    handed: queue.Queue[object] = queue.Queue(_AHEAD)
    stop = threading.Event()
    worker = threading.Thread(
        target=asyncio.run, args=(_read_redis(store, bodies, handed, stop),), daemon=True
    )
    worker.start()
    try:
        while True:
            step = handed.get()
            if step is _DONE:
                return
            if isinstance(step, BaseException):
                raise step
            yield from step  # type: ignore[misc]
    finally:
        stop.set()
        worker.join()


async def _read_redis(
    store: StoreName, bodies: bool, handed: queue.Queue[object], stop: threading.Event
) -> None:
    """The producer: steps into ``handed`` until done, failed or told to stop."""
    outcome: object = _DONE
    try:
        try:
            from scrapy_rep.cache.storage.redis.scan import scan_records as scan_redis
            from scrapy_rep.cache.storage.redis.store import RedisStorage
        except ImportError as exc:
            raise StorageError(f"a Redis store needs the redis package ({exc})") from exc
        storage = await RedisStorage.open(store.where, prefix=store.redis_prefix)
        try:
            async for step in scan_redis(storage, bodies=bodies):
                while not stop.is_set():
                    try:
                        handed.put(step, timeout=0.1)
                        break
                    except queue.Full:
                        await asyncio.sleep(0)
                if stop.is_set():
                    return
        finally:
            await storage.close()
    except BaseException as exc:  # handed to the caller's thread, raised there
        outcome = exc
        if not isinstance(exc, StorageError) and type(exc).__module__.startswith("redis."):
            outcome = StorageError(f"cannot read {store.shown()}: {exc}")  # an ACL's NOPERM
    while not stop.is_set():
        try:
            handed.put(outcome, timeout=0.1)
            return
        except queue.Full:
            continue
