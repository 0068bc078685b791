"""What production Redis costs the store (issue 46): a reservation and a record
read on a 3-primary Cluster and through Sentinel, against one server, same run.

    .venv/bin/python benchmarks/redis_topologies.py [--rounds N] [--calls N]

Why it is built this way:

- The servers are real, on 127.0.0.1, passwords on (tests/redis_topologies.py):
  one redis-server; a Cluster of three primaries (``redis-cli --cluster
  create``); a primary with a replica behind three sentinels.
- A "record read" is ``RedisStorage.get`` of a stored robots.txt record (a
  2 KB body, 500 origins); a "reservation" is ``RedisStorage.reserve`` (the
  pace script, EVALSHA). Each is a sequential round trip on one connection
  per node: the latency a request waits, not throughput.
- The three stores are open at once and take turns, block by block (1,000
  calls); the figures are medians over blocks, and the ratios divide each by
  one server's: on a shared machine the noise falls on all three alike.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent)]

from local_redis import RedisServer  # noqa: E402
from redis_topologies import PASSWORD, LocalCluster, LocalSentinels  # noqa: E402

from scrapy_rep.cache.outcome import FetchKind  # noqa: E402
from scrapy_rep.cache.policy import OriginRecord  # noqa: E402
from scrapy_rep.cache.storage.redis.store import RedisStorage  # noqa: E402

ORIGINS = 500
BODY = b"User-agent: *\nDisallow: /private/\n" + b"# padding to a typical size\n" * 70
RECORD = OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", 1.7e9, 1.7e9 + 86400, BODY, 1.7e9, 200)


#: Per topology and step ("read", "reserve"): per block, (wall, loop CPU) seconds per call.
Figures = dict[str, dict[str, list[tuple[float, float]]]]


def origin(n: int) -> str:
    return f"https://o{n % ORIGINS}.example"


async def blocks(urls: dict[str, str], rounds: int, calls: int) -> Figures:
    """Per topology, the wall and loop CPU time per record read and per
    reservation: one block of ``calls`` sequential round trips each, the
    topologies taking turns block by block, ``rounds`` times."""
    stores = {name: await RedisStorage.open(url) for name, url in urls.items()}
    figures: Figures = {name: {"read": [], "reserve": []} for name in urls}
    try:
        for store in stores.values():  # the records; warm each node's connection and script
            for n in range(ORIGINS):
                await store.put(origin(n), RECORD, 3600)
                await store.reserve(origin(n), 0.0, 3600)
        for _ in range(rounds):
            for name, store in stores.items():
                for step in ("read", "reserve"):
                    wall, cpu = time.perf_counter(), time.thread_time()
                    for n in range(calls):
                        if step == "read":
                            assert await store.get(origin(n)) is not None
                        else:
                            await store.reserve(origin(n), 0.0, 3600)
                    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
                    figures[name][step].append((wall / calls, cpu / calls))
    finally:
        for store in stores.values():
            await store.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--calls", type=int, default=1000, help="round trips per block")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in ("server", "cluster", "sentinel"):
            (work / name).mkdir()
        server = RedisServer(work / "server", password=PASSWORD)
        cluster = LocalCluster(work / "cluster")
        sentinels = LocalSentinels(work / "sentinel")
        try:
            server.start()
            cluster.start()
            sentinels.start()
            urls = {
                "one server": f"redis://:{PASSWORD}@127.0.0.1:{server.port}/0",
                "cluster": cluster.url,
                "sentinel": sentinels.url,
            }
            figures = asyncio.run(blocks(urls, args.rounds, args.calls))
        finally:
            server.kill()
            cluster.stop()
            sentinels.stop()
    report(figures, args)


def report(figures: Figures, args: argparse.Namespace) -> None:
    def median(name: str, step: str, which: int) -> float:
        return statistics.median(block[which] for block in figures[name][step])

    print(
        f"per call, median of {args.rounds} blocks of {args.calls} sequential calls "
        f"({ORIGINS} origins, {len(BODY)} B robots.txt); x: against one server, same run"
    )
    print(f"  {'':11} {'step':8} {'wall µs':>8} {'x':>5} {'loop CPU µs':>12} {'x':>5}")
    for step in ("read", "reserve"):
        wall, cpu = median("one server", step, 0), median("one server", step, 1)
        for name in figures:
            here, mine = median(name, step, 0), median(name, step, 1)
            print(
                f"  {name:11} {step:8} {here * 1e6:8.0f} {here / wall:5.2f} "
                f"{mine * 1e6:12.0f} {mine / cpu:5.2f}"
            )


if __name__ == "__main__":
    main()
