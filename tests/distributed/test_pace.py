"""Issue 26: one pace per origin for every scrapy-redis worker sharing a Redis.

Three worker processes (``pace_worker.py``) share scrapy-redis's queue and
scrapy_rep's cache and pace in a real redis-server. Each worker stamps when
the store gave each turn and when its request left (tests/turn_stamps.py):
the pace is checked there, exactly, whatever the load. The site, a local
server, stamps each request when its thread reads it, which a loaded machine
delays by up to 1.2 s (measured, two CPU-bound processes beside the suite):
its gaps are checked only in the median, against half the delay. Nothing
here sleeps for a time rule: the test waits for the crawl and reads the stamps.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from statistics import median
from typing import Any

import pytest
import redis
from crawler.servers import Hit, Reply, SiteServer
from local_redis import RedisServer
from pace_harness import run_workers
from pace_worker import REDIS_KEY
from paced_site import PacedSite
from turn_stamps import Turn, left_gaps, too_close, turns_of

needs_epoll = pytest.mark.skipif(not hasattr(select, "epoll"), reason="no epoll here")

ROBOTS = "User-agent: *\nCrawl-delay: {delay}\nDisallow: /private\n"


def robots(delay: float) -> Reply:
    return Reply(200, ROBOTS.format(delay=delay).encode(), {"Content-Type": "text/plain"})


def pages(site: SiteServer, count: int) -> list[str]:
    return [site.url(f"/page{n}") for n in range(count)]


def page_hits(site: SiteServer) -> list[Hit]:
    with site._lock:
        return [hit for hit in site.hits if hit.path.startswith("/page")]


def gaps(hits: list[Hit]) -> list[float]:
    return [later.at - earlier.at for earlier, later in pairwise(hits)]


def worker_of(hit: Hit) -> str:
    return hit.user_agent.rsplit(";", 1)[-1].strip(" )")


def queue(redis_url: str, urls: list[str]) -> None:
    redis.Redis.from_url(redis_url).rpush(REDIS_KEY, *urls)


def queue_each(redis_url: str, urls: list[str], workers: int) -> dict[str, Any]:
    """Deal the pages out to the workers' own queues, round robin: how
    scrapy-redis shares one queue depends on which worker polls first (one
    may take them all), and a test of the shared pace must know that every
    worker has pages left when it matters. Returns the workers' setting;
    scrapy_rep's cache and pace stay shared."""
    client = redis.Redis.from_url(redis_url)
    for n in range(workers):
        client.rpush(f"{REDIS_KEY}:w{n}", *urls[n::workers])
    return {"PACE_OWN_QUEUES": True}


def got(reports: list[dict[str, Any]]) -> list[str]:
    return sorted(url for report in reports for url in report["got"])


def paced_turns(reports: list[dict[str, Any]], prefix: str) -> list[Turn]:
    """The turns of the pages whose path starts with ``prefix`` (the paced ones)."""
    return [turn for turn in turns_of(reports) if turn.path.startswith(prefix)]


def assert_paced(turns: list[Turn], site_gaps: list[float], delay: float) -> None:
    """No two turns of an origin given closer than ``delay`` (the pace spaces
    them ``delay`` + 0.05 s apart in the store): exact, from the workers'
    stamps. The requests left their workers ``delay`` apart in the median,
    and reached the site at least half of it apart in the median: uncoordinated
    paces give gaps near 0 there, a late request one short gap."""
    assert too_close(turns, delay) == []
    assert median(left_gaps(turns)) >= delay, sorted(left_gaps(turns))
    assert median(site_gaps) >= delay / 2, sorted(site_gaps)


EPOLL = {"TWISTED_REACTOR": "twisted.internet.epollreactor.EPollReactor"}


@pytest.mark.parametrize(
    "reactor",
    [
        pytest.param({}, id="asyncio"),
        # the stores run on a loop thread there (ThreadedStorage): the pace too
        pytest.param(EPOLL, id="epoll", marks=needs_epoll),
    ],
)
def test_three_workers_keep_one_crawl_delay(
    redis_server: RedisServer, tmp_path: Path, reactor: dict[str, str]
) -> None:
    three_workers_keep_one_crawl_delay(redis_server.url, tmp_path, reactor)


