"""``scrapy-rep check`` and ``lint`` on the lines a site writes for everyone:
a global Content-Signal (docs/usage-preferences.md, "Global lines") and RSL's
License lines (docs/spec.md §7.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_main import robots_file, run_main
from cli_schema import assert_check_schema, assert_lint_schema

from scrapy_rep.engine.site_wide import SITE_WIDE, SiteWide, absolute_url
from scrapy_rep.tools.check import check_json, check_urls, site_wide_lines
from scrapy_rep.tools.fetch.source import Source
from scrapy_rep.tools.lint.lines import lint

ROBOTS = b"""\
# As a condition of accessing this website, you agree to abide by the
# following content signals (contentsignals.org).
Content-Signal: search=yes, ai-train=no, ai-input=no
License: https://www.example-news.com/license.xml

User-agent: *
Disallow: /search

User-agent: PartnerBot
User-agent: FriendBot
Content-Signal: search=yes, ai-train=yes
Allow: /

User-agent: ArchiveBot
Content-Usage: train-ai=y
Allow: /

Sitemap: https://www.example-news.com/sitemap.xml
"""


@pytest.fixture
def robots(tmp_path: Path) -> Path:
    return robots_file(tmp_path, ROBOTS)


run = run_main


def test_cli_check_names_a_global_deciding_line_and_the_licence(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "check", str(robots), "/news/a", "-p", "train-ai", "-a", "somebot")
    assert code == 1
    assert out.splitlines() == [
        'refused     /news/a  (no rule matched, group "*")',
        "  usage train-ai: denied (by line 3 (global): Content-Signal: "
        "search=yes, ai-train=no, ai-input=no)",
        "license     https://www.example-news.com/license.xml  (the site's licence terms, RSL 1.0)",
    ]


def test_cli_check_a_groups_own_line_replaces_the_global_one(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "check", str(robots), "/news/a", "-p", "train-ai", "-a", "partnerbot"
    )
    assert code == 0
    assert "  usage train-ai: allowed (by line 11: Content-Signal: search=yes, ai-train=yes)" in out
    # Content-Usage is another source: the global Content-Signal still speaks.
    code, out, _ = run(
        capsys, "check", str(robots), "/news/a", "-p", "train-ai", "-a", "archivebot"
    )
    assert code == 1
    assert "denied (by line 3 (global): Content-Signal:" in out


def test_cli_check_json_global_and_licenses(
    robots: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "check", str(robots), "/news/a", "/search", "-p", "ai-input", "--json"
    )
    data = json.loads(out)
    assert_check_schema(data)
    assert code == 1
    assert data[0]["usage"]["ai-input"] == {
        "state": "denied",
        "by": [
            {
                "source": "content-signal",
                "line": 3,
                "text": "search=yes, ai-train=no, ai-input=no",
                "global": True,
            }
        ],
    }
    assert [item["licenses"] for item in data] == [["https://www.example-news.com/license.xml"]] * 2
    # A file without License lines keeps the JSON it always had.
    bare = robots.parent / "bare.txt"
    bare.write_bytes(b"User-agent: *\nDisallow: /x\n")
    code, out, _ = run(capsys, "check", str(bare), "/a", "--json")
    assert "licenses" not in json.loads(out)[0]


def test_lint_a_global_signal_is_no_longer_an_error() -> None:
    found = lint(ROBOTS)
    assert [(f.line, f.code) for f in found] == [(11, "usage-global-replaced")]
    (replaced,) = found
    assert replaced.message == (
        "for 'partnerbot' (and 1 other agent), this group's Content-Signal lines replace the "
        "global ones: ai-input=no (line 3) does not apply to them"
    )
    assert replaced.hint == (
        "add ai-input to this group's Content-Signal line if it should still apply"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # A group stating every key the global line states: a deliberate override.
        (b"Content-Signal: ai-train=no\n\nUser-agent: friend\nContent-Signal: ai-train=yes\n", []),
        # Content-Usage before any group is still read by no crawler (attach-05 §3).
        (b"Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n",
         [(1, "usage-before-user-agent")]),
        # A global line is read, so its syntax is checked.
        (b"Content-Signal: ai-train=false\nUser-agent: *\nAllow: /\n", [(1, "usage-not-read")]),
        # A group's Content-Usage does not replace the global Content-Signal.
        (b"Content-Signal: ai-train=no\nUser-agent: a\nContent-Usage: search=y\n", []),
        # RSL: a License must be an absolute URL; "Licence" is not its key.
        (b"License: license.xml\nUser-agent: *\nAllow: /\n", [(1, "license-not-absolute")]),
        (b"Licence: https://e.com/l.xml\nUser-agent: *\nAllow: /\n", [(1, "unknown-field")]),
        (b"User-agent: *\nAllow: /\nLicense: https://e.com/l.xml\n", []),
    ],
)  # fmt: skip
def test_lint_site_wide_lines(body: bytes, expected: list[tuple[int, str]]) -> None:
    assert [(f.line, f.code) for f in lint(body)] == expected


def test_lint_licence_hint_and_summary(robots: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (found,) = lint(b"Licence: https://e.com/l.xml\nUser-agent: *\nAllow: /\n")
    assert found.hint == "did you mean 'license'?"
    code, out, _ = run(capsys, "lint", str(robots), "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert code == 0
    assert (data["summary"]["sitemaps"], data["summary"]["licenses"]) == (1, 1)
    code, out, _ = run(capsys, "lint", str(robots))
    assert out.splitlines()[-1].endswith("1 sitemap, 1 licence)")


def test_check_shows_each_kind_with_about_beside_the_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kind of ``SITE_WIDE`` with ``about`` (a made-up ``X-Example``) is shown
    as the licences are, from its table entry alone."""
    kind = SiteWide(
        "x-example", "examples", "example", "examples", absolute_url, "an absolute URL",
        "example-not-absolute", "write the full URL", about="the site's example terms",
    )  # fmt: skip
    monkeypatch.setitem(SITE_WIDE, kind.key, kind)
    source = Source("robots.txt", b"X-Example: https://e.com/t\n" + ROBOTS)
    results = check_urls(source, ["https://www.example-news.com/a"], ["mybot"], False)
    assert check_json(results[0], ())["examples"] == ["https://e.com/t"]
    assert check_json(results[0], ())["licenses"] == ["https://www.example-news.com/license.xml"]
    assert site_wide_lines(results) == [
        "license     https://www.example-news.com/license.xml  (the site's licence terms, RSL 1.0)",
        "x-example   https://e.com/t  (the site's example terms)",
    ]
