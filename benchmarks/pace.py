"""The shared pace (issue 26) on a real redis-server: what it costs, and
whether workers keep every origin busy at its pace.

    .venv/bin/python benchmarks/pace.py [--runs N] [--before ../main]

Why it is built this way:

- ``cost``: one reservation (``RedisStorage.reserve``, an EVALSHA on Redis's
  clock) against one record read (``RedisStorage.get``, what the cache costs
  anyway), sequential round trips on one connection, same run: a ratio.
- ``crawl cost``: one scrapy-redis worker crawls origins with no crawl-delay,
  the pace off (REP_RETRY_AFTER "ignore") and on (a reservation per page, for
  Retry-After pauses), same run: wall time per page, as a ratio.
- ``throughput``: three workers crawl many origins each with a crawl-delay;
  the pace-bound ideal is (pages per origin - 1) x (delay + margin), every
  origin at its own pace at once. The ratio ideal / measured (site's clock,
  first page to last) says how close the workers come.
- ``table``: issue 26's table again: one origin with ``Crawl-delay: 1``, 1 and
  3 workers, the smallest and the median gap between page requests at the
  site; with ``--before`` also for another checkout (main, without the pace).
- ``gaps``: issue 40's count: ``--origins`` × ``--pages`` with ``Crawl-delay:
  --delay``, started at once, ``--workers`` on ``--store``: how many gaps
  between two pages of one origin came under the delay at the site, from
  the first page on (``--serve``: seconds each page takes); with
  ``--before`` the same for another checkout first.

Workers are real processes (tests/distributed/pace_worker.py); the site is a
local server that stamps each request when it arrives.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "distributed")]

import redis  # noqa: E402
from crawler.servers import Reply, SiteServer  # noqa: E402
from local_redis import RedisServer  # noqa: E402
from many_hosts import ManyHosts  # noqa: E402
from pace_harness import run_workers  # noqa: E402
from pace_worker import REDIS_KEY  # noqa: E402

from scrapy_rep.cache.storage.redis.store import RedisStorage  # noqa: E402
from scrapy_rep.crawler.pace.turns import MARGIN  # noqa: E402


def fresh_redis(workdir: Path) -> RedisServer:
    server = RedisServer(workdir)
    server.start()
    return server


async def round_trips(url: str, count: int) -> tuple[float, float]:
    store = await RedisStorage.open(url)
    try:
        for _ in range(100):  # warm: connection, script cache
            await store.reserve("warm", 0.0, 3600)
            await store.get("warm")
        started = time.perf_counter()
        for n in range(count):
            await store.get(f"https://o{n % 500}.example:443")
        read = (time.perf_counter() - started) / count
        started = time.perf_counter()
        for n in range(count):
            await store.reserve(f"https://o{n % 500}.example:443", 1.0, 3600)
        reserve = (time.perf_counter() - started) / count
    finally:
        await store.close()
    return read, reserve


def cost(workdir: Path, runs: int) -> None:
    server = fresh_redis(workdir)
    try:
        pairs = [asyncio.run(round_trips(server.url, 5000)) for _ in range(runs)]
    finally:
        server.kill()
    read = statistics.median(p[0] for p in pairs)
    reserve = statistics.median(p[1] for p in pairs)
    print(
        f"cost: reserve {reserve * 1e6:.0f} us, get {read * 1e6:.0f} us per round trip "
        f"(reserve/get {reserve / read:.2f}x; median of {runs})"
    )


def crawl_cost(workdir: Path, runs: int, origins: int = 40, per_origin: int = 25) -> None:
    """Site-side span (first page to last) of one worker, pace off and on, alternating."""
    spans: dict[str, list[float]] = {"ignore": [], "obey": []}
    for _ in range(runs):
        for mode in spans:
            stamps: list[float] = []

            def route(host: str, path: str, stamps: list[float] = stamps) -> tuple[int, bytes]:
                if path != "/robots.txt":
                    stamps.append(time.monotonic())
                return 200, b"<html>page</html>"

            server = fresh_redis(workdir)
            try:
                with ManyHosts(origins, route) as site:
                    urls = [
                        site.url(i, f"/p{n}") for n in range(per_origin) for i in range(origins)
                    ]
                    redis.Redis.from_url(server.url).rpush(REDIS_KEY, *urls)
                    settings = {
                        "REP_CRAWL_DELAY": "ignore",
                        "REP_RETRY_AFTER": mode,
                        "MAX_IDLE_TIME_BEFORE_CLOSE": 1,
                        "CONCURRENT_REQUESTS": 32,
                    }
                    run_workers(server.url, 1, workdir, settings)
            finally:
                server.kill()
            spans[mode].append((max(stamps) - min(stamps)) / len(stamps))
    off, on = statistics.median(spans["ignore"]), statistics.median(spans["obey"])
    print(
        f"crawl cost: {origins * per_origin} pages, {origins} origins, 1 worker, no crawl-delay: "
        f"pace off {off * 1e3:.2f} ms/page, pace on (a reservation per page, for Retry-After) "
        f"{on * 1e3:.2f} ms/page at the site; on/off {on / off:.2f}x (median of {runs})"
    )


def stamping_site(
    delay: float,
) -> tuple[Callable[[str, str], tuple[int, bytes]], list[tuple[str, float]]]:
    """A site whose robots.txt asks for ``Crawl-delay: delay``, and the (host,
    time) of each page request as it arrives."""
    stamps: list[tuple[str, float]] = []
    lock = threading.Lock()
    robots = f"User-agent: *\nCrawl-delay: {delay}\n".encode()

    def route(host: str, path: str) -> tuple[int, bytes]:
        if path == "/robots.txt":
            return 200, robots
        with lock:
            stamps.append((host, time.monotonic()))
        return 200, b"<html>page</html>"

    return route, stamps


def throughput(workdir: Path, origins: int = 20, per_origin: int = 8, delay: float = 0.5) -> None:
    route, stamps = stamping_site(delay)

    server = fresh_redis(workdir)
    try:
        with ManyHosts(origins, route) as site:
            urls = [site.url(i, f"/p{n}") for n in range(per_origin) for i in range(origins)]
            redis.Redis.from_url(server.url).rpush(REDIS_KEY, *urls)
            run_workers(server.url, 3, workdir, {"MAX_IDLE_TIME_BEFORE_CLOSE": 2})
    finally:
        server.kill()
    measured = max(t for _, t in stamps) - min(t for _, t in stamps)
    ideal = (per_origin - 1) * (delay + MARGIN)
    worst = 0.0
    for host in {h for h, _ in stamps}:
        own = sorted(t for h, t in stamps if h == host)
        worst = max(worst, own[-1] - own[0])
    print(
        f"throughput: {origins} origins x {per_origin} pages, Crawl-delay {delay}, 3 workers: "
        f"{len(stamps)} pages in {measured:.2f} s at the site; pace-bound ideal {ideal:.2f} s; "
        f"ideal/measured {ideal / measured:.2f} (slowest origin {worst:.2f} s)"
    )


def table(workdir: Path, code: Path | None, label: str, pages: int = 30) -> None:
    robots = Reply(200, b"User-agent: *\nCrawl-delay: 1\n", {"Content-Type": "text/plain"})
    for workers in (1, 3):
        server = fresh_redis(workdir)
        try:
            with SiteServer({"/robots.txt": robots}) as site:
                urls = [site.url(f"/page{n}") for n in range(pages)]
                redis.Redis.from_url(server.url).rpush(REDIS_KEY, *urls)
                run_workers(server.url, workers, workdir, {}, code=code)
                page_hits = [h for h in site.hits if h.path.startswith("/page")]
                hits = sorted(h.at for h in page_hits)
                shares = sorted(
                    Counter(h.user_agent.rsplit(";", 1)[-1] for h in page_hits).values()
                )
        finally:
            server.kill()
        gaps = [b - a for a, b in pairwise(hits)]
        print(
            f"table ({label}): {workers} worker(s), {len(hits)} pages: smallest gap "
            f"{min(gaps):.2f} s, median {statistics.median(gaps):.2f} s "
            f"(pages per worker {shares})"
        )


def gaps(workdir: Path, args: argparse.Namespace, code: Path | None, label: str) -> None:
    """Gaps under the delay between two pages of one origin, at the site."""
    route, stamps = stamping_site(args.delay)

    server = fresh_redis(workdir)
    try:
        with ManyHosts(args.origins, route, delay=lambda host, path: args.serve) as site:
            pages = range(args.pages)
            urls = [site.url(i, f"/p{n}") for n in pages for i in range(args.origins)]
            redis.Redis.from_url(server.url).rpush(REDIS_KEY, *urls)
            settings = {
                "MAX_IDLE_TIME_BEFORE_CLOSE": 2,
                "REP_STORAGE": args.store,
                "REP_STORAGE_PATH": str(workdir / f"{label}.sqlite3"),
                "CONCURRENT_REQUESTS": args.conc,
            }
            run_workers(server.url, args.workers, workdir, settings, code=code)
    finally:
        server.kill()
    found = [
        later - earlier
        for host in {h for h, _ in stamps}
        for earlier, later in pairwise(at for h, at in stamps if h == host)
    ]
    short = sorted(gap for gap in found if gap < args.delay)
    print(
        f"gaps ({label}): {args.origins} origins x {args.pages} pages, Crawl-delay "
        f"{args.delay}, {args.workers} worker(s), {args.store}: {len(short)} of {len(found)} "
        f"under the delay" + (f" (smallest {short[0]:.2f} s)" if short else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout (e.g. ../main)")
    parser.add_argument("--only", choices=("cost", "crawl", "throughput", "table", "gaps"))
    for name, kind, default in (
        ("origins", int, 200),
        ("pages", int, 4),
        ("delay", float, 3.0),
        ("workers", int, 3),
        ("store", str, "redis"),
        ("conc", int, 16),
        ("serve", float, 0.0),
    ):
        parser.add_argument(f"--{name}", type=kind, default=default, help="for gaps")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        steps: dict[str, Any] = {
            "cost": lambda: cost(workdir, args.runs),
            "crawl": lambda: crawl_cost(workdir, args.runs),
            "throughput": lambda: throughput(workdir),
            "table": lambda: table(workdir, None, "this branch"),
        }
        for name, step in steps.items():
            if args.only in (None, name):
                step()
        if args.before is not None and args.only in (None, "table"):
            table(workdir, args.before.resolve(), f"before: {args.before}")
        if args.only == "gaps":  # not by default: one run is a minute
            if args.before is not None:
                gaps(workdir, args, args.before.resolve(), "before")
            gaps(workdir, args, None, "this branch")


if __name__ == "__main__":
    main()
