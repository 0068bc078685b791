"""A robots.txt URL on the command line is fetched as docs/spec.md §2 and §4.3 say.

Every test starts its own HTTP server on 127.0.0.1 (see conftest.Site).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from cli_main import run_main
from cli_schema import assert_check_schema, assert_lint_schema
from cli_server import Answer, Site

from scrapy_rep.tools.fetch.live import MAX_REDIRECTS

RULES = b"User-agent: *\nDisallow: /private\n"
#: What ``check`` says of its token outside a Scrapy project (where these tests run).
DEFAULT_TOKEN_NOTE = (
    "scrapy-rep: note: checking as scrapy (Scrapy's default USER_AGENT: not inside a "
    "Scrapy project; --agent NAME to choose)\n"
)


run = run_main


def test_status_2xx_rules_decide(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.answers["/robots.txt"] = Answer(200, RULES)
    robots = site.url("/robots.txt")
    code, out, err = run(capsys, "check", robots, site.url("/private/1"), site.url("/open"))
    assert code == 1
    assert out.splitlines() == [
        f'disallowed  {site.url("/private/1")}  (rule "Disallow: /private" at line 2, group "*")',
        f'allowed     {site.url("/open")}  (no rule matched, group "*")',
    ]
    assert err == DEFAULT_TOKEN_NOTE  # outside a Scrapy project: says which token


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_status_4xx_allows_everything(
    status: int, site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.answers["/robots.txt"] = Answer(status, RULES)  # the body of a 4xx is never read
    code, out, _ = run(capsys, "check", site.url("/robots.txt"), site.url("/private"))
    assert code == 0
    assert out == (
        f"allowed     {site.url('/private')}  "
        f"(HTTP {status}: robots.txt unavailable, all allowed)\n"
    )


def test_status_404_json_reason_unavailable(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", site.url("/robots.txt"), "/private", "--json")
    data = json.loads(out)
    assert_check_schema(data)
    assert code == 0
    assert data == [
        {"url": "/private", "allowed": True, "reason": "unavailable", "group": None, "rule": None}
    ]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_status_429_5xx_is_fetch_error(
    status: int, site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.answers["/robots.txt"] = Answer(status, RULES)
    code, out, err = run(capsys, "check", site.url("/robots.txt"), "/open")
    assert code == 2
    assert out == ""
    assert f"answered HTTP {status}" in err
    assert "must not fetch from this site" in err


def test_status_503_lint_is_fetch_error(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.answers["/robots.txt"] = Answer(503)
    code, out, err = run(capsys, "lint", site.url("/robots.txt"))
    assert (code, out) == (2, "")
    assert "HTTP 503" in err


def test_status_connection_refused_is_fetch_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = run(capsys, "check", f"http://127.0.0.1:{port}/robots.txt", "/a")
    assert (code, out) == (2, "")
    assert f"cannot fetch http://127.0.0.1:{port}/robots.txt" in err
    assert "unreachable" in err


def test_status_timeout_is_fetch_error(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.answers["/robots.txt"] = Answer(hang=True)
    code, out, err = run(capsys, "check", site.url("/robots.txt"), "/a", "--timeout", "0.3")
    assert (code, out) == (2, "")
    assert "timed out" in err


def test_scrapy_timeout_bounds_the_whole_download(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13 §8: a body dripped a line every 0.2 s beats any per-read timeout;
    --timeout bounds the whole download, so the check gives up long before the end."""
    body = b"User-agent: *\n" + b"Disallow: /x\n" * 200  # 40 s at 0.2 s a line
    site.answers["/robots.txt"] = Answer(200, body, drip=0.2)
    code, out, err = run(capsys, "check", site.url("/robots.txt"), "/a", "--timeout", "1")
    sent = site.sent["/robots.txt"]
    assert (code, out) == (2, "")
    assert "no complete answer within 1 s" in err
    assert sent < len(body) // 4  # it stopped reading early, not at the end


