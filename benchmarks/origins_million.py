"""What each new origin costs the middleware, from ten thousand origins to a million.

The middleware's per-origin path, without the network: for origin ``o<N>``
the spider middleware's check of its two requests (``early``: the first
starts its robots.txt, the second, under ``/private/``, is dropped before the
scheduler once the answer is in), the download-time check of the first
(``process_request``: it joins that flight, which loads the store, "fetches"
and stores the record), its ``process_response``; the origins a crawl has
moved past are evicted from the bounded LRU (``REP_MEMORY_MAX_ORIGINS``) as
new ones come. The real middleware, resolver and store; only the robots.txt
download is a stub (``Fetcher.fetch`` answers at once with the body of
``broad_crawl.py``). ``--window`` origins are in progress at a time, as a
crawl's ``CONCURRENT_REQUESTS`` would have them.

    .venv/bin/python benchmarks/origins_million.py --store sqlite --origins 1000000
    .venv/bin/python benchmarks/origins_million.py --store memory --origins 100000

Printed at each checkpoint (10k, 30k, 100k, 300k, 1M, up to ``--origins``),
for the origins since the previous one: CPU per origin (process CPU, the
store's worker thread included), the garbage collector's share of it and its
full collections; then the process's resident memory now, its growth per
origin since the first checkpoint, and the objects the collector tracks.
Flat means the last segment costs what the first did.

With ``--store sqlite`` (the default store, in a new file in a temporary
directory), then: the file's size (database plus WAL) and bytes per record,
and ``get`` of ``--lookups`` random known origins through a freshly opened
``SqliteStorage`` (as a new crawl reads the shared file): microseconds per
lookup, wall and CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy.utils.reactor import install_reactor  # noqa: E402

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

# The broad crawl's robots.txt and tokens (that script imports only the standard library).
from broad_crawl import ROBOTS, ROBOTSTXT_USER_AGENT, USER_AGENT  # noqa: E402
from scrapy import Request, Spider  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402
from scrapy.utils.defer import deferred_from_coro  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402
from twisted.internet import reactor  # noqa: E402

CHECKPOINTS = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000)
SETTINGS = {
    "ROBOTSTXT_OBEY": True,
    "USER_AGENT": USER_AGENT,
    "ROBOTSTXT_USER_AGENT": ROBOTSTXT_USER_AGENT,
    "LOG_LEVEL": "WARNING",
    "ADDONS": {"scrapy_rep.Addon": 0},
}


class BenchSpider(Spider):
    name = "bench"


class GcTime:
    """A ``gc.callbacks`` entry: CPU seconds in collections (the collecting
    thread's), and full collections."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.full = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
        else:
            self.seconds += time.thread_time() - self._started
            self.full += info["generation"] == 2


def rss_mib() -> float:
    """Resident memory now (not the peak), from /proc."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


async def one_origin(middleware: Any, early: Any, index: int) -> None:
    """One origin's two requests through the middleware, as a crawl meets them."""
    base = f"http://o{index}.broad.test:8080"
    page, private = Request(f"{base}/p/0.html"), Request(f"{base}/private/1.html")
    early(page)
    await middleware.process_request(page)
    await middleware.process_response(page, HtmlResponse(page.url, body=b"<p>", request=page))
    if early(private) is None:  # its answer is in: dropped before the scheduler
        raise AssertionError(f"{private.url} was not dropped")


async def run(store: str, origins: int, window: int, lookups: int, directory: str) -> None:
    from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
    from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
    from scrapy_rep.engine.origin import robots_url

    settings: dict[str, Any] = {**SETTINGS, "REP_STORAGE": store}
    path = Path(directory) / "robotstxt.sqlite3"
    if store == "sqlite":
        settings["REP_STORAGE_PATH"] = str(path)
    crawler = get_crawler(BenchSpider, settings)
    crawler.spider = crawler._create_spider()
    # An engine that is never started, but says it runs (else every waiting
    # request would be sent back as if the crawl were stopping): the parking
    # finds no download waiting for a place.
    crawler.engine = crawler._create_engine()
    crawler.engine.running = True
    middleware = RobotsTxtMiddleware(crawler)
    await middleware._life.open_storage()
    assert crawler.stats is not None
    crawler.stats.open_spider()

    async def fetch(origin: Any, route: Any = None) -> FetchOutcome:  # the stub download
        url = robots_url(origin)
        return FetchOutcome(FetchKind.SUCCESS, url, time.time(), 200, ROBOTS, "HTTP 200")

    middleware._fetcher.fetch = fetch  # type: ignore[method-assign]

    def early(request: Request) -> object:
        drop = middleware.early(request)
        if drop is not None:
            middleware.announce_early(drop, request)
        return drop

    collector = GcTime()
    gc.callbacks.append(collector)
    marks = [n for n in CHECKPOINTS if n < origins] + [origins]
    print(
        f"store {store}: {origins:,} origins, {window} in progress at a time; "
        f"REP_MEMORY_MAX_ORIGINS {middleware.config.memory_max_origins:,}"
    )
    print(
        f"{'origins':>10}{'CPU us/origin':>15}{'gc us/origin':>14}{'gc2':>5}"
        f"{'RSS MiB':>9}{'B/origin':>10}{'gc objects':>12}{'wall s':>8}"
    )
    done, first_rss, first_done = 0, 0.0, 0
    cpu, wall = time.process_time(), time.perf_counter()
    gc_seconds, gc_full = 0.0, 0
    for mark in marks:
        while done < mark:
            batch = range(done, min(done + window, mark))
            await asyncio.gather(*(one_origin(middleware, early, n) for n in batch))
            done = batch.stop
        now_cpu, now_wall = time.process_time(), time.perf_counter()
        count = mark - (marks[marks.index(mark) - 1] if mark != marks[0] else 0)
        rss = rss_mib()
        if not first_done:
            first_rss, first_done = rss, mark
            growth = "-"
        else:
            growth = f"{(rss - first_rss) * 2**20 / (mark - first_done):.0f}"
        print(
            f"{mark:>10,}{(now_cpu - cpu) / count * 1e6:>15.1f}"
            f"{(collector.seconds - gc_seconds) / count * 1e6:>14.1f}"
            f"{collector.full - gc_full:>5}{rss:>9.0f}{growth:>10}"
            f"{len(gc.get_objects()):>12,}{now_wall - wall:>8.1f}",
            flush=True,
        )
        cpu, wall = now_cpu, now_wall
        gc_seconds, gc_full = collector.seconds, collector.full
    gc.callbacks.remove(collector)
    middleware._report.flush()
    stats = crawler.stats.get_stats()
    print(
        "stats: "
        + ", ".join(f"{k}={v}" for k, v in sorted(stats.items()) if k.startswith("robotstxt/"))
    )
    await middleware._resolver.close()
    if store == "sqlite":
        await sqlite_figures(path, origins, lookups)


async def sqlite_figures(path: Path, origins: int, lookups: int) -> None:
    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    size = sum(
        Path(f"{path}{suffix}").stat().st_size
        for suffix in ("", "-wal")
        if Path(f"{path}{suffix}").exists()
    )
    print(
        f"sqlite file: {size / 2**20:.1f} MiB (database and WAL) for {origins:,} records, "
        f"{size / origins:.0f} bytes per record"
    )
    storage = await SqliteStorage.open(path)
    keys = [f"http://o{random.randrange(origins)}.broad.test:8080" for _ in range(lookups)]
    found = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for key in keys:
        found += await storage.get(key) is not None
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await storage.close()
    print(
        f"lookup: {lookups:,} gets of random known origins, one at a time: "
        f"{wall / lookups * 1e6:.0f} us wall, {cpu / lookups * 1e6:.0f} us CPU each; "
        f"{found:,} found"
    )
    if found != lookups:
        print(f"MISSING RECORDS: {lookups - found} of the looked-up origins were not stored")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--store", choices=("memory", "sqlite"), default="sqlite")
    parser.add_argument("--origins", type=int, default=100_000)
    parser.add_argument("--window", type=int, default=100, help="origins in progress at once")
    parser.add_argument("--lookups", type=int, default=20_000)
    args = parser.parse_args()
    directory = tempfile.TemporaryDirectory(prefix="origins-million-")
    failed: list[BaseException] = []

    def failure_of(failure: Any) -> None:
        failed.append(failure.value)
        print(failure.getTraceback())

    def start() -> None:
        done = deferred_from_coro(
            run(args.store, args.origins, args.window, args.lookups, directory.name)
        )
        done.addErrback(failure_of)
        done.addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(start)
    reactor.run()
    directory.cleanup()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MiB")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
