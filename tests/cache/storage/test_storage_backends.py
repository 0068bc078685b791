"""Every backend keeps records, expires them and locks (docs/spec.md §2.3, §3.4, §3.5)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from storage_helpers import FakeClock, redis_url_of, store_kind

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import (
    FallbackStorage,
    MemoryStorage,
    ParsedBodies,
    Storage,
    StorageError,
    StorageUnavailable,
    open_storage,
    single_flight,
)

BACKENDS = ["memory", "sqlite", "redis", "redis-cluster"]
BODY = b"User-agent: *\r\nDisallow: /private\n\xff\x00 not utf-8\n"

Opener = Callable[[], Awaitable[Storage]]


def sample(body: bytes = BODY, at: float = 1_700_000_000.0) -> OriginRecord:
    return OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", at, at + 86400, body, at, 200)


@pytest.fixture
def opener(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Callable[[str], Opener]:
    """``opener(kind)()`` opens a fresh store of that kind; each call a new instance."""

    def make(kind: str) -> Opener:
        url = redis_url_of(kind, request)

        async def open_one() -> Storage:
            return await open_storage(
                store_kind(kind), path=tmp_path / "robots.sqlite3", redis_url=url, clock=clock
            )

        return open_one

    return make


@pytest.mark.parametrize("kind", BACKENDS)
@deferred_f_from_coro_f
async def test_storage_3_4_round_trip(kind: str, opener: Callable[[str], Opener]) -> None:
    storage = await opener(kind)()
    try:
        assert await storage.get("http://example.com:80") is None
        await storage.put("http://example.com:80", sample(), 3600)
        assert await storage.get("http://example.com:80") == sample()
        newer = sample(b"Disallow: /", at=1_700_000_100.0)
        await storage.put("http://example.com:80", newer, 3600)
        assert await storage.get("http://example.com:80") == newer
        assert await storage.get("https://example.com:443") is None
    finally:
        await storage.close()


@pytest.mark.parametrize("kind", BACKENDS)
@deferred_f_from_coro_f
async def test_storage_2_3_shared_between_instances(
    kind: str, opener: Callable[[str], Opener]
) -> None:
    """A second crawler (another instance) sees the first one's records."""
    first, second = await opener(kind)(), await opener(kind)()
    try:
        await first.put("https://a.example:443", sample(), 3600)
        found = await second.get("https://a.example:443")
        if kind == "memory":
            assert found is None  # in-process only, by design
        else:
            assert found == sample()
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@deferred_f_from_coro_f
async def test_storage_3_1_ttl_expiry_on_the_injected_clock(
    kind: str, opener: Callable[[str], Opener], clock: FakeClock
) -> None:
    storage = await opener(kind)()
    try:
        await storage.put("http://example.com:80", sample(), 100)
        clock.advance(99)
        assert await storage.get("http://example.com:80") is not None
        clock.advance(1)
        assert await storage.get("http://example.com:80") is None
    finally:
        await storage.close()


@pytest.mark.parametrize("kind", BACKENDS)
@deferred_f_from_coro_f
async def test_storage_3_5_lock_one_winner_among_10(
    kind: str, opener: Callable[[str], Opener]
) -> None:
    if kind == "memory":
        shared = await opener(kind)()
        stores = [shared] * 10
    else:
        stores = [await opener(kind)() for _ in range(10)]
    try:
        won = await asyncio.gather(*(store.lock("https://new.example:443", 30) for store in stores))
        assert sum(won) == 1
        winner = stores[won.index(True)]
        loser = stores[won.index(False)]
        if loser is not winner:  # separate processes' stores
            await loser.release("https://new.example:443")  # a loser cannot free it
            assert not await loser.lock("https://new.example:443", 30)
        assert await loser.lock("https://other.example:443", 30)  # locks are per key
        await winner.release("https://new.example:443")
        assert await loser.lock("https://new.example:443", 30)
    finally:
        for store in set(map(id, stores)):
            await next(s for s in stores if id(s) == store).close()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@deferred_f_from_coro_f
async def test_storage_3_5_lock_expires_when_its_holder_dies(
    kind: str, opener: Callable[[str], Opener], clock: FakeClock
) -> None:
    holder, other = await opener(kind)(), await opener(kind)()
    if kind == "memory":
        other = holder
    try:
        assert await holder.lock("k", 60)
        clock.advance(59)
        assert not await other.lock("k", 60)
        clock.advance(1)
        assert await other.lock("k", 60)
    finally:
        await holder.close()
        await other.close()


