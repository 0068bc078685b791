"""``scrapy-rep lint``: every finding code, output formats, exit codes, a file on disk.

Each code has a minimal body with the exact findings it must give, so a
check that is too eager (a finding where there is none) fails as surely as
one that misses.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_main import run_main
from cli_schema import assert_lint_schema

from scrapy_rep.tools.lint.lines import SEVERITIES, Finding, lint

PAD = 512_000  # docs/spec.md §4.3


def codes(body: bytes) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint(body)]


def only(body: bytes, code: str) -> list[Finding]:
    return [f for f in lint(body) if f.code == code]


# body -> the exact (line, code) findings
CASES: dict[str, tuple[bytes, list[tuple[int, str]]]] = {
    "clean": (
        b"# comment\nUser-agent: *\nDisallow: /private # why\nAllow: /private/ok\n"
        b"Crawl-delay: 2\n\nUser-agent: googlebot\nDisallow:\n"
        b"Sitemap: https://e.com/sitemap.xml\n",
        [],
    ),
    "html-page": (
        b"\n<!DOCTYPE html>\n<html><head><title>Not found</title></head>\n"
        b"<body>User-agent: * Disallow: /</body></html>\n",
        [(2, "html-page")],
    ),
    "missing-colon": (
        b"User-agent: *\nDisallow /x\nCrawl-delay 5\n",
        [(2, "missing-colon"), (3, "not-a-directive")],
    ),
    "misspelt-field": (
        b"User-agent: *\nDisalow: /a\nDisallowed: /b\nuser_agent: x\n"
        b"sitemaps: https://e.com/s.xml\nDisallow: /c\n",
        [
            (2, "misspelt-field"),
            (3, "misspelt-field"),
            (4, "misspelt-field"),
            (5, "misspelt-field"),
        ],
    ),
    "unknown-field": (
        b"User-agent: *\nDisallow: /\nUnicorns: /extinct\nCrawl-delya: 5\n"
        b"https://e.com/sitemap.xml\nnoindex: /x\n",
        [(3, "unknown-field"), (4, "unknown-field"), (5, "unknown-field")],
    ),
    "not-a-directive": (
        b"User-agent: *\nDisallow: /\nthis is not a rule\nError #and comment\n",
        [(3, "not-a-directive"), (4, "not-a-directive")],
    ),
    "invalid-utf8": (b"User-agent: *\nDisallow: /caf\xe9\n", [(2, "invalid-utf8")]),
    "line-too-long": (
        b"User-agent: *\nDisallow: /" + b"a" * 16_700 + b"\n",
        [(2, "line-too-long")],
    ),
    "rule-before-user-agent": (
        b"Disallow: /a\nAllow: /b\nUser-agent: *\nDisallow: /c\n",
        [(1, "rule-before-user-agent"), (2, "rule-before-user-agent")],
    ),
    "path-without-slash": (
        b"User-agent: *\nDisallow: private\nAllow: https://e.com/x?y=1\nDisallow: *.pdf\n"
        b"Disallow:\nAllow: /ok\n",
        [(2, "path-without-slash"), (3, "path-without-slash")],
    ),
    "sitemap-not-absolute": (
        b"Sitemap: /sitemap.xml\nUser-agent: *\nDisallow:\nSitemap: https:///s.xml\n"
        b"Sitemap: http://e.com/fine.xml\n",
        [(1, "sitemap-not-absolute"), (4, "sitemap-not-absolute")],
    ),
    "user-agent-never-matches": (
        b"User-agent: 360Spider\nUser-agent: googlebot\nDisallow: /\n",
        [(1, "user-agent-never-matches")],
    ),
    "group-never-applies": (
        b"User-agent: 360Spider\nDisallow: /a\nDisallow: /b\nUser-agent: *\nDisallow: /c\n",
        [(1, "group-never-applies"), (1, "user-agent-never-matches")],
    ),
    "user-agent-not-token": (
        b"User-agent: Googlebot/2.1\nUser-agent: bingbot\nUser-agent: *\nDisallow: /\n",
        [(1, "user-agent-not-token")],
    ),
    "crawl-delay-not-number": (
        b"User-agent: *\nCrawl-delay: soon\nCrawl-delay: 1.5\nCrawl-delay: -1\nDisallow:\n",
        [(2, "crawl-delay-not-number"), (4, "crawl-delay-not-number")],
    ),
    "group-split": (
        b"User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\nUser-agent: A\nDisallow: /z\n",
        [(5, "group-split")],
    ),
    "one-group-across-sitemap": (  # docs/spec.md §5.2: not a split group
        b"User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nDisallow: /\n",
        [],
    ),
    "duplicate-rule": (
        b"User-agent: *\nDisallow: /x\nDisallow: /x\nDisallow: /y*\nDisallow: /y\n"
        b"Disallow: /%7Ez\nDisallow: /~z\nDisallow: /x$\n",
        [(3, "duplicate-rule"), (5, "duplicate-rule"), (7, "duplicate-rule")],
    ),
    "rule-shadowed": (
        b"User-agent: *\nAllow: /x\nDisallow: /x\nDisallow: /y*\nAllow: /y\nAllow: /p\n"
        b"Disallow: /*.ph\n",
        [(3, "rule-shadowed"), (5, "rule-shadowed")],
    ),
    "star-rules-not-inherited": (
        b"User-agent: *\nDisallow: /admin\nDisallow: /\n\nUser-agent: googlebot\nDisallow: /tmp\n"
        b"\nUser-agent: badbot\nDisallow: /\n\nUser-agent: friend\nDisallow:\n"
        b"\nUser-agent: careful\nDisallow: /tmp\nDisallow: /admin\n",
        [(5, "star-rules-not-inherited")],
    ),
    "no-groups": (b"# nothing here yet\n", [(1, "no-groups")]),
    "usage-lines": (  # scrapy_rep.tools.lint.usage
        b"Content-Usage: train-ai=n\nUser-agent: *\nContent-Usage: Train-AI=n\n"
        b"Content-Usage: /a/ train-ai=n, tdm=y\nContent-Signal: search=yes, ai-train=false\n"
        b"Content-Signal: ai-train=maybe\nContent-Signal: /b/ ai-train=no\nDisallow: /x\n",
        [
            (1, "usage-before-user-agent"),
            (3, "usage-not-read"),
            (4, "usage-part-ignored"),
            (5, "usage-part-ignored"),
            (6, "usage-not-read"),
        ],
    ),
    "global-usage-lines": (  # docs/usage-preferences.md, "Global lines"
        b"Content-Signal: search=yes, ai-train=no\nContent-Signal: ai-input=false\n"
        b"\nUser-agent: *\nAllow: /\n\nUser-agent: partnerbot\nContent-Signal: ai-train=yes\n",
        [(2, "usage-not-read"), (8, "usage-global-replaced")],
    ),
    "license-not-absolute": (  # RSL 1.0, docs/spec.md §7.3
        b"License: /license.xml\nLicense: https://e.com/license.xml\nUser-agent: *\nAllow: /\n",
        [(1, "license-not-absolute")],
    ),
    "body-too-large": (
        b"User-agent: *\nDisallow: /" + b"a" * (PAD - 26) + b"\nDisallow: /late\n",
        [(2, "line-too-long"), (3, "body-too-large")],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lint_finding_cases(name: str) -> None:
    body, expected = CASES[name]
    assert codes(body) == expected


def test_lint_every_code_has_a_case() -> None:
    covered = {code for _, expected in CASES.values() for _, code in expected}
    assert covered == set(SEVERITIES)


def test_lint_conformance_lines_numbers_are_counted_correctly(conformance_dir: Path) -> None:
    # Google's reporting case LinesNumbersAreCountedCorrectly#1, mapped onto findings.
    cases = json.loads((conformance_dir / "reporting_cases.json").read_text())
    case = next(c for c in cases if c["id"] == "LinesNumbersAreCountedCorrectly#1")
    found = codes(case["robots"].encode())
    assert (3, "missing-colon") in found  # "User-Agent bar # no"
    assert (7, "unknown-field") in found  # "unicorns: /extinct"
    assert (11, "misspelt-field") in found  # "useragent: baz"
    assert (12, "misspelt-field") in found  # "disallaw: /some"
    assert (13, "misspelt-field") in found  # "site-map: https://e/s.xml"
    assert (4, "not-a-directive") in found  # "absolutely random line"
    assert (10, "not-a-directive") in found  # "Error #and comment"
    assert not [f for f in found if f[0] in (1, 2, 5, 6, 8, 9, 14, 15)]


def test_lint_conformance_every_flagged_line_is_a_finding(conformance_dir: Path) -> None:
    # Whatever Google's reporter flags (typo, missing colon, unknown key, too
    # long) on any reporting case, lint reports on that line.
    cases = json.loads((conformance_dir / "reporting_cases.json").read_text())
    checked = 0
    for case in cases:
        found = codes(case["robots"].encode())
        for line in case["expect"].get("lines", []):
            meta = line["metadata"]
            expected = set()
            if meta["is_missing_colon_separator"]:
                expected.add("missing-colon")
            elif line["is_typo"]:
                expected.add("misspelt-field")
            elif line["tag"] == "Unknown" and meta["has_directive"]:
                expected.add("unknown-field")
            if meta["is_line_too_long"]:
                expected.add("line-too-long")
            for code in expected:
                assert (line["line"], code) in found, (case["id"], line)
                checked += 1
    assert checked >= 5


def test_lint_misspelt_field_hints_the_intended_field() -> None:
    findings = lint(b"User-agent: *\nDisalow: /a\nuser_agent: x\nCrawl-delya: 5\n")
    assert findings[0].hint == "write 'Disallow: /a'"
    assert "only Google's open-source parser reads it as 'Disallow'" in findings[0].message
    assert findings[1].hint == "did you mean 'User-agent'? write 'User-agent: x'"
    assert findings[2].hint == "did you mean 'crawl-delay'?"


def test_lint_path_without_slash_hints_the_path() -> None:
    hints = [f.hint for f in only(CASES["path-without-slash"][0], "path-without-slash")]
    assert hints == ["write 'Disallow: /private'", "write 'Allow: /x?y=1'"]


def test_lint_invalid_utf8_names_the_byte() -> None:
    (finding,) = lint(b"User-agent: *\nDisallow: /caf\xe9\n")
    assert finding.message.startswith("byte 0xE9 at offset 14 of the line is not UTF-8")


def test_lint_user_agent_not_token_names_the_token() -> None:
    (finding,) = lint(CASES["user-agent-not-token"][0])
    assert "'googlebot' of 'Googlebot/2.1'" in finding.message
    assert finding.hint == "write 'User-agent: googlebot'"


def test_lint_shadowed_rules_say_why() -> None:
    messages = [f.message for f in lint(CASES["rule-shadowed"][0])]
    assert "'Allow: /x' at line 2 matches the same URLs and allow wins a tie" in messages[0]
    assert (
        "'Disallow: /y*' at line 4 matches the same URLs and the longer pattern wins"
        in (messages[1])
    )


def test_lint_block_shared_by_agents_reports_a_shadowed_rule_once() -> None:
    body = b"User-agent: a\nUser-agent: b\nUser-agent: c\nDisallow: /x\nAllow: /x\n"
    (finding,) = [f for f in lint(body) if f.code == "rule-shadowed"]
    assert finding.line == 4
    assert finding.message.startswith("for 'a' (and 2 other agents of the same group), ")


def _agent_name(number: int) -> str:
    letters = ""
    while True:
        letters += "abcdefghijklmnopqrstuvwxyz"[number % 26]
        number //= 26
        if not number:
            return "bot" + letters


def _lint_steps(monkeypatch: pytest.MonkeyPatch, body: bytes) -> int:
    """How many times lint files a rule under its set of URLs or measures one."""
    calls = [0]
    from scrapy_rep.tools.lint import groups as module

    def counting(original: Any) -> Any:
        def wrapper(pattern: str) -> Any:
            calls[0] += 1
            return original(pattern)

        return wrapper

    with monkeypatch.context() as patched:
        patched.setattr(module, "_same_urls_key", counting(module._same_urls_key))
        patched.setattr(module, "normalise", counting(module.normalise))
        lint(body)
    return calls[0]


def _many_groups(size: int) -> bytes:
    """``size`` agents sharing one block of ``size`` rules, ``size`` named groups of
    their own beside a '*' group of ``size`` rules, agents named in two groups."""
    agents = "".join(f"User-agent: {_agent_name(i)}\n" for i in range(size))
    shared = agents + "".join(f"Disallow: /{i}\nAllow: /{i}\n" for i in range(size))
    star = "User-agent: *\n" + "".join(f"Disallow: /s{i}/\n" for i in range(size))
    named = "".join(f"User-agent: {_agent_name(size + i)}\nDisallow: /p{i}\n" for i in range(size))
    return (shared + "\n" + star + "\n" + named + "\n" + agents + "Disallow: /b\n").encode()


def test_lint_steps_grow_linearly_with_agents_and_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 13 §2: a 504 KB file of 10,000 groups took 49 s (agents x rules);
    # doubling both must about double the work, not quadruple it.
    small, large = (_lint_steps(monkeypatch, _many_groups(size)) for size in (300, 600))
    assert large <= 2.2 * small, (small, large)


def test_lint_star_rules_not_inherited_counts_each_set_of_urls_once() -> None:
    body = (
        b"User-agent: *\nDisallow: /a\nDisallow: /b\n\nUser-agent: *\nDisallow: /a*\n"
        b"\nUser-agent: mybot\nDisallow: /b\n"
    )
    (finding,) = only(body, "star-rules-not-inherited")
    assert finding.line == 8
    assert "'mybot' lacks 1 Disallow rule of the '*' group (first: '/a' at line 2)" in (
        finding.message
    )


def test_lint_group_never_applies_names_the_rules() -> None:
    (finding,) = only(CASES["group-never-applies"][0], "group-never-applies")
    assert "no crawler obeys its 2 rules (lines 2-3)" in finding.message


def test_lint_html_page_with_directive_lines() -> None:
    # docs/spec.md §4.4: an HTML page yields whatever valid lines it happens to contain.
    (finding,) = lint(b"<html>\nUser-agent: *\nDisallow: /\n</html>\n")
    assert finding.code == "html-page"
    assert "crawlers still obey the 2 directive lines it happens to contain" in finding.message
    (finding,) = lint(CASES["html-page"][0])
    assert "it has no directive, so crawlers allow everything" in finding.message


# --- docs/spec.md §4.3: where the 512,000-byte cut falls -----------------------------------


def test_body_cut_at_line_start_ignores_that_line() -> None:
    # line 2 ends with the newline at offset 511,999: line 3 starts at the cut.
    body = b"User-agent: *\n#" + b"c" * (PAD - 16) + b"\nDisallow: /late\n"
    (finding,) = only(body, "body-too-large")
    assert finding.line == 3
    assert finding.message.endswith("line 3 and every line after it are ignored")


def test_body_cut_at_line_end_keeps_that_line() -> None:
    # the newline after line 2 is the first byte past the cut: line 2 is whole.
    body = b"User-agent: *\n#" + b"c" * (PAD - 15) + b"\nDisallow: /late\n"
    (finding,) = only(body, "body-too-large")
    assert finding.line == 2
    assert finding.message.endswith("line 3 and every line after it are ignored")


def test_body_cut_inside_a_line() -> None:
    body = b"User-agent: *\n#" + b"c" * (PAD - 20) + b"\nDisallow: /private\n"
    (finding,) = only(body, "body-too-large")
    assert finding.line == 3
    assert "line 3 is cut after its first 4 bytes (read as 'Disa')" in finding.message


def test_body_at_limit_is_not_too_large() -> None:
    body = b"User-agent: *\n#" + b"c" * (PAD - 16) + b"\n"
    assert len(body) == PAD
    assert only(body, "body-too-large") == []


# --- output formats and exit codes ---------------------------------------------------

TEXT_LINE = re.compile(r"^\d+: (error|warning) [a-z0-9-]+ .+$")


run = run_main


def write(tmp_path: Path, body: bytes) -> str:
    path = tmp_path / "robots.txt"
    path.write_bytes(body)
    return str(path)


def test_cli_lint_text_output_and_exit_1_on_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, b"User-agent: *\nDisalow: /a\nDisallow: /b\nDisallow: /b\n")
    code, out, err = run(capsys, "lint", path)
    assert code == 1
    assert err == ""
    lines = out.splitlines()
    assert lines[:2] == [
        "2: error misspelt-field 'disalow' is not a field: crawlers ignore this line "
        "(only Google's open-source parser reads it as 'Disallow') (write 'Disallow: /a')",
        "4: warning duplicate-rule for '*', this rule has the same effect as 'Disallow: /b' "
        "at line 3 (remove one of them)",
    ]
    assert all(TEXT_LINE.match(line) for line in lines[:-1])
    assert lines[-1] == (
        f"{path}: 1 error, 1 warning (5 lines, 52 bytes, 1 agent, 2 rules, 0 sitemaps)"
    )


def test_cli_lint_exit_0_with_warnings_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "lint", write(tmp_path, CASES["group-split"][0]))
    assert code == 0
    assert out.startswith("5: warning group-split ")


def test_cli_lint_exit_0_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = CASES["clean"][0]
    code, out, _ = run(capsys, "lint", write(tmp_path, body))
    assert code == 0
    assert out.splitlines() == [
        f"{tmp_path / 'robots.txt'}: 0 errors, 0 warnings "
        f"(10 lines, {len(body)} bytes, 2 agents, 2 rules, 1 sitemap)"
    ]


def test_cli_lint_json_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = CASES["misspelt-field"][0] + CASES["unknown-field"][0]
    code, out, _ = run(capsys, "lint", write(tmp_path, body), "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert code == 1
    assert data["source"] == str(tmp_path / "robots.txt")
    assert data["status"] is None
    assert data["findings"][0] == {
        "line": 2,
        "code": "misspelt-field",
        "severity": "error",
        "message": "'disalow' is not a field: crawlers ignore this line "
        "(only Google's open-source parser reads it as 'Disallow')",
        "hint": "write 'Disallow: /a'",
    }
    assert data["summary"]["agents"] == ["*"]
    assert data["summary"]["errors"] == 4


def test_cli_lint_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(CASES["invalid-utf8"][0])))
    code, out, _ = run(capsys, "lint", "-", "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert code == 0
    assert data["source"] == "<stdin>"
    assert [f["code"] for f in data["findings"]] == ["invalid-utf8"]


def test_cli_lint_text_escapes_invalid_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "lint", write(tmp_path, b"User-agent: *\nDisalow: /caf\xe9\x01\n"))
    assert code == 1
    assert "(write 'Disallow: /caf\\xe9\\x01')" in out


def test_cli_lint_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "lint")[0] == 2
    code, out, err = run(capsys, "lint", str(tmp_path / "missing.txt"))
    assert (code, out) == (2, "")
    assert "no such file" in err
    code, out, err = run(capsys, "lint", str(tmp_path))  # a directory
    assert (code, out) == (2, "")
    assert "cannot read" in err


def test_cli_lint_subprocess(tmp_path: Path, run_cli: Any) -> None:
    done = run_cli("lint", write(tmp_path, CASES["rule-before-user-agent"][0]))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("1: error rule-before-user-agent ")
    done = run_cli("lint", "-", "--json", stdin=CASES["clean"][0])
    assert done.returncode == 0
    assert_lint_schema(json.loads(done.stdout))


# --- a file on disk ---------------------------------------------------------------


def test_cli_lint_html_file_subprocess(tmp_path: Path, run_cli: Any) -> None:
    # An HTML soft-404 served at /robots.txt, saved to a file (as the corpus's
    # nonrobots/ pages are); benchmarks/corpus/test_corpus_lint.py lints those.
    path = tmp_path / "robots.txt"
    path.write_bytes(
        b"<!DOCTYPE html>\n<html><head><title>Page not found</title></head>\n"
        b"<body><h1>Sorry</h1><p>User-agent: * Disallow: /</p></body></html>\n"
    )
    done = run_cli("lint", str(path))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (
        "1: error html-page this is an HTML page, not a robots.txt: it has no directive, so "
        "crawlers allow everything (serve a plain-text robots.txt, or answer 404 if the site "
        "has none)"
    )