def test_status_redirect_followed(
    site: Site, other_site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/spec.md §2, §2.1: across hosts too; the rules apply to the original origin.
    site.answers["/robots.txt"] = Answer(301, location=other_site.url("/moved.txt"))
    other_site.answers["/moved.txt"] = Answer(200, RULES)
    code, out, err = run(capsys, "check", site.url("/robots.txt"), site.url("/private"))
    assert code == 1
    assert 'rule "Disallow: /private" at line 2' in out
    assert err == DEFAULT_TOKEN_NOTE  # the checked URL is on the original origin


def test_status_redirect_five_hops_followed(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    for hop in range(MAX_REDIRECTS):
        site.answers[f"/r{hop}"] = Answer(302, location=f"/r{hop + 1}")
    site.answers[f"/r{MAX_REDIRECTS}"] = Answer(200, RULES)
    assert MAX_REDIRECTS == 5
    code, out, _ = run(capsys, "check", site.url("/r0"), "/private")
    assert code == 1
    assert out.startswith("disallowed  /private  (rule")


def test_status_redirect_six_hops_treated_as_404(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    for hop in range(MAX_REDIRECTS + 1):
        site.answers[f"/r{hop}"] = Answer(307, location=f"/r{hop + 1}")
    site.answers[f"/r{MAX_REDIRECTS + 1}"] = Answer(200, RULES)
    code, out, _ = run(capsys, "check", site.url("/r0"), "/private")
    assert code == 0
    assert out == "allowed     /private  (over 5 redirects: robots.txt unavailable, all allowed)\n"
    assert f"/r{MAX_REDIRECTS + 1}" not in site.sent  # the sixth hop was not followed


def test_status_redirect_loop_treated_as_404(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.answers["/a"] = Answer(301, location="/b")
    site.answers["/b"] = Answer(301, location="/a")
    code, out, _ = run(capsys, "check", site.url("/a"), "/private")
    assert code == 0
    assert "(a redirect loop: robots.txt unavailable, all allowed)" in out


def test_status_redirect_without_location_is_fetch_error(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    site.answers["/robots.txt"] = Answer(302)
    code, _, err = run(capsys, "check", site.url("/robots.txt"), "/a")
    assert code == 2
    assert "no Location header" in err


def test_body_download_stops_at_512000_bytes(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/spec.md §4.3: an endless robots.txt is not downloaded; the first 512,000
    # bytes are parsed, and lint says where the cut falls.
    site.answers["/robots.txt"] = Answer(200, endless=True)
    code, out, _ = run(capsys, "lint", site.url("/robots.txt"), "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert data["summary"]["truncated"] is True
    assert data["summary"]["bytes"] == 512_001
    cut = [f for f in data["findings"] if f["code"] == "body-too-large"]
    # 512,000 / 13 bytes per line = 39,384 whole lines, then 8 bytes of line 39,385.
    assert [f["line"] for f in cut] == [39_385]
    assert "line 39385 is cut after its first 8 bytes" in cut[0]["message"]
    assert code == 1
    assert site.sent["/robots.txt"] < 50_000_000  # the server was stopped early


def test_cli_check_notes_url_on_another_origin(
    site: Site, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/spec.md §1.1: a robots.txt governs its own origin only.
    site.answers["/robots.txt"] = Answer(200, RULES)
    code, out, err = run(
        capsys, "check", site.url("/robots.txt"), "https://elsewhere.example/private"
    )
    assert code == 1  # the verdict is still printed, as asked
    assert "disallowed" in out
    assert "https://elsewhere.example/private is not on http://127.0.0.1:" in err


def test_cli_lint_url_200_and_404(site: Site, capsys: pytest.CaptureFixture[str]) -> None:
    site.answers["/robots.txt"] = Answer(200, b"User-agent: *\nDisalow: /x\n")
    code, out, _ = run(capsys, "lint", site.url("/robots.txt"), "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert code == 1
    assert data["status"] == 200
    assert data["source"] == site.url("/robots.txt")
    assert [(f["line"], f["code"]) for f in data["findings"]] == [(2, "misspelt-field")]

    code, out, _ = run(capsys, "lint", site.url("/missing.txt"))
    assert code == 0
    assert out.splitlines() == [
        f"{site.url('/missing.txt')}: HTTP 404: robots.txt unavailable, all allowed; "
        "there is nothing to lint",
        f"{site.url('/missing.txt')}: 0 errors, 0 warnings "
        "(1 line, 0 bytes, 0 agents, 0 rules, 0 sitemaps)",
    ]
    code, out, _ = run(capsys, "lint", site.url("/missing.txt"), "--json")
    data = json.loads(out)
    assert_lint_schema(data)
    assert (data["status"], data["findings"]) == (404, [])


def test_cli_check_url_subprocess(site: Site, run_cli: Any) -> None:
    site.answers["/robots.txt"] = Answer(200, RULES)
    done = run_cli("check", site.url("/robots.txt"), "/private/x", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)[0]["rule"] == {
        "kind": "disallow",
        "pattern": "/private",
        "line": 2,
    }
    site.answers["/robots.txt"] = Answer(503)
    done = run_cli("check", site.url("/robots.txt"), "/private/x")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("scrapy-rep: ")
