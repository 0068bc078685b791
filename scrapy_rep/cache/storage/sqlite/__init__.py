"""The SQLite store (``REP_STORAGE = "sqlite"``, the default): one file shared
by every crawl of a project (docs/storage.md).

Owns: ``store`` (``SqliteStorage``, the store a crawl opens), and its parts:
``connection`` (the one connection, the loop and a thread that may wait, run
by ``worker``), ``statements`` (the tables and every step on them),
``writes`` (queued, committed in batches), ``alone`` and ``presence`` (a
process alone with the file, told by locks on a side file), ``key_filter``
(the keys the file may hold), ``file`` (the file deleted or replaced under a
crawl), and ``once`` (one look or one forget for people's commands, never a
crawl's store).

May import the storage's shared modules (``protocol``, ``errors``,
``leases``, ``forgotten``, ``parsed``, ``scanned``) and the rest of the
cache layer; never another backend (``redis/``, ``memory``, ``fallback``)
nor the factory in ``cache/storage/__init__.py`` (tests/test_layers.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SqliteStorage"]


def __getattr__(name: str) -> Any:
    # ``REP_STORAGE`` may name the class by its path from when the store was
    # one module, this package's name then ``SqliteStorage``: it still loads.
    if name == "SqliteStorage":
        from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

        return SqliteStorage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