def three_workers_keep_one_crawl_delay(
    queue_url: str,
    cwd: Path,
    settings: dict[str, Any],
    during: Callable[[], None] | None = None,
) -> None:
    """The crawl and its checks; ``settings`` may put scrapy_rep's store
    elsewhere (REP_REDIS_URL: a Cluster, tests/distributed/test_cluster.py);
    ``during()`` runs while the workers crawl."""
    delay = 0.5
    with SiteServer({"/robots.txt": robots(delay)}) as site:
        urls = pages(site, 12)
        own_queues = queue_each(queue_url, urls, 3)
        reports = run_workers(queue_url, 3, cwd, {**settings, **own_queues}, during)
        hits = page_hits(site)
    assert got(reports) == sorted(urls)  # every page, once across the workers
    assert sorted(hit.path for hit in hits) == sorted(f"/page{n}" for n in range(12))
    turns = paced_turns(reports, "/page")
    assert sorted(turn.path for turn in turns) == sorted(f"/page{n}" for n in range(12))
    # Three paces instead of one would give turns near 0.5 / 3 apart.
    assert_paced(turns, gaps(hits), delay)
    assert {worker_of(hit) for hit in hits} == {"w0", "w1", "w2"}  # one pace for three
    waited = sum(report["stats"].get("robotstxt/pace/waited", 0) for report in reports)
    assert waited >= 6  # the waiting shows in stats


