"""What a cached origin costs: lookup time per backend, event-loop time per
SQLite call, and memory per origin in the memory backend.

    .venv/bin/python benchmarks/storage.py [--origins N] [--lookups N]

Why it is built this way:

- Origins are built from ../shared/corpus/robots/*.txt, cycling, each body a
  fresh ``bytes`` object as a fetch would make it, so the memory backend's
  sharing of equal bodies is measured, not assumed. Parsed forms come from
  one ``ParsedBodies``, as the middleware would share them.
- A "lookup" is what the middleware does per request when it asks the store:
  ``get`` then ``decide`` (and ``Decision.access`` with the shared parser).
- SQLite runs its queries in a worker thread. What the event loop pays is
  measured two ways: CPU time of the loop thread per call
  (``time.thread_time``), and the longest a heartbeat task was kept waiting
  while 16 callers hammer the store.
- redis is measured if ``redis-server`` is installed; it is started on a
  free port on 127.0.0.1 and stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome  # noqa: E402
from scrapy_rep.cache.policy import (  # noqa: E402
    OriginRecord,
    PolicyConfig,
    decide,
    record_outcome,
    retention,
)
from scrapy_rep.cache.storage import MemoryStorage, ParsedBodies, Storage, open_storage  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "robots"
NOW = 1_700_000_000.0
CONFIG = PolicyConfig()


def corpus() -> list[bytes]:
    bodies = [path.read_bytes()[:512_000] for path in sorted(CORPUS.glob("*.txt"))]
    if not bodies:
        raise SystemExit(f"no corpus at {CORPUS}")
    return bodies


def key(i: int) -> str:
    return f"https://www.site{i}.example.com:443"


def outcome(i: int, body: bytes) -> FetchOutcome:
    url = key(i).rsplit(":", 1)[0] + "/robots.txt"
    return FetchOutcome(FetchKind.SUCCESS, url, NOW, 200, body, "HTTP 200")


def records(
    bodies: list[bytes], count: int, *, unique: bool = False
) -> Iterator[tuple[str, OriginRecord]]:
    for i in range(count):
        body = bodies[i % len(bodies)]
        body = body + b"\n# origin %d\n" % i if unique else bytes(bytearray(body))
        yield key(i), record_outcome(None, outcome(i, body), NOW, CONFIG, random=lambda: 0.0)


# --- memory per origin ----------------------------------------------------------


def memory_per_origin(
    bodies: list[bytes], count: int, *, unique: bool
) -> tuple[float, float, int, int]:
    """(store B/origin, parsed forms B/origin, distinct bodies, parses) for ``count`` origins.

    The store is the memory backend (records, keys, LRU slots, bodies); the
    parsed forms are one ``ParsedBodies`` holding a parse per distinct body,
    each asked for one group as a crawl would.
    """
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    storage = MemoryStorage(count, clock=lambda: NOW)
    for name, record in records(bodies, count, unique=unique):
        storage.put_now(name, record, retention(record, NOW, CONFIG))
    gc.collect()
    stored = tracemalloc.get_traced_memory()[0] - base
    parse = ParsedBodies(max_bodies=count)
    for i in range(count):
        access = decide(storage.get_now(key(i)), NOW, CONFIG).access(parse)
        access.allowed("/some/path", "mybot")
    gc.collect()
    parsed = tracemalloc.get_traced_memory()[0] - base - stored
    tracemalloc.stop()
    result = (stored / count, parsed / count, storage.distinct_bodies, parse.parses)
    del storage, parse
    return result


# --- lookups ----------------------------------------------------------------------


async def fill(storage: Storage, bodies: list[bytes], count: int) -> float:
    """Put ``count`` origins; seconds per put."""
    started = time.perf_counter()
    for name, record in records(bodies, count):
        await storage.put(name, record, retention(record, NOW, CONFIG))
    return (time.perf_counter() - started) / count


async def lookups(storage: Storage, count: int, lookups: int) -> dict[str, float]:
    """Sequential get + decide + access; per-lookup wall time and loop-thread CPU."""
    parse = ParsedBodies()
    rng = random.Random(1)
    names = [key(rng.randrange(count)) for _ in range(lookups)]
    for name in names[:200]:  # warm the parser cache and connections
        decide(await storage.get(name), NOW, CONFIG).access(parse)
    cpu, wall = time.thread_time(), time.perf_counter()
    for name in names:
        decide(await storage.get(name), NOW, CONFIG).access(parse)
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    return {"wall_us": wall / lookups * 1e6, "loop_cpu_us": cpu / lookups * 1e6}


async def loop_stall(
    storage: Storage, count: int, calls: int, callers: int = 16
) -> dict[str, float]:
    """The longest and typical delay of a 1 ms heartbeat while callers hit the store."""
    lags: list[float] = []
    done = asyncio.Event()

    async def heartbeat() -> None:
        while not done.is_set():
            expected = time.perf_counter() + 0.001
            await asyncio.sleep(0.001)
            lags.append(max(time.perf_counter() - expected, 0.0))

    async def caller(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(calls // callers):
            await storage.get(key(rng.randrange(count)))

    beat = asyncio.ensure_future(heartbeat())
    started = time.perf_counter()
    await asyncio.gather(*(caller(seed) for seed in range(callers)))
    elapsed = time.perf_counter() - started
    done.set()
    await beat
    return {
        "max_lag_ms": max(lags) * 1e3,
        "p99_lag_ms": statistics.quantiles(lags, n=100)[98] * 1e3 if len(lags) > 100 else 0.0,
        "concurrent_us": elapsed / calls * 1e6,
    }


# --- redis-server -------------------------------------------------------------------


@contextmanager
def redis_server() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as workdir:
        process = subprocess.Popen(
            [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--dir", workdir],
            stdout=subprocess.DEVNULL,
        )
        try:
            for _ in range(500):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.01)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(10)


# --- main -------------------------------------------------------------------------------


async def measure(
    name: str,
    opener: Callable[[], Awaitable[Storage]],
    bodies: list[bytes],
    args: argparse.Namespace,
) -> dict[str, float]:
    storage = await opener()
    try:
        per_put = await fill(storage, bodies, args.stored)
        figures = await lookups(storage, args.stored, args.lookups)
        figures.update(await loop_stall(storage, args.stored, args.lookups))
        figures["put_us"] = per_put * 1e6
    finally:
        await storage.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--origins", type=int, default=100_000, help="origins for the memory figure"
    )
    parser.add_argument("--stored", type=int, default=20_000, help="origins stored for lookups")
    parser.add_argument("--lookups", type=int, default=20_000)
    args = parser.parse_args()
    bodies = corpus()
    sizes = sorted(map(len, bodies))
    print(
        f"corpus: {len(bodies)} bodies, median {statistics.median(sizes):.0f} B, "
        f"mean {statistics.mean(sizes):.0f} B; python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs"
    )

    print("\nmemory per cached origin, memory backend (B/origin; parsed forms amortised):")
    print(f"  {'origins':54} {'store':>7} {'+parsed':>8} {'total':>7}")

    def row(label: str, figures: tuple[float, float, int, int]) -> None:
        store, parsed, distinct, parses = figures
        print(
            f"  {label:54} {store:7.0f} {parsed:8.0f} {store + parsed:7.0f}"
            f"   ({distinct:,} bodies stored, {parses:,} parses)"
        )

    row(
        f"{args.origins:,}, corpus cycling (equal bodies shared)",
        memory_per_origin(bodies, args.origins, unique=False),
    )
    unique_count = min(args.origins, 10_000)
    row(
        f"{unique_count:,}, every body distinct (mean {statistics.mean(sizes):.0f} B)",
        memory_per_origin(bodies, unique_count, unique=True),
    )
    # A typical origin: its own robots.txt, of a typical size (the middle half).
    low, high = sizes[len(sizes) // 4], sizes[-len(sizes) // 4]
    typical = [body for body in bodies if low <= len(body) <= high]
    row(
        f"{unique_count:,}, distinct, typical size {low}-{high} B "
        f"(mean {statistics.mean(map(len, typical)):.0f})",
        memory_per_origin(typical, unique_count, unique=True),
    )

    with tempfile.TemporaryDirectory() as tmp, redis_server() as url:
        openers: dict[str, Callable[[], Awaitable[Storage]]] = {
            "memory": lambda: open_storage("memory", max_origins=args.stored),
            "sqlite": lambda: open_storage("sqlite", path=Path(tmp) / "robots.sqlite3"),
        }
        if url is not None:
            openers["redis"] = lambda: open_storage("redis", redis_url=url)
        print(
            f"\nper lookup (get + decide + access), {args.stored:,} origins stored, "
            f"{args.lookups:,} lookups:"
        )
        print(
            f"  {'backend':8} {'put µs':>8} {'lookup µs':>10} {'loop CPU µs':>12} "
            f"{'16 callers µs':>14} {'max loop lag ms':>16} {'p99 lag ms':>11}"
        )
        for name, opener in openers.items():
            f = asyncio.run(measure(name, opener, bodies, args))
            print(
                f"  {name:8} {f['put_us']:8.1f} {f['wall_us']:10.1f} {f['loop_cpu_us']:12.1f} "
                f"{f['concurrent_us']:14.1f} {f['max_lag_ms']:16.2f} {f['p99_lag_ms']:11.2f}"
            )
        if url is None:
            print("  redis    (redis-server not installed: skipped)")
    print(
        "  (memory never yields to the loop, so its 'lag' is the whole burst of calls;"
        " loop CPU = time the event-loop thread spent per call)"
    )


if __name__ == "__main__":
    main()
