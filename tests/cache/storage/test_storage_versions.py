"""An origin's robots.txt versions on every store (docs/versions.md): kept
as written, seen by every instance sharing a store, read from a record an
earlier release wrote (format 1) as none, counted in the memory store's
bytes, and read by a scan of the whole store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest
import redis
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, redis_url_of

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import MemoryStorage, Storage, open_storage
from scrapy_rep.cache.storage.redis.scan import scan_records as scan_redis
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.cache.storage.sqlite.once import scan_records as scan_sqlite
from scrapy_rep.cache.versions import Version, versions

T0 = 1_700_000_000.0
DAY = 86_400.0
KEY = "https://changed.example:443"
OLDEST = b"User-agent: *\nDisallow: /\n"
OLD = b"User-agent: *\nDisallow: /private\n"
NEW = b"User-agent: *\nDisallow: /private\nDisallow: /drafts\n"

Opener = Callable[[], Awaitable[Storage]]


def with_versions(at: float = T0) -> OriginRecord:
    """A record whose current answer came at ``at``, after a 4xx and two bodies."""
    earlier = (
        Version(200, OLD, at - 10 * DAY, at - DAY),
        Version(404, None, at - 20 * DAY, at - 11 * DAY),
        Version(200, OLDEST, at - 30 * DAY, at - 21 * DAY),
    )
    return OriginRecord(
        FetchKind.SUCCESS, 200, "HTTP 200", at, at + DAY, NEW, at, 200,
        good_since=at - 0.5 * DAY, earlier=earlier,
    )  # fmt: skip


def earlier_format(at: float = T0) -> bytes:
    """The bytes a release before versions wrote: format 1, no ``gf``, ``vs``, ``bl``."""
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", at, at + DAY, OLD, at, 200).to_bytes()


@pytest.fixture
def opener(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Callable[[str], Opener]:
    def make(kind: str) -> Opener:
        url = redis_url_of(kind, request)

        async def open_one() -> Storage:
            return await open_storage(
                kind, path=tmp_path / "robots.sqlite3", redis_url=url, clock=clock
            )

        return open_one

    return make


@pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
@deferred_f_from_coro_f
async def test_versions_survive_the_store(kind: str, opener: Callable[[str], Opener]) -> None:
    storage = await opener(kind)()
    try:
        await storage.put(KEY, with_versions(), DAY)
        found = await storage.get(KEY)
        assert found == with_versions()
        assert found is not None
        assert [v.digest is None for v in versions(found)] == [False, False, True, False]
        assert versions(found)[0].first_seen == T0 - 0.5 * DAY
    finally:
        await storage.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_two_instances_sharing_a_store_see_the_same_versions(
    kind: str, opener: Callable[[str], Opener]
) -> None:
    """Two workers on one SQLite file or one Redis: one writes, the other reads
    every version, and a newer answer written by the second reaches the first."""
    first, second = await opener(kind)(), await opener(kind)()
    try:
        await first.put(KEY, with_versions(), DAY)
        assert await second.get(KEY) == with_versions()
        later = with_versions(T0 + DAY)
        await second.put(KEY, later, DAY)
        assert await first.get(KEY) == later
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_a_record_an_earlier_release_wrote_reads_with_no_earlier_version(
    kind: str, opener: Callable[[str], Opener], request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    data = earlier_format()
    assert json.loads(data.partition(b"\n")[0])["v"] == 1
    storage = await opener(kind)()  # creates the tables, or the server is up
    try:
        if kind == "sqlite":
            db = sqlite3.connect(tmp_path / "robots.sqlite3")
            db.execute("INSERT INTO origins VALUES (?, ?, ?)", (KEY, data, T0 + DAY))
            db.commit()
            db.close()
        else:
            client = redis.Redis.from_url(str(redis_url_of(kind, request)))
            client.set(f"scrapy_rep:origin:{KEY}".encode(), data)
            client.close()
        found = await storage.get(KEY)
        assert found is not None, "the row was written where the store reads it"
        assert (found.good_body, found.earlier, found.good_since) == (OLD, (), None)
        assert versions(found) == (Version(200, OLD, T0, T0),)
    finally:
        await storage.close()


def test_the_memory_store_counts_earlier_bodies_in_its_bytes(clock: FakeClock) -> None:
    """Its bound on bytes holds the earlier versions' bodies too, and a body
    two records hold (current here, earlier there) counts once."""
    storage = MemoryStorage(clock=clock, max_bytes=len(NEW) + len(OLD) + len(OLDEST))
    plain = replace(with_versions(), good_body=OLD, earlier=())
    storage.put_now("https://plain.example:443", plain, DAY)
    storage.put_now(KEY, with_versions(), DAY)
    assert len(storage) == 2  # at the bound exactly: OLD is one copy
    other = replace(plain, good_body=b"Disallow: /x\n")
    storage.put_now("https://other.example:443", other, DAY)  # 13 bytes more
    # Least recently used out until under the bound: ``plain`` (its OLD is
    # still KEY's earlier one), then KEY, with its earlier bodies.
    assert storage.get_now("https://plain.example:443") is None
    assert storage.get_now(KEY) is None
    assert storage.get_now("https://other.example:443") == other
    assert storage.distinct_bodies == 1


@pytest.mark.parametrize("bodies", [False, True])
def test_a_sqlite_scan_reads_a_record_with_versions(tmp_path: Path, bodies: bool) -> None:
    """Whole, with every version; header only, as the record without them,
    its size the current body's (not the earlier ones' too)."""
    path = tmp_path / "robots.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE origins (key TEXT PRIMARY KEY, data BLOB, expires_at REAL)")
    db.execute("INSERT INTO origins VALUES (?, ?, ?)", (KEY, with_versions().to_bytes(), T0 + DAY))
    db.commit()
    db.close()
    ((key, found, size),) = list(scan_sqlite(path, T0, 1.0, bodies=bodies))
    assert (key, size) == (KEY, len(NEW))
    assert found is not None
    assert found.earlier == (with_versions().earlier if bodies else ())
    assert found.good_body == (NEW if bodies else b"")
    assert found.good_since == T0 - 0.5 * DAY


@pytest.mark.parametrize("bodies", [False, True])
@deferred_f_from_coro_f
async def test_a_redis_scan_reads_a_record_with_versions(
    request: pytest.FixtureRequest, bodies: bool
) -> None:
    storage = await RedisStorage.open(str(redis_url_of("redis", request)))
    try:
        await storage.put(KEY, with_versions(), DAY)
        found = [row async for step in scan_redis(storage, bodies=bodies) for row in step]
    finally:
        await storage.close()
    ((key, record, size),) = found
    assert (key, size) == (KEY, len(NEW))
    assert record is not None
    assert record.earlier == (with_versions().earlier if bodies else ())
