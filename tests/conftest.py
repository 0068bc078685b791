"""Shared test configuration: where ../shared is, and that it exists."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not (SHARED / "conformance" / "google").is_dir():
        pytest.fail(f"{SHARED} is missing: the conformance data must sit beside the clone")
    return SHARED
