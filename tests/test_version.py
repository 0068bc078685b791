"""The version is written once, in scrapy_rep/__init__.py, and read from there."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import scrapy_rep

ROOT = Path(__file__).resolve().parent.parent


def test_version_is_the_installed_distribution_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", scrapy_rep.__version__)
    assert version("scrapy-rep") == scrapy_rep.__version__


def test_version_is_read_from_the_package_by_the_build() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert '[tool.hatch.version]\npath = "scrapy_rep/__init__.py"' in text
    assert not re.search(r"^version\s*=", text, re.MULTILINE)


def test_version_has_its_changelog_entry() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {scrapy_rep.__version__} - " in changelog
    assert "\n## Unreleased\n" in changelog


def test_version_is_what_the_command_line_says() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"scrapy-rep {scrapy_rep.__version__} (Scrapy ")
