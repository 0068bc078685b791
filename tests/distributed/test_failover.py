"""Issue 46: a Sentinel failover in the middle of a distributed crawl.

Three scrapy-redis workers (``pace_worker.py``) keep scrapy_rep's cache and
pace behind Sentinel (a primary, a replica, three sentinels, quorum 2, all on
127.0.0.1); scrapy-redis's queue stays on a server of its own, which
scrapy-redis needs (docs/storage.md, "Production Redis"). The primary is
killed while every worker is pacing its origins; the replica is promoted.

Origins come in three waves: crawled from the start, first met while the
store is down, first met after every worker is back. What the site sees is
checked against docs/storage.md: every allowed page once, no disallowed
page, robots.txt once per origin but for the origins first met during the
outage (once per worker at most), one warning per worker, and one pace per
origin but during the outage (each worker its own, at the delay times the
workers; test_pace_outage.py checks that over a longer outage). Waiting for the
crawl and the failover polls with deadlines (real events, not time rules).
"""

from __future__ import annotations

import contextlib
import math
import re
import subprocess
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import redis
from crawler.servers import Hit, Reply, SiteServer
from local_redis import RedisServer
from pace_harness import finish, start_workers
from pace_worker import REDIS_KEY
from redis_topologies import LocalSentinels, wait_until
from start_barrier import release_together

DELAY = 0.4
#: docs/politeness.md, "Clocks and the margin": a request sent late after one
#: sent on time may reach the site up to the 50 ms margin closer than the delay.
MARGIN = 0.05
ROBOTS = f"User-agent: *\nCrawl-delay: {DELAY}\nDisallow: /private\n".encode()
#: The origins (a site server each): crawled from the start, first met while
#: the store is down, first met after every worker is back.
BEFORE = ["before0", "before1", "before2", "before3"]
DURING = ["during0", "during1"]
AFTER = ["after0", "after1"]
WORKERS = 3
#: Each log line starts with its time (epoch seconds): the timeline.
LOG_FORMAT = "%(created).3f [%(name)s] %(levelname)s: %(message)s"
BACK = re.compile(r"^(\d+\.\d+) .* is back: ", re.MULTILINE)
UNREACHABLE = "is unreachable ("

Sites = dict[str, SiteServer]


def urls(sites: Sites, names: list[str], pages: int) -> list[str]:
    """``pages`` pages of each origin, and one page its robots.txt forbids."""
    paths = [*(f"/page{n}" for n in range(pages)), "/private/x"]
    return [sites[name].url(path) for name in names for path in paths]


def deal(queue: redis.Redis, wave: list[str]) -> None:
    """Each worker's own start queue gets a share of every origin (round robin):
    from one shared queue, one worker can take them all (test_pace.py)."""
    for n in range(WORKERS):
        queue.rpush(f"{REDIS_KEY}:w{n}", *wave[n::WORKERS])


def hits_of(site: SiteServer, prefix: str) -> list[Hit]:
    with site._lock:
        return [hit for hit in site.hits if hit.path.startswith(prefix)]


def worker_of(hit: Hit) -> str:
    return hit.user_agent.rsplit(";", 1)[-1].strip(" )")


def logs(barrier: str) -> list[str]:
    return [(Path(barrier) / f"w{n}.log").read_text(errors="replace") for n in range(WORKERS)]


def alive(workers: list[subprocess.Popen[bytes]], barrier: str) -> bool:
    """True while every worker runs; a worker that died fails the test with its log."""
    for worker, log in zip(workers, logs(barrier)):
        assert worker.poll() is None, log[-3000:]
    return True


