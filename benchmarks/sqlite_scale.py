"""The default store at a broad crawl's size: 1,000,000 origins in one SQLite file.

    .venv/bin/python benchmarks/sqlite_scale.py [--records 1000000] [--lookups 20000]

What it prints, and how each figure is taken:

- fill: ``--records`` origins put through ``SqliteStorage.put`` one by one, as
  a crawl writes them (each in the store's worker thread). Bodies are real
  robots.txt files from ../shared/corpus/robots, the ones of 4 KiB or less
  (the typical origin; the corpus median is 569 B), cycling.
- file size: the database plus its WAL, after a checkpoint.
- start-up: ``SqliteStorage.open`` on the full file in a fresh process, as a
  crawl's first step.
- lookup: ``get`` of random known origins, sequential, wall time and the
  event-loop thread's CPU per call; then 16 concurrent callers while a 1 ms
  heartbeat measures the longest the loop was kept waiting.
- purge: the clock moves past every record's expiry; ``_PURGE_EVERY`` puts
  follow, so the store sweeps once (the expired rows among the first
  ``_PURGE_BATCH`` keys), while the heartbeat runs and a reader keeps
  asking for one origin: the rows that sweep deleted, the slowest put (the
  one that swept), the loop's and the reader's longest wait.

The file lives in a temporary directory that is removed at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome  # noqa: E402
from scrapy_rep.cache.policy import PolicyConfig, record_outcome, retention  # noqa: E402
from scrapy_rep.cache.storage.sqlite import store as sqlite_module  # noqa: E402
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "robots"
NOW = 1_700_000_000.0
CONFIG = PolicyConfig()


class Clock:
    """The store's clock, moved by hand: expiry without waiting a day."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def key(i: int) -> str:
    return f"https://www.site{i}.example.com:443"


def bodies() -> list[bytes]:
    found = [p.read_bytes() for p in sorted(CORPUS.glob("*.txt")) if p.stat().st_size <= 4096]
    if not found:
        raise SystemExit(f"no corpus at {CORPUS}")
    return found


async def heartbeat(lags: list[float], done: asyncio.Event) -> None:
    while not done.is_set():
        expected = time.perf_counter() + 0.001
        await asyncio.sleep(0.001)
        lags.append(max(time.perf_counter() - expected, 0.0))


async def fill(storage: SqliteStorage, count: int, clock: Clock) -> float:
    texts = bodies()
    started = time.perf_counter()
    for i in range(count):
        body = texts[i % len(texts)]
        outcome = FetchOutcome(FetchKind.SUCCESS, key(i) + "/robots.txt", NOW, 200, body, "200")
        record = record_outcome(None, outcome, clock(), CONFIG, random=lambda: 0.0)
        await storage.put(key(i), record, retention(record, clock(), CONFIG))
        if i and i % 100_000 == 0:
            rate = i / (time.perf_counter() - started)
            print(f"  ... {i:,} records, {rate:,.0f} puts/s", flush=True)
    return (time.perf_counter() - started) / count


async def lookups(storage: SqliteStorage, count: int, calls: int) -> tuple[float, float]:
    rng = random.Random(1)
    names = [key(rng.randrange(count)) for _ in range(calls)]
    cpu, wall = time.thread_time(), time.perf_counter()
    for name in names:
        assert await storage.get(name) is not None
    return (time.perf_counter() - wall) / calls * 1e6, (time.thread_time() - cpu) / calls * 1e6


async def concurrent_lookups(storage: SqliteStorage, count: int, calls: int) -> float:
    lags: list[float] = []
    done = asyncio.Event()
    beat = asyncio.ensure_future(heartbeat(lags, done))

    async def caller(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(calls // 16):
            await storage.get(key(rng.randrange(count)))

    await asyncio.gather(*(caller(seed) for seed in range(16)))
    done.set()
    await beat
    return max(lags) * 1e3


async def purge(storage: SqliteStorage, path: Path, clock: Clock) -> dict[str, float]:
    """Expire everything, then make the next put the one that sweeps."""
    clock.now = NOW + 400 * 86_400.0
    lags: list[float] = []
    waits: list[float] = []
    done = asyncio.Event()
    beat = asyncio.ensure_future(heartbeat(lags, done))

    async def reader() -> None:
        while not done.is_set():
            started = time.perf_counter()
            await storage.get(key(0))
            waits.append(time.perf_counter() - started)
            await asyncio.sleep(0.005)

    reading = asyncio.ensure_future(reader())
    await asyncio.sleep(0.05)
    every = sqlite_module._PURGE_EVERY
    outcome = FetchOutcome(FetchKind.SUCCESS, "x", clock.now, 200, b"", "200")
    record = record_outcome(None, outcome, clock.now, CONFIG, random=lambda: 0.0)
    import sqlite3

    with sqlite3.connect(path) as db:
        before = db.execute("SELECT count(*) FROM origins").fetchone()[0]
    slowest = 0.0
    for i in range(every):
        started = time.perf_counter()
        await storage.put(f"https://fresh{i}.example:443", record, 3_600.0)
        slowest = max(slowest, time.perf_counter() - started)
    await asyncio.sleep(0.05)
    done.set()
    await asyncio.gather(beat, reading)
    with sqlite3.connect(path) as db:
        left = db.execute("SELECT count(*) FROM origins").fetchone()[0]
    return {
        "sweep_s": slowest,
        "swept": float(before + every - left),
        "loop_max_lag_ms": max(lags) * 1e3,
        "reader_max_wait_ms": max(waits) * 1e3,
        "rows_left": float(left),
    }


def startup(path: Path) -> float:
    """Seconds for a fresh process to open the full store (median of 3)."""
    code = (
        "import asyncio, sys, time\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from scrapy_rep.cache.storage.sqlite.store import SqliteStorage\n"
        "async def main():\n"
        "    started = time.perf_counter()\n"
        f"    storage = await SqliteStorage.open({str(path)!r})\n"
        "    print(time.perf_counter() - started)\n"
        "    await storage.close()\n"
        "asyncio.run(main())\n"
    )
    times = sorted(
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(3)
    )
    return times[1]


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="sqlite-scale-") as where:
        path = Path(where) / "robots.sqlite3"
        clock = Clock()
        storage = await SqliteStorage.open(path, clock=clock)
        print(f"fill: {args.records:,} records into {path}", flush=True)
        per_put = await fill(storage, args.records, clock)
        await storage.close()
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = sum(os.path.getsize(p) for p in Path(where).iterdir())
        print(f"  put: {per_put * 1e6:.0f} us each")
        print(f"file size: {size / 2**20:,.0f} MiB ({size / args.records:,.0f} B per record)")
        print(f"start-up (open the full file, fresh process): {startup(path) * 1e3:.1f} ms")
        storage = await SqliteStorage.open(path, clock=clock)
        wall, cpu = await lookups(storage, args.records, args.lookups)
        print(f"lookup: {wall:.0f} us wall, {cpu:.0f} us of event-loop CPU per get (sequential)")
        lag = await concurrent_lookups(storage, args.records, args.lookups)
        print(f"        16 concurrent callers: event loop waited at most {lag:.1f} ms")
        figures = await purge(storage, path, clock)
        await storage.close()
        print(
            f"purge, all {args.records:,} records expired: one sweep deleted "
            f"{figures['swept']:,.0f} rows; the put that swept took "
            f"{figures['sweep_s'] * 1e3:.0f} ms; the event loop waited at most "
            f"{figures['loop_max_lag_ms']:.1f} ms; a reader at most "
            f"{figures['reader_max_wait_ms']:.0f} ms"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=20_000)
    asyncio.run(main(parser.parse_args()))
