"""What ``scrapy-rep report`` costs over a big store, and what it costs a crawl
sharing that store (issue 45).

    .venv/bin/python benchmarks/report_scale.py --store sqlite --origins 1000000
    .venv/bin/python benchmarks/report_scale.py --store redis --origins 1000000 --pairs 3 --nice 19
    .venv/bin/python benchmarks/report_scale.py --store cluster --origins 100000 --pairs 0

1. The store is filled with ``--origins`` synthetic records (``report_fill.py``:
   the policy's own records, 80% rules, 8% 404, outages, some cut or
   redirected, each body distinct): a SQLite file as a crawl's store makes
   it, or a redis-server (or a 3-primary Cluster) on 127.0.0.1.
2. ``scrapy-rep report`` runs over it in a child process, as a user runs it:
   ``--summary``, every row as JSON Lines (to a file), ``--sort until
   --limit 100``, every row sorted (``--sort until``: run files merged);
   and ``--deep`` over the origins ``o1*`` (about a ninth, ``--host`` keeps
   them; every body is read, the kept ones parsed and linted). Printed:
   seconds, records per second and the child's peak RSS (``wait4``).
3. ``--pairs N``: N rounds of a broad crawl (``broad_crawl.py --preset
   scale``, ``--crawl-origins`` origins x 2 pages, its crawler on the first
   CPU, its server on the second) on the store, while reports run one after
   another the whole time (pinned to the server's CPU, at ``--nice``: the
   crawler's own core is not taken). Each round crawls three times, in
   rotating order: alone; with reports on another store as big (a copy of
   the file, or another redis-server filled alike: what any report costs a
   crawl on this machine, mostly CPU);
   and with reports on the crawl's own store. Reports on its own store /
   on another store is what sharing the store costs. Printed per round: the
   crawl's CPU per request and wall time; then the medians of the ratios.
   The crawl's own records go into the same SQLite file (deleted after each
   crawl, so each starts cold) or, on Redis, under a prefix of their own on
   the same server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests"), str(HERE.parent)]

import broad_crawl  # noqa: E402
from paired_crawl import _scale_args, _server  # noqa: E402
from report_fill import fill_redis, fill_sqlite  # noqa: E402

#: The niceness of the reports run beside a crawl (``--nice``).
NICE = 0
REPORTS = {
    "summary": ["--summary"],
    "rows (JSON Lines)": ["--json"],
    "sorted, first 100": ["--sort", "until", "--limit", "100"],
    "sorted, every row": ["--sort", "until", "--json"],
}


def run_report(
    store: str, args: list[str], cpu: int | None = None
) -> tuple[float, float, int, bytes]:
    """One ``scrapy-rep report`` child: (seconds, peak RSS MiB, lines written,
    the first kilobyte written)."""
    command = [sys.executable, "-m", "scrapy_rep.tools.cli", "report", "--store", store, *args]
    if NICE and cpu is not None:  # beside a crawl: the crawl's server keeps its CPU
        command = ["nice", "-n", str(NICE), *command]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            command, stdout=out, stderr=err, cwd=tempfile.gettempdir(), env=env
        )
        if cpu is not None:
            os.sched_setaffinity(child.pid, {cpu})
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):
            err.seek(0)
            sys.exit(f"report {args} failed: {err.read().decode()[-2000:]}")
        out.seek(0)
        head = out.read(1024)
        out.seek(0)
        lines = sum(1 for _ in out)
    return seconds, usage.ru_maxrss / 1024, lines, head


def report_figures(store: str, origins: int, deep: bool) -> None:
    print(f"{'report':<26}{'seconds':>9}{'records/s':>11}{'peak RSS':>10}{'lines':>11}")
    for name, args in REPORTS.items():
        seconds, rss, lines, _ = run_report(store, args)
        print(
            f"{name:<26}{seconds:>9.1f}{origins / seconds:>11,.0f}{rss:>8.0f} M{lines:>11,}",
            flush=True,
        )
    if deep:  # the origins o1, o1x, o1xx...: about a ninth of them, each file read and linted
        seconds, rss, _, head = run_report(
            store, ["--deep", "--summary", "--json", "--host", "o1*.report.test"]
        )
        kept = json.loads(head)["origins"]
        print(
            f"{f'deep, {kept:,} of them':<26}{seconds:>9.1f}{kept / seconds:>11,.0f}"
            f"{rss:>8.0f} M{'-':>11}",
            flush=True,
        )


def crawl_once(
    scale: argparse.Namespace,
    layout: dict[str, Any],
    store_settings: dict[str, Any],
    cpus: tuple[int, int],
    label: str = "the crawl",
) -> dict[str, Any]:
    process, control, targets = _server(scale, cpus[1])
    try:
        control.send("reset")
        control.recv()
        options = broad_crawl.crawl_options(scale, targets)
        options["store_settings"] = store_settings
        result = broad_crawl.run_child("rep-sqlite", options, cpus[0])
        control.send("report")
        result.update(broad_crawl._served(control.recv(), scale, layout))
        result["problems"] = broad_crawl._check(result, scale, layout)
        control.send("stop")
    finally:
        process.join(5)
    if result["problems"]:
        sys.exit(f"the crawl went wrong: {result['problems']}")
    for line, count in result["log"]["notable"].items():
        print(f"    {label} logged {count} x {line}", flush=True)
    return result


class Reports(threading.Thread):
    """Reports over the store, one after another, until told to stop."""

    def __init__(self, store: str, cpu: int) -> None:
        super().__init__(daemon=True)
        self.store, self.cpu = store, cpu
        self.stopping = threading.Event()
        self.runs = 0

    def run(self) -> None:
        while not self.stopping.is_set():
            run_report(self.store, ["--summary"], self.cpu)
            self.runs += 1


ARMS = ("alone", "other", "same")


def crawl_rounds(args: argparse.Namespace, store: str, control: str, redis_url: str | None) -> None:
    """Rounds of three crawls sharing ``store``: alone, with reports on
    ``control`` (another store of the same kind, as busy: what running any
    report on this machine costs), and with reports on ``store`` itself;
    same / other is what sharing the store costs."""
    cpus = sorted(os.sched_getaffinity(0))
    pinned = (cpus[0], cpus[-1])
    broad_crawl.raise_file_limit()
    scale = _scale_args(args.crawl_origins)
    layout = broad_crawl._layout(scale)
    print(
        f"\na crawl of {args.crawl_origins:,} origins x 2 pages on the store: alone, with "
        f"reports running on another store, with reports on its own store (crawler on CPU "
        f"{pinned[0]}; its server and the reports, at nice {NICE}, on CPU {pinned[1]})",
        flush=True,
    )
    ratios: dict[str, list[float]] = {"cpu": [], "wall": [], "cpu_any": [], "wall_any": []}
    for round_ in range(args.pairs):
        figures: dict[str, dict[str, Any]] = {}
        for arm in ARMS[round_ % 3 :] + ARMS[: round_ % 3]:
            stores = {"same": store, "other": control}
            figures[arm] = _crawl_arm(
                scale, layout, store, stores.get(arm), redis_url, f"crawl{round_}{arm}:", pinned
            )
        cpu = {arm: broad_crawl.cpu_per_request(r) for arm, r in figures.items()}
        wall = {arm: r["seconds"] for arm, r in figures.items()}
        ratios["cpu"].append(cpu["same"] / cpu["other"])
        ratios["wall"].append(wall["same"] / wall["other"])
        ratios["cpu_any"].append(cpu["same"] / cpu["alone"])
        ratios["wall_any"].append(wall["same"] / wall["alone"])
        shown = ", ".join(
            f"{arm} {cpu[arm]:.0f} us/req {wall[arm]:.1f} s"
            + (f" ({figures[arm]['reports']} reports)" if arm != "alone" else "")
            for arm in ARMS
        )
        print(
            f"round {round_ + 1}: {shown}; same/other CPU {ratios['cpu'][-1]:.3f} "
            f"wall {ratios['wall'][-1]:.3f}",
            flush=True,
        )
    if ratios["cpu"]:
        median = {name: statistics.median(values) for name, values in ratios.items()}
        print(
            f"median, reports on the crawl's own store / on another store: CPU per request "
            f"{median['cpu']:.3f}, wall {median['wall']:.3f}; / no report at all: CPU "
            f"{median['cpu_any']:.3f}, wall {median['wall_any']:.3f}"
        )


def _crawl_arm(
    scale: argparse.Namespace,
    layout: dict[str, Any],
    store: str,
    reported: str | None,
    redis_url: str | None,
    prefix: str,
    pinned: tuple[int, int],
) -> dict[str, Any]:
    """One crawl on ``store`` (on Redis, under ``prefix``) while reports run
    on ``reported`` (None: none)."""
    settings: dict[str, Any] = {"REP_STORAGE_PATH": store}
    if redis_url is not None:
        settings = {"REP_STORAGE": "redis", "REP_REDIS_URL": redis_url, "REP_REDIS_PREFIX": prefix}
    reports = None
    if reported is not None:
        reports = Reports(reported, pinned[1])
        reports.start()
        time.sleep(1.0)  # a report is under way when the crawl starts
    result = crawl_once(scale, layout, settings, pinned, f"the crawl {prefix.rstrip(':')}")
    if reports is not None:
        reports.stopping.set()
        reports.join()
    result["reports"] = reports.runs if reports is not None else 0
    if redis_url is None:
        _forget_crawl(Path(store))
    return result


@contextlib.contextmanager
def _held_open(path: Path) -> Iterator[None]:
    """A process on the file, with a WAL, as a crawl has: the reports read
    the copy as they read the crawl's own file (read-only, not immutable)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("INSERT OR REPLACE INTO locks VALUES ('held open', 'x', 0)")
        yield
    finally:
        db.close()


