"""A redis-py asyncio client for each form of ``REP_REDIS_URL`` (``urls``).

One server: ``Redis.from_url``. Sentinel: the primary the sentinels name,
asked again whenever a connection to it fails, so a promoted replica is found
on the first call after the failover. Both wait for a pooled connection
beyond ``MAX_CONNECTIONS`` commands at once, as a broad crawl has. Cluster:
``RedisCluster`` from the seed nodes, each command sent to the node holding
its key's slot. Every client reconnects once for a pooled connection gone
stale and then gives up: a store that does not answer is
``FallbackStorage``'s to stand in for (docs/storage.md, "Production Redis").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from redis import asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff
from redis.exceptions import ClusterDownError, RedisClusterException, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from scrapy_rep.cache.storage.errors import StorageError, StorageUnavailable
from scrapy_rep.cache.storage.redis.urls import RedisAddress, parse_redis_url, safe_url

__all__ = ["LOST", "BlockingSentinelPool", "RedisLink", "connect"]

#: The server is gone (for now): a lost connection, a timeout, a Cluster whose
#: slot has no node (a node down, a failover under way) or no node at all.
LOST: tuple[type[BaseException], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    ClusterDownError,
    RedisClusterException,
)

_ANY: tuple[type[BaseException], ...] = (RedisError, *LOST)

#: What a ``redis://`` URL found instead of a server, and the form to use there.
_WRONG_MODE = {
    "sentinel": "a Sentinel, not a Redis server: use redis+sentinel://host:26379/service_name",
    "cluster": "a node of a Redis Cluster: use redis+cluster://host:port[,host:port...]",
}


@dataclass
class RedisLink:
    """A client, what it talks to, and the sentinels' clients to close with it."""

    client: Any  # aioredis.Redis, or RedisCluster
    address: RedisAddress
    sentinels: list[aioredis.Redis] = field(default_factory=list)

    @property
    def cluster(self) -> bool:
        return self.address.kind == "cluster"

    @property
    def where(self) -> str:
        """For messages: "Redis at URL", "Redis Sentinel at URL", "Redis Cluster at URL"."""
        kind = {"server": "Redis", "sentinel": "Redis Sentinel", "cluster": "Redis Cluster"}
        return f"{kind[self.address.kind]} at {safe_url(self.address.url)}"

    async def check(self) -> None:
        """Reach the server (the primary, the cluster's nodes) once, or raise."""
        try:
            if self.cluster:
                await self.client.initialize()
            await self.client.ping()
            mode = await self._mode()
        except _ANY as exc:
            await self.close()
            raise StorageUnavailable(
                f"{self.where} is not reachable ({exc}); start it, or fix "
                f"REP_REDIS_URL / REDIS_URL, or choose another REP_STORAGE"
            ) from exc
        if self.address.kind == "server" and mode in _WRONG_MODE:
            await self.close()
            shown = safe_url(self.address.url)
            raise StorageError(f"REP_REDIS_URL: {shown} is {_WRONG_MODE[mode]}")

    async def _mode(self) -> str:
        """``redis_mode`` (standalone, sentinel, cluster); "" where INFO is refused."""
        if self.address.kind != "server":
            return ""
        try:
            info = await self.client.info("server")
        except ResponseError:  # INFO renamed away, or not allowed to this user
            return ""
        return str(info.get("redis_mode", ""))

    async def close(self) -> None:
        for client in (self.client, *self.sentinels):
            with contextlib.suppress(*_ANY):
                await client.aclose()


#: ``Sentinel`` through a typed name: its ``__init__`` has no annotations
#: before redis-py 8 and has them from 8 on, so a call checked directly needs
#: an ignore on one and fails on the other for an unused one.
_new_sentinel: Callable[..., Sentinel] = Sentinel

#: Connections to one Redis server per store: commands beyond wait their turn.
MAX_CONNECTIONS: Final = 100
#: How many of the socket timeout a command waits for one of those
#: connections: the wait is the crawl's own (hundreds of commands in flight
#: on a busy machine), not the server's, which each command's socket timeout
#: still bounds; a server that hangs degrades the store through those.
POOL_WAIT_TIMEOUTS: Final = 5


class BlockingSentinelPool(SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """Sentinel's pool, waiting for a connection past its size as the one-server pool does.

    redis-py has no blocking Sentinel pool: ``master_for``'s refuses the
    101st command at once ("Too many connections"), and a crawl at
    ``CONCURRENT_REQUESTS = 256`` took the store for down and lost its shared
    pace (docs/storage.md, "Production Redis"). The two pools compose without
    a line of code: ``SentinelConnectionPool`` only finds the primary (its
    connections ask the sentinels, ``owns_connection``, ``reset``), while
    ``BlockingConnectionPool`` only changes how a connection is taken and
    given back (``get_connection`` waits up to ``timeout``, ``release``
    wakes a waiter). Only ``__init__`` is in both, and each passes the rest
    of its arguments on (Sentinel's first, by the method order). Simpler
    than a semaphore in front of the client, which would have to wrap every
    call, scripts and pipelines included.
    """


def connect(url: str, timeout: float) -> RedisLink:
    """A client for ``url`` (nothing is sent yet); ``ValueError`` for a bad URL."""
    address = parse_redis_url(url)
    common: dict[str, Any] = {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 1),  # one reconnect for a pooled connection gone stale
    }
    login: dict[str, Any] = {"username": address.username, "password": address.password}
    if address.kind == "server":
        # A command beyond the pool's connections waits for one (at most
        # ``POOL_WAIT_TIMEOUTS`` of ``timeout``): redis-py's plain pool
        # refuses it at once ("Too many connections"), and a broad crawl has
        # hundreds in flight.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=MAX_CONNECTIONS, timeout=timeout * POOL_WAIT_TIMEOUTS, **common
        )
        return RedisLink(aioredis.Redis.from_pool(pool), address)
    if address.kind == "cluster":
        nodes = [ClusterNode(host, port) for host, port in address.nodes]
        return RedisLink(RedisCluster(startup_nodes=nodes, **common, **login), address)
    to_sentinels = {  # each sentinel once, quickly: the next one is the retry
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "retry": Retry(NoBackoff(), 0),
        "username": address.sentinel_username,
        "password": address.sentinel_password,
    }
    sentinel = _new_sentinel(list(address.nodes), sentinel_kwargs=to_sentinels, **common)
    client = sentinel.master_for(
        address.service,
        redis_class=aioredis.Redis,
        connection_pool_class=BlockingSentinelPool,
        db=address.db,
        max_connections=MAX_CONNECTIONS,
        timeout=timeout * POOL_WAIT_TIMEOUTS,  # the wait for a connection, as for one server
        **login,
    )
    return RedisLink(client, address, list(sentinel.sentinels))
