"""The Redis store on production Redis: a 3-primary Cluster and Sentinel (issue 46).

Real servers on 127.0.0.1 (tests/redis_topologies.py), passwords on. On a
Cluster an origin's keys share one slot and nothing needs two slots in one
call; on Sentinel the store follows the primary the sentinels name, through a
failover. docs/storage.md, "Production Redis".
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
import redis
from redis_topologies import PASSWORD, SENTINEL_PASSWORD, LocalCluster, LocalSentinels, wait_until
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, RedisServer, free_port
from test_storage_redis import sample

from scrapy_rep.cache.storage import (
    FallbackStorage,
    StorageError,
    StorageUnavailable,
    open_storage,
)
from scrapy_rep.cache.storage.redis.store import RedisStorage

ORIGIN = "https://a.example"


def _keyslot(cluster: LocalCluster, key: bytes) -> int:
    node = redis.Redis(port=cluster.nodes[0].port, password=PASSWORD)
    return int(node.cluster("keyslot", key))


@deferred_f_from_coro_f
async def test_cluster_keys_of_one_origin_share_one_slot_and_node(
    redis_cluster: LocalCluster,
) -> None:
    redis_cluster.flush()
    store = await RedisStorage.open(redis_cluster.url)
    try:
        assert store.cluster
        await store.put(ORIGIN, sample(), 3600)
        assert await store.lock(ORIGIN, 15)
        assert await store.reserve(ORIGIN, 1.0, 30) == 0.0
        assert await store.reserve(ORIGIN, 1.0, 30) == pytest.approx(1.0, abs=0.05)
        assert await store.pause(ORIGIN, 5.0, 30) == pytest.approx(5.0, abs=0.05)
        assert await store.going(ORIGIN, 1.0, 30) == pytest.approx(5.0, abs=0.05)
        holding = {port: keys for port, keys in redis_cluster.keys().items() if keys}
    finally:
        await store.close()
    tagged = [f"scrapy_rep:{kind}:{{{ORIGIN}}}".encode() for kind in ("lock", "origin", "pace")]
    assert list(holding.values()) == [tagged]  # one node holds all three
    assert len({_keyslot(redis_cluster, key) for key in tagged}) == 1


@deferred_f_from_coro_f
async def test_one_server_keeps_its_key_names(redis_server: RedisServer) -> None:
    """No hash tags off Cluster: records written by earlier versions stay found."""
    store = await RedisStorage.open(redis_server.url)
    raw = redis.Redis(port=redis_server.port)
    try:
        await store.put(ORIGIN, sample(), 3600)
        await store.reserve(ORIGIN, 1.0, 30)
        assert sorted(raw.keys("*")) == [
            f"scrapy_rep:origin:{ORIGIN}".encode(),
            f"scrapy_rep:pace:{ORIGIN}".encode(),
        ]
    finally:
        await store.close()


@deferred_f_from_coro_f
async def test_cluster_forget_deletes_then_logs_and_says_so_if_the_log_fails(
    redis_cluster: LocalCluster,
) -> None:
    redis_cluster.flush()
    record_key, log_key = f"scrapy_rep:origin:{{{ORIGIN}}}".encode(), b"scrapy_rep:forgotten"
    assert _keyslot(redis_cluster, record_key) != _keyslot(redis_cluster, log_key)  # CROSSSLOT
    store = await RedisStorage.open(redis_cluster.url)
    try:
        await store.put(ORIGIN, sample(), 3600)
        cursor, _ = await store.forgotten_since(None)
        assert await store.forget(ORIGIN)
        assert await store.get(ORIGIN) is None
        _, keys = await store.forgotten_since(cursor)
        assert keys == [ORIGIN]
        # The log cannot be written (not a stream): the record is gone all the
        # same, and the error says the running crawls were not told.
        await store.put(ORIGIN, sample(), 3600)
        redis.RedisCluster(
            host="127.0.0.1", port=redis_cluster.nodes[0].port, password=PASSWORD
        ).set(log_key, b"not a stream")
        with pytest.raises(StorageError, match="deleted but not logged") as caught:
            await store.forget(ORIGIN)
        assert not isinstance(caught.value, StorageUnavailable)  # not "Redis is down"
        assert "forget it again" in str(caught.value) and PASSWORD not in str(caught.value)
        assert await store.get(ORIGIN) is None
    finally:
        await store.close()


@deferred_f_from_coro_f
async def test_a_redis_url_at_a_cluster_node_or_a_sentinel_names_the_form_to_use(
    redis_cluster: LocalCluster, redis_sentinels: LocalSentinels
) -> None:
    node = f"redis://:{PASSWORD}@127.0.0.1:{redis_cluster.nodes[0].port}/0"
    with pytest.raises(StorageError, match=r"a node of a Redis Cluster: use redis\+cluster://"):
        await open_storage("redis", redis_url=node)
    port = redis_sentinels.sentinel_ports[0]
    sentinel = f"redis://:{SENTINEL_PASSWORD}@127.0.0.1:{port}/0"
    with pytest.raises(StorageError, match=r"a Sentinel, not a Redis server: use redis\+sentin"):
        await open_storage("redis", redis_url=sentinel)


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("redis+cluster://:s3cret@127.0.0.1:{free}", "Redis Cluster at redis+cluster://:***@"),
        ("redis+cluster://:s3cret@127.0.0.1:{server}", "Cluster mode is not enabled"),
        (
            "redis+sentinel://:s3cret@127.0.0.1:{free}/mymaster?sentinel_password=s3cret",
            "Redis Sentinel at redis+sentinel://:***@127.0.0.1",
        ),
    ],
    ids=["cluster-down", "not-a-cluster", "sentinels-down"],
)
@deferred_f_from_coro_f
async def test_an_unreachable_topology_stops_at_start_naming_it_without_passwords(
    url: str, says: str, redis_server: RedisServer
) -> None:
    url = url.format(free=free_port(), server=redis_server.port)
    with pytest.raises(StorageUnavailable) as caught:
        await open_storage("redis", redis_url=url)
    assert says in str(caught.value) and "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("/mymaster/", "/nosuch/"), "No master found for 'nosuch'"),
        (("sentinel_password=sentinel-pw", "sentinel_password=wrong"), "sentinel_password=***"),
    ],
    ids=["service", "sentinel-password"],
)
@deferred_f_from_coro_f
async def test_a_wrong_service_or_sentinel_password_stops_at_start(
    redis_sentinels: LocalSentinels, change: tuple[str, str], says: str
) -> None:
    url = redis_sentinels.url.replace(*change)
    with pytest.raises(StorageUnavailable) as caught:
        await open_storage("redis", redis_url=url)
    assert says in str(caught.value) and "wrong" not in str(caught.value)


@deferred_f_from_coro_f
async def test_sentinel_store_writes_to_the_primary_the_sentinels_name(
    redis_sentinels: LocalSentinels,
) -> None:
    first = await open_storage("redis", redis_url=redis_sentinels.url)
    second = await open_storage("redis", redis_url=redis_sentinels.url)
    primary = redis.Redis(port=redis_sentinels.primary_port(), password=PASSWORD)
    try:
        await first.put(ORIGIN, sample(), 3600)
        assert await second.get(ORIGIN) == sample()
        assert primary.exists(f"scrapy_rep:origin:{ORIGIN}") == 1  # no hash tag off Cluster
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("at_once", [256, 600])
@deferred_f_from_coro_f
async def test_sentinel_commands_beyond_the_pool_wait_for_a_connection(
    redis_sentinels: LocalSentinels, at_once: int, caplog: pytest.LogCaptureFixture
) -> None:
    """A crawl at CONCURRENT_REQUESTS = 256 has as many store commands in
    flight. Sentinel's pool refused the 101st ("Too many connections"): the
    store took Redis for down and each worker kept its own pace. They wait
    for one of the pool's 100 connections, as on one server, and each
    reservation is a shared turn."""
    storage = await open_storage("redis", redis_url=redis_sentinels.url)
    assert isinstance(storage, FallbackStorage)
    primary = redis.Redis(port=redis_sentinels.primary_port(), password=PASSWORD)
    origin = f"https://busy{at_once}.example"
    try:
        with caplog.at_level(logging.WARNING, logger="scrapy_rep.cache.storage.fallback"):
            reads = [storage.get(f"https://o{n}.example") for n in range(at_once)]
            turns = [storage.reserve(origin, 0.01, 3600) for _ in range(at_once)]
            found = await asyncio.gather(*reads, *turns)
        assert not storage.degraded and not caplog.records
        assert storage.local_turns == 0  # every turn from the shared store
        waits = sorted(found[at_once:])
        assert waits[-1] == pytest.approx((at_once - 1) * 0.01, abs=0.5)  # one line of turns
        # The pool's connections and ours; not the sentinels' or the replica's.
        clients = [c for c in primary.client_list() if c["flags"] == "N" and not c["name"]]
        assert len(clients) <= 101
    finally:
        await storage.close()


@deferred_f_from_coro_f
async def test_sentinel_failover_degrades_once_then_rejoins_the_promoted_replica(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    group = LocalSentinels(tmp_path)
    group.start()
    try:
        storage = await open_storage(
            "redis", redis_url=group.url, clock=clock, redis_retry_interval=1
        )
        assert isinstance(storage, FallbackStorage)
        await storage.put(ORIGIN, sample(), 3600)
        replica = redis.Redis(port=group.replica.port, password=PASSWORD)
        wait_until(lambda: replica.exists(f"scrapy_rep:origin:{ORIGIN}") == 1, 10, "replicated")
        with caplog.at_level(logging.INFO, logger="scrapy_rep.cache.storage.fallback"):
            group.primary.kill()
            assert await storage.get(ORIGIN) == sample()  # from memory: nothing lost
            assert storage.degraded
            await storage.put("https://b.example", sample(b"Disallow: /b"), 3600)
            wait_until(group.promoted, 30, "the replica's promotion")
            clock.advance(1)  # the next probe is due
            assert await storage.get(ORIGIN) == sample()  # the promoted replica has it
            assert not storage.degraded
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "Redis Sentinel at" in warnings[0].getMessage()
        assert PASSWORD not in warnings[0].getMessage()
        assert any("is back: 1 record(s) written back" in r.getMessage() for r in caplog.records)
        assert replica.exists("scrapy_rep:origin:https://b.example") == 1  # written back
        await storage.close()
    finally:
        group.stop()


@deferred_f_from_coro_f
async def test_cluster_node_lost_degrades_once_until_the_cluster_is_whole(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """One warning for a node down, however many probes find the others up."""
    cluster = LocalCluster(tmp_path)
    cluster.start()
    try:
        storage = await open_storage(
            "redis", redis_url=cluster.url, clock=clock, redis_retry_interval=1
        )
        assert isinstance(storage, FallbackStorage)
        origins = [f"https://o{n}.example" for n in range(30)]  # on every node
        for origin in origins:
            await storage.put(origin, sample(), 3600)
        with caplog.at_level(logging.INFO, logger="scrapy_rep.cache.storage.fallback"):
            cluster.nodes[2].kill()
            for _ in range(4):  # each round a probe, meeting keys of the live nodes first
                for origin in origins:
                    assert await storage.get(origin) == sample()  # from memory meanwhile
                clock.advance(1)
            assert storage.degraded
            cluster.nodes[2].start()  # its slots again (nodes.conf), its keys gone
            wait_until(cluster.agreed, 30, "the cluster whole again")
            assert await storage.get(origins[0]) == sample()
            assert not storage.degraded
        said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
        assert [m for m in said if "is unreachable" in m] == [said[0]]  # one warning
        assert len([m for m in said if "is back" in m]) == 1
        await storage.close()
    finally:
        cluster.stop()


@deferred_f_from_coro_f
async def test_roll_call_counts_workers_on_a_cluster_and_on_one_server(
    redis_cluster: LocalCluster, redis_server: RedisServer
) -> None:
    """docs/politeness.md, "Faults": one key, so one slot on a Cluster; a key
    of another type, or names from the future (a tampered key), do not count."""
    redis_cluster.flush()
    raw = redis.Redis(port=redis_server.port)
    for url in (redis_cluster.url, redis_server.url):
        store = await RedisStorage.open(url)
        try:
            assert await store.roll_call("w1", 30) == 1
            assert await store.roll_call("w2", 30) == 2
            assert await store.roll_call("w1", 30) == 2  # once each
        finally:
            await store.close()
    raw.delete("scrapy_rep:workers")
    raw.set("scrapy_rep:workers", b"not a sorted set")
    store = await RedisStorage.open(redis_server.url)
    try:
        assert await store.roll_call("w1", 30) == 1
        raw.zadd("scrapy_rep:workers", {"from-the-future": 1e12})
        assert await store.roll_call("w1", 30) == 1
        assert 0 < raw.ttl("scrapy_rep:workers") <= 30  # it expires with the roll
    finally:
        await store.close()