def _forget_crawl(path: Path) -> None:
    """The crawl's own rows, deleted: each crawl starts as cold as the first."""
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM origins WHERE key >= 'http://o' AND key < 'http://p'")
        db.execute("DELETE FROM locks")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--store", choices=("sqlite", "redis", "cluster"), default="sqlite")
    parser.add_argument("--origins", type=int, default=1_000_000)
    parser.add_argument(
        "--deep",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="--deep over the origins o1* (about a ninth)",
    )
    parser.add_argument("--pairs", type=int, default=3, help="rounds of three crawls (0: none)")
    parser.add_argument(
        "--figures",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time the reports alone (--no-figures: the crawls only)",
    )
    parser.add_argument("--crawl-origins", type=int, default=5_000)
    parser.add_argument(
        "--nice", type=int, default=0, help="run the reports beside a crawl at this niceness"
    )
    args = parser.parse_args()
    global NICE
    NICE = args.nice
    now = time.time()
    with tempfile.TemporaryDirectory(prefix="report-scale-") as directory:
        started = time.perf_counter()
        if args.store == "sqlite":
            store = str(Path(directory) / "robotstxt.sqlite3")
            fill_sqlite(Path(store), args.origins, now)
            size = Path(store).stat().st_size
            print(
                f"sqlite: {args.origins:,} records, {size / 2**20:,.0f} MiB, filled in "
                f"{time.perf_counter() - started:.0f} s",
                flush=True,
            )
            if args.figures:
                report_figures(store, args.origins, args.deep)
            if args.pairs:
                control = str(Path(directory) / "control.sqlite3")
                shutil.copyfile(store, control)  # as big, as busy a report
                with _held_open(Path(control)):
                    crawl_rounds(args, store, control, None)
            return
        run_redis(args, Path(directory), now)


