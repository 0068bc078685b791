"""Run ``scrapy robots`` as a user does: a ``scrapy`` subprocess inside the example project.

Scrapy finds the command through the ``scrapy.commands`` entry point, which
exists once the project is pip-installed (as in CI). In a development tree
that is not installed, the fixture writes a minimal ``*.dist-info`` with the
entry point that pyproject.toml declares into a temporary directory on
PYTHONPATH, so the very same discovery path is exercised.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROJECT = ROOT / "example_project"
ENTRY_POINT = "robots = scrapy_rep.tools.cli.scrapy_robots:RobotsCommand"

Run = Callable[..., subprocess.CompletedProcess[str]]


def declared_entry_points() -> list[str]:
    """The lines of pyproject.toml's ``[project.entry-points."scrapy.commands"]`` table."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = re.search(
        r'^\[project\.entry-points\."scrapy\.commands"\]\n(.*?)(?=^\[|\Z)', text, re.M | re.S
    )
    if table is None:
        return []
    return [
        re.sub(r'\s*=\s*"?([^"]*)"?\s*$', r" = \1", line.strip())
        for line in table.group(1).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


@pytest.fixture(scope="session")
def command_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """PYTHONPATH under which ``scrapy robots`` is found by its entry point."""
    paths = [str(ROOT)]
    installed = {ep.name for ep in entry_points(group="scrapy.commands")}
    if "robots" not in installed:
        site = tmp_path_factory.mktemp("entry_points")
        info = site / "scrapy_rep_dev-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scrapy-rep-dev\nVersion: 0\n")
        (info / "entry_points.txt").write_text(f"[scrapy.commands]\n{ENTRY_POINT}\n")
        paths.append(str(site))
    return os.pathsep.join(paths)


@pytest.fixture
def scrapy(command_path: str) -> Run:
    """``scrapy ARGS`` (as ``python -m scrapy.cmdline``), inside the example project by default."""

    def run(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess[str]:
        return run_module(command_path, "scrapy.cmdline", *args, cwd=cwd)

    return run


def run_module(
    command_path: str, module: str, *args: str, cwd: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` in ``cwd`` as a user runs it: this checkout
    first on the path, loopback past any proxy, no project forced."""
    env = dict(
        os.environ,
        PYTHONPATH=command_path,
        PYTHONIOENCODING="utf-8",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
