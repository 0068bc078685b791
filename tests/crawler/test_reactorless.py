"""The middleware in Scrapy's reactorless mode (asyncio only, aiohttp downloads).

A process that installed a Twisted reactor cannot go reactorless, so the crawl
runs in a fresh interpreter; the servers run here, so what reached them is
asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .servers import Huge, Reply, SiteServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("reactorless_crawl.py")


def run_reactorless(urls: list[str], cache: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "REP_TEST_STORAGE_PATH": str(cache),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *urls],
        capture_output=True,
        text=True,
        timeout=60,
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
