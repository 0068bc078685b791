"""Issue 13 §4, docs/spec.md §3.5 across real crawler processes: a fetcher that dies
holding an origin's fetch lock never blocks the next run.

The first crawler's robots.txt request hangs on the test server, so it holds
the lock when it is killed with SIGKILL (no spider_closed, no release). The
old lock lived DOWNLOAD_TIMEOUT x (hops + 1) + 30 s (18.5 minutes by
default); now the next run, on the same store, sends its pages within seconds.
A crawler alone with the sqlite file holds its lock in memory, so it leaves
none behind; one that shares the file leaves a row, which the next run takes
over at once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from crawler.servers import Behaviour, Hang, Reply, SiteServer
from reactor_choice import REACTOR_ENV, chosen_reactor
from redis import Redis

from scrapy_rep.cache.storage.sqlite.presence import Presence

from .conftest import ROOT, WORKER, RedisServer

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"
#: Seconds from the next run's start to its first page: a crawler process
#: starts in one or two; the old lock kept it waiting 1110.
FEW_SECONDS = 10.0


class FirstRobotsHangs:
    """The first robots.txt request never gets an answer; later ones do at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.asked = 0

    def __call__(self, host: str) -> Behaviour:
        with self._lock:
            self.asked += 1
            first = self.asked == 1
        return Hang() if first else Reply(200, DISALLOW_PRIVATE)


def start_crawler(
    job: dict[str, Any], cwd: Path, log: Path | None = None
) -> subprocess.Popen[bytes]:
    """A crawler process; its log goes to ``log`` (to read while it runs) if given."""
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        REACTOR_ENV: chosen_reactor(),
    }
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if log is None else log.open("wb"),
        cwd=cwd,
        env=env,
    )


def finish(
    process: subprocess.Popen[bytes], timeout: float = 90, log: Path | None = None
) -> dict[str, Any]:
    """The worker's report; one still running after ``timeout`` is killed (a failure)."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        err = err if log is None else log.read_bytes()
        pytest.fail(f"the crawl was still running after {timeout:.0f} s:\n{err.decode()[-3000:]}")
    err = err if log is None else log.read_bytes()
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]
    report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    report["log"] = err.decode(errors="replace")
    return report


def kill_mid_fetch(
    site: SiteServer, job: dict[str, Any], cwd: Path, meanwhile: Callable[[], object]
) -> None:
    """Start a crawler, wait until its robots.txt request hangs, call
    ``meanwhile``, then SIGKILL it."""
    first = start_crawler(job, cwd)
    try:
        deadline = time.monotonic() + 60
        while site.count("/robots.txt") == 0:
            assert first.poll() is None, first.communicate()[1].decode(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "the first crawler never asked for robots.txt"
            time.sleep(0.01)  # waiting for a process to start, not a time rule
        meanwhile()
    finally:
        first.kill()
        first.communicate()  # reaped, as a shell or a supervisor would
    assert first.returncode == -9


def next_run(site: SiteServer, job: dict[str, Any], cwd: Path) -> tuple[dict[str, Any], float]:
    """Run the next crawler to its end: its report, and seconds from its start to its page."""
    started = time.monotonic()
    report = finish(start_crawler(job, cwd))
    public = [hit for hit in site.hits if hit.path == "/public"]
    assert len(public) == 1 and report["got"] == [site.url("/public")]
    assert set(report["dropped"]) == {site.url("/private")}  # the rules, fetched anew
    assert site.count("/private") == 0
    return report, public[0].at - started


def killed_then_next(
    settings: dict[str, Any], cwd: Path, meanwhile: Callable[[], object] = lambda: None
) -> list[str]:
    """The next run's log lines about fetch locks."""
    with SiteServer({"/robots.txt": FirstRobotsHangs()}) as site:
        job = {
            "urls": [site.url("/public"), site.url("/private")],
            # The default timeout: the old lock lived 180 s x (5 hops + 1) + 30 s.
            "settings": {**settings, "DOWNLOAD_TIMEOUT": 180},
        }
        kill_mid_fetch(site, job, cwd, meanwhile)
        report, delay = next_run(site, job, cwd)
        assert site.count("/robots.txt") == 2  # the killed fetch, then the next run's own
    print(f"next run's first page {delay:.2f} s after its start")
    assert delay < FEW_SECONDS, report["log"][-3000:]
    assert report["stats"]["robotstxt/request_count"] == 1
    return [line for line in report["log"].splitlines() if "fetch lock of" in line]


