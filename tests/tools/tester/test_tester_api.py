"""The tester's HTTP API without a browser: answers, guards, sources, lightness."""

from __future__ import annotations

import difflib
import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from crawler.servers import Huge, Redirect, Reply, SiteServer

from scrapy_rep.engine.lines import split_lines
from scrapy_rep.tools.check import check_urls
from scrapy_rep.tools.fetch.source import Source
from scrapy_rep.tools.lint.lines import format_text, lint, report
from scrapy_rep.tools.store.view import StoreName, read_origin
from scrapy_rep.tools.tester.server import LINK_LIMIT

from .conftest import Running

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "scrapy_rep" / "tools" / "tester" / "static"
BODY = "User-agent: *\nDisallow: /a\nAllow: /a/b\n"


def test_answers_are_the_engines_row_for_row(start_tester: Callable[..., Running]) -> None:
    tester = start_tester()
    urls = ["/a", "/a/b", "/c", "/robots.txt"]
    status, answer = tester.call("/api/test", {"robots": BODY, "urls": urls, "agents": ["x"]})
    assert status == 200
    engine = check_urls(Source("-", BODY.encode()), urls, ["x"], False)
    assert [
        (r["url"], r["verdict"] == "allowed", r["reason"], r["group"]) for r in answer["rows"]
    ] == [(c.url, c.allowed, c.reason, c.group) for c in engine]
    assert [r["line"] for r in answer["rows"]] == [2, 3, None, None]


def test_a_lines_class_is_the_worst_of_lints_findings_on_it(
    start_tester: Callable[..., Running],
) -> None:
    """Issues 43, 44: one vocabulary. A line the Tester shows as an error is
    one lint reports as an error: a relative sitemap and a misspelt field are
    errors (crawlers skip or ignore them), never "valid" or "accepted"."""
    tester = start_tester()
    text = "\n".join(
        [
            "User-agent: *",
            "Crawl-delay: 5",
            "Content-Signal: search=yes",
            "Foo: bar",
            "Dissalow: /x",
            "Disallow: /" + "y" * 17_000,
            "# a comment",
            "<svg onload=x>",
            "Disallow /missing-colon",
            "Sitemap: /sitemap-news.xml",
            "Disallow: nope",
        ]
    )
    _, answer = tester.call("/api/test", {"robots": text, "urls": []})
    shown = {
        line["n"]: (line["severity"], [f["code"] for f in line["findings"]])
        for line in answer["lines"]
    }
    assert shown == {
        1: (None, []),
        2: (None, []),
        3: (None, []),
        4: ("warning", ["unknown-field"]),
        5: ("error", ["misspelt-field"]),
        6: ("warning", ["line-too-long"]),
        7: (None, []),
        8: ("warning", ["not-a-directive"]),
        9: ("error", ["missing-colon"]),
        10: ("error", ["sitemap-not-absolute"]),
        11: ("error", ["path-without-slash"]),
    }
    found = lint(text.encode())  # the same findings, severities and counts as the CLI's
    assert [(f.line, f.code, f.severity, f.hint) for f in found] == [
        (line["n"], f["code"], f["severity"], f["hint"])
        for line in answer["lines"]
        for f in line["findings"]
    ]
    assert (answer["errors"], answer["warnings"], answer["summary"]) == (
        4,
        3,
        "4 errors, 3 warnings",
    )
    assert answer["summary"] in format_text(report("-", text.encode(), found, None))


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n"])
def test_an_empty_page_reports_no_findings(start_tester: Callable[..., Running], text: str) -> None:
    """Issue 44: nothing typed yet is not a file to warn about."""
    tester = start_tester()
    _, answer = tester.call("/api/test", {"robots": text, "urls": ["/x"]})
    assert (answer["errors"], answer["warnings"], answer["linted"]) == (0, 0, False)
    assert [f for line in answer["lines"] for f in line["findings"]] == []
    _, typed = tester.call("/api/test", {"robots": "Disallow: /x\n", "urls": ["/x"]})
    assert typed["linted"] and typed["errors"] == 1  # a rule before any group


