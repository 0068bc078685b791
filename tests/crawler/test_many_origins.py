"""Issue 13 §3: many origins never cause a wrong drop.

With a tiny in-process LRU, a flight's waiters used to look their origin up
again after waking; a new origin had evicted it meanwhile, and they were
dropped as "robots.txt not resolved" (258 of 3,000 requests with
REP_MEMORY_MAX_ORIGINS=1). A waiter now gets its own flight's result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from many_hosts import ManyHosts
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt

from .conftest import crawl, spider_of, stats

ORIGINS = 1_500
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def route(host: str, path: str) -> tuple[int, bytes]:
    return (200, ROBOTS) if path == "/robots.txt" else (200, b"page")


@deferred_f_from_coro_f
async def test_spec_8_3_tiny_lru_thousands_of_origins_no_wrong_drop(tmp_path: Path) -> None:
    with ManyHosts(ORIGINS, route, delay=0.02) as server:
        urls = [server.url(i, path) for i in range(ORIGINS) for path in ("/page", "/private/x")]
        settings: dict[str, Any] = {
            # One origin in the process; every record kept in the store.
            "REP_MEMORY_MAX_ORIGINS": 1,
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "robots.sqlite3"),
            "CONCURRENT_REQUESTS": 100,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 2,
            "LOG_LEVEL": "INFO",
        }
        crawler = await crawl(urls, settings)
        robots_requests = server.count("/robots.txt")
    spider = spider_of(crawler)
    wrong = {url: e.reason for url, e in spider.dropped.items() if url.endswith("/page")}
    assert wrong == {}, f"{len(wrong)} allowed pages dropped, e.g. {next(iter(wrong.values()))}"
    assert len(spider.got) == ORIGINS  # every allowed page fetched
    assert len(spider.dropped) == ORIGINS  # every /private/x dropped, by the rule
    assert all(isinstance(e, ForbiddenByRobotsTxt) for e in spider.dropped.values())
    assert spider.failed == {}
    assert "robotstxt/unreachable" not in stats(crawler)
    # The LRU holds one origin, so an origin may be loaded again from the
    # store, never fetched again: one robots.txt request per origin.
    assert robots_requests == ORIGINS


@deferred_f_from_coro_f
async def test_scrapy_concurrent_requests_hold_when_many_origins_answer_at_once() -> None:
    """Requests that waited for their origin's robots.txt (out of CONCURRENT_REQUESTS,
    issue 14 §2) take a place again before they download: when a wave of origins
    answers at once, the server never sees more than CONCURRENT_REQUESTS."""
    origins = 200
    with ManyHosts(origins, route, delay=0.05) as server:
        urls = [server.url(i, f"/page{n}") for n in range(3) for i in range(origins)]
        settings = {"CONCURRENT_REQUESTS": 16, "CONCURRENT_REQUESTS_PER_DOMAIN": 16}
        crawler = await crawl(urls, {**settings, "LOG_LEVEL": "INFO"})
        peak = server.peak
        robots_requests = server.count("/robots.txt")
    assert len(spider_of(crawler).got) == 3 * origins
    assert robots_requests == origins
    assert peak <= 16, f"{peak} requests at once"
