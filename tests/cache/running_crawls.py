"""Crawler processes that are running when the test changes the store under them.

``Gate`` is a route the test holds open: each process's spider requests it
after its first round, and the test opens it once it has done what the
round after should see (``running_crawl_worker.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from crawler.servers import Reply
from reactor_choice import REACTOR_ENV, chosen_reactor

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKER = HERE / "running_crawl_worker.py"
SCRAPY_REP = Path(sys.executable).with_name("scrapy-rep")


class Gate:
    """A route that answers when ``open()`` is called (at most ``limit`` seconds on)."""

    def __init__(self, limit: float = 120) -> None:
        self._open = threading.Event()
        self._limit = limit

    def __call__(self, host: str) -> Reply:
        self._open.wait(self._limit)
        return Reply(200, b"go", {"Content-Type": "text/plain"})

    def open(self) -> None:
        self._open.set()


def start_running(job: dict[str, Any], cwd: Path) -> subprocess.Popen[bytes]:
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        REACTOR_ENV: chosen_reactor(),
    }
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )


def wait_until(done: Any, processes: list[subprocess.Popen[bytes]], timeout: float = 60) -> None:
    """Until ``done()`` (the crawls' progress, seen on the site); fails if a process ends."""
    deadline = time.monotonic() + timeout
    while not done():
        for process in processes:
            if process.poll() is not None:
                _, err = process.communicate()
                raise AssertionError(err.decode(errors="replace")[-3000:])
        assert time.monotonic() < deadline, "the crawls did not get there"
        time.sleep(0.02)  # watching the processes' progress, not a time rule


def report(process: subprocess.Popen[bytes], timeout: float = 60) -> dict[str, Any]:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]
    found: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    found["log"] = err.decode(errors="replace")
    return found


def cache_forget(url: str, *store: str) -> subprocess.CompletedProcess[str]:
    """``scrapy-rep cache forget URL --store ...`` in a process of its own."""
    return subprocess.run(
        [str(SCRAPY_REP), "cache", "forget", url, "--store", *store],
        capture_output=True,
        text=True,
        timeout=60,
    )
