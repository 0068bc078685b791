"""The robots.txt Tester in a real headless Chromium (issue 27 §9).

What a user sees: a shared URL shows the engine's verdicts and deciding
lines at once; a hostile robots.txt runs nothing; Refetch needs the page's
token; and Refetch makes a crawl that is already running, and the next one,
sharing the store fetch robots.txt again, once (crawler processes against a
server on 127.0.0.1 counting requests).
Screenshots go to docs/_static/tester-*.png for docs/tester.md.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from cache.conftest import run_crawlers
from cache.running_crawls import Gate, report, start_running, wait_until
from crawler.servers import Reply, SiteServer
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.tools.store.view import StoreName, read_origin

from .conftest import Running, lit, rows, screenshot, wait_ready

SHARED_ROBOTS = """\
# the shop's robots.txt
User-agent: *
Disallow: /cart
Allow: /cart/help
Crawl-delay: 10

User-agent: mybot
Disallow: /private
Allow: /private/press
Content-Usage: train-ai=n

User-agent: Googlebot
Disalow: /typo
Disallow: /*.pdf$
"""


#: (URL, crawler) -> (verdict, deciding line) for SHARED_ROBOTS.
SHARED_VERDICTS = {
    ("/cart/x", "mybot"): ("allowed", ""),  # mybot's own group has no /cart rule
    ("/cart/help/faq", "mybot"): ("allowed", ""),
    ("/private/a", "mybot"): ("disallowed", "8"),
    ("/private/press/1", "mybot"): ("allowed", "9"),
    ("/doc.pdf", "mybot"): ("allowed", ""),
    ("/typo", "mybot"): ("allowed", ""),
    ("/cart/x", "googlebot"): ("allowed", ""),
    ("/cart/help/faq", "googlebot"): ("allowed", ""),
    ("/private/a", "googlebot"): ("allowed", ""),
    ("/private/press/1", "googlebot"): ("allowed", ""),
    ("/doc.pdf", "googlebot"): ("disallowed", "14"),
    ("/typo", "googlebot"): ("allowed", ""),  # "Disalow" is not a field
    ("/cart/x", "otherbot"): ("disallowed", "3"),
    ("/cart/help/faq", "otherbot"): ("allowed", "4"),
    ("/private/a", "otherbot"): ("allowed", ""),
    ("/private/press/1", "otherbot"): ("allowed", ""),
    ("/doc.pdf", "otherbot"): ("allowed", ""),
    ("/typo", "otherbot"): ("allowed", ""),
}


def page_url(tester: Running, **query: Any) -> str:
    return tester.url + "?" + urlencode(query, doseq=True)


def test_shared_url_shows_verdicts_and_deciding_lines_for_tokens_and_urls(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 27 §3, §7: opening a shared URL shows, with no click, per URL and
    crawler the verdict, the group and the deciding line, as the engine says."""
    tester = start_tester()
    urls = ["/cart/x", "/cart/help/faq", "/private/a", "/private/press/1", "/doc.pdf", "/typo"]
    agents = ["mybot", "googlebot", "otherbot"]
    browser.get(
        page_url(tester, robots=SHARED_ROBOTS, url=urls, agent=agents, purpose=["train-ai"])
    )
    wait_ready(browser)
    shown = {(row["url"], row["agent"]): (row["verdict"], row["line"]) for row in rows(browser)}
    assert shown == SHARED_VERDICTS
    robots = RobotsTxt.parse(SHARED_ROBOTS.encode())  # and the engine agrees, row by row
    for (url, agent), (verdict, line) in shown.items():
        explained = robots.explain(url, agent)
        assert (verdict == "allowed") == explained.allowed
        assert line == (str(explained.rule.line) if explained.rule else "")
    groups = {(row["url"], row["agent"]): row["group"] for row in rows(browser)}
    assert groups[("/private/a", "mybot")] == "mybot"
    assert groups[("/cart/x", "otherbot")] == "*"
    assert lit(browser) == []  # nothing selected yet: no line lit
    row = browser.find_element(
        By.CSS_SELECTOR, 'tr[data-url="/private/press/1"][data-agent="mybot"]'
    )
    purpose = row.find_element(By.CSS_SELECTOR, "[data-purpose]")
    assert (purpose.get_attribute("data-state"), purpose.get_attribute("data-lines")) == (
        "denied",
        "10",
    )
    row.click()
    assert lit(browser) == [9, 10]  # its rule, and train-ai's deciding line
    assert "selected" in row.get_attribute("class").split()
    marks = browser.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln')).map(l => l.className)"
    )
    assert marks[4] == "ln note"  # Crawl-delay: 10 is fine, as lint says; its effect is said
    assert marks[12] == "ln error"  # Disalow: lint's error, not an "accepted typo"
    typo = browser.find_element(By.CSS_SELECTOR, '#findings li[data-line="13"]')
    assert "error misspelt-field" in typo.text
    assert "Fix: write 'Disallow: /typo'" in typo.text  # the hint, written out
    screenshot(browser, "shared")


def test_editing_retests_at_once_and_keeps_the_state_in_the_url(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 27 §3, §7: an edit is answered by the server and lands in the URL."""
    tester = start_tester()
    browser.get(page_url(tester, robots="User-agent: *\nDisallow: /a\n", url=["/a"]))
    wait_ready(browser)
    assert rows(browser)[0]["verdict"] == "disallowed"
    area = browser.find_element(By.ID, "robots")
    area.clear()
    area.send_keys("User-agent: *\nAllow: /\n")
    WebDriverWait(browser, 20).until(lambda d: rows(d)[0]["verdict"] == "allowed")
    assert rows(browser)[0]["line"] == "2"
    assert "Allow%3A+%2F" in browser.current_url


HOSTILE = (
    "User-agent: *\n"
    "Disallow: /<script>window.__pwned = 'script'; alert(1)</script>\n"
    'Disallow: /"><img src=x onerror="window.__pwned=\'img\'; alert(2)">\n'
    "Sitemap: javascript:window.__pwned='sitemap'\n"
    "<svg onload=\"window.__pwned='svg'\">\n"
)


def _no_markup_ran(browser: Any) -> None:
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert.text
    assert browser.find_elements(By.CSS_SELECTOR, "#editor img, #editor script, #editor svg") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#findings img, #findings script") == []
    assert browser.find_elements(By.CSS_SELECTOR, "#results img, #results script") == []


def test_hostile_robots_txt_and_headers_run_no_markup(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Issue 27 §8: markup in the file, a URL, a token or a response header is text."""
    tester = start_tester()
    evil_url = '/"><img src=x onerror="window.__pwned=\'url\'">'
    evil_agent = "<img src=x onerror=\"window.__pwned='agent'\">"
    browser.get(page_url(tester, robots=HOSTILE, url=[evil_url, "/<script>"], agent=[evil_agent]))
    wait_ready(browser)
    _no_markup_ran(browser)
    texts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln')).map(l => l.textContent)"
    )
    assert texts[1] == "Disallow: /<script>window.__pwned = 'script'; alert(1)</script>"
    assert rows(browser)[0]["url"] == evil_url
    screenshot(browser, "hostile")

    headers = {
        "Content-Type": "text/html",
        "X-Note": "<img src=x onerror=\"window.__pwned='header'\">",
    }
    with SiteServer({"/robots.txt": Reply(200, HOSTILE.encode(), headers)}) as site:
        browser.get(page_url(tester, robots_url=site.url("/robots.txt"), url=["/x"]))
        wait_ready(browser)
        browser.find_element(By.ID, "fetch-live").click()  # a link never fetches
        wait_ready(browser, runs=2)
        info = browser.find_element(By.ID, "fetch-info").text
    assert "X-Note: <img src=x onerror=" in info
    _no_markup_ran(browser)


def _stored_copy(tmp_path: Path, site: SiteServer) -> dict[str, Any]:
    return {
        "urls": [site.url("/public"), site.url("/private")],
        "settings": {
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": str(tmp_path / "robotstxt.sqlite3"),
        },
    }


class Switch:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def __call__(self, host: str) -> Reply:
        return Reply(200, self.body, {"Content-Type": "text/plain"})


EVIL_PAGE = """<!DOCTYPE html><html><body><script>
const target = "{target}";
const sends = [
  fetch(target + "api/forget", {{method: "POST", mode: "no-cors",
      headers: {{"Content-Type": "text/plain"}}, body: JSON.stringify({{url: "{url}"}})}}),
  fetch(target + "api/forget", {{method: "POST", headers: {{"Content-Type": "application/json",
      "X-Tester-Token": "guess"}}, body: JSON.stringify({{url: "{url}"}})}}),
];
Promise.allSettled(sends).then(() => {{ document.title = "sent"; }});
</script></body></html>"""


FORGE = """
const [url, done] = arguments;
const send = (token) => fetch("/api/forget", {method: "POST", body: JSON.stringify({url}),
    headers: Object.assign({"Content-Type": "application/json"}, token)});
Promise.all([send({}), send({"X-Tester-Token": "guess"})]).then(r => done(r.map(x => x.status)));
"""


def _another_page_cannot_forget(browser: Any, tester: Running, store: StoreName, url: str) -> None:
    evil = EVIL_PAGE.format(target=tester.url, url=url)
    with SiteServer({"/evil": Reply(200, evil.encode(), {"Content-Type": "text/html"})}) as other:
        browser.get(other.url("/evil"))
        WebDriverWait(browser, 20).until(lambda d: d.title == "sent")
    assert read_origin(store, url)[1] is not None  # not forgotten


def _refetch_cancelled(browser: Any, store: StoreName, url: str) -> None:
    """Refetch now asks first (issue 44); Cancel, which has the focus, does nothing."""
    browser.find_element(By.ID, "refetch").click()
    dialog = browser.find_element(By.ID, "refetch-dialog")
    assert dialog.is_displayed() and "Every crawl sharing that store" in dialog.text
    assert browser.switch_to.active_element.get_attribute("id") == "refetch-no"
    browser.find_element(By.ID, "refetch-no").click()
    assert not dialog.is_displayed()
    assert read_origin(store, url)[1] is not None


def _start_running(
    job: dict[str, Any], site: SiteServer, tmp_path: Path
) -> subprocess.Popen[bytes]:
    """A crawl that fetched a page, and waits at /control until the gate opens."""
    running_job = {
        "first": [site.url("/public/r1"), site.url("/private/r1")],
        "then": [site.url("/public/r2"), site.url("/private/r2")],
        "control": site.url("/control"),
        "settings": {**job["settings"], "REP_FORGET_POLL_INTERVAL": 0.05},
    }
    running = start_running(running_job, tmp_path)
    wait_until(lambda: site.count("/control") == 1, [running])
    return running


def test_refetch_needs_the_token_and_makes_a_running_crawl_fetch_again(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    """Issue 27 §6, §8: another page cannot trigger Refetch; the tester's own
    button deletes the origin's record; a crawler process that was running
    before the click (and held the old copy in memory) hears of it within
    its poll interval, fetches robots.txt again and obeys the new version;
    one that starts after it shares that fetch (sharing the SQLite store)."""
    robots, gate = Switch(b"User-agent: *\nDisallow: /private\n"), Gate()
    with SiteServer({"/robots.txt": robots, "/control": gate}) as site:
        job = _stored_copy(tmp_path, site)
        store = StoreName(job["settings"]["REP_STORAGE_PATH"])
        first = run_crawlers(job, cwd=tmp_path)[0]
        assert site.count("/robots.txt") == 1
        robots.body = b"User-agent: *\nDisallow: /public\n"  # the site changes its file
        second = run_crawlers(job, cwd=tmp_path)[0]
        assert site.count("/robots.txt") == 1  # the stored copy still rules
        running = _start_running(job, site, tmp_path)

        tester = start_tester(store=store)
        _another_page_cannot_forget(browser, tester, store, site.url("/"))

        stored = {"robots_url": site.url("/robots.txt"), "source": "stored"}
        browser.get(page_url(tester, **stored, url=["/public", "/private"]))
        wait_ready(browser)
        assert [row["verdict"] for row in rows(browser)] == ["allowed", "disallowed"]
        statuses = browser.execute_async_script(FORGE, site.url("/"))
        assert statuses == [403, 403]  # from the tester's own origin, without its token
        assert read_origin(store, site.url("/"))[1] is not None
        _refetch_cancelled(browser, store, site.url("/"))
        clicked_at = time.time()
        browser.find_element(By.ID, "refetch").click()
        browser.find_element(By.ID, "refetch-yes").click()
        WebDriverWait(browser, 20).until(
            lambda d: "every worker" in d.find_element(By.ID, "store-info").text
        )
        assert read_origin(store, site.url("/"))[1] is None

        gate.open()  # the crawl that was running before the click goes on
        ran = report(running)
        assert site.count("/robots.txt") == 2  # fetched again, by the running crawl
        third = run_crawlers(job, cwd=tmp_path)[0]
        assert site.count("/robots.txt") == 2  # once: the crawl started after shares it
        WebDriverWait(browser, 30).until(
            lambda d: d.find_element(By.ID, "store-info").get_attribute("data-refetched") == "true"
        )
        seen = browser.find_element(By.ID, "store-info").text
        wait_ready(browser, runs=2)
        diff = browser.find_element(By.ID, "diff").text
        screenshot(browser, "refetch")
    assert "new version first seen" in seen
    assert "-Disallow: /public" in diff and "+Disallow: /private" in diff
    assert read_origin(store, site.url("/"))[1].fetched_at > clicked_at  # type: ignore[union-attr]
    assert sorted(first["got"]) == sorted(second["got"]) == [site.url("/public")]
    assert sorted(third["got"]) == [site.url("/private")]
    assert ran["rounds"][0]["got"] == [site.url("/public/r1")]  # the old copy, in memory
    assert ran["heard"] and ran["rounds"][1]["got"] == [site.url("/private/r2")]
    assert ran["rounds"][1]["dropped"] == [site.url("/public/r2")]


def test_live_against_edited_diff_and_download(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    """Issue 27 §2, §5: the live file's status and headers, a diff with the
    edits, and the edited file downloaded as robots.txt. Issue 44: the link
    to the edited test keeps the live URL beside the text, so that it reopens
    the comparison; opening it fetches nothing until Fetch live is pressed."""
    tester = start_tester()
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    body = b"User-agent: *\nDisallow: /old\n"
    with SiteServer({"/robots.txt": Reply(200, body, {"Content-Type": "text/plain"})}) as site:
        browser.get(page_url(tester, robots_url=site.url("/robots.txt"), url=["/old", "/new"]))
        wait_ready(browser)
        browser.find_element(By.ID, "fetch-live").click()  # a link never fetches
        wait_ready(browser, runs=2)
        assert "HTTP 200" in browser.find_element(By.ID, "fetch-info").text
        area = browser.find_element(By.ID, "robots")
        area.send_keys("Disallow: /new\n")
        WebDriverWait(browser, 20).until(
            lambda d: [row["verdict"] for row in rows(d)] == ["disallowed", "disallowed"]
        )
        diff = browser.find_element(By.ID, "diff").text
        screenshot(browser, "live-diff")
        browser.find_element(By.ID, "download").click()
        saved = downloads / "robots.txt"
        WebDriverWait(browser, 20).until(lambda _: saved.exists() and saved.stat().st_size > 0)
        link = browser.find_element(By.ID, "share-link").get_attribute("href")
        assert link == browser.current_url
        query = parse_qs(urlsplit(link).query)
        assert query["robots_url"] == [site.url("/robots.txt")]  # the live URL, kept
        assert query["robots"] == [(body + b"Disallow: /new\n").decode()]  # beside the edit

        browser.get("about:blank")
        browser.get(link)
        wait_ready(browser)
        assert site.count("/robots.txt") == 1  # the link fetched nothing
        assert "press Fetch live" in browser.find_element(By.ID, "fetch-info").text
        assert browser.find_element(By.ID, "robots").get_attribute("value") == query["robots"][0]
        browser.find_element(By.ID, "fetch-live").click()
        wait_ready(browser, runs=2)
        assert site.count("/robots.txt") == 2
        assert browser.find_element(By.ID, "robots").get_attribute("value") == query["robots"][0]
        assert "edited text from the link is kept" in browser.find_element(By.ID, "fetch-info").text
        assert browser.find_element(By.ID, "diff").text == diff  # the comparison, reopened
    assert saved.read_bytes() == body + b"Disallow: /new\n"
    assert "@@ -1,3 +1,4 @@\n User-agent: *\n Disallow: /old\n+Disallow: /new" in diff
