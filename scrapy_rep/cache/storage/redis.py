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
from urllib.parse import urlsplit, urlunsplit

from redis import asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.errors import StorageUnavailable, UnreadableRecords
from scrapy_rep.cache.storage.forgotten import FORGOTTEN_BATCH, FORGOTTEN_KEEP, FORGOTTEN_MAX
from scrapy_rep.cache.storage.leases import Leases, holder_gone, new_token

__all__ = ["RedisStorage", "safe_url"]

# Take a free lock; else cut one that would outlive a TTL (no expiry: an older
# version crashed, or a tampered key) down to it, and name its holder.
_ACQUIRE = """
if redis.call('type', KEYS[1]).ok ~= 'string' then
    redis.call('del', KEYS[1])
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {1, ''}
end
local left = redis.call('pttl', KEYS[1])
if left == -1 or left > tonumber(ARGV[2]) then
    redis.call('pexpire', KEYS[1], ARGV[2])
end
return {0, redis.call('get', KEYS[1])}
"""
# Compare-and-set: take the lock of a holder that is gone, unless it changed meanwhile.
_TAKE_OVER = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3])
    return 1
end
return 0
"""
# Compare-and-extend, compare-and-delete: only the lock we hold, never a successor's.
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
"""
# The pace (``scrapy_rep.cache.pace``, the same steps in Lua), on Redis's own
# clock (TIME): the workers' clocks never meet, each gets a relative wait.
# Times are integer milliseconds in a hash (n: next turn, p: paused until,
# w: the last request went); a key that is not such a hash is replaced, a
# value that is nonsense is clamped as ``pace.sane`` does.
# ARGV: 1 what ("reserve", "pause", "going"), 2 interval or pause (ms),
# 3 max_ahead (ms), 4 not_before (ms, reserve). Returns the wait (ms).
_PACE = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local amount = math.max(tonumber(ARGV[2]), 0)
local ahead = tonumber(ARGV[3])
if redis.call('type', KEYS[1]).ok ~= 'hash' then
    redis.call('del', KEYS[1])
end
local stored = redis.call('hmget', KEYS[1], 'n', 'p', 'w')
local function sane(value)
    local v = tonumber(value)
    if v == nil or v ~= v or v < now then
        return now
    end
    return math.min(v, now + ahead)
end
local next_at, paused = sane(stored[1]), sane(stored[2])
local went = tonumber(stored[3])
if went ~= nil and went == went then
    went = math.min(went, now)
else
    went = nil
end
local after_went = now
if went ~= nil then
    after_went = math.min(went + amount, now + ahead)
end
local wait
if ARGV[1] == 'going' then
    local ready = math.max(paused, after_went)
    if ready > now then
        return ready - now
    end
    next_at = math.max(next_at, now + amount)
    went = now
    wait = 0
elseif ARGV[1] == 'pause' then
    paused = math.max(paused, now + math.min(amount, ahead))
    next_at = math.max(next_at, paused)
    wait = paused - now
else
    local start = math.max(next_at, paused, after_went, now + math.min(tonumber(ARGV[4]), ahead))
    next_at = start + amount
    if start <= now then
        went = now
    end
    wait = start - now
end
redis.call('hset', KEYS[1], 'n', string.format('%d', next_at), 'p', string.format('%d', paused))
if went ~= nil then
    redis.call('hset', KEYS[1], 'w', string.format('%d', went))
end
redis.call('pexpireat', KEYS[1], math.max(next_at, paused) + 1000)
return wait
"""
# Delete a record and log it in one step: a stream under the prefix, its IDs
# the server's clock; entries older than ARGV[3] seconds are trimmed (MINID,
# Redis 6.2; before, the count bound and the key's expiry do it).
_FORGET = """
if redis.replicate_commands then redis.replicate_commands() end
local deleted = redis.call('del', KEYS[1])
redis.call('xadd', KEYS[2], 'MAXLEN', '~', ARGV[2], '*', 'key', ARGV[1])
local now = redis.call('time')
redis.pcall('xtrim', KEYS[2], 'MINID', (tonumber(now[1]) - tonumber(ARGV[3])) * 1000)
redis.call('expire', KEYS[2], ARGV[3])
return deleted
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

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        url: str,
        prefix: str = "scrapy_rep:",
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._unreadable = UnreadableRecords("Redis")
        self._client = client
        self.url = url
        self.prefix = prefix
        self._leases = Leases(self._extend, sleep=sleep)
        self._pace_script = client.register_script(_PACE)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        prefix: str = "scrapy_rep:",
        timeout: float = 2.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
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
        return cls(client, url=url, prefix=prefix, sleep=sleep)

    def _record_key(self, key: str) -> str:
        return f"{self.prefix}origin:{key}"

    def _lock_key(self, key: str) -> str:
        return f"{self.prefix}lock:{key}"

    def _pace_key(self, key: str) -> str:
        return f"{self.prefix}pace:{key}"

    @property
    def _forgotten_key(self) -> str:
        return f"{self.prefix}forgotten"

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

    async def forget(self, key: str) -> bool:
        """Delete ``key``'s record (not its lock) and log it (``forgotten_since``);
        True if there was one."""
        keys = (self._record_key(key), self._forgotten_key)
        args = (key, FORGOTTEN_MAX, int(FORGOTTEN_KEEP))
        return bool(await self._call("eval", _FORGET, 2, *keys, *args))

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
        won, holder = await self._call("eval", _ACQUIRE, 1, lock_key, token, ttl_ms)
        taken_from = None
        if not won and isinstance(holder, bytes):
            held_by = holder.decode("utf-8", "replace")
            if holder_gone(held_by):
                won = await self._call("eval", _TAKE_OVER, 1, lock_key, holder, token, ttl_ms)
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
            await self._call("eval", _RELEASE, 1, self._lock_key(key), token)

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
        try:
            wait_ms = await self._pace_script(keys=(self._pace_key(key),), args=args)
        except _LOST as exc:
            raise StorageUnavailable(
                f"Redis at {safe_url(self.url)} is unreachable: {exc}"
            ) from exc
        return max(int(wait_ms), 0) / 1000

    async def close(self) -> None:
        """Release our locks first: the next process need not wait for them to lapse."""
        for key, token in self._leases.drop_all().items():
            with contextlib.suppress(RedisError, *_LOST):  # they lapse anyway
                await self._client.eval(_RELEASE, 1, self._lock_key(key), token)
        with contextlib.suppress(*_LOST):
            await self._client.aclose()

    async def _extend(self, key: str, token: str, ttl: float) -> bool:
        return bool(await self._call("eval", _RENEW, 1, self._lock_key(key), token, _ms(ttl)))


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)
