"""The Tester as a new user first reads it (docs/tester.md): the verdict for
the URL being typed beside its field, on the first screen at 1280 x 900 and
at 400 px; fields that hold placeholders, not values; a URL that is not what
it seems, flagged; a closed site's empty editor said empty; no empty labels;
what Crawl-delay, Request-rate and Sitemap lines do, said beside them; and
the report page without sideways scrolling at 400 px, whatever its store's
path. Real headless Chromium, a real tester server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.tools.store.view import StoreName
from scrapy_rep.tools.tester.answers import as_tested, line_report, verdicts

from .conftest import Running, wait_ready

ROBOTS = (
    "User-agent: *\nDisallow: /tmp\nCrawl-delay: 1\nRequest-rate: 1/5s\n"
    "Sitemap: https://shop.example/sitemap.xml\n"
)


@contextmanager
def screen(driver: Any, width: int, height: int = 900) -> Iterator[None]:
    """The page on a screen ``width`` x ``height`` (a phone below 500 px)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500},
    )
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def verdict_of(browser: Any, text: str) -> str:
    """Type ``text`` in the URL field; the verdict beside it, once it is ``text``'s."""
    field = browser.find_element(By.ID, "url")
    field.clear()
    field.send_keys(text)
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script(
            "return document.getElementById('verdict').dataset.url === arguments[0]", text
        )
    )
    said: str = browser.find_element(By.ID, "verdict").text
    return said


# --- the answers behind it ------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "path", "flagged"),
    [
        ("/tmp/x", "/tmp/x", ""),
        ("//tmp/x", "/x", "names the host 'tmp'"),
        ("tmp/x", "/x", "is not a path"),
        ("/a/../tmp/x", "/tmp/x", "tested as /tmp/x"),
        ("https://shop.example/a/./b?q=1", "/a/b?q=1", "tested as /a/b?q=1"),
    ],
)
def test_scrapy_a_url_that_reads_as_another_path_or_host_is_flagged(
    url: str, path: str, flagged: str
) -> None:
    found, note = as_tested(url)
    assert found == path
    assert (flagged in note) if flagged else note == ""
    (row,) = verdicts(ROBOTS, [url], ["shop"])
    assert (row["path"], row["note"]) == (found, note)


def test_scrapy_pacing_and_sitemap_lines_are_explained_where_they_stand() -> None:
    notes = {line["n"]: line["note"] for line in line_report(ROBOTS)["lines"] if line["note"]}
    assert sorted(notes) == [3, 4, 5]
    assert notes[3].startswith("Crawl-delay: this group asks 1 s between two requests")
    assert 'REP_CRAWL_DELAY = "obey"' in notes[3] and 'REP_CRAWL_DELAY = "obey"' in notes[4]
    assert "REP_FOLLOW_SITEMAPS" in notes[5]


# --- the page ---------------------------------------------------------------------------


@pytest.mark.parametrize("width", [1280, 400])
def test_the_verdict_of_the_url_being_typed_is_beside_it_on_the_first_screen(
    browser: Any, start_tester: Callable[..., Running], width: int
) -> None:
    tester = start_tester(agents=("shop",))
    with screen(browser, width):
        browser.get(tester.url + "?" + urlencode({"robots": ROBOTS}))
        wait_ready(browser)
        field = browser.find_element(By.ID, "url")
        assert field.get_attribute("value") == ""  # a placeholder, not a value
        assert field.get_attribute("placeholder").startswith("/private/page")
        assert browser.find_element(By.ID, "urls").get_attribute("value") == ""
        assert "Type a path" in browser.find_element(By.ID, "verdict").text
        said = verdict_of(browser, "/tmp/x")
        assert said.startswith("disallowed for shop: line 2: Disallow: /tmp (group *)"), said
        bottom = browser.execute_script(
            "return document.getElementById('verdict').getBoundingClientRect().bottom"
        )
        assert bottom <= 900  # above the fold
        assert browser.execute_script(  # no sideways scroll
            "const page = document.documentElement; return page.scrollWidth <= page.clientWidth"
        )
        said = verdict_of(browser, "//tmp/x")
        assert said.startswith("allowed for shop")
        assert "names the host 'tmp', not a path of this site" in said
        flagged = browser.find_element(By.ID, "verdict").get_attribute("data-flagged")
        assert flagged == "true"


