"""Fixtures for the end-to-end cache tests: a movable clock, a real redis-server,
crawls in this process and in separate crawler processes.

The servers and the recording spider come from tests/crawler.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from local_redis import RedisServer as RedisServer  # re-exported
from local_redis import free_port as free_port
from reactor_choice import REACTOR_ENV, chosen_reactor
from start_barrier import BARRIER_ENV, release_together

from scrapy_rep.crawler.async_bridge import sleep as reactor_sleep

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKER = HERE / "crawl_worker.py"
HOUR = 3600.0


class FakeClock:
    """Real time shifted by an offset the test moves: time rules without sleeps.

    It keeps ticking (so records fetched one after the other are ordered), and
    ``advance`` jumps hours or days at once.
    """

    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    def __deepcopy__(self, memo: dict[int, Any]) -> FakeClock:
        return self  # Scrapy deep-copies settings: every crawler must share this clock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class VirtualClock:
    """A clock that stands still but for the waits asked of it (REP_CLOCK with
    ``sleep`` and ``monotonic``): a first failure's quick retries and the
    wait they are bounded by run on it, not on real time, so a test of them
    gives the same answer on a busy machine (docs/spec.md §2.2)."""

    def __init__(self) -> None:
        self.now = time.time()
        self.slept: list[float] = []  # each wait, in order

    def __call__(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await reactor_sleep(0)  # the loop turns, as in a real wait

    def __deepcopy__(self, memo: dict[int, Any]) -> VirtualClock:
        return self  # Scrapy deep-copies settings: the crawl must use this one


def run_crawlers(*jobs: dict[str, Any], cwd: Path, timeout: float = 90) -> list[dict[str, Any]]:
    """Run one crawler process per job (``crawl_worker.py``), released together.

    A job is ``{"urls": [...], "settings": {...}, "clock_offset": seconds}``;
    each process prints a JSON report (see crawl_worker.py).
    """
    with tempfile.TemporaryDirectory() as barrier:
        env = {
            "PYTHONPATH": str(ROOT),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            BARRIER_ENV: barrier,
            REACTOR_ENV: chosen_reactor(),
        }
        processes = [
            subprocess.Popen(
                [sys.executable, str(WORKER), json.dumps(job)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=env,
            )
            for job in jobs
        ]
        release_together(processes, barrier, timeout)
        reports = []
        for process in processes:
            out, err = process.communicate(timeout=timeout)
            assert process.returncode == 0, err.decode(errors="replace")[-3000:]
            report: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
            report["log"] = err.decode(errors="replace")
            reports.append(report)
    return reports
