"""The report end to end (docs/cli.md, docs/tester.md): crawls against sites
in each state, placed in time with REP_CLOCK, fill a SQLite store; then
``scrapy-rep report`` (text, JSON, CSV, filters), the Tester's report page
(in headless Chromium: the table, a row opened in the Tester, Refetch of a
row and of a filter, the safety rules; axe-core's check is in
test_tester_accessibility.py) and the last crawl's gauges agree with what the sites did.

The crawls run once for the module (about 10 s): three rounds of crawler
processes sharing the store, 3 days ago and 25 hours ago (together), 13
hours ago, and now. Tests that refetch work on a copy of the store.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from cache.conftest import HOUR, run_crawlers
from crawler.servers import Huge, Redirect, Reply, SiteServer
from local_redis import free_port
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName, read_origin
from scrapy_rep.tools.tester import report_api

from .conftest import Running, narrow, screenshot

DAY = 24 * HOUR
RULES = b"User-agent: *\nDisallow: /private\nDisalow: /typo\n"  # line 3: lint's error
FORBIDS = b"User-agent: *\nDisallow: /\n"
#: site name -> the state the report must give it now
STATES = {
    "rules": "rules",
    "forbids": "rules",
    "gone": "allow-all",
    "busy503": "closed",
    "busy429": "closed",
    "network": "closed",
    "copy": "last-copy",
    "nocopy": "outage-allow",
    "huge": "rules",
    "moved": "rules",
    "expired": "rules",
}
CAUSES = {"busy503": "5xx", "busy429": "429", "network": "network", "copy": "5xx", "nocopy": "5xx"}


class Switch:
    """A robots.txt answer the test changes between rounds of crawls."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    def __call__(self, host: str) -> Reply:
        return self.reply


@dataclass
class Crawled:
    store: Path
    origins: dict[str, str]  # site name -> origin
    last: dict[str, Any]  # the last crawl's report (its stats: the gauges)

    def name_of(self, origin: str) -> str:
        return {o: n for n, o in self.origins.items()}[origin]


def _origin(url: str) -> str:
    return url.rstrip("/")


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    where = tmp_path_factory.mktemp("crawled")
    store = where / "robotstxt.sqlite3"
    copy, nocopy = Switch(Reply(200, RULES)), Switch(Reply(503))
    routes = {
        "rules": {"/robots.txt": Reply(200, RULES)},
        "forbids": {"/robots.txt": Reply(200, FORBIDS)},
        "gone": {"/robots.txt": Reply(404)},
        "busy503": {"/robots.txt": Reply(503)},
        "busy429": {"/robots.txt": Reply(429)},
        "copy": {"/robots.txt": copy},
        "nocopy": {"/robots.txt": nocopy},
        "huge": {"/robots.txt": Huge(600_000, ((0, b"User-agent: *\nDisallow: /early\n"),))},
        "moved": {
            "/robots.txt": Redirect("/robots-2026.txt"),
            "/robots-2026.txt": Reply(200, RULES),
        },
        "expired": {"/robots.txt": Reply(200, RULES)},
    }
    servers = {name: SiteServer(route) for name, route in routes.items()}
    for server in servers.values():
        server.__enter__()
    try:
        origins = {name: _origin(server.url("/")) for name, server in servers.items()}
        origins["network"] = f"http://127.0.0.1:{free_port()}"  # nothing listens there

        def job(names: list[str], offset: float) -> dict[str, Any]:
            return {
                "urls": [f"{origins[name]}/page" for name in names],
                "clock_offset": offset,
                "settings": {
                    "REP_STORAGE_PATH": str(store),
                    "REP_UNREACHABLE_WAIT": 0,
                    "LOG_LEVEL": "WARNING",
                },
            }

        run_crawlers(job(["copy"], -3 * DAY), job(["expired"], -25 * HOUR), cwd=where)
        copy.reply = Reply(503)  # the site goes down: 13 h ago, it answered 503
        run_crawlers(job(["copy", "nocopy"], -13 * HOUR), cwd=where)
        now = [name for name in STATES if name != "expired"]
        (last,) = run_crawlers(job(now, 0.0), cwd=where)
        assert servers["huge"].huge_bytes_sent < 600_000 * 4  # cut, not read whole
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)
    yield Crawled(store, origins, last)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["report", *args])
    return code, capsys.readouterr().out


