"""What a crawl's store holds for one origin, and forgetting it
(``scrapy-rep cache show|forget``, the tester's "stored" source and Refetch).

A store is named as the crawl names it: a SQLite file (``REP_STORAGE_PATH``)
or a Redis URL (``REP_REDIS_URL``) with its key prefix. Each call opens the
store, does one thing and closes it: these are people's actions, not a
crawl's hot path. A SQLite file is not opened as a crawl opens it
(``sqlite.once``): a look never writes, and neither call moves a damaged
file aside or waits more than ``StoreName.wait`` for another process
(docs/tester.md, "Safety"). No Scrapy here.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.cache.policy import OriginRecord, PolicyConfig, decide_settled
from scrapy_rep.cache.standing import State, pace_of, standing
from scrapy_rep.cache.storage import Storage, StorageError, forget, open_storage
from scrapy_rep.cache.storage.defaults import REDIS_PREFIX
from scrapy_rep.cache.storage.errors import UnreadableRecord
from scrapy_rep.cache.storage.redis.urls import REDIS_SCHEMES, safe_url
from scrapy_rep.cache.storage.sqlite.once import (
    DEFAULT_WAIT,
    forget_record,
    forget_records,
    read_record,
)
from scrapy_rep.engine.origin import origin_of
from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = [
    "StoreName",
    "describe",
    "forget_origin",
    "forget_origins",
    "format_record",
    "read_origin",
]

T = TypeVar("T")


@dataclass(frozen=True)
class StoreName:
    """Where the crawl keeps its records: a SQLite file or a Redis URL (any form
    ``REP_REDIS_URL`` takes: one server, Sentinel, Cluster)."""

    where: str
    redis_prefix: str = REDIS_PREFIX
    #: Seconds to wait for another process holding a SQLite file's lock.
    wait: float = DEFAULT_WAIT

    @property
    def kind(self) -> str:
        schemes = tuple(f"{scheme}://" for scheme in REDIS_SCHEMES)
        return "redis" if self.where.lower().startswith(schemes) else "sqlite"

    def shown(self) -> str:
        """For people: a Redis URL without its password."""
        if self.kind == "redis":
            return safe_url(self.where)
        return self.where

    async def open(self) -> Storage:
        """The Redis store (a SQLite file is read and written by ``sqlite.once``)."""
        return await open_storage(
            "redis", redis_url=self.where, prefix=self.redis_prefix, redis_retry_interval=0
        )

    def file(self) -> str:
        """The SQLite file, which must be there: a command never creates a store."""
        if not os.path.isfile(self.where):
            raise StorageError(f"no such store file: {self.where!r}")
        return self.where


def _key(url: str) -> str:
    origin = origin_of(url)
    if origin is None:
        raise ValueError(f"not an absolute http(s) URL with a host: {url!r}")
    return str(origin)


async def _with_store(store: StoreName, url: str, forgetting: bool) -> tuple[str, Any]:
    key = _key(url)
    storage = await store.open()
    try:
        if forgetting:
            return key, await forget(storage, key)
        return key, await storage.get(key)
    except Exception as exc:  # a command names what it found, with no traceback
        from redis.exceptions import RedisError

        if not isinstance(exc, RedisError):
            raise
        if forgetting:  # the script deletes and logs in one step: neither was done
            raise StorageError(
                f"{key}: {store.shown()} answered {exc} when asked to forget it; nothing "
                "was deleted"
            ) from None
        raise UnreadableRecord(
            f"{key}: {store.shown()} answered {exc} for its record; a crawl cannot read it "
            "either (cache forget removes it)"
        ) from None
    finally:
        await storage.close()


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a loop of its own: in a worker thread if this one runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def read_origin(store: StoreName, url: str) -> tuple[str, OriginRecord | None]:
    """The origin key of ``url`` and its record in ``store`` (None: none kept)."""
    if store.kind == "sqlite":
        key = _key(url)
        return key, read_record(store.file(), key, time.time(), store.wait)
    return _run(_with_store(store, url, forgetting=False))


def forget_origin(store: StoreName, url: str) -> tuple[str, bool]:
    """Delete the record of ``url``'s origin: every worker sharing the store
    fetches robots.txt again when it next loads the origin. True if one was kept."""
    if store.kind == "sqlite":
        key = _key(url)
        return key, forget_record(store.file(), key, time.time(), store.wait)
    key, found = _run(_with_store(store, url, forgetting=True))
    return key, bool(found)


def forget_origins(store: StoreName, keys: Sequence[str]) -> int:
    """``forget_origin`` of each origin key (a report's filter, the Tester's
    Refetch of every row): one transaction in SQLite, one connection to
    Redis; how many records were kept."""
    if store.kind == "sqlite":
        return forget_records(store.file(), keys, time.time(), store.wait)

    async def forget_each() -> int:
        storage = await store.open()
        try:
            return sum([bool(await forget(storage, key)) for key in keys])
        finally:
            await storage.close()

    return _run(forget_each())


def _when(moment: float | None, now: float) -> dict[str, float] | None:
    return None if moment is None else {"at": moment, "age": now - moment}


def describe(
    record: OriginRecord | None,
    now: float | None = None,
    policy: PolicyConfig | None = None,
    tokens: Sequence[str] = ("scrapy",),
    google_quirks: bool = False,
) -> dict[str, Any]:
    """The record as data: outcome, times, the last good copy, closed or not,
    and the pace the good copy's group for ``tokens`` asks (``pace``)."""
    if record is None:
        return {"kept": False}
    now = time.time() if now is None else now
    policy = policy or PolicyConfig()
    decision = decide_settled(record, now, policy)
    closed = decision.state is AccessState.CLOSED
    now_standing = standing(record, now, policy)  # the report's classification
    closed_until = None
    if closed and now_standing is not None and now_standing.state is State.CLOSED:
        closed_until = now_standing.until
    body = record.good_body
    pace = None
    if body is not None:
        pace = pace_of(RobotsTxt.parse(body, google_quirks=google_quirks), tuple(tokens))
    # One meaning of "expired" with the report (``cache.standing``): past its
    # life and not in an outage, so the next request fetches again.
    expired = now_standing.expired if now_standing is not None else record.expires_at <= now
    return {
        "kept": True,
        "outcome": record.kind.value,
        "status": record.status,
        "reason": record.reason,
        "fetched": _when(record.fetched_at, now),
        "expires_at": record.expires_at,
        "expired": expired,
        "good": _when(record.good_at, now),
        "good_status": record.good_status,
        "body": None if body is None else body.decode("utf-8", "replace"),
        "body_bytes": None if body is None else len(body),
        "failures": record.failures,
        "closed": closed,
        "closed_until": closed_until,
        "access": decision.state.value if decision.state is not None else None,
        "access_reason": decision.reason,
        "pace": pace,
        "tokens": list(tokens),
    }


