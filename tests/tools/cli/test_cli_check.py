"""``scrapy-rep check``: verdicts, deciding rules, exit codes and ``--json``.

Most tests call ``main(argv)`` directly (fast); a few run the real command in
a subprocess to show that it works as installed users run it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_main import robots_file, run_main
from cli_schema import assert_check_schema

from scrapy_rep.tools.cli.console import DEFAULT_AGENT

ROBOTS = b"""\
User-agent: *
Allow: /private/open
Disallow: /private

User-agent: mybot
Disallow: /search
User-agent: mybot-news
Disallow: /
"""


@pytest.fixture
def robots(tmp_path: Path) -> Path:
    return robots_file(tmp_path, ROBOTS)


run = run_main


def test_cli_check_disallowed_line_names_rule_line_and_group(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "https://e.com/private/x")
    assert code == 1
    assert (
        out
        == 'disallowed  https://e.com/private/x  (rule "Disallow: /private" at line 3, group "*")\n'
    )


def test_cli_check_allowed_by_rule_exit_0(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(robots), "https://e.com/private/open/1")
    assert code == 0
    assert out == (
        'allowed     https://e.com/private/open/1  (rule "Allow: /private/open" at line 2, '
        'group "*")\n'
    )


def test_cli_check_no_rule_matched(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/news", "--agent", "mybot")
    assert code == 0
    assert out == 'allowed     /news  (no rule matched, group "mybot")\n'


def test_rfc9309_no_group_everything_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: otherbot\nDisallow: /\n")
    code, out, _ = run(capsys, "check", str(path), "/x", "--agent", "mybot")
    assert code == 0
    assert out == "allowed     /x  (no group for mybot: everything allowed)\n"


def test_rfc9309_robots_txt_url_always_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /\n")
    code, out, _ = run(capsys, "check", str(path), "https://e.com/robots.txt", "https://e.com/a")
    assert code == 1
    assert out.splitlines() == [
        "allowed     https://e.com/robots.txt  (the robots.txt URL itself is always allowed)",
        'disallowed  https://e.com/a  (rule "Disallow: /" at line 2, group "*")',
    ]


def test_cli_check_exit_1_when_any_url_disallowed(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/a", "/private", "/b")
    assert code == 1
    assert [line.split()[0] for line in out.splitlines()] == ["allowed", "disallowed", "allowed"]


def test_cli_check_default_agent_is_scrapys_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: scrapy\nDisallow: /no-scrapy\nUser-agent: *\nDisallow: /\n")
    code, out, _ = run(capsys, "check", str(path), "/ok", "/no-scrapy")
    assert DEFAULT_AGENT == "scrapy"
    assert code == 1
    assert out.splitlines() == [
        'allowed     /ok  (no rule matched, group "scrapy")',
        'disallowed  /no-scrapy  (rule "Disallow: /no-scrapy" at line 2, group "scrapy")',
    ]


def test_rfc9309_agent_tokens_in_preference_order(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/spec.md §5.7: the first token with a group of its own wins, else "*".
    code, out, _ = run(capsys, "check", str(robots), "/search", "-a", "mybot-news", "-a", "mybot")
    assert code == 1
    assert 'at line 8, group "mybot-news"' in out
    code, out, _ = run(capsys, "check", str(robots), "/search", "-a", "mybot-images", "-a", "mybot")
    assert 'rule "Disallow: /search" at line 6, group "mybot"' in out
    code, out, _ = run(capsys, "check", str(robots), "/private", "-a", "mybot-images")
    assert 'group "*"' in out  # never "mybot" by prefix


def test_rfc9309_full_user_agent_string_uses_product_token(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/search", "--agent", "MyBot/2.1 (+http://x)")
    assert code == 1
    assert 'group "mybot"' in out


def test_google_quirks_option_reads_misspelt_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisalow: /typo\n")
    assert run(capsys, "check", str(path), "/typo")[0] == 0
    code, out, _ = run(capsys, "check", str(path), "/typo", "--google-quirks")
    assert code == 1
    assert 'rule "Disallow: /typo" at line 2' in out


def test_cli_check_options_between_urls(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/a", "--agent", "mybot", "/search")
    assert code == 1
    assert len(out.splitlines()) == 2
    assert 'group "mybot"' in out.splitlines()[1]


def test_cli_check_json_schema_and_values(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "check", str(robots), "/private/x", "/robots.txt", "/a", "--json", "-a", "mybot"
    )
    data = json.loads(out)
    assert_check_schema(data)
    assert code == 0
    assert data == [
        {
            "url": "/private/x",
            "allowed": True,
            "reason": "no-rule",
            "group": "mybot",
            "rule": None,
        },
        {
            "url": "/robots.txt",
            "allowed": True,
            "reason": "robots-txt",
            "group": "mybot",
            "rule": None,
        },
        {"url": "/a", "allowed": True, "reason": "no-rule", "group": "mybot", "rule": None},
    ]
    code, out, _ = run(capsys, "check", str(robots), "/private/x", "/zz", "--json", "-a", "nobot")
    data = json.loads(out)
    assert_check_schema(data)
    assert data[0]["rule"] == {"kind": "disallow", "pattern": "/private", "line": 3}
    assert data[0]["reason"] == "rule"
    assert data[0]["allowed"] is False
    assert code == 1


def test_cli_check_json_no_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "robots.txt"
    path.write_bytes(b"# nothing\n")
    code, out, _ = run(capsys, "check", str(path), "/x", "--json")
    data: list[dict[str, Any]] = json.loads(out)
    assert_check_schema(data)
    assert code == 0
    assert data == [
        {"url": "/x", "allowed": True, "reason": "no-group", "group": None, "rule": None}
    ]


def test_cli_check_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(ROBOTS)))
    code, out, _ = run(capsys, "check", "-", "/private/1")
    assert code == 1
    assert out.startswith("disallowed  /private/1  (rule")


def test_rfc9309_invalid_utf8_rule_prints_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/spec.md §4.1, §6.5: a raw Latin-1 byte matches its percent-encoding; the
    # output shows it as \\xe9 instead of failing to print.
    path = tmp_path / "robots.txt"
    path.write_bytes(b"User-agent: *\nDisallow: /caf\xe9\n")
    code, out, _ = run(capsys, "check", str(path), "/caf%E9")
    assert code == 1
    assert out == 'disallowed  /caf%E9  (rule "Disallow: /caf\\xe9" at line 2, group "*")\n'
    code, out, _ = run(capsys, "check", str(path), "/caf%E9", "--json")
    assert json.loads(out)[0]["rule"]["pattern"] == "/caf\\xe9"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check"], "the following arguments are required"),
        (["check", "robots.txt"], "the following arguments are required: URL"),
        (["check", "r.txt", "/a", "--agent", "360bot"], "'360bot' names no crawler"),
        (["check", "r.txt", "/a", "--timeout", "0"], "'0' is not a positive number"),
        (["check", "r.txt", "/a", "--bogus"], "unrecognized arguments: --bogus"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "the following arguments are required: COMMAND"),
    ],
)
def test_cli_check_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert message in err


def test_cli_check_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", str(tmp_path / "nope.txt"), "/a")
    assert code == 2
    assert out == ""
    assert "no such file" in err
    assert "http://" in err  # says how to give a URL


def test_cli_check_help_documents_default_agent_and_exit_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "check", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "default: scrapy" in flat
    assert "0 every URL allowed, 1 some URL disallowed, 2 usage/fetch error" in flat


def test_cli_check_subprocess(robots: Path, run_cli: Any) -> None:
    done = run_cli("check", str(robots), "https://e.com/private/x", "https://e.com/")
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        'disallowed  https://e.com/private/x  (rule "Disallow: /private" at line 3, group "*")',
        'allowed     https://e.com/  (no rule matched, group "*")',
    ]
    assert done.stderr == (  # the tests run outside a Scrapy project: the note names the token
        "scrapy-rep: note: checking as scrapy (Scrapy's default USER_AGENT: not inside a "
        "Scrapy project; --agent NAME to choose)\n"
    )


def test_cli_check_subprocess_stdin_and_usage_error(run_cli: Any) -> None:
    done = run_cli("check", "-", "/private", "--json", stdin=ROBOTS)
    assert done.returncode == 1
    assert json.loads(done.stdout)[0]["rule"]["line"] == 3
    done = run_cli("check", "-")
    assert done.returncode == 2
    assert "usage: scrapy-rep check" in done.stderr


def test_cli_check_imports_no_scrapy(run_cli: Any) -> None:
    # The command must start fast: neither Scrapy nor Twisted is imported.
    done = run_cli("check", "--help")
    assert done.returncode == 0
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, scrapy_rep.tools.cli.console; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('scrapy', 'twisted')))",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[3])},
        check=True,
    )
    assert probe.stdout.strip() == "[]"


def test_scrapy_5_7_cli_check_names_the_token_of_a_user_agent_string(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: foobot\nDisallow: /private\n\nUser-agent: *\nDisallow:\n")
    agent = "Mozilla/5.0 (compatible; Foobot/1.0; +https://example.com/bot)"
    code, out, err = run(capsys, "check", str(robots), "/private/x", "--agent", agent)
    assert code == 1
    assert out == 'disallowed  /private/x  (rule "Disallow: /private" at line 2, group "foobot")\n'
    assert err == "scrapy-rep: note: checking as foobot\n"


def test_rfc9309_6_8_check_that_gives_up_says_so_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A URL on which each of 21,952 wildcard rules fails only on its middle
    piece: refused within the cost bound, and the line says so instead of
    naming a rule."""
    side = range(28)
    rules = "".join(f"Disallow: /*a{i}x*b{j}y*c{k}z\n" for i in side for j in side for k in side)
    path = tmp_path / "robots.txt"
    path.write_text("User-agent: *\n" + rules)
    hostile = "".join(f"{letter}{n}{end}" for letter, end in ("ax", "cz", "by") for n in side)
    code, out, _ = run(capsys, "check", str(path), f"https://e.com/{hostile}")
    assert code == 1
    assert out.startswith("disallowed  https://e.com/a0x")
    assert out.endswith(
        'group "*": too many wildcard rules to try for this URL within a check\'s cost bound'
        " (docs/spec.md §6.8): refused, failing closed)\n"
    )
    code, out, _ = run(capsys, "check", "--json", str(path), f"https://e.com/{hostile}")
    assert json.loads(out)[0]["rule"] == {"kind": "disallow", "pattern": "*", "line": 0}
