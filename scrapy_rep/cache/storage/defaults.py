"""The stores' defaults, each written once (docs/settings.md, docs/storage.md).

The settings table's ``Config`` (``crawler/config/settings.py``) takes its
defaults for these settings from here, and so do the signatures of the
classes and functions that use them (``MemoryStorage``, ``open_storage``,
``RedisStorage``, ``FallbackStorage``; the crawler's ``Resolver`` and
``KnownOrigins``), so a store built without the settings behaves as a crawl
left at its defaults. ``REP_MEMORY_MAX_BYTES`` is shared out by the
``*_bytes`` functions, as the setting's documentation says.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_ORIGINS",
    "MEMORY_MAX_BYTES",
    "REDIS_PREFIX",
    "REDIS_RETRY_INTERVAL",
    "STORAGE_KIND",
    "check_max_origins",
    "known_bytes",
    "parsed_bytes",
    "store_bytes",
]

#: REP_STORAGE: a SQLite file in the project (REP_STORAGE_PATH).
STORAGE_KIND: Final = "sqlite"
#: REP_MEMORY_MAX_ORIGINS: origins kept by the memory store (and Redis's
#: stand-in) and by the crawl's own memory, least recently used out.
MAX_ORIGINS: Final = 100_000
#: REP_MEMORY_MAX_BYTES: bytes of robots.txt kept in the process.
MEMORY_MAX_BYTES: Final = 128 * 1024 * 1024
#: REP_REDIS_PREFIX: every Redis key starts with it.
REDIS_PREFIX: Final = "scrapy_rep:"
#: REP_REDIS_RETRY_INTERVAL: while Redis is lost, seconds between two tries.
REDIS_RETRY_INTERVAL: Final = 5.0


def check_max_origins(value: object) -> int:
    """REP_MEMORY_MAX_ORIGINS, checked: an integer >= 1 (the one check)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"REP_MEMORY_MAX_ORIGINS must be an integer >= 1; got {value!r}")
    return value


def parsed_bytes(memory_max_bytes: int = MEMORY_MAX_BYTES) -> int:
    """Half of REP_MEMORY_MAX_BYTES: the parsed bodies (``ParsedBodies``)."""
    return memory_max_bytes // 2


def known_bytes(memory_max_bytes: int = MEMORY_MAX_BYTES) -> int:
    """A quarter: the crawl's copies of the origins' records (``KnownOrigins``)."""
    return memory_max_bytes // 4


def store_bytes(memory_max_bytes: int = MEMORY_MAX_BYTES) -> int:
    """A quarter: the memory store, or Redis's stand-in (``MemoryStorage``)."""
    return memory_max_bytes // 4
