"""The Tester against a hostile link: the rows one test may ask for
(docs/tester.md, "Safety"). Real Testers on 127.0.0.1; the page in Chromium.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.tools.tester import server as tester_server
from scrapy_rep.tools.tester.server import MAX_ROWS

from .conftest import Running
from .test_tester_browser import page_url


def test_a_test_of_more_rows_than_the_cap_is_refused_with_413_before_any_work(
    start_tester: Callable[..., Running],
) -> None:
    """URLs x crawlers past 10,000: 413 and a message naming the numbers. A
    64 KB link can name 5,458 URLs and 4,094 crawlers (22 million rows)."""
    tester = start_tester()
    urls = [f"/p{n}" for n in range(101)]
    agents = [f"bot{n}" for n in range(100)]
    status, answer = tester.call("/api/test", {"robots": "", "urls": urls, "agents": agents})
    assert status == 413
    assert answer["error"] == (
        "101 URLs x 100 crawlers = 10,100 results: at most 10,000 are tested at once; "
        "test fewer URLs or crawlers"
    )
    status, answer = tester.call("/api/test", {"robots": "", "urls": urls[:100], "agents": agents})
    assert status == 200 and len(answer["rows"]) == MAX_ROWS == 10_000


def test_a_link_past_the_cap_makes_one_refused_request_and_the_page_says_why(
    browser: Any, start_tester: Callable[..., Running], monkeypatch: Any
) -> None:
    """Opening a link that asks for 10,100 rows: the page sends its one test,
    gets the 413 and shows its message; it asks nothing more without a click."""
    calls: list[str] = []
    lock = threading.Lock()
    handled = tester_server.TesterHandler._test

    def counted(self: Any, data: dict[str, Any]) -> dict[str, Any]:
        with lock:
            calls.append("test")
        return handled(self, data)

    monkeypatch.setattr(tester_server.TesterHandler, "_test", counted)
    tester = start_tester()
    urls = [f"/p{n}" for n in range(101)]
    agents = [f"bot{n}" for n in range(100)]
    browser.get(page_url(tester, robots="User-agent: *\nDisallow: /p1\n", url=urls, agent=agents))
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.state") == "error"
    )
    status = browser.find_element("id", "status").text
    assert "at most 10,000 are tested at once" in status and "10,100 results" in status
    browser.execute_script("return 0")  # one more round trip to the page
    assert calls == ["test"]
