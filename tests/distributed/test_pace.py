"""Issue 26: one pace per origin for every scrapy-redis worker sharing a Redis.

Three worker processes (``pace_worker.py``) share scrapy-redis's queue and
scrapy_rep's cache and pace in a real redis-server; the site is a local
server that stamps each request when it arrives (its own clock). Nothing here
sleeps for a time rule: the test waits for the crawl and reads the stamps.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import redis
from crawler.servers import Hit, Reply, SiteServer
from local_redis import RedisServer
from pace_harness import run_workers
from pace_worker import REDIS_KEY

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


def got(reports: list[dict[str, Any]]) -> list[str]:
    return sorted(url for report in reports for url in report["got"])


def test_three_workers_keep_one_crawl_delay(redis_server: RedisServer, tmp_path: Path) -> None:
    delay = 0.5
    with SiteServer({"/robots.txt": robots(delay)}) as site:
        urls = pages(site, 12)
        queue(redis_server.url, urls)
        reports = run_workers(redis_server.url, 3, tmp_path)
        hits = page_hits(site)
    assert got(reports) == sorted(urls)  # every page, once across the workers
    assert sorted(hit.path for hit in hits) == sorted(f"/page{n}" for n in range(12))
    assert min(gaps(hits)) >= delay, gaps(hits)
    assert len({worker_of(hit) for hit in hits}) >= 2  # the work was shared
    waited = sum(report["stats"].get("robotstxt/pace/waited", 0) for report in reports)
    assert waited >= 6  # the waiting shows in stats
