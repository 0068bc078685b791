"""Fixtures for the console script: run it as a subprocess, serve robots.txt locally."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_server import Site, start, stop

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def site() -> Iterator[Site]:
    """A fresh local server for one test."""
    site, thread = start()
    yield site
    stop(site, thread)


@pytest.fixture
def other_site() -> Iterator[Site]:
    """A second origin (another port), for cross-origin redirects."""
    site, thread = start()
    yield site
    stop(site, thread)


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """urllib honours *_proxy variables; the local servers must be reached directly."""
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli() -> Run:
    """``python -m scrapy_rep.tools.cli ARGS`` in a subprocess, as a user runs it."""

    def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "scrapy_rep.tools.cli", *args],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=ROOT,
            timeout=60,
            check=False,
        )
        return subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )

    return run