@deferred_f_from_coro_f
async def test_storage_3_5_single_flight_one_fetch_in_process(
    opener: Callable[[str], Opener],
) -> None:
    stores = [await opener("sqlite")() for _ in range(5)]
    fetches: list[int] = []

    async def fetch() -> OriginRecord:
        fetches.append(1)
        await asyncio.sleep(0.2)
        return sample()

    async def no_wait(_: float) -> None:
        await asyncio.sleep(0.01)

    try:
        records = await asyncio.gather(
            *(
                single_flight(
                    store, "https://x.example:443", fetch, lambda _: 3600.0, sleep=no_wait
                )
                for store in stores
            )
        )
        assert fetches == [1]
        assert records == [sample()] * 5
    finally:
        for store in stores:
            await store.close()


# --- memory: bounded, bodies shared ------------------------------------------


@deferred_f_from_coro_f
async def test_storage_memory_lru_bound(clock: FakeClock) -> None:
    storage = MemoryStorage(3, clock=clock)
    for key in "abc":
        await storage.put(key, sample(key.encode()), 3600)
    assert await storage.get("a") is not None  # a is now the most recent
    await storage.put("d", sample(b"d"), 3600)
    assert len(storage) == 3
    assert await storage.get("b") is None
    assert all([await storage.get(key) for key in "acd"])
    assert storage.distinct_bodies == 3  # b's body went with it


@deferred_f_from_coro_f
async def test_storage_memory_equal_bodies_stored_once(clock: FakeClock) -> None:
    storage = MemoryStorage(100, clock=clock)
    for i in range(50):
        copy = bytes(bytearray(BODY))  # a fresh object, as a fetch makes
        await storage.put(f"https://site{i}.example:443", sample(copy), 3600)
    first = await storage.get("https://site0.example:443")
    last = await storage.get("https://site49.example:443")
    assert first is not None and last is not None
    assert first.good_body is not None and first.good_body is last.good_body
    assert storage.distinct_bodies == 1
    parse = ParsedBodies()
    assert parse(first.good_body) is parse(bytes(bytearray(BODY)))
    assert parse.parses == 1


def test_storage_memory_max_origins_must_be_positive() -> None:
    with pytest.raises(ValueError, match="REP_MEMORY_MAX_ORIGINS"):
        MemoryStorage(0)


# --- the factory ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "mongo"}, "REP_STORAGE must be 'sqlite' .the default., 'memory', 'redis', or"),
        ({"kind": ""}, "REP_STORAGE must be"),
        ({"kind": "sqlite"}, "REP_STORAGE_PATH"),
        ({"kind": "redis"}, "REP_REDIS_URL"),
        ({"kind": "memory", "max_origins": 0}, "REP_MEMORY_MAX_ORIGINS"),
        ({"kind": "no.such.module.Storage"}, "cannot be imported"),
        ({"kind": "collections.OrderedDict"}, "does not give a Storage"),
    ],
)
@deferred_f_from_coro_f
async def test_storage_bad_settings_name_the_setting(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(StorageError, match=message):
        await open_storage(**kwargs)  # type: ignore[arg-type]


@deferred_f_from_coro_f
async def test_storage_dotted_path_opens_a_users_class() -> None:
    storage = await open_storage("scrapy_rep.cache.storage.memory.MemoryStorage")
    assert isinstance(storage, MemoryStorage)
    await storage.put("k", sample(), 60)
    assert await storage.get("k") == sample()


@deferred_f_from_coro_f
async def test_storage_sqlite_path_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StorageError, match="REP_STORAGE_PATH"):
        await open_storage("sqlite", path=blocker / "robots.sqlite3")


class _Flaky(MemoryStorage):
    """A primary store that can be taken down and brought back."""

    down = False

    async def get(self, key: str) -> OriginRecord | None:
        if self.down:
            raise StorageUnavailable("down")
        return await super().get(key)

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        if self.down:
            raise StorageUnavailable("down")
        await super().put(key, record, ttl_seconds)


@deferred_f_from_coro_f
async def test_storage_fallback_write_back_never_overwrites_a_newer_record() -> None:
    """Issue 13 §8: written while Redis was away, older than what another worker
    wrote meanwhile: the write-back leaves the newer record alone."""
    clock = FakeClock()
    primary = _Flaky(clock=clock)
    store = FallbackStorage(primary, MemoryStorage(clock=clock), name="flaky", clock=clock)
    now = clock()
    older = OriginRecord(FetchKind.SUCCESS, 200, "ours", now - 100, 9e9, b"User-agent: *\n")
    newer = OriginRecord(FetchKind.SUCCESS, 200, "theirs", now - 50, 9e9, b"User-agent: *\n")
    primary.down = True
    await store.put("k", older, 86_400)  # degraded: kept to write back
    primary.down = False
    await primary.put("k", newer, 86_400)  # another worker, meanwhile
    clock.advance(store.retry_interval)
    await store.get("other")  # the primary answers: write back now
    stored = await primary.get("k")
    assert stored is not None and stored.reason == "theirs"
    assert not store.degraded
