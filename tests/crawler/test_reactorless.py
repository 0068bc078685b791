"""The middleware in Scrapy's reactorless mode (asyncio only, aiohttp downloads).

A process that installed a Twisted reactor cannot go reactorless, so the crawl
runs in a fresh interpreter; the servers run here, so what reached them is
asserted here.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .servers import Huge, Reply, SiteServer, ftp_server, page

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("reactorless_crawl.py")


def run_reactorless(
    urls: list[str], cache: Path, settings: dict[str, object] | None = None, timeout: float = 60
) -> dict[str, object]:
    """The crawl's report; a crawl that hangs fails the test after ``timeout`` seconds."""
    env = {
        **os.environ,
        "REP_TEST_STORAGE_PATH": str(cache),
        "REP_TEST_SETTINGS": json.dumps(settings or {}),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *urls],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_scrapy_reactorless_mode_status_semantics_burst_and_size_cap(tmp_path: Path) -> None:
    """With the default sqlite store (in tmp_path): its worker thread works without Twisted."""

    def slow_robots(host: str) -> Reply:
        time.sleep(0.2)  # the burst arrives while the fetch is pending
        return Reply(200, b"User-agent: *\nDisallow: /private\n")

    huge = Huge(
        20_000_000,
        inserts=((0, b"User-agent: *\nDisallow: /early\n"), (600_000, b"\nDisallow: /late\n")),
    )
    with (
        SiteServer({"/robots.txt": slow_robots}) as rules,
        SiteServer({"/robots.txt": Reply(503)}) as closed,
        SiteServer({"/robots.txt": Reply(404, b"User-agent: *\nDisallow: /\n")}) as missing,
        SiteServer({"/robots.txt": huge}) as big,
    ):
        burst = [rules.url(f"/private/{i}") for i in range(25)]
        urls = [
            *burst,
            rules.url("/public"),
            closed.url("/page"),
            missing.url("/page"),
            big.url("/early"),
            big.url("/late"),
        ]
        report = run_reactorless(urls, tmp_path / "robotstxt.sqlite3")
        sent = big.huge_bytes_sent
    assert report["reactor_installed"] is False
    got = report["got"]
    assert isinstance(got, list)
    assert sorted(got) == sorted([rules.url("/public"), missing.url("/page"), big.url("/late")])
    dropped = report["dropped"]
    assert isinstance(dropped, dict)
    assert set(dropped) == {*burst, closed.url("/page"), big.url("/early")}
    assert dropped[closed.url("/page")].startswith("robots.txt unreachable (HTTP 503) since ")
    assert rules.paths() == ["/robots.txt", "/public"]  # none of the burst passed
    assert closed.paths() == ["/robots.txt"]
    assert sent < 10_000_000
    stats = report["stats"]
    assert isinstance(stats, dict)
    assert stats["robotstxt/origins"] == 4
    assert stats["robotstxt/forbidden"] == 26
    assert stats["robotstxt/unreachable"] == 1
    assert stats["robotstxt/cache/miss"] == len(urls)
    assert (tmp_path / "robotstxt.sqlite3").is_file()


def test_more_requests_wait_on_one_slow_robots_txt_than_concurrent_requests(tmp_path: Path) -> None:
    """40 pages of one origin wait on a robots.txt that answers in 1 s, with
    CONCURRENT_REQUESTS = 32: the waiting ones are parked, and the places they
    wait for are given out by a timer on asyncio's loop (no Twisted reactor)."""

    def slow_robots(host: str) -> Reply:
        time.sleep(1)
        return Reply(200, b"User-agent: *\nDisallow: /private\n")

    with SiteServer({"/robots.txt": slow_robots}) as site:
        urls = [site.url(f"/page{i}") for i in range(40)]
        report = run_reactorless(urls, tmp_path / "robotstxt.sqlite3", timeout=40)
        paths = site.paths()
    assert report["reactor_installed"] is False
    got = report["got"]
    assert isinstance(got, list)
    assert sorted(got) == sorted(urls)
    assert not report["failed"] and not report["dropped"]
    assert paths.count("/robots.txt") == 1


