"""Issue 14 §5: scrapy_rep on the distributed engine Scrapy users run, scrapy-redis.

Three worker processes share scrapy-redis's scheduler, dupefilter and
start-URL queue in a real redis-server, and scrapy_rep's cache in the same
Redis: each robots.txt is fetched once across the workers, every allowed page
once, no disallowed page at all, and links to disallowed pages are dropped
before they enter the shared queue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import redis
from local_redis import RedisServer
from many_hosts import ManyHosts
from start_barrier import BARRIER_ENV, release_together

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORKER = HERE / "scrapy_redis_worker.py"
ORIGINS = 30
PAGES = ("/a", "/b", "/private/c")
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def route(host: str, path: str) -> tuple[int, bytes]:
    return (200, ROBOTS) if path == "/robots.txt" else (200, b"<html>page</html>")


def run_workers(
    redis_url: str, count: int, cwd: Path, store_url: str | None = None
) -> list[dict[str, object]]:
    """``store_url``: scrapy_rep's store (REP_REDIS_URL) when not scrapy-redis's own."""
    with tempfile.TemporaryDirectory() as barrier:
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", ""), BARRIER_ENV: barrier}
        workers = [
            subprocess.Popen(
                [sys.executable, str(WORKER), redis_url, *([store_url] if store_url else [])],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
            )
            for _ in range(count)
        ]
        release_together(workers, barrier, 60)
        reports = []
        for worker in workers:
            out, err = worker.communicate(timeout=120)
            assert worker.returncode == 0, err.decode(errors="replace")[-3000:]
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    return reports


def test_scrapy_redis_three_workers_one_robots_txt_per_origin(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    three_workers_one_robots_txt_per_origin(redis_server.url, tmp_path)


def three_workers_one_robots_txt_per_origin(
    queue_url: str, cwd: Path, store_url: str | None = None
) -> None:
    """The crawl and its checks; scrapy_rep's store on ``store_url`` if given
    (a Cluster: tests/distributed/test_cluster.py), else in scrapy-redis's Redis."""
    with ManyHosts(ORIGINS, route, delay=0.05) as server:
        urls = [server.url(i, path) for i in range(ORIGINS) for path in PAGES]
        client = redis.Redis.from_url(queue_url)
        client.rpush("dist:start_urls", *urls)
        reports = run_workers(queue_url, 3, cwd, store_url)
        hits = dict(server.hits)
    got = [url for report in reports for url in report["got"]]  # type: ignore[union-attr]
    allowed = [url for url in urls if "/private/" not in url]
    assert sorted(got) == sorted(allowed)  # every allowed page, once across the workers
    assert all(n == 1 for (_, path), n in hits.items() if path != "/robots.txt")
    assert not [key for key in hits if key[1].startswith("/private")]
    robots = {host: n for (host, path), n in hits.items() if path == "/robots.txt"}
    assert robots == {host: 1 for host in server.hosts}  # once per origin, across workers
    # The work was shared: every worker took pages from the shared queues (the
    # workers hold their first pages until all have one: scrapy_redis_worker.py).
    assert all(report["got"] for report in reports), [len(r["got"]) for r in reports]  # type: ignore[arg-type]
    # Each /a links /private/linked: dropped before scrapy-redis's shared queue.
    early = sum(report["stats"].get("robotstxt/dropped_early", 0) for report in reports)  # type: ignore[union-attr]
    assert early == ORIGINS
