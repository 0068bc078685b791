"""The Tester's pages checked by axe-core (issues 44, 45), in a real headless Chromium.

axe-core ships inside ``axe-selenium-python`` (``axe.min.js``: nothing is
fetched) and is put into the page by Selenium's ``execute_script``, which the
page's Content-Security-Policy does not govern: the policy stays strict. The
page is checked as a user leaves it at each step: a shared test with a
result selected, the Refetch question open, and on a 400 px phone screen;
the report page with a filter applied, its Refetch question open, and on
the phone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.tools.store.view import StoreName

from .conftest import Running, narrow, wait_ready
from .test_tester_browser import SHARED_ROBOTS

#: What fails the check: axe's two highest impacts (below: moderate, minor).
BLOCKING = ("serious", "critical")


def blocking(browser: Any) -> list[str]:
    """axe's serious and critical violations on the page as it is now."""
    axe = Axe(browser)
    axe.inject()
    results = axe.run()
    assert results["passes"], "axe ran no check"
    return [
        f"{v['impact']} {v['id']}: {v['help']} {[n['target'] for n in v['nodes']]}"
        for v in results["violations"]
        if v["impact"] in BLOCKING
    ]


def test_the_page_has_no_serious_or_critical_accessibility_violations(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    (tmp_path / "s.sqlite3").touch()  # an empty file is an empty SQLite store
    tester = start_tester(store=StoreName(str(tmp_path / "s.sqlite3")))
    query = {
        "robots": SHARED_ROBOTS + "Sitemap: /sitemap-news.xml\n",
        "robots_url": "https://example.com/robots.txt",
        "url": ["/cart/x", "/private/a", "/doc.pdf"],
        "agent": ["mybot", "googlebot"],
        "purpose": ["train-ai"],
    }
    link = tester.url + "?" + urlencode(query, doseq=True)
    browser.get(link)
    wait_ready(browser)
    browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")[1].click()
    assert blocking(browser) == []

    browser.find_element(By.ID, "refetch").click()
    assert browser.find_element(By.ID, "refetch-dialog").is_displayed()
    assert blocking(browser) == []
    browser.find_element(By.ID, "refetch-no").click()

    with narrow(browser, 400):
        browser.get(link)
        wait_ready(browser)
        browser.find_elements(By.CSS_SELECTOR, "#results tbody tr")[1].click()
        assert blocking(browser) == []


def _report_store(path: Path) -> StoreName:
    """A store with an origin in each state of the report (and one cut, one redirected)."""
    import asyncio
    import time
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
    from scrapy_rep.cache.policy import PolicyConfig, record_outcome
    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    now, config, hour = time.time(), PolicyConfig(), 3600.0
    ok = FetchOutcome(
        FetchKind.SUCCESS, "x", now, 200, b"User-agent: *\nDisallow: /x\n", "HTTP 200"
    )
    down = FetchOutcome(FetchKind.UNREACHABLE, "x", now, 503, reason="HTTP 503")
    gone = FetchOutcome(FetchKind.UNAVAILABLE, "x", now, 404, reason="HTTP 404")

    def made(*steps: tuple[float, FetchOutcome]) -> Any:
        record = None
        for ago, outcome in steps:
            record = record_outcome(record, outcome, now - ago, config)
        return record

    records = {
        "https://rules.example": made((hour, ok)),
        "https://gone.example": made((hour, gone)),
        "https://closed.example": made((hour, down)),
        "https://copy.example": made((72 * hour, ok), (13 * hour, down)),
        # asked again (and down) after its first 12 h: everything allowed
        "https://allow.example": made((13 * hour, down), (0.5 * hour, down)),
        "https://cut.example": replace(made((hour, ok)), truncated=True),
        "https://moved.example": replace(
            made((hour, ok)), final_url="https://www.moved.example/robots.txt"
        ),
    }

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key, record in records.items():
            await storage.put(key, record, 86400.0)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    return StoreName(str(path))


def _report_loaded(browser: Any) -> None:
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.state") in ("ready", "error")
    )
    assert browser.execute_script("return document.body.dataset.state") == "ready"


def test_the_report_page_has_no_serious_or_critical_accessibility_violations(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    tester = start_tester(store=_report_store(tmp_path / "s.sqlite3"))
    link = (
        tester.url + "report?" + urlencode({"state": ["closed", "last-copy", "rules"]}, doseq=True)
    )
    browser.get(link)
    _report_loaded(browser)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#report tbody tr")) == 5
    assert blocking(browser) == []

    browser.find_element(By.CSS_SELECTOR, "#report tbody tr button.refetch").click()
    assert browser.find_element(By.ID, "refetch-dialog").is_displayed()
    assert blocking(browser) == []
    browser.find_element(By.ID, "refetch-no").click()

    with narrow(browser, 400):
        browser.get(link)
        _report_loaded(browser)
        assert blocking(browser) == []