# --- the command ------------------------------------------------------------------------


def test_report_command_agrees_with_what_the_sites_did(
    crawled: Crawled, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(crawled.store)
    code, data = cli(capsys, "--store", store, "--json", "--deep", "--agent", "scrapy")
    assert code == 0
    rows = {crawled.name_of(item["origin"]): item for item in map(json.loads, data.splitlines())}
    assert {name: row["state"] for name, row in rows.items()} == STATES
    assert {name: row["cause"] for name, row in rows.items() if row["cause"]} == CAUSES
    assert rows["huge"]["cut"] is True and rows["huge"]["size"] == 512_000
    assert rows["moved"]["redirected_to"] == crawled.origins["moved"] + "/robots-2026.txt"
    assert rows["expired"]["expired"] is True
    assert {name for name, row in rows.items() if row["forbids_all"]} == {"forbids"}
    assert rows["rules"]["errors"] == 1 and rows["rules"]["lint_errors"] is True
    copy = rows["copy"]  # its outage began 13 h ago, after a copy of 3 days ago
    assert copy["age"] == pytest.approx(13 * HOUR, abs=120)
    assert copy["until"] - copy["since"] == pytest.approx(30 * DAY)
    closed = rows["busy503"]
    assert closed["until"] - closed["since"] == pytest.approx(12 * HOUR)

    code, text = cli(capsys, "--store", store, "--state", "closed", "--sort", "origin")
    shown = [line.split()[0] for line in text.splitlines()[1:]]
    assert shown == sorted(crawled.origins[n] for n in ("busy503", "busy429", "network"))
    code, data = cli(capsys, "--store", store, "--csv", "--flag", "cut")
    assert [row["origin"] for row in csv.DictReader(io.StringIO(data))] == [crawled.origins["huge"]]
    code, data = cli(capsys, "--store", store, "--json", "--state", "outage", "--older-than", "12h")
    assert {crawled.name_of(json.loads(line)["origin"]) for line in data.splitlines()} == {
        "copy",
        "nocopy",
    }
    code, data = cli(capsys, "--store", store, "--summary", "--json")
    summary = json.loads(data)
    assert summary["origins"] == len(STATES)
    assert summary["states"]["closed"] == 3 and summary["flags"]["redirected"] == 1


def test_gauges_of_the_last_crawl_agree_with_the_report(
    crawled: Crawled, capsys: pytest.CaptureFixture[str]
) -> None:
    """The crawl that ran now held every origin but "expired": its gauges count
    them by the report's states."""
    stats = crawled.last["stats"]
    _, data = cli(capsys, "--store", str(crawled.store), "--json", "--deep", "-a", "scrapy")
    rows = [json.loads(line) for line in data.splitlines()]
    held = [row for row in rows if crawled.name_of(row["origin"]) != "expired"]
    now = "robotstxt/origins_now/"
    assert stats[now + "known"] == len(held) == 10
    assert stats[now + "closed"] == sum(row["state"] == "closed" for row in held) == 3
    assert stats[now + "last-copy"] == sum(row["state"] == "last-copy" for row in held)
    assert stats[now + "last-copy"] == 1
    assert stats[now + "forbids-all"] == sum(row["forbids_all"] for row in held) == 1


# --- the page ------------------------------------------------------------------------------


def page_rows(browser: Any) -> dict[str, str]:
    found: dict[str, str] = browser.execute_script(
        "const rows = {}; for (const tr of document.querySelectorAll('#report tbody tr'))"
        " rows[tr.dataset.origin] = tr.dataset.state; return rows;"
    )
    return found


def wait_loaded(browser: Any, loads: int = 1) -> None:
    WebDriverWait(browser, 30).until(
        lambda d: (
            int(d.execute_script("return Number(document.body.dataset.loads || 0)")) >= loads
            or d.execute_script("return document.body.dataset.state") == "error"
        )
    )
    assert browser.execute_script("return document.body.dataset.state") == "ready", (
        browser.find_element(By.ID, "status").text
    )


def report_url(tester: Running, **query: Any) -> str:
    return tester.url + "report?" + urlencode(query, doseq=True)


def copy_of(store: Path, into: Path) -> StoreName:
    """The crawled store, copied whole (its WAL too) with SQLite's backup."""
    target = into / "copy.sqlite3"
    with sqlite3.connect(store) as source, sqlite3.connect(target) as copy:
        source.backup(copy)
    return StoreName(str(target))


def test_report_page_shows_the_states_and_opens_a_row_in_the_tester(
    browser: Any, start_tester: Callable[..., Running], crawled: Crawled
) -> None:
    tester = start_tester(store=StoreName(str(crawled.store)))
    browser.get(report_url(tester, sort="state"))
    wait_loaded(browser)
    shown = {crawled.name_of(origin): state for origin, state in page_rows(browser).items()}
    assert shown == STATES
    counts = browser.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('#counts button'))"
        ".map(b => [b.dataset.state, Number(b.dataset.count)]))"
    )
    assert counts == {"rules": 5, "allow-all": 1, "closed": 3, "last-copy": 1, "outage-allow": 1}
    screenshot(browser, "report")

    browser.find_element(By.CSS_SELECTOR, '#counts button[data-state="closed"]').click()
    wait_loaded(browser, 2)
    assert set(page_rows(browser).values()) == {"closed"} and len(page_rows(browser)) == 3
    assert "state=closed" in browser.current_url  # the filter is in the link

    origin = crawled.origins["rules"]
    browser.get(report_url(tester, host="127.0.0.1", flag="cut"))
    wait_loaded(browser)
    assert list(page_rows(browser)) == [crawled.origins["huge"]]
    browser.get(report_url(tester))
    wait_loaded(browser)
    browser.find_element(By.CSS_SELECTOR, f'tr[data-origin="{origin}"] td.origin a').click()
    WebDriverWait(browser, 20).until(  # the Tester, showing the stored file, linted
        lambda d: d.find_elements(By.CSS_SELECTOR, "#editor-lines .ln.error")
    )
    marks = browser.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln')).map(l => l.className)"
    )
    assert marks[:3] == ["ln", "ln", "ln error"]  # "Disalow: /typo": lint's error
    assert "stored" in browser.find_element(By.ID, "store-info").text


