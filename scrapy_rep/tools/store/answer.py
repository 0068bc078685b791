"""What a project's store keeps for one origin, read without changing it, for
``scrapy robots URL`` (docs/cli.md, "scrapy robots").

A diagnostic answers from the record a crawl would load, so it cannot move
the state the crawl acts on (a fetch would record its answer, and a failed
one would lengthen an outage). Reads as ``scrapy-rep cache show`` does
(``view``): a SQLite file is opened read-only, never created.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from scrapy_rep.tools.store.project import store_of
from scrapy_rep.tools.store.view import read_origin

if TYPE_CHECKING:
    from scrapy_rep.cache.record import OriginRecord
    from scrapy_rep.crawler.config.settings import Config

__all__ = ["ago", "read_stored", "stored_note"]


def read_stored(config: Config, key: str) -> OriginRecord | None:
    """The record of origin ``key`` in the store of crawls with ``config``;
    None when the crawl keeps records in memory or keeps none for it."""
    store = store_of(config)
    if store is None or (store.kind == "sqlite" and not os.path.isfile(store.where)):
        return None
    return read_origin(store, f"{key}/")[1]


def stored_note(record: OriginRecord, now: float, due: bool) -> str:
    """How the stored answer was used, for the ``robots.txt`` line."""
    fetched = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(record.fetched_at))
    said = (
        f"not fetched: answered from the project's store, which is left unchanged "
        f"(fetched {fetched}, {ago(now - record.fetched_at)} ago"
    )
    if due:
        said += "; a crawl would fetch it again now"
    return said + "; --refetch to fetch and record it)"


def ago(seconds: float) -> str:
    """A past span as people say it: ``40 s``, ``12 min``, ``3.5 h``, ``2 days``."""
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"
