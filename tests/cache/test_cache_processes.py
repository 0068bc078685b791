"""docs/spec.md §2.3, §3.4, §3.5 across real crawler processes: the default sqlite file
one run after another, and Redis shared by processes running at once."""

from __future__ import annotations

import time
from pathlib import Path

from crawler.servers import Reply, SiteServer

from .conftest import HOUR, RedisServer, run_crawlers

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"


def test_cache_3_1_second_process_within_ttl_makes_no_robots_request(tmp_path: Path) -> None:
    """Default settings (sqlite in the project data dir): a crawl that runs again
    within 24 h asks nothing; once the entry has expired it fetches again."""
    with SiteServer({"/robots.txt": Reply(200, DISALLOW_PRIVATE)}) as site:
        job = {"urls": [site.url("/public"), site.url("/private")]}
        first, second, third = (
            run_crawlers({**job, "clock_offset": offset}, cwd=tmp_path)[0]
            for offset in (0.0, 23 * HOUR, 24 * HOUR + 60)
        )
    assert site.paths() == ["/robots.txt", "/public", "/public", "/robots.txt", "/public"]
    assert (tmp_path / ".scrapy" / "robotstxt.sqlite3").is_file()  # Scrapy's data dir
    for report in (first, second, third):
        assert report["got"] == [site.url("/public")]
        assert report["dropped"][site.url("/private")].startswith("forbidden by rule /private")
        assert not report["failed"]
    assert first["stats"]["robotstxt/cache/miss"] == 2
    assert second["stats"]["robotstxt/cache/hit"] == 2
    assert "robotstxt/cache/miss" not in second["stats"]
    assert "robotstxt/request_count" not in second["stats"]
    assert third["stats"]["robotstxt/cache/expired"] == 2
    assert third["stats"]["robotstxt/request_count"] == 1


def slow_robots(host: str) -> Reply:
    time.sleep(0.3)  # every process meets the origin while its fetch is under way
    return Reply(200, DISALLOW_PRIVATE)


def test_storage_3_5_redis_processes_at_once_fetch_each_origin_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Three crawler processes sharing Redis start together on three new origins."""
    with (
        SiteServer({"/robots.txt": slow_robots}) as a,
        SiteServer({"/robots.txt": slow_robots}) as b,
        SiteServer({"/robots.txt": slow_robots}) as c,
    ):
        urls = [site.url(path) for site in (a, b, c) for path in ("/public", "/private")]
        job = {"urls": urls, "settings": {"REP_STORAGE": "redis", "REDIS_URL": redis_server.url}}
        reports = run_crawlers(job, job, job, cwd=tmp_path)
        counts = [site.count("/robots.txt") for site in (a, b, c)]
        private = [site.count("/private") for site in (a, b, c)]
    assert counts == [1, 1, 1]
    assert private == [0, 0, 0]
    for report in reports:
        assert sorted(report["got"]) == sorted(site.url("/public") for site in (a, b, c))
        assert set(report["dropped"]) == {site.url("/private") for site in (a, b, c)}
        assert not report["failed"]
    fetches = sum(report["stats"].get("robotstxt/request_count", 0) for report in reports)
    assert fetches == 3
