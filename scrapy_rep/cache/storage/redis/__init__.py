"""The Redis store (``REP_STORAGE = "redis"``): one store shared by crawls on
several machines, on one server, Sentinel or a Cluster (docs/storage.md).

Owns: ``store`` (``RedisStorage``), ``clients`` (a redis-py client for each
form of ``REP_REDIS_URL``), ``urls`` (those forms, parsed without the
client installed), ``scripts`` (the Lua scripts ``store`` runs) and ``scan``
(every record streamed, for ``scrapy-rep report``).

May import the storage's shared modules (``protocol``, ``errors``,
``leases``, ``forgotten``, ``parsed``, ``scanned``) and the rest of the
cache layer; never another backend (``sqlite/``, ``memory``, ``fallback``)
nor the factory in ``cache/storage/__init__.py`` (tests/test_layers.py).
Importing this package imports no ``redis``: only ``store``, ``clients``,
``scan`` do.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RedisStorage"]


def __getattr__(name: str) -> Any:
    # ``REP_STORAGE`` may name the class by its path from when the store was
    # one module, this package's name then ``RedisStorage``: it still loads.
    if name == "RedisStorage":
        from scrapy_rep.cache.storage.redis.store import RedisStorage

        return RedisStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