def format_record(store: StoreName, key: str, data: dict[str, Any]) -> str:
    """``scrapy-rep cache show``'s text."""
    if not data["kept"]:
        return f"{key}: nothing kept in {store.shown()}"

    def stamp(when: dict[str, float] | None) -> str:
        if when is None:
            return "never"
        moment = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when["at"]))
        return f"{moment} ({when['age']:.0f} s ago)"

    expires = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(data["expires_at"]))
    lines = [
        f"{key} in {store.shown()}",
        f"  outcome     {data['outcome']} ({data['reason'] or data['status']})",
        f"  fetched at  {stamp(data['fetched'])}",
        f"  expires     {expires}{' (expired)' if data['expired'] else ''}",
        f"  good copy   {stamp(data['good'])}"
        + (f", {data['body_bytes']} bytes" if data["body_bytes"] is not None else ""),
        f"  access      {data['access']}: {data['access_reason']}",
    ]
    if data["pace"] is not None:
        lines.append(
            f"  pace        the copy asks {data['pace']:g} s between requests of "
            f"{' or '.join(data['tokens']) or '*'} (Crawl-delay or Request-rate; "
            'obeyed with REP_CRAWL_DELAY = "obey")'
        )
    if data["closed"]:
        until = data["closed_until"]
        shown = (
            time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(until))
            if until
            else "robots.txt or a page of the site answers"
        )
        failures = data["failures"]
        lines.append(
            f"  closed      every request to it is dropped until {shown}, unless robots.txt "
            f"answers sooner ({failures} failed fetch{'' if failures == 1 else 'es'} so far)"
        )
    return "\n".join(lines)