@pytest.mark.parametrize(
    ("store", "workers", "places"), [("memory", 1, 64), ("sqlite", 3, 16), ("redis", 3, 16)]
)
def test_crawl_delay_holds_for_200_origins_at_once(
    redis_server: RedisServer, tmp_path: Path, store: str, workers: int, places: int
) -> None:
    """200 origins with ``Crawl-delay: 0.5``, 3 pages each, started at once,
    while each worker's places are held by slow pages of other hosts for a
    while (tests/paced_site.py): no two turns of an origin closer than the
    delay, from the first page on (``assert_paced``). With three workers, 200
    origins and the site on 2 shared cores, a request reached the site's
    thread up to 1.2 s after it left its worker on a machine loaded to 12
    (two CPU-bound processes beside the suite), so gaps of 0.2 s came at the
    site while the turns were 0.7 s apart or more; uncoordinated paces give
    turns near 0 apart."""
    delay, origins = 0.5, 200
    with PacedSite(origins, delay) as site:
        urls, warm = site.pages(3), site.warm(places)
        client = redis.Redis.from_url(redis_server.url)
        for n in range(workers):  # each its own share, the slow hosts' robots.txt first
            client.rpush(f"{REDIS_KEY}:w{n}", *warm, *urls[n::workers])
        hogs = {"urls": site.slow(places), "after": origins // workers // 4}
        settings = {
            "PACE_OWN_QUEUES": True,
            "PACE_HOGS": hogs,
            "REP_STORAGE": store,
            "REP_STORAGE_PATH": str(tmp_path / "rep.sqlite3"),
            "CONCURRENT_REQUESTS": places,
            "MAX_IDLE_TIME_BEFORE_CLOSE": 1,
            "REDIS_START_URLS_BATCH_SIZE": len(urls),  # every page at once
        }
        reports = run_workers(redis_server.url, workers, tmp_path, settings)
    assert sorted(set(got(reports))) == sorted({*warm, *urls, *hogs["urls"]})
    assert len(site.stamps) == len(urls)
    turns = paced_turns(reports, "/p")
    assert len(turns) == len(urls)
    assert_paced(turns, site.gaps(), delay)


def once_busy(path: str, retry_after: str) -> tuple[dict[str, Any], list[float]]:
    """A route answering 429 with ``Retry-After`` the first time, then the page."""
    lock = threading.Lock()
    served: list[float] = []

    def route(host: str) -> Reply:
        with lock:
            first = not served
            served.append(0.0)
        if first:
            return Reply(429, b"slow down", {"Retry-After": retry_after})
        return Reply(200, b"<html>page</html>", {"Content-Type": "text/html"})

    return {path: route}, served


def test_retry_after_pauses_every_worker(redis_server: RedisServer, tmp_path: Path) -> None:
    delay = 0.2
    busy, _ = once_busy("/page2", "3")
    with SiteServer({"/robots.txt": robots(delay), **busy}) as site:
        # 8 pages per worker, one turn every 0.2 s for all of them: every
        # worker still has pages to fetch when the pause begins.
        urls = pages(site, 24)
        own_queues = queue_each(redis_server.url, urls, 3)
        settings = {"RETRY_ENABLED": True, "CONCURRENT_REQUESTS": 8, **own_queues}
        reports = run_workers(redis_server.url, 3, tmp_path, settings)
        hits = page_hits(site)
    assert got(reports) == sorted(urls)  # the 429 page too, retried after the pause
    paused_at = next(hit.at for hit in hits if hit.path == "/page2")
    # A turn another worker took before the 429 reached its worker and the
    # store may still go (on a loaded machine the answer takes that long to
    # read): one per other worker at most, within the second; none after.
    in_flight = [hit for hit in hits if paused_at < hit.at < paused_at + 3.0]
    assert len(in_flight) <= 2 and all(hit.at - paused_at < 1.0 for hit in in_flight), in_flight
    after = [hit for hit in hits if hit.at >= paused_at + 3.0]
    assert after, hits
    pause = after[0].at - paused_at
    assert pause < 4.5, pause  # by the site's clock: the workers came back once it ended
    assert {worker_of(hit) for hit in after} == {"w0", "w1", "w2"}  # every worker waited it out
    assert min(gaps(hits)) >= delay, gaps(hits)
    said = sum(report["log"].count("with Retry-After '3'") for report in reports)
    assert said == 1  # logged once for the origin and the pause
    assert sum(report["stats"].get("robotstxt/pace/paused", 0) for report in reports) == 1


def busy_once(site: SiteServer, paths: list[str], nth: int, slow: float) -> list[str]:
    """The ``nth`` of ``paths`` the site reads answers 503 with ``Retry-After:
    3`` at once; every other page takes ``slow`` seconds. Returns the busy path."""
    lock = threading.Lock()
    read: list[str] = []

    def route_of(path: str) -> Callable[[str], Reply]:
        def route(host: str) -> Reply:
            with lock:
                read.append(path)
                busy = len(read) == nth
            if busy:
                return Reply(503, b"busy", {"Retry-After": "3"})
            site.stopping.wait(slow)  # the site is slow
            return Reply(200, b"<html>page</html>", {"Content-Type": "text/html"})

        return route

    for path in paths:
        site.routes[path] = route_of(path)
    return read


def test_retry_after_holds_what_no_worker_has_sent(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """An origin without a crawl-delay; two workers, each with two places and
    one request at a time per domain: the second waits for the download
    slot. One worker gets a 503 with ``Retry-After: 3``; the other's waiting
    request asks the store as it leaves, so it waits the pause out too. Only
    what was on its way when the site answered reaches it within the pause."""
    no_delay = Reply(200, b"User-agent: *\nDisallow: /private\n", {"Content-Type": "text/plain"})
    with SiteServer({"/robots.txt": no_delay}) as site:
        paths = [f"/page{n}" for n in range(16)]
        read = busy_once(site, paths, nth=5, slow=0.3)
        own_queues = queue_each(redis_server.url, [site.url(path) for path in paths], 2)
        settings = {"CONCURRENT_REQUESTS": 2, "CONCURRENT_REQUESTS_PER_DOMAIN": 1}
        reports = run_workers(redis_server.url, 2, tmp_path, {**settings, **own_queues})
        hits = page_hits(site)
    paused_at = next(hit.at for hit in hits if hit.path == read[4])
    later = [hit.at - paused_at for hit in hits if hit.at > paused_at]
    on_its_way = [at for at in later if at < 0.1]  # sent before the 503 was answered
    assert len(on_its_way) <= 1  # the other worker's one request in flight
    assert len(later) == 16 - 5
    assert min(at for at in later if at not in on_its_way) >= 3.0, sorted(later)
    assert sum(report["stats"].get("robotstxt/pace/paused", 0) for report in reports) == 1


def stop(server: RedisServer) -> None:
    """Stop Redis saving its data: the queue survives the restart."""
    assert server.process is not None
    redis.Redis.from_url(server.url).shutdown(save=True)
    server.process.wait(10)
    server.process = None


def wait_for(condition: Callable[[], bool], timeout: float = 30) -> bool:
    """Poll until the crawl got there (not a time rule: the crawl's progress)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.02)
    return True


def test_redis_restart_mid_crawl_loses_no_request(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    delay = 0.3
    with SiteServer({"/robots.txt": robots(delay)}) as site:
        urls = pages(site, 20)
        queue(redis_server.url, urls)

        went_on: list[bool] = []

        def restart_after_a_few_pages() -> None:
            wait_for(lambda: len(page_hits(site)) >= 5)
            stop(redis_server)
            down = len(page_hits(site))
            went_on.append(wait_for(lambda: len(page_hits(site)) >= down + 2, 15))
            redis_server.start()  # the same port and data

        reports = run_workers(
            redis_server.url, 3, tmp_path, {"RETRY_ENABLED": True}, restart_after_a_few_pages
        )
        hits = page_hits(site)
    assert went_on == [True]  # pages went on while Redis was down: no stall
    assert got(reports) == sorted(urls)  # every page once, none lost, none twice
    assert sorted(hit.path for hit in hits) == sorted(f"/page{n}" for n in range(20))
    warned = [report["log"].count("is unreachable") for report in reports]
    assert max(warned) == 1, warned  # Redis was lost, said once per worker
    for worker in {worker_of(hit) for hit in hits}:  # never faster than one process
        own = [hit for hit in hits if worker_of(hit) == worker]
        assert min(gaps(own), default=delay) >= delay, (worker, gaps(own))
