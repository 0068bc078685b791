"""Two modes of ``broad_crawl.py --preset scale`` crawled at the same time, on one core.

On a shared machine the cost of the same crawl moves by 10-20% from one
minute to the next (issue 28), more than the differences worth measuring.
Crawls run one after another meet different minutes; two crawls run at once
meet the same ones. Each pair runs two servers and two crawler processes:
both crawlers share the first core, both servers the second, as
``broad_crawl.py`` places them (a crawler beside the other's server would
starve it, and the two crawls would drift apart). The figure is the ratio
of the two crawls' CPU per request within each pair, and its median over
the pairs.

    .venv/bin/python benchmarks/paired_crawl.py --origins 30000 --pair builtin,rep-sqlite --runs 3
    .venv/bin/python benchmarks/paired_crawl.py --pair rep-sqlite,rep-sqlite --at /tmp/old,.

``--at A,B`` crawls each side with the scrapy_rep of another checkout (a
``git worktree`` of an earlier commit): a change measured against its
parent in the same minutes, where a pair against the built-in at one time
and another pair at another differ by a percent or more.

Every crawl is checked as ``broad_crawl.py`` checks it (one robots.txt per
origin, no disallowed page fetched, no allowed page lost). The absolute
figures are dearer than a crawl alone (two crawls share the caches and the
memory bus), so compare ratios, not microseconds, with ``broad_crawl.py``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import broad_crawl


def _server(scale: argparse.Namespace, cpu: int) -> tuple[Any, Any, list[tuple[str, int]]]:
    control, remote = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=broad_crawl.serve,
        args=(
            scale.origins,
            scale.robots_latency,
            scale.page_latency,
            remote,
            cpu,
            scale.named_hosts,
        ),
        daemon=True,
    )
    process.start()
    return process, control, control.recv()


def _crawl(
    mode: str,
    tree: Path,
    scale: argparse.Namespace,
    cpu: int,
    server_cpu: int,
    layout: dict[str, Any],
) -> dict[str, Any]:
    """One crawl against its own server, checked; the server stopped after it."""
    process, control, targets = _server(scale, server_cpu)
    try:
        control.send("reset")
        control.recv()
        options = broad_crawl.crawl_options(scale, targets)
        result = broad_crawl.run_child(mode, options, cpu, tree)
        control.send("report")
        result.update(broad_crawl._served(control.recv(), scale, layout))
        result["problems"] = broad_crawl._check(result, scale, layout)
        control.send("stop")
    finally:
        process.join(5)
    return result


def _side(result: dict[str, Any]) -> str:
    """One crawl's CPU per request, wall time, peak RSS and its collector's share."""
    gc_seconds, full, full_seconds = broad_crawl.collector(result)
    return (
        f"{broad_crawl.cpu_per_request(result):6.0f} us/req "
        f"({result['seconds']:.1f} s, {result['max_rss_mib']:.0f} MiB, "
        f"gc {gc_seconds:.1f} s of which {full} full {full_seconds:.1f} s)"
    )


def _scale_args(origins: int, reactorless: bool = False) -> argparse.Namespace:
    """``broad_crawl.py``'s arguments for the scale preset at ``origins``."""
    unset = {"log_level": "WARNING", "memory_max_origins": None, "profile": None}
    preset = {**broad_crawl.PRESETS["scale"], "origins": origins, "reactorless": reactorless}
    return argparse.Namespace(**{**preset, **unset})


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--origins", type=int, default=10_000)
    parser.add_argument("--pair", default="builtin,rep-sqlite", help="two modes: A,B")
    parser.add_argument("--runs", type=int, default=3, help="pairs, one after another")
    parser.add_argument(
        "--at", help="the checkouts whose scrapy_rep A and B run: DIR_A,DIR_B (default: this one)"
    )
    parser.add_argument(
        "--reactorless",
        action="store_true",
        help="both crawls in Scrapy's reactorless mode (TWISTED_REACTOR_ENABLED = False)",
    )
    args = parser.parse_args()
    pair = tuple(mode.strip() for mode in args.pair.split(","))
    if len(pair) != 2 or any(mode not in broad_crawl.MODES for mode in pair):
        parser.error(f"--pair: two of {', '.join(broad_crawl.MODES)}, comma-separated")
    at = args.at.split(",") if args.at else [broad_crawl.ROOT, broad_crawl.ROOT]
    trees = tuple(Path(str(tree).strip()).resolve() for tree in at)
    if len(trees) != 2 or not all((t / "benchmarks" / "broad_crawl.py").exists() for t in trees):
        parser.error("--at: two checkouts of this project, comma-separated")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        parser.error("needs two CPUs: one for the crawlers, one for the servers")
    broad_crawl.raise_file_limit()
    scale = _scale_args(args.origins, args.reactorless)
    layout = broad_crawl._layout(scale)
    crawlers, servers = cpus[0], cpus[-1]
    first, second = pair
    print(
        f"{args.origins} origins x 2 pages (scale preset), {first} and {second} crawled at "
        f"once, {args.runs} pair(s); CPU per request of each crawler process, and B / A"
        + (" (reactorless)" if args.reactorless else "")
    )
    if trees[0] != trees[1]:
        print(f"A runs the scrapy_rep of {trees[0]}, B that of {trees[1]}")
    ratios: list[float] = []
    failed: list[str] = []
    for run in range(1, args.runs + 1):
        with ThreadPoolExecutor(2) as pool:
            a = pool.submit(_crawl, first, trees[0], scale, crawlers, servers, layout)
            b = pool.submit(_crawl, second, trees[1], scale, crawlers, servers, layout)
            results = (a.result(), b.result())
        ratio = broad_crawl.cpu_per_request(results[1]) / broad_crawl.cpu_per_request(results[0])
        ratios.append(ratio)
        for result in results:
            failed += [f"run {run} {result['mode']}: {p}" for p in result["problems"]]
        print(
            f"{run:>3}  {first}: {_side(results[0])}   {second}: {_side(results[1])}   "
            f"B / A {ratio:.3f}",
            flush=True,
        )
    print(
        f"{second} / {first}, CPU per request: median {statistics.median(ratios):.3f} "
        f"of {', '.join(f'{r:.3f}' for r in ratios)}"
    )
    if failed:
        print("CORRECTNESS VIOLATIONS:\n    " + "\n    ".join(failed))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
