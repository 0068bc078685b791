"""The pace while the shared store is away (docs/politeness.md, "Faults").

Three scrapy-redis workers (``pace_worker.py``) share one crawl-delay in a
Redis of its own, which the test kills mid-crawl and starts again (empty, as
after a crash); scrapy-redis's queue stays on another server. While the
store is away no worker knows when the others send: each paces an origin at
the delay times the workers the store last counted, so the site still sees
one request per delay on average. The outage is long enough (measured in
pages, not seconds) to average over; waiting polls the crawl's progress.
"""

from __future__ import annotations

import tempfile
from itertools import pairwise
from pathlib import Path

import redis
from crawler.servers import Hit, SiteServer
from local_redis import RedisServer
from pace_harness import Report, finish, start_workers
from redis_topologies import wait_until
from start_barrier import release_together
from test_pace import page_hits, queue_each, robots

DELAY = 0.25
WORKERS = 3
#: Pages each origin gets with the store away: enough that the first and last
#: of them span 21 turns of one delay or more (3 workers, 3 delays each, in
#: the worst phase), so the average gap cannot come under the delay from the
#: edges of the window, nor from a request reaching the site 0.3 s late.
DURING = 24


def during(hits: list[Hit], window: tuple[float, float]) -> list[float]:
    return [hit.at for hit in hits if window[0] <= hit.at <= window[1]]


def average_gap(times: list[float]) -> float:
    return (times[-1] - times[0]) / (len(times) - 1)


def crawl_with_the_store_away(
    queue_url: str, store: RedisServer, sites: list[SiteServer], cwd: Path
) -> tuple[tuple[float, float], list[Report]]:
    """Crawl; once each origin got 8 pages, then 8 more (2 s and more: every
    worker answered the roll call, each second), kill the store; once each
    origin got ``DURING`` pages more, start it again. The outage on the
    site's clock (``Hit.at``), and the workers' reports."""
    settings = {"PACE_OWN_QUEUES": True, "REP_REDIS_URL": store.url, "CONCURRENT_REQUESTS": 16}

    def each_got(more: int, than: list[int]) -> bool:
        return all(len(page_hits(s)) >= n + more for s, n in zip(sites, than, strict=True))

    with tempfile.TemporaryDirectory() as barrier:
        workers = start_workers(queue_url, WORKERS, cwd, barrier, settings)
        try:
            release_together(workers, barrier, 60)
            wait_until(lambda: each_got(8, [0, 0]), 60, "8 pages each")
            seen = [len(page_hits(site)) for site in sites]
            wait_until(lambda: each_got(8, seen), 60, "8 pages more, all workers counted")
            seen = [len(page_hits(site)) for site in sites]
            store.kill()
            killed = max(hit.at for site in sites for hit in page_hits(site))
            wait_until(lambda: each_got(DURING, seen), 60, f"{DURING} pages, the store away")
            back = max(hit.at for site in sites for hit in page_hits(site))
            store.start()  # the same port, empty
            return (killed, back), finish(workers, barrier)
        finally:
            for worker in workers:  # a failed wait must not leave workers crawling
                if worker.poll() is None:
                    worker.kill()
                    worker.wait(10)


def test_store_away_every_worker_paces_as_if_all_were_sending(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Before, each worker kept its own pace: three requests per delay, an
    average gap near a third of it (0.0 s apart at times)."""
    (tmp_path / "store").mkdir()
    store = RedisServer(tmp_path / "store")
    store.start()
    roster = redis.Redis.from_url(store.url)
    try:
        with (
            SiteServer({"/robots.txt": robots(DELAY)}) as first,
            SiteServer({"/robots.txt": robots(DELAY)}) as second,
        ):
            sites = [first, second]
            urls = [site.url(f"/page{n}") for n in range(60) for site in sites]
            queue_each(redis_server.url, urls, WORKERS)
            window, reports = crawl_with_the_store_away(redis_server.url, store, sites, tmp_path)
        workers = roster.zcard("scrapy_rep:workers")  # back in the store
    finally:
        store.kill()
    for site in sites:
        hits = sorted(page_hits(site), key=lambda hit: hit.at)
        assert sorted(hit.path for hit in hits) == sorted(f"/page{n}" for n in range(60))
        away = during(hits, window)
        assert len(away) >= DURING
        assert average_gap(away) >= DELAY, [round(b - a, 3) for a, b in pairwise(away)]
        print(f"\n{len(away)} pages, the store away, {average_gap(away):.3f} s apart on average")
    assert workers == WORKERS  # every worker answered the roll call again
    counted = [report["stats"].get("robotstxt/pace/workers") for report in reports]
    assert counted == [WORKERS] * WORKERS  # each counted all three
    assert all(report["stats"].get("robotstxt/pace/local", 0) > 0 for report in reports)
