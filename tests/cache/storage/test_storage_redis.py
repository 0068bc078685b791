"""The shared store against a real redis-server (docs/spec.md §3.4, §3.5)."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest
from redis import asyncio as aioredis
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, RedisServer, free_port, run_workers

from scrapy_rep.cache.outcome import AccessState, FetchKind
from scrapy_rep.cache.policy import OriginRecord, PolicyConfig, decide
from scrapy_rep.cache.storage import StorageUnavailable, open_storage
from scrapy_rep.cache.storage.fallback import ROLL_CALL_EVERY, SEEN_WITHIN, FallbackStorage
from scrapy_rep.cache.storage.redis.store import RedisStorage, safe_url

BODY = b"User-agent: *\nDisallow: /private\n"
T0 = 1_700_000_000.0


def sample(body: bytes = BODY) -> OriginRecord:
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", T0, T0 + 86400, body, T0, 200)


def outage() -> OriginRecord:
    return OriginRecord(
        FetchKind.UNREACHABLE, 503, "HTTP 503", T0, T0, None, None, None, T0, T0 + 60, 1
    )


@deferred_f_from_coro_f
async def test_storage_redis_keys_under_prefix_all_expire(redis_server: RedisServer) -> None:
    storage = await RedisStorage.open(redis_server.url, prefix="crawl1:")
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        await storage.put("https://a.example:443", sample(), 3600)
        assert await storage.lock("https://a.example:443", 30)
        keys = sorted(await raw.keys("*"))
        assert keys == [
            b"crawl1:lock:https://a.example:443",
            b"crawl1:origin:https://a.example:443",
        ]
        ttls = [await raw.pttl(key) for key in keys]
        assert 0 < ttls[0] <= 30_000 and 3_590_000 < ttls[1] <= 3_600_000
        other = await RedisStorage.open(redis_server.url, prefix="crawl2:")
        assert await other.get("https://a.example:443") is None  # prefixes do not mix
        await other.close()
    finally:
        await storage.close()
        await raw.aclose()


def test_storage_redis_lock_one_winner_across_10_processes(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    results = run_workers(
        *(
            ["redis", redis_server.url, "lock", "https://new.example:443", str(tmp_path), "10"]
            for _ in range(10)
        )
    )
    assert sorted(results) == ["lost"] * 9 + ["won"]


def test_storage_3_5_ten_processes_fetch_a_new_origin_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    markers = tmp_path / "fetches"
    markers.mkdir()
    results = run_workers(
        *(
            ["redis", redis_server.url, "fetch-once", "https://new.example:443", str(markers)]
            for _ in range(10)
        )
    )
    assert len(list(markers.iterdir())) == 1
    assert len(set(results)) == 1  # all ten got the one fetched record


@deferred_f_from_coro_f
async def test_storage_redis_down_at_startup_names_the_url() -> None:
    url = f"redis://127.0.0.1:{free_port()}/3"
    with pytest.raises(StorageUnavailable, match=f"Redis at {url} is not reachable"):
        await open_storage("redis", redis_url=url)


@deferred_f_from_coro_f
async def test_storage_redis_url_password_is_not_shown() -> None:
    url = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"
    with pytest.raises(StorageUnavailable) as caught:
        await open_storage("redis", redis_url=url)
    assert "s3cret" not in str(caught.value) and "user:***@127.0.0.1" in str(caught.value)
    assert safe_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


@deferred_f_from_coro_f
async def test_storage_redis_lost_mid_crawl_degrades_once_and_recovers(
    redis_server: RedisServer, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    config = PolicyConfig()
    storage = await open_storage("redis", redis_url=redis_server.url, clock=clock)
    assert isinstance(storage, FallbackStorage)
    raw = aioredis.Redis.from_url(redis_server.url)
    try:
        await storage.put("https://open.example:443", sample(), 3600)
        await storage.put("https://closed.example:443", outage(), 3600)

        redis_server.kill()
        with caplog.at_level(logging.INFO, logger="scrapy_rep.cache.storage.fallback"):
            # No request lost or let through: what this process knew still holds.
            open_, closed = [
                await storage.get(key)
                for key in ("https://open.example:443", "https://closed.example:443")
            ]
            assert open_ == sample()
            assert decide(closed, T0 + 60, config).state is AccessState.CLOSED
            assert await storage.get("https://unknown.example:443") is None  # -> fetch
            await storage.put("https://new.example:443", sample(b"Disallow: /new"), 3600)
            assert await storage.get("https://new.example:443") == sample(b"Disallow: /new")
            assert await storage.lock("https://new.example:443", 30)  # in-process lock
            await storage.release("https://new.example:443")
            clock.advance(10)  # a probe is due: Redis is still down
            assert await storage.get("https://open.example:443") == sample()
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
            assert len(warnings) == 1
            assert redis_server.url in warnings[0].getMessage()
            assert storage.degraded

            redis_server.start()  # same port, empty
            assert await storage.get("https://open.example:443") == sample()
            assert storage.degraded  # no probe before retry_interval
            clock.advance(10)
            assert await storage.get("https://open.example:443") == sample()
            assert not storage.degraded
            assert any("is back" in r.getMessage() for r in caplog.records)
        # What was written meanwhile reached Redis.
        data = await raw.get("scrapy_rep:origin:https://new.example:443")
        assert data is not None and OriginRecord.from_bytes(data) == sample(b"Disallow: /new")
        # And new writes go to Redis again.
        await storage.put("https://later.example:443", sample(), 3600)
        assert await raw.exists("scrapy_rep:origin:https://later.example:443") == 1
        assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    finally:
        await storage.close()
        await raw.aclose()


@deferred_f_from_coro_f
async def test_storage_redis_more_commands_at_once_than_pooled_connections_wait_their_turn(
    redis_server: RedisServer,
) -> None:
    """A broad crawl has hundreds of requests in flight, each a store command
    (a record, a pace turn). redis-py's pool holds 100 connections and refused
    the 101st command at once ("Too many connections"): the crawl took Redis
    for down and stopped sharing its pace. They wait for a free connection."""
    storage = await RedisStorage.open(redis_server.url, prefix="many:")
    try:
        keys = [f"https://o{n}.example:443" for n in range(400)]
        found = await asyncio.gather(*(storage.get(key) for key in keys))
        assert found == [None] * len(keys)
        raw = aioredis.Redis.from_url(redis_server.url)
        clients = await raw.client_list()
        await raw.aclose()
        assert len(clients) <= 101  # the pool's connections, and ours
    finally:
        await storage.close()


def next_turn_within(wait: float, started: float) -> None:
    """The turn after one taken at ``started`` is a second later on Redis's
    clock, which runs on while the test waits on a loaded machine: the wait
    is a second less what has passed since, never more."""
    passed = time.monotonic() - started
    assert 1.0 - passed - 0.02 <= wait <= 1.0


@deferred_f_from_coro_f
async def test_storage_redis_down_paces_each_origin_as_if_every_worker_counted_were_sending(
    redis_server: RedisServer, clock: FakeClock
) -> None:
    """docs/politeness.md, "Faults": two workers answer the roll call; Redis
    goes away, and each paces an origin at twice its delay, so that both
    together still send one request per delay; the shared turns come back
    with Redis. Before, each went at the delay: two requests per delay."""
    workers = [
        await open_storage("redis", redis_url=redis_server.url, clock=clock) for _ in range(2)
    ]
    a, b = workers
    assert isinstance(a, FallbackStorage) and isinstance(b, FallbackStorage)
    try:
        started = time.monotonic()
        assert await a.reserve("https://s.example:443", 1.0, 30) == 0.0
        next_turn_within(await b.reserve("https://s.example:443", 1.0, 30), started)
        assert (a.workers, b.workers) == (1, 2)  # a answered first
        clock.advance(ROLL_CALL_EVERY)  # a's next roll call is due
        await a.reserve("https://t.example:443", 1.0, 30)
        assert a.workers == 2

        redis_server.kill()
        own = [await a.reserve("https://u.example:443", 1.0, 30) for _ in range(3)]
        assert a.degraded and own == [0.0, 2.0, 4.0]  # its turns, 2 s apart
        assert await a.going("https://u.example:443", 1.0, 30) == 2.0  # never closer

        redis_server.start()  # the same port, empty: no roll of workers
        clock.advance(10)  # a probe is due
        local = a.local_turns
        started = time.monotonic()
        assert await a.reserve("https://v.example:443", 1.0, 30) == 0.0
        next_turn_within(await a.reserve("https://v.example:443", 1.0, 30), started)
        assert not a.degraded and a.local_turns == local  # shared turns again, 1 s apart
        assert a.workers == 2  # only a answered since: b still counts, for SEEN_WITHIN
        clock.advance(SEEN_WITHIN)
        await a.reserve("https://w.example:443", 1.0, 30)
        assert a.workers == 1  # b silent (by a's roll calls) for that long: gone
    finally:
        for worker in workers:
            await worker.close()
