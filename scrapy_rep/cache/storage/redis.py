"""The shared store for crawls on several machines: Redis, via ``redis.asyncio``.

Every key lives under one prefix and carries an expiry. ``lock`` is a
``SET NX PX`` so that of ten workers meeting a new origin, one fetches its
robots.txt. Connection failures surface as ``StorageUnavailable``; the
``FallbackStorage`` wrapper turns them into an in-process stand-in.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from redis import asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.errors import StorageUnavailable, UnreadableRecords

__all__ = ["RedisStorage", "safe_url"]

# Compare-and-delete: release only the lock we hold, not a successor's.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
_LOST = (RedisConnectionError, RedisTimeoutError, OSError)


def safe_url(url: str) -> str:
    """The URL for messages: any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))



class RedisStorage:
    """``Storage`` in Redis; open it with ``await RedisStorage.open(url)``."""

    def __init__(self, client: aioredis.Redis, *, url: str, prefix: str = "scrapy_rep:") -> None:
        self._unreadable = UnreadableRecords("Redis")
        self._client = client
        self.url = url
        self.prefix = prefix
        self._held: dict[str, str] = {}

    @classmethod
    async def open(
        cls, url: str, *, prefix: str = "scrapy_rep:", timeout: float = 2.0
    ) -> RedisStorage:
        """Connect and ping; a server that does not answer is an error naming the URL."""
        try:
            client = aioredis.Redis.from_url(
                url,
                socket_connect_timeout=timeout,
                socket_timeout=timeout,
                retry=Retry(NoBackoff(), 1),  # one reconnect for a pooled connection gone stale
            )
        except ValueError as exc:
            raise ValueError(f"REP_REDIS_URL: {safe_url(url)!r} is not a Redis URL: {exc}") from exc
        try:
            await client.ping()
        except (RedisError, OSError) as exc:
            await client.aclose()
            raise StorageUnavailable(
                f"Redis at {safe_url(url)} is not reachable ({exc}); start it, or fix "
                f"REP_REDIS_URL / REDIS_URL, or choose another REP_STORAGE"
            ) from exc
        return cls(client, url=url, prefix=prefix)

    def _record_key(self, key: str) -> str:
        return f"{self.prefix}origin:{key}"

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}lock:{key}"

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self._client, method)(*args, **kwargs)
        except _LOST as exc:
            raise StorageUnavailable(
                f"Redis at {safe_url(self.url)} is unreachable: {exc}"
            ) from exc

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

    async def lock(self, key: str, ttl: float) -> bool:
        token = uuid.uuid4().hex
        ttl_ms = max(int(ttl * 1000), 1)
        won = bool(await self._call("set", self._lock_key(key), token, nx=True, px=ttl_ms))
        if won:
            self._held[key] = token
        return won

    async def release(self, key: str) -> None:
        token = self._held.pop(key, None)
        if token is not None:
            await self._call("eval", _RELEASE, 1, self._lock_key(key), token)

    async def close(self) -> None:
        with contextlib.suppress(*_LOST):
            await self._client.aclose()
