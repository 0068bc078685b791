"""The shared store for crawls on several machines: Redis, via ``redis.asyncio``.

Every key lives under one prefix and carries an expiry. ``lock`` is a
``SET NX PX`` so that of ten workers meeting a new origin, one fetches its
robots.txt; the holder renews it while it fetches (``leases``), and every
change to a held lock is a script that first checks the owner's token.
Connection failures surface as ``StorageUnavailable``; the
``FallbackStorage`` wrapper turns them into an in-process stand-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ClusterDownError, RedisError

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.defaults import REDIS_PREFIX
from scrapy_rep.cache.storage.errors import StorageError, StorageUnavailable, UnreadableRecords
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH, FORGOTTEN_KEEP, FORGOTTEN_MAX
from scrapy_rep.cache.storage.leases import Leases, holder_gone, new_token
from scrapy_rep.cache.storage.redis.clients import LOST, RedisLink, connect
from scrapy_rep.cache.storage.redis.scripts import (
    ACQUIRE,
    FORGET,
    LOG_FORGOTTEN,
    PACE,
    RELEASE,
    RENEW,
    ROLL_CALL,
    TAKE_OVER,
)
from scrapy_rep.cache.storage.redis.urls import safe_url

__all__ = ["RedisStorage", "safe_url"]


class RedisStorage:
    """``Storage`` in Redis; open it with ``await RedisStorage.open(url)``.

    On a Cluster (``cluster``) an origin's keys carry it as a hash tag,
    ``{origin}``, so they share one slot; on one server (Sentinel's too) the
    names stay as they were, and stores already written stay readable
    (docs/storage.md, "Production Redis").
    """

    def __init__(
        self,
        client: Any,
        *,
        url: str,
        prefix: str = REDIS_PREFIX,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        link: RedisLink | None = None,
    ) -> None:
        self._unreadable = UnreadableRecords("Redis")
        self._client = client
        self._link = link
        self.url = url
        self.prefix = prefix
        self.cluster = link is not None and link.cluster
        self._broken = False  # a Cluster that lost a node: whole again or not used
        self.where = link.where if link is not None else f"Redis at {safe_url(url)}"
        self._leases = Leases(self._extend, sleep=sleep)
        self._pace_script = client.register_script(PACE)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        prefix: str = REDIS_PREFIX,
        timeout: float = 2.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> RedisStorage:
        """Connect and ping; a server that does not answer is an error naming the URL."""
        try:
            link = connect(url, timeout)
        except ValueError as exc:
            raise ValueError(f"REP_REDIS_URL: {safe_url(url)!r} is not a Redis URL: {exc}") from exc
        await link.check()
        return cls(link.client, url=url, prefix=prefix, sleep=sleep, link=link)

    @property
    def client(self) -> Any:
        """The redis-py client (``scan`` reads the whole store through it)."""
        return self._client

    def _tagged(self, key: str) -> str:
        return f"{{{key}}}" if self.cluster else key

    def _record_key(self, key: str) -> str:
        return f"{self.prefix}origin:{self._tagged(key)}"

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}lock:{self._tagged(key)}"

    def _pace_key(self, key: str) -> str:
        return f"{self.prefix}pace:{self._tagged(key)}"

    @property
    def _forgotten_key(self) -> str:
        return f"{self.prefix}forgotten"

    @property
    def _workers_key(self) -> str:
        return f"{self.prefix}workers"

    def _lost(self, exc: BaseException) -> StorageUnavailable:
        self._broken = self.cluster
        return StorageUnavailable(f"{self.where} is unreachable: {exc}")

    async def _whole(self) -> None:
        """A Cluster is used whole or not at all: once a node is lost, every call
        fails until each primary answers that the cluster is ok. Else the keys
        of the other nodes would answer between two that fail, and the store
        would be lost and back (a warning each time) at every probe
        (docs/storage.md, "Production Redis")."""
        if not self._broken:
            return
        try:
            info = await self._client.cluster_info(target_nodes=self._client.PRIMARIES)
        except LOST as exc:
            raise self._lost(exc) from exc
        states = [info] if "cluster_state" in info else list(info.values())
        if any(state.get("cluster_state") != "ok" for state in states):
            raise self._lost(ClusterDownError("a primary says the cluster is not ok"))
        self._broken = False

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        await self._whole()
        try:
            return await getattr(self._client, method)(*args, **kwargs)
        except LOST as exc:
            raise self._lost(exc) from exc

    async def get(self, key: str) -> OriginRecord | None:
        data = await self._call("get", self._record_key(key))
        if data is None:
            return None
        try:
            return OriginRecord.from_bytes(data)
        except ValueError as exc:  # tampered, or something else under our prefix
            self._unreadable.seen(key, exc)
            return None

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        ttl_ms = max(int(ttl_seconds * 1000), 1)
        await self._call("set", self._record_key(key), record.to_bytes(), px=ttl_ms)

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record (not its lock) and log it (``forgotten_since``);
        True if there was one.

        One script on one server; on a Cluster the record and the log are in
        two slots, so two calls: delete, then log. A crawl that reads the log
        then finds no record and fetches; the other order would let it reload
        the old record in between. A log that fails after the delete is an
        error saying so: forgetting again tells the running crawls."""
        args = (key, FORGOTTEN_MAX, int(FORGOTTEN_KEEP))
        if not self.cluster:
            keys = (self._record_key(key), self._forgotten_key)
            return bool(await self._call("eval", FORGET, 2, *keys, *args))
        deleted = bool(await self._call("delete", self._record_key(key)))
        try:
            await self._call("eval", LOG_FORGOTTEN, 1, self._forgotten_key, *args)
        except (StorageUnavailable, RedisError) as exc:
            raise StorageError(
                f"{self.where}: the record of {key} was deleted but not logged ({exc}): "
                "crawls running now keep their copy until it expires; forget it again "
                "to tell them"
            ) from exc
        return deleted

    async def forgotten_since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The keys forgotten after ``cursor`` (``ForgetLog``): one round trip."""
        if cursor is None:
            last = await self._call("xrevrange", self._forgotten_key, count=1)
            return (_text(last[0][0]) if last else "0-0"), []
        found = await self._call("xread", {self._forgotten_key: cursor}, count=FORGOTTEN_BATCH)
        entries = found[0][1] if found else []
        keys = [_text(fields.get(b"key", b"")) for _, fields in entries]
        return (_text(entries[-1][0]) if entries else cursor), [key for key in keys if key]

    async def lock(self, key: str, ttl: float) -> bool:
        token, ttl_ms, lock_key = new_token(), _ms(ttl), self._lock_key(key)
        won, holder = await self._call("eval", ACQUIRE, 1, lock_key, token, ttl_ms)
        taken_from = None
        if not won and isinstance(holder, bytes):
            held_by = holder.decode("utf-8", "replace")
            if holder_gone(held_by):
                won = await self._call("eval", TAKE_OVER, 1, lock_key, holder, token, ttl_ms)
                taken_from = held_by if won else None
        if won:
            self._leases.hold(key, token, ttl)
        if taken_from is not None:
            self._leases.took_over(key, taken_from)
        return bool(won)

    async def renew(self, key: str, ttl: float) -> bool:
        """Extend our lock on ``key`` by ``ttl``; False if it is not ours (any more)."""
        token = self._leases.token(key)
        return token is not None and await self._extend(key, token, ttl)

    async def release(self, key: str) -> None:
        token = self._leases.drop(key)
        if token is not None:
            await self._call("eval", RELEASE, 1, self._lock_key(key), token)

    # --- the pace (``Pacing``): one script call each -------------------------------

    async def reserve(
        self, key: str, interval: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        return await self._pace("reserve", key, interval, max_ahead, not_before)

    async def pause(self, key: str, seconds: float, max_ahead: float) -> float:
        return await self._pace("pause", key, seconds, max_ahead)

    async def going(self, key: str, interval: float, max_ahead: float) -> float:
        return await self._pace("going", key, interval, max_ahead)

    async def _pace(
        self, what: str, key: str, amount: float, max_ahead: float, not_before: float = 0.0
    ) -> float:
        """One EVALSHA (the script is sent once per connection's server, then by hash)."""
        amount_ms = max(math.ceil(amount * 1000), 0)
        args = (what, amount_ms, _ms(max_ahead), max(math.ceil(not_before * 1000), 0))
        await self._whole()
        try:
            wait_ms = await self._pace_script(keys=(self._pace_key(key),), args=args)
        except LOST as exc:
            raise self._lost(exc) from exc
        return max(int(wait_ms), 0) / 1000

    async def roll_call(self, worker: str, within: float) -> int:
        """``worker`` is here: how many workers the store saw within ``within``
        seconds, this one too (``RollCall``); one key, one script."""
        seen = await self._call("eval", ROLL_CALL, 1, self._workers_key, worker, within)
        return max(int(seen), 1)

    async def close(self) -> None:
        """Release our locks first: the next process need not wait for them to lapse."""
        for key, token in self._leases.drop_all().items():
            with contextlib.suppress(RedisError, *LOST):  # they lapse anyway
                await self._client.eval(RELEASE, 1, self._lock_key(key), token)
        if self._link is not None:
            await self._link.close()
        else:
            with contextlib.suppress(RedisError, *LOST):
                await self._client.aclose()

    async def _extend(self, key: str, token: str, ttl: float) -> bool:
        return bool(await self._call("eval", RENEW, 1, self._lock_key(key), token, _ms(ttl)))


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)