def crawl_through_a_failover(
    group: LocalSentinels, queue_url: str, sites: Sites, cwd: Path
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Crawl wave 1; kill the primary once pages flow, add wave 2; when every
    worker is back on the promoted replica, add wave 3. The reports, and the
    timeline on the site's clock (``Hit.at``)."""
    queue = redis.Redis.from_url(queue_url)
    settings = {
        "PACE_OWN_QUEUES": True,  # pages dealt out: every worker paces every origin
        "REP_REDIS_URL": group.url,
        "REP_REDIS_RETRY_INTERVAL": 0.5,
        "MAX_IDLE_TIME_BEFORE_CLOSE": 5,
        "CONCURRENT_REQUESTS": 16,  # a turn never waits for a free place (8 origins)
        "LOG_FORMAT": LOG_FORMAT,
    }
    timeline: dict[str, float] = {}
    deal(queue, urls(sites, BEFORE, 10))
    with tempfile.TemporaryDirectory() as barrier:
        workers = start_workers(queue_url, WORKERS, cwd, barrier, settings)
        try:
            release_together(workers, barrier, 60)
            return _waves_and_kill(group, queue, sites, workers, barrier, timeline), timeline
        finally:
            for worker in workers:  # a failed wait must not leave workers crawling
                if worker.poll() is None:
                    worker.kill()
                    worker.wait(10)


def _waves_and_kill(
    group: LocalSentinels,
    queue: redis.Redis,
    sites: Sites,
    workers: list[subprocess.Popen[bytes]],
    barrier: str,
    timeline: dict[str, float],
) -> list[dict[str, Any]]:
    offset = time.time() - time.monotonic()  # worker log times -> the site's clock

    def under_way() -> bool:
        return (
            alive(workers, barrier)
            and sum(len(hits_of(sites[name], "/page")) for name in BEFORE) >= 8
        )

    wait_until(under_way, 60, "the crawl under way")
    timeline["kill"] = time.monotonic()
    group.primary.kill()
    deal(queue, urls(sites, DURING, 5))
    timeline["promoted"] = timeline["kill"] + wait_until(group.promoted, 30, "promotion")
    wait_until(lambda: all(BACK.search(log) for log in logs(barrier)), 30, "all back")
    timeline["all back"] = max(float(BACK.findall(log)[0]) - offset for log in logs(barrier))
    timeline["offset"] = offset
    deal(queue, urls(sites, AFTER, 5))
    return finish(workers, barrier)


def test_sentinel_failover_mid_crawl_loses_nothing_and_keeps_the_pace(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    (tmp_path / "sentinel").mkdir()
    group = LocalSentinels(tmp_path / "sentinel")
    group.start()
    robots = {"/robots.txt": Reply(200, ROBOTS)}
    try:
        with contextlib.ExitStack() as stack:
            sites = {
                name: stack.enter_context(SiteServer(robots)) for name in BEFORE + DURING + AFTER
            }
            reports, timeline = crawl_through_a_failover(group, redis_server.url, sites, tmp_path)
    finally:
        group.stop()
    allowed = [
        url
        for url in urls(sites, BEFORE, 10) + urls(sites, DURING, 5) + urls(sites, AFTER, 5)
        if "/private" not in url
    ]
    got = sorted(url for report in reports for url in report["got"])
    assert got == sorted(allowed)  # every allowed page, once across the workers: none lost
    for site in sites.values():
        assert len(hits_of(site, "/page")) == len({hit.path for hit in hits_of(site, "/page")})
        assert hits_of(site, "/private") == []
    fetched = {name: len(hits_of(site, "/robots.txt")) for name, site in sites.items()}
    assert {name: fetched[name] for name in BEFORE + AFTER} == dict.fromkeys(BEFORE + AFTER, 1)
    assert all(1 <= fetched[name] <= WORKERS for name in DURING), fetched  # once per worker at most
    warned = [report["log"].count(UNREACHABLE) for report in reports]
    assert warned == [1] * WORKERS, warned  # the outage, said once by each worker
    assert all("Redis Sentinel at" in report["log"] for report in reports)
    ours = [line for r in reports for line in r["log"].splitlines() if "[scrapy_rep" in line]
    assert not [line for line in ours if "data-pw" in line or "sentinel-pw" in line]
    assert_the_pace(sites, (timeline["kill"], timeline["all back"] + DELAY))
    print_timeline(timeline, sites, reports)


def assert_the_pace(sites: Sites, window: tuple[float, float]) -> None:
    """Each worker's own pace always; the origin's, across workers, but from
    the kill until one delay after the last worker was back (docs/storage.md)."""
    for name, site in sites.items():
        pages = sorted(hits_of(site, "/page"), key=lambda hit: hit.at)
        for worker in {worker_of(hit) for hit in pages}:
            own = [hit.at for hit in pages if worker_of(hit) == worker]
            close = [(a - window[0], b - a) for a, b in pairwise(own) if b - a < DELAY - MARGIN]
            assert close == [], (name, worker, close)
        shared = [b - a for a, b in pairwise(h.at for h in pages) if b < window[0] or a > window[1]]
        assert min(shared, default=DELAY) >= DELAY - MARGIN, (name, shared)


def print_timeline(timeline: dict[str, float], sites: Sites, reports: list[dict[str, Any]]) -> None:
    """For the record (pytest -s): when each worker lost the store and got it
    back, and what the crawl did meanwhile, in seconds from the kill."""
    kill, back = timeline["kill"], timeline["all back"]
    during = [h for site in sites.values() for h in hits_of(site, "/page") if kill <= h.at <= back]
    lines = [f"\nfailover: promoted {timeline['promoted'] - kill:.2f} s after the kill"]
    for n, report in enumerate(reports):
        said = [
            f"{'back' if 'is back' in line else 'lost'} "
            f"{float(line.split()[0]) - timeline['offset'] - kill:.2f} s"
            for line in report["log"].splitlines()
            if "is back" in line or UNREACHABLE in line
        ]
        lines.append(f"  w{n}: store {', '.join(said)}")
    lines.append(f"  {len(during)} pages fetched between the kill and the last worker back")
    robots = {name: len(hits_of(site, "/robots.txt")) for name, site in sites.items()}
    lines.append(f"  robots.txt fetches: {robots}")
    shared = min(min(gaps(site), default=math.inf) for site in sites.values())
    own = min(
        min(gaps(site, f"w{n}"), default=math.inf) for site in sites.values() for n in range(3)
    )
    lines.append(
        f"  shortest gap at an origin: {shared:.3f} s; between one worker's own: {own:.3f} s"
    )
    print("\n".join(lines))


def gaps(site: SiteServer, worker: str | None = None) -> list[float]:
    """Between the pages the site got (of one worker), in order."""
    times = sorted(h.at for h in hits_of(site, "/page") if worker in (None, worker_of(h)))
    return [b - a for a, b in pairwise(times)]
