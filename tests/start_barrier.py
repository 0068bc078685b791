"""Start several worker processes at the same moment (a file-system barrier).

The test side runs ``release_together``; each worker calls
``wait_for_the_others`` first. Workers find this module through tests/ on
their path (``sys.path`` in the worker scripts).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

#: The environment variable naming the barrier folder.
BARRIER_ENV = "TEST_WORKER_BARRIER"


def wait_for_the_others() -> None:
    """Worker side: say ready, then wait for the test's go."""
    barrier = os.environ.get(BARRIER_ENV)
    if not barrier:
        return
    (Path(barrier) / f"ready-{os.getpid()}").touch()
    while not (Path(barrier) / "go").exists():
        time.sleep(0.005)  # a start barrier, not a time rule


async def wait_until_all(stage: str, timeout: float) -> bool:
    """Worker side, mid-crawl: say this worker reached ``stage``, then wait, without
    blocking the event loop, until every worker of the start barrier has (False: timed out)."""
    barrier = os.environ.get(BARRIER_ENV)
    if not barrier:
        return True
    folder = Path(barrier)
    (folder / f"{stage}-{os.getpid()}").touch()
    workers = len(list(folder.glob("ready-*")))
    deadline = time.monotonic() + timeout
    while len(list(folder.glob(f"{stage}-*"))) < workers:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)  # polling a rendezvous, not a time rule
    return True


def release_together(
    processes: Sequence[subprocess.Popen[bytes]], barrier: str, timeout: float
) -> None:
    """Test side: once every worker is ready (or one died), let them all go."""
    deadline = time.monotonic() + timeout
    while len(list(Path(barrier).glob("ready-*"))) < len(processes):
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            break
        time.sleep(0.01)  # waiting for processes to start, not a time rule
    (Path(barrier) / "go").touch()
