"""The Tester's page checked by axe-core (issue 44), in a real headless Chromium.

axe-core ships inside ``axe-selenium-python`` (``axe.min.js``: nothing is
fetched) and is put into the page by Selenium's ``execute_script``, which the
page's Content-Security-Policy does not govern: the policy stays strict. The
page is checked as a user leaves it at each step: a shared test with a
result selected, the Refetch question open, and on a 400 px phone screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from axe_selenium_python import Axe
from selenium.webdriver.common.by import By

from scrapy_rep.tools.store_view import StoreName

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
