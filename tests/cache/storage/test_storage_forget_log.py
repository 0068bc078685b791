"""Every backend logs its forgets for running crawls (``ForgetLog``, issue 27 §6).

A reader starts at the log's end, then gets exactly the keys forgotten after
its cursor, oldest first, from any instance sharing the store; a forget of a
record no longer kept is logged too (a running crawl may still hold it), and
old entries are trimmed by age. Times come from the injected clock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, RedisServer, redis_url_of, store_kind
from test_storage_backends import sample

from scrapy_rep.cache.storage import (
    FallbackStorage,
    ForgetLog,
    MemoryStorage,
    Storage,
    StorageUnavailable,
    open_storage,
)
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH, FORGOTTEN_KEEP
from scrapy_rep.cache.storage.redis.store import RedisStorage

A, B, C = "https://a.example", "https://b.example", "http://c.example:8080"


def _log(storage: Storage) -> ForgetLog:
    assert isinstance(storage, ForgetLog)
    return storage


async def _open_pair(
    kind: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> tuple[Storage, Storage]:
    """Two instances sharing one store (one and the same for memory)."""
    url = redis_url_of(kind, request)

    async def one() -> Storage:
        return await open_storage(
            store_kind(kind), path=tmp_path / "r.sqlite3", redis_url=url, clock=clock
        )

    first = await one()
    return first, (first if kind == "memory" else await one())


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis", "redis-cluster"])
@deferred_f_from_coro_f
async def test_a_reader_gets_the_keys_forgotten_after_its_cursor(
    kind: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    forgetter, reader = await _open_pair(kind, tmp_path, clock, request)
    try:
        await forgetter.put(A, sample(), 3600)
        assert await forgetter.forget(A)  # type: ignore[attr-defined]
        cursor, keys = await _log(reader).forgotten_since(None)
        assert keys == []  # a new reader starts at the end: A was forgotten before it
        assert await _log(reader).forgotten_since(cursor) == (cursor, [])
        await forgetter.put(B, sample(), 3600)
        assert await forgetter.forget(B)  # type: ignore[attr-defined]
        assert not await forgetter.forget(C)  # type: ignore[attr-defined]  # none kept: logged
        cursor, keys = await _log(reader).forgotten_since(cursor)
        assert keys == [B, C]
        assert await _log(reader).forgotten_since(cursor) == (cursor, [])
        assert await reader.get(B) is None
    finally:
        await forgetter.close()
        if reader is not forgetter:
            await reader.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@deferred_f_from_coro_f
async def test_the_log_is_trimmed_by_age_and_read_in_batches(
    kind: str, tmp_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    storage, _ = await _open_pair(kind, tmp_path, clock, request)
    log = _log(storage)
    try:
        start, _ = await log.forgotten_since(None)
        for number in range(FORGOTTEN_BATCH + 5):
            await storage.forget(f"https://h{number}.example")  # type: ignore[attr-defined]
        cursor, keys = await log.forgotten_since(start)
        assert len(keys) == FORGOTTEN_BATCH and keys[0] == "https://h0.example"
        cursor, keys = await log.forgotten_since(cursor)
        assert len(keys) == 5
        clock.advance(FORGOTTEN_KEEP + 1)
        await storage.forget(A)  # type: ignore[attr-defined]  # trims what is older than a day
        assert (await log.forgotten_since(start))[1] == [A]
        assert (await log.forgotten_since(cursor))[1] == [A]
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_sqlite_keeps_its_log_in_a_table_of_the_file(
    tmp_path: Path, clock: FakeClock
) -> None:
    """A reader that opened the file before the forget was made in another
    instance (the CLI's) hears of it; a cursor past the log's end (the file
    was replaced) starts again from the beginning."""
    path = tmp_path / "r.sqlite3"
    crawl = await open_storage("sqlite", path=path, clock=clock)
    cli = await open_storage("sqlite", path=path, clock=clock)
    try:
        cursor, _ = await _log(crawl).forgotten_since(None)
        await cli.forget(A)  # type: ignore[attr-defined]
        await cli.close()
        assert (await _log(crawl).forgotten_since(cursor))[1] == [A]
        assert (await _log(crawl).forgotten_since("999"))[1] == [A]
    finally:
        await crawl.close()


@deferred_f_from_coro_f
async def test_redis_keeps_its_log_under_the_prefix_with_an_expiry(
    redis_server: RedisServer,
) -> None:
    storage = await RedisStorage.open(redis_server.url, prefix="p1:")
    other = await RedisStorage.open(redis_server.url, prefix="p2:")
    try:
        cursor, _ = await storage.forgotten_since(None)
        await storage.forget(A)
        assert (await other.forgotten_since("0-0"))[1] == []  # another prefix, another log
        assert (await storage.forgotten_since(cursor))[1] == [A]
        client = storage._client
        assert 0 < await client.ttl("p1:forgotten") <= FORGOTTEN_KEEP
    finally:
        await storage.close()
        await other.close()


@deferred_f_from_coro_f
async def test_fallback_reads_redis_log_drops_its_own_copy_and_is_quiet_while_down(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    """The in-process stand-in must not serve the copy a forget removed;
    while Redis is down a read gives nothing new (its one warning says why)."""
    primary = await RedisStorage.open(redis_server.url)
    memory = MemoryStorage(clock=clock)
    storage = FallbackStorage(primary, memory, name="Redis", retry_interval=60, clock=clock)
    cli = await RedisStorage.open(redis_server.url)
    try:
        await storage.put(A, sample(), 3600)
        cursor, _ = await storage.forgotten_since(None)
        await cli.forget(A)
        assert await storage.get(A) == sample()  # memory still holds it ...
        cursor, keys = await storage.forgotten_since(cursor)
        assert keys == [A]
        assert await storage.get(A) is None  # ... until the log names it
        redis_server.kill()
        assert await storage.forgotten_since(cursor) == (cursor, [])
        assert storage.degraded
        with pytest.raises(StorageUnavailable):
            await storage.forgotten_since(None)
    finally:
        await storage.close()
        await cli.close()
