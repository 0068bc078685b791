"""``scrapy-rep demo`` hands its arguments to scrapy_rep.tools.demo.run."""

from __future__ import annotations

import pytest

from scrapy_rep.tools.cli.console import main


def test_scrapy_cli_demo_help_is_the_demo_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--help"])
    assert exit_.value.code == 0
    assert "--project" in capsys.readouterr().out


def test_scrapy_cli_demo_missing_project_exits_2(tmp_path: object) -> None:
    assert main(["demo", "--project", str(tmp_path)]) == 2
