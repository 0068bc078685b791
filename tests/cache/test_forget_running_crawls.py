"""``scrapy-rep cache forget`` reaches crawls that are already running (issue 27 §6).

Two crawler processes share a store and hold an origin's robots.txt in
memory; the site changes its file; the CLI forgets the origin in another
process. Each running crawl hears of it at its next read of the store's
forget log (``REP_FORGET_POLL_INTERVAL``), and their next requests for the
origin cause exactly one new robots.txt fetch between them, and obey it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawler.servers import Reply, SiteServer
from local_redis import RedisServer

from .running_crawls import Gate, cache_forget, report, start_running, wait_until

OLD = b"User-agent: *\nDisallow: /private\n"
NEW = b"User-agent: *\nDisallow: /public\n"


class Switch:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __call__(self, host: str) -> Reply:
        return Reply(200, self.body, {"Content-Type": "text/plain"})


def _forget_reaches_two_running_crawls(
    tmp_path: Path, settings: dict[str, Any], store: list[str]
) -> None:
    robots, gate = Switch(OLD), Gate()
    with SiteServer({"/robots.txt": robots, "/control": gate}) as site:
        jobs = [
            {
                "first": [site.url(f"/public/{name}1"), site.url(f"/private/{name}1")],
                "then": [site.url(f"/public/{name}2"), site.url(f"/private/{name}2")],
                "control": site.url("/control"),
                "settings": {"REP_FORGET_POLL_INTERVAL": 0.05, **settings},
            }
            for name in ("a", "b")
        ]
        processes = [start_running(job, tmp_path) for job in jobs]
        try:
            wait_until(lambda: site.count("/control") == 2, processes)
            assert site.count("/robots.txt") == 1  # one fetch for both crawls
            robots.body = NEW  # the site changes its file
            done = cache_forget(site.url("/"), *store)
            assert done.returncode == 0, done.stderr
            gate.open()
            reports = [report(process) for process in processes]
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
                    process.communicate()
        assert site.count("/robots.txt") == 2  # fetched again, once across both crawls
    for name, found in zip("ab", reports):
        first, then = found["rounds"]
        url = site.url
        assert first == {"got": [url(f"/public/{name}1")], "dropped": [url(f"/private/{name}1")]}
        assert found["heard"], found["log"][-3000:]  # within the poll interval
        assert then == {"got": [url(f"/private/{name}2")], "dropped": [url(f"/public/{name}2")]}
        assert found["stats"]["robotstxt/cache/forgotten"] == 1
        assert found["finish_reason"] == "finished"


def test_a_forget_reaches_two_running_crawls_sharing_a_sqlite_store(tmp_path: Path) -> None:
    path = str(tmp_path / "robotstxt.sqlite3")
    _forget_reaches_two_running_crawls(
        tmp_path, {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": path}, [path]
    )


def test_a_forget_reaches_two_running_crawls_sharing_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    settings = {
        "REP_STORAGE": "redis",
        "REP_REDIS_URL": redis_server.url,
        "REP_REDIS_PREFIX": "crawl:",
    }
    _forget_reaches_two_running_crawls(
        tmp_path, settings, [redis_server.url, "--redis-prefix", "crawl:"]
    )
