"""Fill a crawl's store with synthetic origin records, for ``report_scale.py``.

The records are the policy's own (``record_outcome`` from fetch outcomes),
in the states of ``scrapy-rep report`` and in proportions a broad crawl
could see: 80% rules, 8% allow-all (404), and outages (closed, serving the
last copy, allowing), some cut at the size cap or redirected elsewhere.
Each body is distinct (its own sitemap line): a parse or a lint per record
is paid for each. SQLite rows are written as ``SqliteStorage`` writes them,
in big transactions; Redis values with ``SET PX`` in pipelines.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome, retention

POLICY = PolicyConfig()
BODY = (
    b"User-agent: otherbot\nDisallow: /\n\n"
    b"User-agent: *\nDisallow: /private/\nDisallow: /cart\nAllow: /cart/help\n"
    + b"# a typical file has a few comment lines and a handful of rules\n"
    * 8
)
#: (share of the records, how each is made)
MIX = (
    (0.80, "rules"),
    (0.08, "allow-all"),
    (0.04, "closed"),
    (0.03, "last-copy"),
    (0.02, "outage-allow"),
    (0.02, "redirected"),
    (0.01, "truncated"),
)


def origin(n: int) -> str:
    return f"https://o{n}.report.test"


def _outcome(kind: FetchKind, status: int | None, n: int, at: float) -> FetchOutcome:
    body = b""
    if kind is FetchKind.SUCCESS:
        body = BODY + f"Sitemap: {origin(n)}/sitemap.xml\n".encode()
    reason = f"HTTP {status}" if status else "DNS failure"
    return FetchOutcome(kind, origin(n) + "/robots.txt", at, status, body, reason)


def record(n: int, kind: str, now: float, draw: random.Random) -> OriginRecord:
    """Origin ``n``'s record in state ``kind``, fetched within the last day."""
    at = now - draw.uniform(0, 20 * HOUR)
    ok = FetchKind.SUCCESS
    if kind == "allow-all":
        return record_outcome(None, _outcome(FetchKind.UNAVAILABLE, 404, n, at), at, POLICY)
    if kind in ("closed", "last-copy", "outage-allow"):
        start = at - {"closed": HOUR, "last-copy": 2 * DAY, "outage-allow": 2 * DAY}[kind]
        good = None
        if kind != "outage-allow":
            good = record_outcome(None, _outcome(ok, 200, n, start - DAY), start - DAY, POLICY)
        status = draw.choice((503, 500, 429, None))
        down = FetchKind.UNREACHABLE
        failed = record_outcome(good, _outcome(down, status, n, start), start, POLICY)
        return record_outcome(failed, _outcome(down, status, n, at), at, POLICY)
    done = record_outcome(None, _outcome(ok, 200, n, at), at, POLICY)
    if kind == "redirected":
        return replace(done, final_url=f"https://www.o{n}.report.test/robots.txt")
    if kind == "truncated":
        return replace(done, truncated=True)
    return done


def records(count: int, now: float, seed: int = 45) -> Iterator[tuple[str, OriginRecord]]:
    draw = random.Random(seed)
    shares = [share for share, _ in MIX]
    kinds = [kind for _, kind in MIX]
    for n in range(count):
        yield origin(n), record(n, draw.choices(kinds, shares)[0], now, draw)


def fill_sqlite(path: Path, count: int, now: float) -> None:
    """The table of ``SqliteStorage`` (created by opening one), then the rows."""
    import asyncio

    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    async def create() -> None:
        await (await SqliteStorage.open(path)).close()

    asyncio.run(create())
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    batch: list[tuple[str, bytes, float]] = []
    db.execute("BEGIN")
    for key, item in records(count, now):
        batch.append((key, item.to_bytes(), now + retention(item, now, POLICY)))
        if len(batch) == 10_000:
            db.executemany("INSERT OR REPLACE INTO origins VALUES (?, ?, ?)", batch)
            batch.clear()
    db.executemany("INSERT OR REPLACE INTO origins VALUES (?, ?, ?)", batch)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def fill_redis(client: Any, prefix: str, count: int, now: float, cluster: bool) -> None:
    """``SET key value PX`` as ``RedisStorage.put`` writes, 1,000 a pipeline
    (redis-py's synchronous client, a Cluster's pipeline on a Cluster)."""
    pipe = client.pipeline(transaction=False)
    queued = 0
    for key, item in records(count, now):
        name = f"{prefix}origin:{{{key}}}" if cluster else f"{prefix}origin:{key}"
        pipe.set(name, item.to_bytes(), px=int(retention(item, now, POLICY) * 1000))
        queued += 1
        if queued == 1_000:
            pipe.execute()
            queued = 0
    pipe.execute()


if __name__ == "__main__":
    import sys

    started = time.perf_counter()
    fill_sqlite(Path(sys.argv[1]), int(sys.argv[2]), time.time())
    print(f"filled in {time.perf_counter() - started:.1f} s")