def test_report_page_on_a_phone(
    browser: Any, start_tester: Callable[..., Running], crawled: Crawled
) -> None:
    tester = start_tester(store=StoreName(str(crawled.store)))
    with narrow(browser, 400):
        browser.get(report_url(tester, state="outage"))
        wait_loaded(browser)
        assert len(page_rows(browser)) == 5
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 400  # nothing wider than the screen
        browser.execute_script("document.getElementById('listing').scrollIntoView()")
        screenshot(browser, "report-narrow", width=400)


def test_report_page_refetch_a_row_and_every_row_of_a_filter(
    browser: Any, start_tester: Callable[..., Running], crawled: Crawled, tmp_path: Path
) -> None:
    store = copy_of(crawled.store, tmp_path)
    tester = start_tester(store=store)
    closed = [crawled.origins[name] for name in ("busy503", "busy429", "network")]
    browser.get(report_url(tester, state="closed"))  # a link: it shows, it never forgets
    wait_loaded(browser)
    assert all(read_origin(store, origin + "/")[1] is not None for origin in closed)

    gone = crawled.origins["gone"]
    browser.get(report_url(tester, state="allow-all"))
    wait_loaded(browser)
    button = browser.find_element(By.CSS_SELECTOR, f'tr[data-origin="{gone}"] button.refetch')
    button.click()
    dialog = browser.find_element(By.ID, "refetch-dialog")
    assert dialog.is_displayed() and gone in dialog.text
    browser.find_element(By.ID, "refetch-no").click()  # Cancel: nothing changes
    assert read_origin(store, gone + "/")[1] is not None
    button.click()
    browser.find_element(By.ID, "refetch-yes").click()
    wait_loaded(browser, 2)
    assert read_origin(store, gone + "/")[1] is None
    assert page_rows(browser) == {}

    browser.get(report_url(tester, state="closed"))
    wait_loaded(browser)
    browser.find_element(By.ID, "refetch-all").click()
    assert "3 origins" in browser.find_element(By.ID, "refetch-what").text
    browser.find_element(By.ID, "refetch-yes").click()
    wait_loaded(browser, 2)
    assert "forgot 3 of 3" in browser.find_element(By.ID, "status").text
    assert all(read_origin(store, origin + "/")[1] is None for origin in closed)
    assert read_origin(store, crawled.origins["copy"] + "/")[1] is not None  # not in the filter


