"""Start several worker processes at the same moment (a file-system barrier).

The test side runs ``release_together``; each worker calls
``wait_for_the_others`` first. Workers find this module through tests/ on
their path (``sys.path`` in the worker scripts).
"""

from __future__ import annotations

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