def test_unavailable_and_unreachable_sources_answer_as_the_crawl(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester()
    common = {"robots": "", "urls": ["/x"], "agents": ["bot"]}
    _, allowed = tester.call("/api/test", {**common, "access": "allow-all", "access_reason": "404"})
    _, closed = tester.call("/api/test", {**common, "access": "closed", "access_reason": "503"})
    assert (allowed["rows"][0]["verdict"], allowed["rows"][0]["reason"]) == ("allowed", "404")
    assert (closed["rows"][0]["verdict"], closed["rows"][0]["reason"]) == ("disallowed", "503")


def test_diff_between_the_compared_file_and_the_edit(start_tester: Callable[..., Running]) -> None:
    tester = start_tester()
    _, answer = tester.call("/api/test", {"robots": BODY + "Disallow: /z\n", "compare": BODY})
    assert {"op": "+", "text": "Disallow: /z"} in answer["diff"]
    _, same = tester.call("/api/test", {"robots": BODY})
    assert same["diff"] is None


def test_diff_hunks_carry_their_line_counts_as_diff_u_does(
    start_tester: Callable[..., Running],
) -> None:
    """Issue 44: ``@@ -7,7 +7,8 @@``, not ``@@ -7 +7 @@``: each hunk's header
    gives the lines it spans on both sides, as the standard library's
    unified diff does (which leaves out a count of 1; the Tester writes it)."""
    tester = start_tester()
    before = "".join(f"line {n}\n" for n in range(1, 21))
    after = before.replace("line 10\n", "line ten\nline 10b\n").replace("line 20\n", "")
    _, answer = tester.call("/api/test", {"robots": after, "compare": before})
    shown = [("" if d["op"] == "@" else d["op"]) + d["text"] for d in answer["diff"]]
    assert [line for line in shown if line.startswith("@@")] == [
        "@@ -7,7 +7,8 @@",
        "@@ -17,5 +18,4 @@",
    ]
    reference = difflib.unified_diff(split_lines(before), split_lines(after), lineterm="")
    assert shown == list(reference)[2:]  # the same hunks, line for line
    _, one = tester.call("/api/test", {"robots": "x\n", "compare": "y\n"})
    assert one["diff"][0]["text"] == "@@ -1,2 +1,2 @@"
    _, added = tester.call("/api/test", {"robots": "a", "compare": ""})
    assert [d["text"] for d in added["diff"]] == ["@@ -1,1 +1,1 @@", "", "a"]


@pytest.mark.parametrize("path", ["/api/test", "/api/forget"])
def test_every_call_needs_the_runs_token(
    start_tester: Callable[..., Running], tmp_path: Path, path: str
) -> None:
    """Issue 27 §8: no token, a wrong one, or another run's: 403, nothing done."""
    (tmp_path / "s.sqlite3").touch()  # an empty file is an empty SQLite database
    store = StoreName(str(tmp_path / "s.sqlite3"))
    tester = start_tester(store=store)
    other = start_tester(store=store)
    data = {"robots": BODY, "url": "https://example.com/"}
    assert tester.call(path, data, token=None)[0] == 403
    assert tester.call(path, data, token="guess")[0] == 403
    assert tester.call(path, data, token=other.token)[0] == 403
    assert tester.call("/api/live?url=http://127.0.0.1:1/", token=None)[0] == 403
    assert tester.call("/api/stored?url=https://example.com/", token=None)[0] == 403
    assert tester.call(path, data)[0] == 200
    assert tester.token != other.token


def test_forget_wants_json_and_another_host_is_refused(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    """A form post (no preflight) cannot carry JSON; a rebound name is not served."""
    tester = start_tester(store=StoreName(str(tmp_path / "s.sqlite3")))
    form = {"Content-Type": "text/plain"}
    assert tester.call("/api/forget", {"url": "https://e.com/"}, headers=form)[0] == 415
    rebound = {"Host": f"evil.example:{tester.server.server_address[1]}"}
    assert tester.call("/api/test", {"robots": ""}, headers=rebound)[0] == 421
    assert (
        tester.call(
            "/api/test",
            {"robots": ""},
            headers={"Host": f"localhost:{tester.server.server_address[1]}"},
        )[0]
        == 200
    )


def test_page_is_served_with_a_strict_policy_and_nothing_from_elsewhere(
    start_tester: Callable[..., Running],
) -> None:
    """Issue 27 §8, §10: own scripts only; the page loads no CDN."""
    tester = start_tester()
    connection = http.client.HTTPConnection("127.0.0.1", tester.server.server_address[1])
    connection.request("GET", "/")
    response = connection.getresponse()
    page = response.read().decode()
    policy = response.getheader("Content-Security-Policy") or ""
    connection.close()
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert f'content="{tester.token}"' in page
    for path in sorted(STATIC.iterdir()):
        text = path.read_text()
        for marker in ('src="http', 'href="http', "url(http", "@import", "innerHTML", "eval("):
            assert marker not in text, (path.name, marker)
        assert "unsafe-" not in text and "insertAdjacentHTML" not in text, path.name


def _get(tester: Running, target: str) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", tester.server.server_address[1])
    try:
        connection.request("GET", target)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def test_every_static_file_is_served_and_the_icon_too(
    start_tester: Callable[..., Running],
) -> None:
    """Issue 44: the page's modules and its icon load, none is a 404: each
    file of static/ at /static/NAME, and the icon at /favicon.ico as well,
    where a browser looks when a page names none."""
    tester = start_tester()
    types = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
    for path in sorted(STATIC.iterdir()):
        if path.suffix == ".html":  # the pages: at / and /report
            continue
        status, content_type, body = _get(tester, f"/static/{path.name}")
        assert (path.name, status, body) == (path.name, 200, path.read_bytes())
        assert content_type.split(";")[0] == types[path.suffix]
    status, content_type, body = _get(tester, "/favicon.ico")
    assert (status, content_type) == (200, "image/svg+xml")
    assert body == (STATIC / "favicon.svg").read_bytes()
    for where in ("/", "/report"):
        page = _get(tester, where)[2].decode()
        assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


def test_a_link_as_long_as_the_limit_opens_and_a_longer_one_is_refused(
    start_tester: Callable[..., Running],
) -> None:
    """Issue 44: the page offers a link only up to ``link_limit`` bytes (and
    says plainly when a test is longer); that is what the server takes: a
    longer request target is refused (400, aiohttp's ``max_line_size``)."""
    tester = start_tester()
    _, config = tester.call("/api/config")
    assert config["link_limit"] == LINK_LIMIT == 65_536  # docs/tester.md's figure
    head = "/?robots="
    status, _, page = _get(tester, head + "x" * (LINK_LIMIT - len(head)))
    assert status == 200 and b"tester-token" in page
    assert _get(tester, head + "x" * (LINK_LIMIT - len(head) + 1))[0] == 400


def test_live_fetch_shows_status_headers_and_follows_the_crawls_rules(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester(max_body_bytes=600_000, timeout=5)

    def moved(host: str) -> Redirect | Reply:
        """127.0.0.1's robots.txt moved to localhost's (a /robots.txt path:
        the Tester follows no redirect to another path, test_tester_hostile)."""
        if host.startswith("localhost"):
            return Reply(200, BODY.encode(), {"X-Served-By": "test"})
        return Redirect(f"http://localhost:{site.port}/robots.txt")

    ok_routes = {"/robots.txt": moved}
    # One site each: a live fetch asks only for its origin's /robots.txt.
    with (
        SiteServer(ok_routes) as site,
        SiteServer({"/robots.txt": Reply(503, b"", {"Retry-After": "120"})}) as busy_site,
        SiteServer({"/robots.txt": Reply(404)}) as gone_site,
        SiteServer({"/robots.txt": Huge(2_000_000)}) as huge_site,
    ):
        _, ok = tester.call(f"/api/live?url={site.url('/robots.txt')}")
        _, busy = tester.call(f"/api/live?url={busy_site.url('/robots.txt')}")
        _, gone = tester.call(f"/api/live?url={gone_site.url('/robots.txt')}")
        _, huge = tester.call(f"/api/live?url={huge_site.url('/robots.txt')}")
    assert (ok["kind"], ok["status"], ok["hops"], ok["body"]) == ("success", 200, 1, BODY)
    assert ["X-Served-By", "test"] in ok["headers"]
    assert (busy["kind"], busy["status"]) == ("unreachable", 503)
    assert ["Retry-After", "120"] in busy["headers"]
    assert (gone["kind"], gone["status"]) == ("unavailable", 404)
    assert huge["cut"] is True and len(huge["body"]) == 600_000


def test_live_fetch_is_http_only(start_tester: Callable[..., Running]) -> None:
    tester = start_tester()
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/robots.txt", "javascript:alert(1)"):
        status, answer = tester.call(f"/api/live?url={url}")
        assert status == 400 and "only http(s)" in answer["error"]


def test_stored_source_without_a_store_says_so(start_tester: Callable[..., Running]) -> None:
    status, answer = start_tester().call("/api/stored?url=https://example.com/")
    assert status == 409 and "--store" in answer["error"]


def test_importing_the_middleware_never_imports_the_tester() -> None:
    """Issue 27 §10: a crawl (and every ``scrapy`` call) stays as light as before."""
    code = (
        "import sys, scrapy_rep, scrapy_rep.crawler.middleware, scrapy_rep.crawler.addon, "
        "scrapy_rep.tools.cli.scrapy_robots, scrapy_rep.tools.cli.console\n"
        "print(sorted(m for m in sys.modules if m.startswith('scrapy_rep.tools.tester')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert done.stdout.strip() == "[]"


def test_scrapy_rep_tester_prints_its_address_and_warns_off_loopback(tmp_path: Path) -> None:
    """Issue 27 §1, §8: loopback by default; another address is served with a warning."""
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy_rep.tools.cli", "tester", "--host", host, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            port = int(first.rsplit(":", 1)[1].split("/")[0])
            assert first.startswith(f"robots.txt tester: http://{host}:")
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/static/tester.js")
            assert connection.getresponse().status == 200
            connection.close()
        finally:
            process.terminate()
            _, err = process.communicate(timeout=10)
        assert ("warning: the tester listens on 0.0.0.0" in err) is warned
        # ... and says what the Tester reaches for those people: this machine's network
        reach = "the /robots.txt of any host this machine reaches, those of its own network"
        assert (reach in " ".join(err.split())) is warned


def test_scrapy_robots_serve_takes_the_projects_settings(scrapy_serve: Callable[..., dict]) -> None:
    """Issue 27 §1: tokens, User-Agent, purposes and store from the project."""
    config = scrapy_serve("-s", "REP_STORAGE=sqlite", "-s", "REP_PURPOSES=search")
    assert config["agents"] == ["examplebot"]
    assert config["user_agent"] == "ExampleBot/1.0 (+https://example.invalid/bot)"
    assert config["purposes"] == ["search"]
    assert config["store"].endswith(os.path.join(".scrapy", "robotstxt.sqlite3"))


def test_scrapy_robots_serve_in_a_reactorless_project(scrapy_serve: Callable[..., dict]) -> None:
    """The Tester runs its own event loop in a thread of its own: a project
    without Twisted's reactor (Scrapy's reactorless mode) serves it alike."""
    config = scrapy_serve("-s", "TWISTED_REACTOR_ENABLED=False")
    assert config["agents"] == ["examplebot"]


@pytest.fixture
def scrapy_serve(command_path: str, tmp_path: Path) -> Callable[..., dict]:
    import shutil

    project = tmp_path / "project"
    shutil.copytree(ROOT / "example_project", project, ignore=shutil.ignore_patterns(".scrapy"))

    def run(*args: str) -> dict:
        process = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "robots", "--serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=project,
            env={**os.environ, "PYTHONPATH": command_path},
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            if not first:
                raise AssertionError(process.communicate(timeout=10)[1])
            url = first.split()[2]
            port = int(url.rsplit(":", 1)[1].strip("/"))
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", "/")
            page = connection.getresponse().read().decode()
            token = page.split('name="tester-token" content="', 1)[1].split('"', 1)[0]
            connection.request("GET", "/api/config", headers={"X-Tester-Token": token})
            config: dict = json.loads(connection.getresponse().read())
            connection.close()
            return config
        finally:
            process.terminate()
            process.communicate(timeout=10)

    return run


def test_stored_answer_reads_what_the_store_keeps(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    from cache.conftest import run_crawlers

    store = StoreName(str(tmp_path / "robotstxt.sqlite3"))
    with SiteServer({"/robots.txt": Reply(200, BODY.encode())}) as site:
        run_crawlers(
            {"urls": [site.url("/a")], "settings": {"REP_STORAGE_PATH": store.where}}, cwd=tmp_path
        )
        tester = start_tester(store=store)
        status, stored = tester.call(f"/api/stored?url={site.url('/x')}")
        _, forgot = tester.call("/api/forget", {"url": site.url("/")})
        gone = read_origin(store, site.url("/"))[1]
    assert status == 200
    assert (stored["kept"], stored["outcome"], stored["body"], stored["closed"]) == (
        True,
        "success",
        BODY,
        False,
    )
    assert 0 <= time.time() - stored["fetched"]["at"] < 120
    assert stored["tokens"] == ["scrapy"]  # the pace shown is the crawler's, not *'s
    assert forgot["forgotten"] is True and gone is None


def test_stored_from_a_missing_store_file_says_so(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    missing = tmp_path / "none.sqlite3"
    tester = start_tester(store=StoreName(str(missing)))
    status, answer = tester.call("/api/stored?url=https://example.com/")
    assert status == 503 and "no such store file" in answer["error"]
    assert not missing.exists()


SITE_WIDE = """\
Content-Signal: search=yes, ai-train=no
License: https://www.example-news.com/license.xml

User-agent: *
Disallow: /search

User-agent: partnerbot
Content-Signal: search=yes, ai-train=yes
Allow: /
"""


def test_usage_says_which_lines_it_came_from(start_tester: Callable[..., Running]) -> None:
    """docs/usage-preferences.md, "Global lines": the global line for the "*"
    group, the group's own line for partnerbot, each marked."""
    tester = start_tester()
    request = {"robots": SITE_WIDE, "urls": ["/news/a"], "agents": ["somebot", "partnerbot"],
               "purposes": ["train-ai"]}  # fmt: skip
    status, answer = tester.call("/api/test", request)
    assert status == 200
    by = {row["agent"]: row["usage"]["train-ai"] for row in answer["rows"]}
    assert by["somebot"] == {
        "state": "denied",
        "by": [{"source": "content-signal", "line": 1, "text": "search=yes, ai-train=no",
                "global": True}],
    }  # fmt: skip
    assert by["partnerbot"] == {
        "state": "allowed",
        "by": [{"source": "content-signal", "line": 8, "text": "search=yes, ai-train=yes",
                "global": False}],
    }  # fmt: skip
    warned = [f["code"] for line in answer["lines"] for f in line["findings"]]
    assert warned == []  # partnerbot states every key the global line states


def test_licenses_are_shown_and_the_line_is_valid(start_tester: Callable[..., Running]) -> None:
    """docs/spec.md §7.3: the License line takes part in the crawl, as a sitemap;
    lint (whose findings are the page's line marks) finds nothing wrong with it."""
    tester = start_tester()
    _, answer = tester.call("/api/test", {"robots": SITE_WIDE, "urls": []})
    assert answer["site_wide"] == [
        {
            "key": "license",
            "about": "the site's licence terms, RSL 1.0",
            "values": ["https://www.example-news.com/license.xml"],
        }
    ]
    assert [line["severity"] for line in answer["lines"][:2]] == [None, None]
    _, answer = tester.call("/api/test", {"robots": "License: /l.xml\n", "urls": []})
    assert [kind["values"] for kind in answer["site_wide"]] == [[]]
    assert "license-not-absolute" in [f["code"] for f in answer["lines"][0]["findings"]]
