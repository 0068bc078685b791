"""Reading a whole store for ``scrapy-rep report`` (docs/cli.md): a SQLite file
read-only, a batch per transaction, beside a crawl's store writing to it;
Redis with SCAN on one server, through Sentinel and on every primary of a
Cluster, by script or, where scripts are refused, by pipeline."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis
from local_redis import RedisServer
from redis_topologies import PASSWORD, LocalCluster, LocalSentinels

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.redis.scan import scan_records as scan_redis
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.cache.storage.sqlite.once import scan_records as scan_sqlite
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.tools.store.scan import scan_store
from scrapy_rep.tools.store.view import StoreName

NOW = time.time()
DAY = 86_400.0


def record(n: int, **fields: Any) -> OriginRecord:
    body = f"User-agent: *\nDisallow: /p{n}\n".encode() + b"#" * n
    base: dict[str, Any] = {
        "kind": FetchKind.SUCCESS,
        "status": 200,
        "reason": "HTTP 200",
        "fetched_at": NOW,
        "expires_at": NOW + DAY,
        "good_body": body,
        "good_at": NOW,
        "good_status": 200,
    }
    return OriginRecord(**{**base, **fields})


ORIGINS = {f"https://o{n}.example": record(n) for n in range(25)}
ORIGINS["http://gone.example"] = record(
    0, kind=FetchKind.UNAVAILABLE, status=404, reason="HTTP 404", good_body=None, good_status=404
)
# A header longer than a script's first read: the record is read whole.
ORIGINS["https://long.example"] = record(1, reason="x" * 900, final_url="https://" + "u" * 1990)


def run(coroutine: Any) -> Any:
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


async def put_all(storage: Any, records: dict[str, OriginRecord]) -> None:
    for key, item in records.items():
        await storage.put(key, item, DAY)


def expected_sizes() -> dict[str, int]:
    return {key: len(item.good_body or b"") for key, item in ORIGINS.items()}


def check(found: list[tuple[str, OriginRecord | None, int]], bodies: bool) -> None:
    """Each record once, as written (without its body unless asked), with its size."""
    keys = [key for key, _, _ in found]
    assert sorted(keys) == sorted(ORIGINS)
    assert {key: size for key, _, size in found} == expected_sizes()
    for key, got, _ in found:
        assert got is not None
        kept = ORIGINS[key].good_body
        body = kept if bodies else (b"" if kept is not None else None)
        assert got == ORIGINS[key].__class__(**{**vars_of(ORIGINS[key]), "good_body": body})


def vars_of(item: OriginRecord) -> dict[str, Any]:
    return {name: getattr(item, name) for name in item.__slots__}


# --- SQLite --------------------------------------------------------------------------


@pytest.fixture
def sqlite_file(tmp_path: Path) -> Path:
    path = tmp_path / "robotstxt.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(path, clock=lambda: NOW)  # ttls from NOW
        await put_all(storage, ORIGINS)
        await storage.put("https://expired.example", record(3), -1.0)  # kept, but past
        await storage.close()

    run(fill())
    db = sqlite3.connect(path)
    db.execute("INSERT INTO origins VALUES ('https://bad.example', X'7b7d0a', ?)", (NOW + DAY,))
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("bodies", [False, True])
def test_sqlite_scan_reads_every_live_record_in_batches_without_writing(
    sqlite_file: Path, bodies: bool
) -> None:
    before = sorted(p.name for p in sqlite_file.parent.iterdir())
    found = list(scan_sqlite(sqlite_file, NOW, 1.0, bodies=bodies, batch=4))
    assert sorted(p.name for p in sqlite_file.parent.iterdir()) == before  # no side file
    assert ("https://bad.example", None, 0) in found  # unreadable: counted, not a crash
    assert "https://expired.example" not in [key for key, _, _ in found]  # as a crawl loads
    check([row for row in found if row[0] != "https://bad.example"], bodies)
    assert [key for key, _, _ in found] == sorted(key for key, _, _ in found)  # key order


def test_sqlite_scan_beside_a_crawl_writing_the_file(sqlite_file: Path) -> None:
    """A crawl's store open on the file (WAL, writing between two batches):
    the scan reads plain read-only, sees what was committed, and never blocks it."""

    async def scan_while_writing() -> list[str]:
        storage = await SqliteStorage.open(sqlite_file)
        try:
            keys = []
            for n, (key, _, _) in enumerate(scan_sqlite(sqlite_file, NOW, 1.0, batch=3)):
                keys.append(key)
                if n % 3 == 0:  # between two batches: a write commits at once
                    await storage.put(f"https://zz{n:03}.example", record(n), DAY)
            return keys
        finally:
            await storage.close()

    keys = run(scan_while_writing())
    assert set(ORIGINS) <= set(keys)
    assert any(key.startswith("https://zz") for key in keys)  # later keys, written meanwhile


def test_sqlite_scan_when_a_crawl_opens_the_file_midway(sqlite_file: Path) -> None:
    """Begun with no process on the file (immutable: no side file made), the
    scan goes on read-only once a crawl has opened it, and sees its writes."""

    async def scan_then_crawl() -> list[str]:
        rows = scan_sqlite(sqlite_file, NOW, 1.0, batch=3)
        keys = [next(rows)[0]]
        assert not Path(f"{sqlite_file}-wal").exists()
        storage = await SqliteStorage.open(sqlite_file)  # a crawl starts
        try:
            await storage.put("https://zz.example", record(1), DAY)
            keys += [key for key, _, _ in rows]
        finally:
            await storage.close()
        return keys

    keys = run(scan_then_crawl())
    assert set(ORIGINS) <= set(keys) and "https://zz.example" in keys


def test_scan_store_names_a_damaged_file(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(b"not a database" * 100)
    with pytest.raises(Exception, match="damaged"):
        list(scan_store(StoreName(str(damaged)), NOW))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.sqlite3"]


# --- Redis ---------------------------------------------------------------------------


def redis_rows(url: str, prefix: str = "scrapy_rep:", **options: Any) -> list[Any]:
    async def scan() -> list[Any]:
        storage = await RedisStorage.open(url, prefix=prefix)
        try:
            await put_all(storage, ORIGINS)
            return [row async for step in scan_redis(storage, **options) for row in step]
        finally:
            await storage.close()

    rows: list[Any] = run(scan())
    return rows


@pytest.mark.parametrize("bodies", [False, True])
def test_redis_scan_on_one_server_reads_the_prefix_only(
    redis_server: RedisServer, bodies: bool
) -> None:
    plain = redis.Redis.from_url(redis_server.url)
    plain.set("other:origin:https://foreign.example", b"{}\n")  # another prefix
    plain.set("scrapy_rep:lock:https://o1.example", b"token")  # not a record
    plain.set("scrapy_rep:origin:https://bad.example", b"not a record")
    rows = redis_rows(redis_server.url, bodies=bodies, count=7)
    assert ("https://bad.example", None, len(b"not a record")) in rows
    check([row for row in rows if row[0] != "https://bad.example"], bodies)
    assert scripted(plain) is not bodies  # headers by script; whole records by GET


def scripted(client: redis.Redis) -> bool:
    """Did the scan go by script (one EVAL a step, none failed)?"""
    stats = client.info("commandstats")
    evals = stats.get("cmdstat_eval", {})
    assert evals.get("failed_calls", 0) == 0
    return bool(evals.get("calls", 0))


def test_redis_scan_where_scripts_are_refused_reads_by_pipeline(
    redis_server: RedisServer,
) -> None:
    """An ACL user without EVAL: the same records, read with GETRANGE and STRLEN."""
    admin = redis.Redis.from_url(redis_server.url)
    admin.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "~*", "+@all", "-@scripting")
    url = redis_server.url.replace("redis://", "redis://reader:pw@")
    rows = redis_rows(url, count=5)
    check(rows, bodies=False)
    stats = admin.info("commandstats")
    assert stats["cmdstat_eval"]["rejected_calls"] >= 1 and stats["cmdstat_getrange"]["calls"]


def test_redis_scan_with_a_prefix_holding_glob_characters(redis_server: RedisServer) -> None:
    plain = redis.Redis.from_url(redis_server.url)
    plain.set("crawlX:origin:https://other.example", b"{}\n")  # matched by an unescaped "?"
    rows = redis_rows(redis_server.url, prefix="crawl?:")
    check(rows, bodies=False)


@pytest.fixture(scope="module")
def cluster(redis_cluster: LocalCluster) -> Iterator[LocalCluster]:
    redis_cluster.flush()
    yield redis_cluster
    redis_cluster.flush()


@pytest.mark.parametrize("bodies", [False, True])
def test_redis_scan_reads_every_primary_of_a_cluster(cluster: LocalCluster, bodies: bool) -> None:
    cluster.flush()
    nodes = [redis.Redis(port=node.port, password=PASSWORD) for node in cluster.nodes]
    for node in nodes:
        node.config_resetstat()
    rows = redis_rows(cluster.url, bodies=bodies, count=4)
    check(rows, bodies)
    assert all(scripted(node) is not bodies for node in nodes)  # each primary, by script
    assert sum(1 for keys in cluster.keys().values() if keys) == 3  # spread over the nodes


def test_scan_store_through_sentinel_and_stops_early(redis_sentinels: LocalSentinels) -> None:
    """The iterator of the tools (a thread reading ahead): every record, and
    a caller that stops early ends the reading thread."""
    redis_rows(redis_sentinels.url)  # fills the store through the sentinels' primary
    store = StoreName(redis_sentinels.url)
    found = list(scan_store(store, NOW))
    check(found, bodies=False)
    first = next(iter(scan_store(store, NOW)))
    assert first[0] in ORIGINS