def test_report_api_refetches_at_most_max_refetch_origins_at_once(
    start_tester: Callable[..., Running],
    crawled: Crawled,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Above the cap (1,000; 2 here), a filter's Refetch changes nothing and
    says to narrow the filter."""
    monkeypatch.setattr(report_api, "MAX_REFETCH", 2)
    store = copy_of(crawled.store, tmp_path)
    tester = start_tester(store=store)
    status, refused = tester.call("/api/forget-many", {"state": ["closed"], "expect": 3})
    assert status == 413 and "at most 2" in refused["error"]
    assert all(read_origin(store, crawled.origins[n] + "/")[1] for n in ("busy503", "network"))
    status, done = tester.call("/api/forget-many", {"state": ["last-copy"], "expect": 1})
    assert (status, done["forgotten"]) == (200, 1)


def test_report_api_needs_the_token_and_the_count_the_page_showed(
    start_tester: Callable[..., Running], crawled: Crawled, tmp_path: Path
) -> None:
    store = copy_of(crawled.store, tmp_path)
    tester = start_tester(store=store)
    assert tester.call("/api/report", token=None)[0] == 403
    status, answer = tester.call("/api/report?state=closed")
    assert status == 200 and answer["matched"] == 3
    assert len(answer["rows"]) == 3 and answer["summary"]["origins"] == len(STATES)
    assert tester.call("/api/report?state=nonsense")[0] == 400
    assert tester.call("/api/report?older=soon")[0] == 400
    many = {"state": ["closed"], "expect": 3}
    assert tester.call("/api/forget-many", many, token="guess")[0] == 403
    assert tester.call("/api/forget-many", many, token=None)[0] == 403
    status, refused = tester.call("/api/forget-many", {**many, "expect": 2})
    assert status == 409 and "3 origins match" in refused["error"]
    assert all(read_origin(store, crawled.origins[n] + "/")[1] for n in ("busy503", "network"))
    status, done = tester.call("/api/forget-many", many)
    assert (status, done["forgotten"]) == (200, 3)
    # the forget log tells running crawls, once per origin
    with sqlite3.connect(store.where) as db:
        logged = [key for (key,) in db.execute("SELECT key FROM forgotten")]
    assert sorted(logged) == sorted(crawled.origins[n] for n in ("busy503", "busy429", "network"))
    # the page's own words
    page = tester.url + "report"
    import urllib.request

    with urllib.request.urlopen(page, timeout=10) as response:
        html = response.read().decode()
        policy = response.headers["Content-Security-Policy"]
    assert re.search(r'name="tester-token" content="[^"{]+"', html)
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
