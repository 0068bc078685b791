"""What robots.txt versions cost each store, per origin (docs/versions.md,
docs/benchmarks.md "Versions kept: the store's size per origin").

For ``--origins`` origins (30,000 by default), the records the policy
writes (``record_outcome``) after one fetch (no earlier version), after a
changed body (``REP_VERSIONS_KEPT = 1``, the default: the one before kept)
and after four different bodies with ``REP_VERSIONS_KEPT = 3``. Each body
is distinct (its own Sitemap line) and about as big as a typical file
(``report_fill.BODY``, about 600 bytes). Measured, per origin:

- SQLite: the file's size, the rows written as ``SqliteStorage`` writes
  them (``report_fill``'s way), then checkpointed;
- Redis: ``used_memory`` of a fresh redis-server over its empty size, the
  values written as ``RedisStorage.put`` writes them;
- memory: what ``MemoryStorage`` holds (tracemalloc), the records and their
  bodies, every body distinct (the worst case: equal bodies are held once).

Printed as bytes per origin and as the ratio to no versions.
"""

from __future__ import annotations

import argparse
import gc
import sqlite3
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import redis  # noqa: E402
from local_redis import RedisServer  # noqa: E402
from report_fill import BODY  # noqa: E402

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome  # noqa: E402
from scrapy_rep.cache.policy import (  # noqa: E402
    DAY,
    OriginRecord,
    PolicyConfig,
    record_outcome,
    retention,
)
from scrapy_rep.cache.storage.memory import MemoryStorage  # noqa: E402

#: scenario -> (REP_VERSIONS_KEPT, fetches of a different body)
SCENARIOS = {"no versions": (1, 1), "1 kept (default)": (1, 2), "3 kept": (3, 4)}


def records(count: int, kept: int, fetches: int, now: float) -> Iterator[tuple[str, OriginRecord]]:
    policy = replace(PolicyConfig(), versions_kept=kept)
    for n in range(count):
        origin = f"https://o{n}.versions.test"
        record = None
        for step in range(fetches):
            at = now - (fetches - step) * DAY
            body = BODY + f"Sitemap: {origin}/sitemap-{step}.xml\n".encode()
            fetched = FetchOutcome(FetchKind.SUCCESS, origin + "/robots.txt", at, 200, body, "OK")
            record = record_outcome(record, fetched, at, policy)
        assert record is not None and len(record.earlier) == min(fetches - 1, kept)
        yield origin, record


def fill_sqlite(path: Path, count: int, kept: int, fetches: int, now: float) -> None:
    import asyncio

    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    async def create() -> None:
        await (await SqliteStorage.open(path)).close()

    asyncio.run(create())
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany(
        "INSERT OR REPLACE INTO origins VALUES (?, ?, ?)",
        (
            (key, item.to_bytes(), now + retention(item, now, PolicyConfig()))
            for key, item in records(count, kept, fetches, now)
        ),
    )
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def sqlite_bytes(count: int, kept: int, fetches: int, now: float) -> int:
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "robots.sqlite3"
        fill_sqlite(path, count, kept, fetches, now)
        return path.stat().st_size


def report_times(count: int, now: float) -> None:
    """``scrapy-rep report`` over the SQLite file with one version kept, each
    command in a child process as a user runs it: the states, ``--deep``
    and ``--changed`` (every origin changed: the worst case); best of three."""
    import subprocess

    commands = {"report --json": [], "--deep": ["--deep"], "--changed": ["--changed"]}
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "robots.sqlite3"
        fill_sqlite(path, count, 1, 2, now)
        took = {}
        for name, extra in commands.items():
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-m", "scrapy_rep.tools.cli", "report", "--store",
                     str(path), "--json", *extra],
                    check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                runs.append(time.perf_counter() - started)
            took[name] = min(runs)
        base = took["report --json"]
        for name, seconds in took.items():
            rate = count / seconds
            print(f"{name:<16}{seconds:>8.2f} s  x{seconds / base:.2f}  {rate:,.0f} origins/s")


def redis_bytes(count: int, kept: int, fetches: int, now: float) -> int:
    with tempfile.TemporaryDirectory() as work:
        server = RedisServer(Path(work))
        server.start()
        try:
            client = redis.Redis.from_url(server.url)
            empty = int(client.info("memory")["used_memory"])
            pipe = client.pipeline(transaction=False)
            for n, (key, item) in enumerate(records(count, kept, fetches, now), 1):
                ttl = int(retention(item, now, PolicyConfig()) * 1000)
                pipe.set(f"scrapy_rep:origin:{key}", item.to_bytes(), px=ttl)
                if n % 1000 == 0:
                    pipe.execute()
            pipe.execute()
            used = int(client.info("memory")["used_memory"]) - empty
            client.close()
            return used
        finally:
            server.kill()


def memory_bytes(count: int, kept: int, fetches: int, now: float) -> int:
    """Traced from before the records are made: their bodies count (a crawl's
    store holds the bodies it fetched); what the making left behind does not."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    store = MemoryStorage(max_origins=count + 1, max_bytes=1 << 40, clock=lambda: now)
    for key, item in records(count, kept, fetches, now):
        store.put_now(key, item, DAY)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(store) == count
    return held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--origins", type=int, default=30_000)
    parser.add_argument("--stores", default="sqlite,redis,memory", help="comma-separated")
    parser.add_argument("--report", action="store_true", help="time scrapy-rep report instead")
    args = parser.parse_args()
    now = time.time()
    count = args.origins
    if args.report:
        report_times(count, now)
        return
    every = {"sqlite": ("SQLite file", sqlite_bytes), "redis": ("Redis used_memory", redis_bytes)}
    every["memory"] = ("memory store", memory_bytes)
    stores = dict(every[name.strip()] for name in args.stores.split(","))
    print(f"{count:,} origins, bodies of about {len(BODY) + 40} bytes, each distinct")
    print(f"{'store':<20}" + "".join(f"{name:>26}" for name in SCENARIOS))
    for store, measure in stores.items():
        figures = [
            measure(count, kept, fetches, now) / count for kept, fetches in SCENARIOS.values()
        ]
        base = figures[0]
        cells = "".join(f"{f:>12,.0f} B/origin x{f / base:>5.2f}  " for f in figures)
        print(f"{store:<20}{cells}")


if __name__ == "__main__":
    main()
