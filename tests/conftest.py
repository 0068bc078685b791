"""Shared test configuration: where ../shared is, and that it exists."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from local_redis import RedisServer

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "conformance" / "google").is_dir():
        pytest.fail(f"{SHARED} is missing: the conformance data must sit beside the clone")
    return SHARED


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of its own for one test, killed after it."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()