def test_lines_that_are_not_rules_are_marked_and_explained(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    tester = start_tester()
    browser.get(tester.url + "?" + urlencode({"robots": ROBOTS, "url": "/"}))
    wait_ready(browser)
    items = browser.find_elements(By.CSS_SELECTOR, "#line-notes li")
    assert [item.get_attribute("data-line") for item in items] == ["3", "4", "5"]
    assert "Crawl-delay" in items[0].text and "Sitemap" in items[2].text
    marked = browser.execute_script(
        "return Array.from(document.querySelectorAll('#editor-lines .ln.note'))"
        ".map(l => l.dataset.line)"
    )
    assert marked == ["3", "4", "5"]


def test_no_empty_label_is_drawn_on_a_phone(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """Each result at 400 px had an empty "Purposes:" line."""
    tester = start_tester()
    for query in ({"url": "/tmp/x"}, {"url": "/tmp/x", "purpose": "train-ai"}):
        with screen(browser, 400):
            browser.get(tester.url + "?" + urlencode({"robots": "User-agent: *\n", **query}))
            wait_ready(browser)
            empty = browser.execute_script(
                "return Array.from(document.querySelectorAll('#results td'))"
                ".filter(td => td.offsetParent !== null && td.textContent.trim() === '')"
                ".map(td => td.dataset.label)"
            )
        assert empty == []


def _closed_store(folder: Path) -> StoreName:
    now = time.time()
    closed = OriginRecord(
        kind=FetchKind.UNREACHABLE,
        status=503,
        reason="HTTP 503",
        fetched_at=now - 60,
        expires_at=now + 86400,
        failures=3,
        outage_started_at=now - 3600,
        next_retry_at=now + 60,
    )
    path = folder / ("projects" + "shopcrawler" * 6) / "robotstxt.sqlite3"
    path.parent.mkdir()

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        await storage.put("https://down.example", closed, 86400)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    return StoreName(str(path))


def test_a_closed_sites_editor_says_it_is_empty(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    tester = start_tester(store=_closed_store(tmp_path))
    query = {"robots_url": "https://down.example/robots.txt", "source": "stored"}
    browser.get(tester.url + "?" + urlencode(query))
    wait_ready(browser)
    area = browser.find_element(By.ID, "robots")
    assert area.get_attribute("value") == ""
    hint = area.get_attribute("placeholder")
    assert hint.startswith("(empty: no robots.txt was received")
    assert "User-agent" not in hint and "Disallow" not in hint  # nothing that looks like a file
    said = verdict_of(browser, "/page")
    assert said.startswith("disallowed for scrapy: the site is closed: every request to it is")


def test_the_report_page_has_no_sideways_scroll_at_400px_with_a_long_store_path(
    browser: Any, start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    tester = start_tester(store=_closed_store(tmp_path))
    with screen(browser, 400):
        browser.get(tester.url + "report")
        WebDriverWait(browser, 30).until(
            lambda d: int(d.execute_script("return Number(document.body.dataset.loads || 0)"))
        )
        widths = browser.execute_script(
            "return [window.innerWidth, document.documentElement.scrollWidth]"
        )
    assert widths == [400, 400]


def test_show_stored_gives_the_pace_the_crawlers_group_asks(
    start_tester: Callable[..., Running], tmp_path: Path
) -> None:
    now = time.time()
    body = b"User-agent: shop\nCrawl-delay: 4\n\nUser-agent: *\nCrawl-delay: 9\n"
    paced = OriginRecord(
        kind=FetchKind.SUCCESS,
        status=200,
        reason="HTTP 200",
        fetched_at=now,
        expires_at=now + 86400,
        good_body=body,
        good_at=now,
        good_status=200,
    )
    path = tmp_path / "robotstxt.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        await storage.put("https://paced.example", paced, 86400)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    tester = start_tester(store=StoreName(str(path)), agents=("shop",))
    status, answer = tester.call("/api/stored?url=https://paced.example/")
    assert status == 200, answer
    assert (answer["pace"], answer["tokens"]) == (4.0, ["shop"])
