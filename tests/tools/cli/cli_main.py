"""The console script called in this process, its output captured, and the
robots.txt file a module's tests read (each module's ``ROBOTS``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_rep.tools.cli.console import main


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``scrapy-rep ARGV``: its exit code, standard output and standard error."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def robots_file(folder: Path, body: bytes) -> Path:
    path = folder / "robots.txt"
    path.write_bytes(body)
    return path
