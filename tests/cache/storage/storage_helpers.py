"""Helpers for the storage tests: a fake clock, a real redis-server, worker processes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from local_redis import RedisServer as RedisServer  # re-exported
from local_redis import free_port as free_port
from redis_topologies import LocalCluster
from start_barrier import BARRIER_ENV, release_together

from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
WORKER = HERE / "storage_worker.py"


def redis_url_of(kind: str, request: pytest.FixtureRequest) -> str | None:
    """The URL a parametrized test opens for ``kind``: ``redis`` a server of its
    own, ``redis-cluster`` the module's three-primary cluster (emptied first)."""
    if kind == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        return server.url
    if kind == "redis-cluster":
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        cluster.flush()
        return cluster.url
    return None


def store_kind(kind: str) -> str:
    """The ``REP_STORAGE`` of a parametrized kind: a cluster is a ``redis`` store."""
    return "redis" if kind == "redis-cluster" else kind


class FakeClock:
    """A clock the test moves by hand: no sleeps for time rules."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextlib.asynccontextmanager
async def another_process(
    path: Path, clock: Callable[[], float] = time.time
) -> AsyncIterator[SqliteStorage]:
    """A second store open on ``path`` meanwhile, as another process's would
    be: no store on the file is alone, so fetch locks are rows (``presence``)."""
    beside = await SqliteStorage.open(path, clock=clock)
    try:
        yield beside
    finally:
        await beside.close()


def run_workers(*commands: list[str], timeout: float = 60) -> list[str]:
    """Run ``storage_worker.py`` once per command, released together; their stdout."""
    with tempfile.TemporaryDirectory() as barrier:
        processes = [
            subprocess.Popen(
                [sys.executable, str(WORKER), *command],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=ROOT,
                env={
                    "PYTHONPATH": str(ROOT),
                    "PATH": "/usr/bin:/bin",
                    BARRIER_ENV: barrier,
                },
            )
            for command in commands
        ]
        release_together(processes, barrier, timeout)
        outputs = []
        for process in processes:
            out, err = process.communicate(timeout=timeout)
            assert process.returncode == 0, err.decode(errors="replace")
            outputs.append(out.decode().strip())
    return outputs
