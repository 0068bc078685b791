"""Checks over a real-world robots.txt corpus, kept out of the test suite.

The corpus (real sites' robots.txt files) is not part of the repository, so
these checks are not in ``tests/``; they run when one is at hand:

    .venv/bin/python -m pytest benchmarks/corpus --corpus PATH

PATH holds ``robots/*.txt``, ``nonrobots/*.txt``, ``synthetic/`` (with
``urls.json``) and ``urls.jsonl``, as the project's shared corpus does.
They reuse the helpers of the tests they were split from.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _folder in ("tests/tools/cli", "tests/engine", "tests"):
    if str(ROOT / _folder) not in sys.path:
        sys.path.insert(0, str(ROOT / _folder))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--corpus", type=Path, default=None, help="the corpus folder (robots/, nonrobots/, ...)"
    )


@pytest.fixture(scope="session")
def corpus(request: pytest.FixtureRequest) -> Path:
    """The folder given with ``--corpus``; without one the checks fail, never skip."""
    path: Path | None = request.config.getoption("corpus")
    if path is None or not (path / "robots").is_dir():
        pytest.fail(f"--corpus PATH is needed (a folder with robots/ and urls.jsonl), got {path}")
    return path.resolve()
