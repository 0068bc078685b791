"""Run N pace workers (``pace_worker.py``) on one Redis, released together;
shared by tests/distributed/test_pace.py and benchmarks/pace.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
WORKER = HERE / "pace_worker.py"

sys.path.insert(0, str(TESTS))
from start_barrier import BARRIER_ENV, release_together  # noqa: E402

Report = dict[str, Any]


def start_workers(
    redis_url: str,
    count: int,
    cwd: Path,
    barrier: str,
    extra: dict[str, Any] | None = None,
    code: Path | None = None,
) -> list[subprocess.Popen[bytes]]:
    """``code``: the checkout whose scrapy_rep the workers import (default: this one)."""
    root = code or TESTS.parent
    env = {"PYTHONPATH": str(root), "PATH": os.environ.get("PATH", ""), BARRIER_ENV: barrier}
    settings = json.dumps(extra or {})
    # The log goes to a file: a full pipe would block a chatty worker.
    workers = []
    for n in range(count):
        with open(Path(barrier) / f"w{n}.log", "wb") as log:
            workers.append(
                subprocess.Popen(
                    [sys.executable, str(WORKER), redis_url, f"w{n}", settings],
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=cwd,
                    env=env,
                )
            )
    return workers


def finish(
    workers: Sequence[subprocess.Popen[bytes]], barrier: str, timeout: float = 180
) -> list[Report]:
    reports = []
    for n, worker in enumerate(workers):
        out, _ = worker.communicate(timeout=timeout)
        log = (Path(barrier) / f"w{n}.log").read_text(errors="replace")
        assert worker.returncode == 0, log[-3000:]
        report = json.loads(out.decode().strip().splitlines()[-1])
        report["log"] = log
        reports.append(report)
    return reports


def run_workers(
    redis_url: str,
    count: int,
    cwd: Path,
    extra: dict[str, Any] | None = None,
    during: Callable[[], None] | None = None,
    code: Path | None = None,
) -> list[Report]:
    """Start ``count`` workers together, run ``during()`` while they crawl, wait for them."""
    with tempfile.TemporaryDirectory() as barrier:
        workers = start_workers(redis_url, count, cwd, barrier, extra, code)
        release_together(workers, barrier, 60)
        if during is not None:
            during()
        return finish(workers, barrier)
