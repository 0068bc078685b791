"""``scrapy-rep check --purpose`` and the lint of usage lines (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import robots_file, run_main
from cli_schema import assert_check_schema

from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.lint.lines import lint

ROBOTS = b"""\
User-agent: *
Allow: /
Content-Usage: train-ai=y
Content-Usage: /private/ train-ai=n, search=y
Content-Signal: /blog/ ai-train=no
Disallow: /admin/

User-agent: mybot
Content-Usage: ai-use=n
Allow: /
"""


@pytest.fixture
def robots(tmp_path: Path) -> Path:
    return robots_file(tmp_path, ROBOTS)


run = run_main


def test_cli_check_purpose_refused_names_the_deciding_line(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/private/a", "--purpose", "train-ai")
    assert code == 1
    assert out.splitlines() == [
        'refused     /private/a  (rule "Allow: /" at line 2, group "*")',
        "  usage train-ai: denied (by line 4: Content-Usage: /private/ train-ai=n, search=y)",
    ]


def test_cli_check_purpose_allowed_and_unstated_exit_0(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/open", "-p", "train-ai", "-p", "search")
    assert code == 0
    assert "usage train-ai: allowed (by line 3: Content-Usage: train-ai=y)" in out
    assert "usage search: unstated (no Content-Usage or Content-Signal line states it)" in out


def test_cli_check_content_signal_and_disallowed_url(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/blog/x", "/admin/x", "-p", "train-ai")
    assert code == 1
    assert "usage train-ai: denied (by line 5: Content-Signal: /blog/ ai-train=no)" in out
    assert "usage train-ai: unstated (the URL is disallowed, so no preference applies)" in out


def test_cli_check_purpose_follows_the_agents_group(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/private/a", "-a", "mybot", "-p", "ai-input")
    assert code == 1  # Content-Usage ai-use=n speaks for ai-input
    assert "usage ai-input: denied (by line 9: Content-Usage: ai-use=n)" in out


def test_cli_check_purpose_json(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/private/a", "-p", "train-ai", "--json")
    data = json.loads(out)
    assert_check_schema(data)
    assert code == 1
    assert data[0]["usage"] == {
        "train-ai": {
            "state": "denied",
            "by": [
                {
                    "source": "content-usage",
                    "line": 4,
                    "text": "/private/ train-ai=n, search=y",
                    "global": False,
                }
            ],
        }
    }


def test_cli_check_unknown_purpose_is_a_usage_error(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(robots), "/x", "--purpose", "tdm"]) == 2
    assert "invalid choice: 'tdm'" in capsys.readouterr().err


def test_cli_check_without_purpose_unchanged(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/private/a", "--json")
    assert code == 0
    assert "usage" not in json.loads(out)[0]


def test_lint_usage_lines_are_validated_not_unknown() -> None:
    body = (
        b"User-agent: *\nContent-Usage: train-ai=n\nContent-Signal: search=yes, ai-train=no\n"
        b"Content-Usage: search=yes\nDisallow: /x\n"
    )
    found = lint(body)
    assert [(f.line, f.code, f.severity) for f in found] == [(4, "usage-not-read", "error")]
    assert "only y or n do" in found[0].message
