"""``scrapy-rep lint`` over a real corpus: split from tests/tools/cli/test_cli_lint.py."""

from __future__ import annotations

import json
from pathlib import Path

from cli_schema import assert_lint_schema
from test_cli_lint import PAD, codes, only

from scrapy_rep.tools.lint.lines import format_text, lint, report


def test_lint_corpus_every_file(corpus: Path) -> None:
    # Real files: lint never crashes, its JSON report always fits the schema,
    # and every line number points into the file.
    paths = sorted((corpus / "robots").glob("*.txt")) + sorted((corpus / "synthetic").glob("*.txt"))
    assert len(paths) >= 400
    for path in paths:
        body = path.read_bytes()[: PAD + 1]
        findings = lint(body)
        result = report(path.name, body, findings, None)
        assert_lint_schema(json.loads(json.dumps(result)))
        assert all(f.line <= result["summary"]["lines"] for f in findings), path.name
        assert "html-page" not in {f.code for f in findings}, path.name
        format_text(result).encode("utf-8")  # printable


def test_lint_corpus_nonrobots_html_reported_as_html(corpus: Path) -> None:
    paths = sorted((corpus / "nonrobots").glob("*.txt"))
    assert len(paths) == 15
    for path in paths:
        body = path.read_bytes()[: PAD + 1]
        found = {f.code for f in lint(body)}
        if body.lstrip().startswith(b"<"):
            assert "html-page" in found, path.name
            assert found <= {"html-page", "body-too-large"}, path.name
        else:
            assert found == {"no-groups"}, path.name  # a commented-out robots.txt


def test_lint_corpus_known_problems(corpus: Path) -> None:
    robots = corpus / "robots"
    # "User-Agent: *" followed by a raw 0xA0 byte: the only group applies to nobody.
    found = codes((robots / "protego__www.turktelekom.com.tr.txt").read_bytes())
    assert found[:3] == [
        (1, "group-never-applies"),
        (1, "user-agent-never-matches"),
        (1, "invalid-utf8"),
    ]
    # 832 KiB: the cut falls inside line 19134.
    (cut,) = only((robots / "protego__docs.oracle.com.txt").read_bytes(), "body-too-large")
    assert cut.line == 19_134