def assert_taken_over(said: list[str]) -> None:
    assert len(said) == 1 and "http://127.0.0.1:" in said[0] and "taken over" in said[0]


def test_storage_3_5_sqlite_fetcher_killed_mid_fetch_next_run_within_seconds(
    tmp_path: Path,
) -> None:
    """The default store, the sqlite file in the project's data dir, which
    another process opens while the fetch hangs: the crawler, alone until
    then, writes its lock as a row before it lets the newcomer in."""
    path = tmp_path / ".scrapy" / "robotstxt.sqlite3"
    newcomer: list[Presence] = []

    def another_process_opens() -> None:
        newcomer.append(Presence.enter(path))
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM locks").fetchone()[0] == 1

    try:
        assert_taken_over(killed_then_next({}, tmp_path, another_process_opens))
    finally:
        for presence in newcomer:
            presence.close()


def test_storage_3_5_sqlite_fetcher_alone_killed_mid_fetch_leaves_no_lock(
    tmp_path: Path,
) -> None:
    """Alone with the file, the crawler held its lock in memory: nothing to take over."""
    assert killed_then_next({}, tmp_path) == []
    with sqlite3.connect(tmp_path / ".scrapy" / "robotstxt.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM locks").fetchone()[0] == 0


def test_storage_3_5_redis_fetcher_killed_mid_fetch_next_run_within_seconds(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    said = killed_then_next({"REP_STORAGE": "redis", "REDIS_URL": redis_server.url}, tmp_path)
    assert_taken_over(said)


def test_storage_3_5_redis_lock_of_another_machine_lapses_and_the_wait_is_said_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A crawler on another machine died holding the lock: nothing here can tell,
    so its lease decides; the next run says once that it waits, then crawls.

    The lease ends on cue, once the next run has said that it waits (Redis
    expires the key, as at the lease's end): a lease of a fixed 2 s lapsed
    before a crawler slow to start (a busy machine) ever saw it."""
    with SiteServer({"/robots.txt": Reply(200, DISALLOW_PRIVATE)}) as site:
        origin = f"http://127.0.0.1:{site.port}"
        key = f"scrapy_rep:lock:{origin}"
        token = f"elsewhere|pid:[1]|4242|{uuid.uuid4().hex}"
        job = {
            "urls": [site.url("/public"), site.url("/private")],
            "settings": {"REP_STORAGE": "redis", "REDIS_URL": redis_server.url},
        }
        log = tmp_path / "next-run.log"
        with Redis.from_url(redis_server.url) as raw:  # its last lease, longer than any start
            raw.set(key, token, px=600_000)
            crawler = start_crawler(job, tmp_path, log)
            deadline = time.monotonic() + 60
            while b"Another process" not in log.read_bytes():
                assert crawler.poll() is None, log.read_bytes().decode(errors="replace")[-3000:]
                assert time.monotonic() < deadline, "the next run never said that it waits"
                time.sleep(0.01)  # waiting for a process to start, not a time rule
            assert site.count("/robots.txt") == 0  # it waits while the lease lasts
            lapsed_at = time.monotonic()
            assert raw.pexpire(key, 1)  # the lease ends
        report = finish(crawler, log=log)
        robots = [hit.at for hit in site.hits if hit.path == "/robots.txt"]
        public = [hit.at for hit in site.hits if hit.path == "/public"]
        assert site.count("/private") == 0
    assert len(robots) == 1 and robots[0] >= lapsed_at  # not before the lease ended
    assert report["got"] == [site.url("/public")] and len(public) == 1
    assert set(report["dropped"]) == {site.url("/private")}  # the rules, fetched anew
    assert public[0] - lapsed_at < FEW_SECONDS
    waiting = [line for line in report["log"].splitlines() if "Another process" in line]
    assert len(waiting) == 1 and origin in waiting[0] and "INFO" in waiting[0]