def run_redis(args: argparse.Namespace, directory: Path, now: float) -> None:
    import importlib

    import redis

    # tests/ first: its redis_topologies (the servers) is not this folder's (a benchmark)
    sys.path.insert(0, str(HERE.parent / "tests"))
    RedisServer = importlib.import_module("local_redis").RedisServer
    LocalCluster = importlib.import_module("redis_topologies").LocalCluster

    started = time.perf_counter()
    if args.store == "cluster":
        cluster = LocalCluster(directory)
        cluster.start()
        try:
            client = redis.RedisCluster(
                host="127.0.0.1", port=cluster.nodes[0].port, password=cluster.nodes[0].password
            )
            fill_redis(client, "scrapy_rep:", args.origins, now, cluster=True)
            print(
                f"cluster of 3: {args.origins:,} records, filled in "
                f"{time.perf_counter() - started:.0f} s",
                flush=True,
            )
            report_figures(cluster.url, args.origins, args.deep)
        finally:
            cluster.stop()
        return
    server = RedisServer(directory)
    server.start()
    try:
        fill_redis(redis.Redis.from_url(server.url), "scrapy_rep:", args.origins, now, False)
        memory = redis.Redis.from_url(server.url).info("memory")["used_memory"]
        print(
            f"redis: {args.origins:,} records, {memory / 2**20:,.0f} MiB, filled in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
        if args.figures:
            report_figures(server.url, args.origins, args.deep)
        if args.pairs:
            (directory / "control").mkdir()
            other = RedisServer(directory / "control")
            other.start()
            try:
                fill_redis(redis.Redis.from_url(other.url), "scrapy_rep:", args.origins, now, False)
                crawl_rounds(args, server.url, other.url, server.url)
            finally:
                other.kill()
    finally:
        server.kill()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"this process: peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
