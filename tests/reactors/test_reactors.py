"""Issue 17: the persistent stores under every Twisted reactor Scrapy supports.

Each crawl runs in a crawler process of its own (tests/cache/crawl_worker.py)
under the reactor named here, with the default settings: the sqlite store in
the project's ``.scrapy/`` (the process's working directory), or Redis. Under
a reactor other than asyncio the store runs on a private asyncio loop in a
thread (scrapy_rep/crawler/access/loop_thread.py); what reaches the servers is
asserted here.
"""

from __future__ import annotations

import select
import time
from pathlib import Path
from typing import Any

import pytest
from cache.conftest import HOUR, RedisServer, run_crawlers
from crawler.servers import Reply, SiteServer
from reactor_choice import REACTOR_ENV

ROBOTS = b"User-agent: *\nDisallow: /private\n"
#: The reactors this platform offers, by REP_TEST_REACTOR name -> reactor class.
AVAILABLE = {
    "asyncio": "AsyncioSelectorReactor",
    **({"epoll": "EPollReactor"} if hasattr(select, "epoll") else {}),
    **({"poll": "PollReactor"} if hasattr(select, "poll") else {}),
    "select": "SelectReactor",
}
#: The reactor of the tests that need one other than asyncio.
OTHER = "epoll" if "epoll" in AVAILABLE else "select"


def under(monkeypatch: pytest.MonkeyPatch, reactor: str) -> None:
    """Run the crawler processes the test starts under ``reactor``."""
    monkeypatch.setenv(REACTOR_ENV, reactor)


class Switch:
    """A robots.txt route the test changes between crawls."""

    def __init__(self, reply: Reply, delay: float = 0.0) -> None:
        self.reply = reply
        self.delay = delay

    def __call__(self, host: str) -> Reply:
        time.sleep(self.delay)  # a slow server, not a time rule
        return self.reply


@pytest.mark.parametrize("reactor", list(AVAILABLE))
def test_scrapy_default_sqlite_store_persists_across_runs_under_every_reactor(
    reactor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default store (sqlite in .scrapy/): fetched once, cached for the next run."""
    under(monkeypatch, reactor)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        job = {"urls": [site.url("/public"), site.url("/private")]}
        first = run_crawlers(job, cwd=tmp_path)[0]
        second = run_crawlers({**job, "clock_offset": HOUR}, cwd=tmp_path)[0]
    assert site.paths() == ["/robots.txt", "/public", "/public"]
    assert (tmp_path / ".scrapy" / "robotstxt.sqlite3").is_file()
    for report in (first, second):
        assert report["reactor"] == AVAILABLE[reactor]
        assert report["finish_reason"] == "finished"
        assert report["got"] == [site.url("/public")]
        assert report["dropped"][site.url("/private")].startswith("forbidden by rule /private")
        assert not report["failed"]
    assert first["stats"]["robotstxt/cache/miss"] == 2
    assert second["stats"]["robotstxt/cache/hit"] == 2
    assert "robotstxt/request_count" not in second["stats"]


@pytest.mark.parametrize("storage", ["sqlite", "redis"])
def test_storage_3_5_processes_at_once_fetch_once_under_a_non_asyncio_reactor(
    storage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer
) -> None:
    """Three processes meet two new origins together: one robots.txt fetch each."""
    under(monkeypatch, OTHER)
    settings: dict[str, Any] = {}
    if storage == "redis":
        settings = {"REP_STORAGE": "redis", "REP_REDIS_URL": redis_server.url}
    slow = Switch(Reply(200, ROBOTS), delay=0.3)  # each process meets the fetch under way
    with SiteServer({"/robots.txt": slow}) as a, SiteServer({"/robots.txt": slow}) as b:
        urls = [site.url(path) for site in (a, b) for path in ("/public", "/private")]
        job = {"urls": urls, "settings": settings}
        reports = run_crawlers(job, job, job, cwd=tmp_path)
        counts = [site.count("/robots.txt") for site in (a, b)]
        private = [site.count("/private") for site in (a, b)]
    assert counts == [1, 1]
    assert private == [0, 0]
    for report in reports:
        assert report["reactor"] == AVAILABLE[OTHER]
        assert sorted(report["got"]) == sorted([a.url("/public"), b.url("/public")])
        assert not report["failed"]


def test_status_5xx_restart_into_a_streak_retries_once_under_a_non_asyncio_reactor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restart 11 h into an outage drops at once and retries robots.txt once in
    the background: two requests of the origin never start two retries."""
    under(monkeypatch, OTHER)
    robots = Switch(Reply(200, ROBOTS))
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url("/public"), site.url("/private")]
        job = {"urls": urls, "settings": {"REP_UNREACHABLE_WAIT": 0}}  # no quick retries
        run_crawlers(job, cwd=tmp_path)
        robots.reply = Reply(503)
        run_crawlers({**job, "clock_offset": 25 * HOUR}, cwd=tmp_path)  # expired -> 503
        restarted = run_crawlers({**job, "clock_offset": 36 * HOUR}, cwd=tmp_path)[0]
        paths = site.paths()
    assert paths == ["/robots.txt", "/public", "/robots.txt", "/robots.txt"]
    assert restarted["got"] == []
    assert all("503" in reason for reason in restarted["dropped"].values())
    assert restarted["stats"]["robotstxt/cache/hit"] == 2
    assert restarted["stats"]["robotstxt/request_count"] == 1


def test_scrapy_store_that_cannot_open_closes_the_crawl_under_a_non_asyncio_reactor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failures close: a sqlite path that cannot be created stops the crawl unchecked."""
    under(monkeypatch, OTHER)
    (tmp_path / "a-file").write_bytes(b"")
    settings = {"REP_STORAGE_PATH": str(tmp_path / "a-file" / "robotstxt.sqlite3")}
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        report = run_crawlers({"urls": [site.url("/public")], "settings": settings}, cwd=tmp_path)[
            0
        ]
        paths = site.paths()
    assert paths == []
    assert report["finish_reason"] == "robotstxt_storage_unavailable"
    assert "cannot open" in report["log"] and "REP_STORAGE_PATH" in report["log"]
