"""Fixtures for the storage tests: a fake clock (redis_server: tests/conftest.py)."""

from __future__ import annotations

import pytest
from storage_helpers import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