def test_crawl_delay_paces_its_origin_reactorless(tmp_path: Path) -> None:
    """REP_CRAWL_DELAY = "obey": turns wait on asyncio's loop, not the reactor's."""
    robots = Reply(200, b"User-agent: *\nCrawl-delay: 0.5\n")
    routes = {"/robots.txt": robots, **{f"/page{i}": page(f"/page{i}") for i in range(4)}}
    with SiteServer(routes) as site:
        urls = [site.url(f"/page{i}") for i in range(4)]
        report = run_reactorless(urls, tmp_path / "robotstxt.sqlite3", {"REP_CRAWL_DELAY": "obey"})
        hits = [hit for hit in site.hits if hit.path != "/robots.txt"]
    assert report["reactor_installed"] is False
    got = report["got"]
    assert isinstance(got, list) and sorted(got) == sorted(urls)
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(hits)]
    assert len(gaps) == 3
    # Stamped when the server read each request: a request late in transit
    # shortens the gap after it, never the span of them all but by its own lateness.
    assert all(gap >= 0.5 - 0.3 for gap in gaps), gaps
    assert hits[-1].at - hits[0].at >= 3 * 0.5 - 0.2, gaps
    stats = report["stats"]
    assert isinstance(stats, dict)
    assert stats["robotstxt/crawl_delay/applied"] == 1


def test_outage_first_failure_waits_for_a_quick_retry_reactorless(tmp_path: Path) -> None:
    """docs/spec.md §2.2: requests that meet an origin's first 503 wait for a
    quick retry, its back-off slept on asyncio's loop."""
    answers = [Reply(503), Reply(200, b"User-agent: *\nDisallow: /private\n")]

    def robots(host: str) -> Reply:
        return answers.pop(0) if len(answers) > 1 else answers[0]

    settings = {"REP_UNREACHABLE_WAIT": 10, "REP_RETRY_BUSY_INITIAL": 0.2, "REP_RETRY_JITTER": 0}
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url("/public"), site.url("/private")]
        report = run_reactorless(urls, tmp_path / "robotstxt.sqlite3", settings)
        paths = site.paths()
    assert report["reactor_installed"] is False
    assert paths == ["/robots.txt", "/robots.txt", "/public"]
    assert report["got"] == [site.url("/public")]
    dropped = report["dropped"]
    assert isinstance(dropped, dict) and list(dropped) == [site.url("/private")]


def test_ftp_robots_txt_is_unreachable_reactorless_never_allow_all(tmp_path: Path) -> None:
    """No FTP without a reactor (Scrapy has no FTP handler then): the origin's
    robots.txt is unreachable, so its page is dropped as closed, and the
    FTP server is never asked (docs/decisions.md, "Reactorless mode")."""
    root = tmp_path / "ftp"
    root.mkdir()
    (root / "robots.txt").write_bytes(b"User-agent: *\nAllow: /\n")
    (root / "file.txt").write_bytes(b"hello")
    with ftp_server(root) as (port, retrieved):
        url = f"ftp://127.0.0.1:{port}/file.txt"
        report = run_reactorless([url], tmp_path / "robotstxt.sqlite3")
    assert report["reactor_installed"] is False
    assert retrieved == []
    assert report["got"] == []
    dropped = report["dropped"]
    assert isinstance(dropped, dict) and list(dropped) == [url]
    assert dropped[url].startswith("robots.txt unreachable (FtpWithoutReactor: ftp:// cannot be")
    stats = report["stats"]
    assert isinstance(stats, dict)
    assert stats["robotstxt/unreachable"] == 1


def test_header_scrapy_cannot_decode_leaves_robots_txt_unreachable(tmp_path: Path) -> None:
    """Scrapy's reactorless (aiohttp) handler fails on a header byte that is not
    UTF-8 (``Cache-Control: max-age=`` + 0xB2): robots.txt is then unreachable,
    and the origin closed (RFC 9309 §2.3.1.4), never allow-all. (Should Scrapy
    read it one day, the file's ``Disallow: /`` drops the page all the same.)"""
    robots = Reply(200, b"User-agent: *\nDisallow: /\n", {"Cache-Control": "max-age=\xb2"})
    with SiteServer({"/robots.txt": robots}) as site:
        url = site.url("/page")
        report = run_reactorless([url], tmp_path / "robotstxt.sqlite3")
        paths = site.paths()
    assert report["reactor_installed"] is False
    assert paths == ["/robots.txt"]
    dropped = report["dropped"]
    assert isinstance(dropped, dict) and list(dropped) == [url]
    reason = dropped[url]
    if reason.startswith("robots.txt unreachable ("):
        assert "UnicodeEncodeError" in reason
        assert "(the first 12 h of an outage)" in reason
    else:
        assert reason.startswith("forbidden by rule /")
