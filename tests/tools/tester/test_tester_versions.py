"""The Tester shows an origin's robots.txt versions and what changed between
the current one and the one before, for the crawlers of its form
(docs/versions.md, "In the Tester"): the API, then the page in headless
Chromium. The store is a real SQLite file holding records written by the
policy's own ``record_outcome``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.cache.versions import body_digest
from scrapy_rep.tools.store.view import StoreName

from .conftest import Running, screenshot

NOW = time.time()
OLD = b"User-agent: mybot\nDisallow: /a\n\nUser-agent: *\nDisallow: /x\n"
NEW = b"User-agent: mybot\nDisallow: /a\nDisallow: /drafts\n\nUser-agent: *\nDisallow: /x\n"


def answer(status: int, body: bytes = b"") -> FetchOutcome:
    kind = FetchKind.SUCCESS if status < 300 else FetchKind.UNAVAILABLE
    return FetchOutcome(kind, "x", NOW, status, body, f"HTTP {status}")


def history(*steps: tuple[float, FetchOutcome]) -> OriginRecord:
    record: OriginRecord | None = None
    for ago, fetched in steps:
        record = record_outcome(record, fetched, NOW - ago, PolicyConfig(), random=lambda: 0.0)
    assert record is not None
    return record


RECORDS = {
    "https://shop.example": history(
        (3 * DAY, answer(200, OLD)), (2 * DAY, answer(200, OLD)), (HOUR, answer(200, NEW))
    ),
    "https://once.example": history((HOUR, answer(200, OLD))),
}


@pytest.fixture
def store(tmp_path: Path) -> StoreName:
    path = tmp_path / "robots.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key, item in RECORDS.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    return StoreName(str(path))


def versions_call(tester: Running, url: str, *agents: str) -> tuple[int, dict[str, Any]]:
    query = urlencode({"url": url, "agent": list(agents)}, doseq=True)
    return tester.call("/api/versions?" + query)


def test_the_api_lists_the_versions_and_the_change_for_each_crawler(
    start_tester: Callable[..., Running], store: StoreName
) -> None:
    tester = start_tester(store=store, agents=("mybot",))
    status, got = versions_call(tester, "https://shop.example/page", "mybot", "otherbot")
    assert status == 200
    assert got["origin"] == "https://shop.example"
    assert [(v["digest"], v["current"]) for v in got["versions"]] == [
        (body_digest(NEW), True),
        (body_digest(OLD), False),
    ]
    earlier = got["versions"][1]
    assert (earlier["first_seen"], earlier["last_seen"]) == pytest.approx(
        (NOW - 3 * DAY, NOW - 2 * DAY)
    )
    assert got["versions"][0]["first_seen"] == pytest.approx(NOW - HOUR)
    mine, other = got["changes"]
    assert mine["tokens"] == ["mybot"] and mine["change"]["changed"] is True
    assert [r["pattern"] for r in mine["change"]["newly_disallowed"]] == ["/drafts"]
    assert "/drafts" in mine["change"]["summary"]
    assert other["change"]["changed"] is False  # otherbot reads the * group: unchanged


def test_the_api_defaults_to_the_testers_crawlers_and_says_when_there_is_one_version(
    start_tester: Callable[..., Running], store: StoreName
) -> None:
    tester = start_tester(store=store, agents=("mybot",))
    _, got = versions_call(tester, "https://shop.example/")
    assert [c["agent"] for c in got["changes"]] == ["mybot"]
    _, got = versions_call(tester, "https://once.example/", "mybot")
    assert len(got["versions"]) == 1 and got["changes"][0]["change"] is None
    _, got = versions_call(tester, "https://nothing.example/", "mybot")
    assert (got["kept"], got["versions"]) == (False, [])
    status, got = versions_call(tester, "no host here", "mybot")
    assert status == 400
    status, got = start_tester().call("/api/versions?url=https://shop.example/")
    assert status == 409  # no store


def test_the_page_shows_the_versions_and_what_changed(
    browser: Any, start_tester: Callable[..., Running], store: StoreName
) -> None:
    tester = start_tester(store=store, agents=("mybot",))
    query = {
        "robots_url": "https://shop.example/robots.txt",
        "source": "stored",
        "agent": ["mybot", "otherbot"],
    }
    browser.get(tester.url + "?" + urlencode(query, doseq=True))
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.getElementById('versions').dataset.shown")
    )
    shown = browser.execute_script(
        "const box = document.getElementById('versions');"
        "return {hidden: box.hidden,"
        " rows: Array.from(box.querySelectorAll('tbody tr')).map(r =>"
        "   [r.dataset.digest, r.dataset.current, r.textContent]),"
        " changes: Array.from(box.querySelectorAll('.change')).map(c =>"
        "   [c.dataset.agent, c.dataset.changed, c.textContent])}"
    )
    assert shown["hidden"] is False
    assert [row[:2] for row in shown["rows"]] == [
        [body_digest(NEW), "true"],
        [body_digest(OLD), "false"],
    ]
    assert "current" in shown["rows"][0][2] and "200" in shown["rows"][0][2]
    (mine, mine_changed, mine_text), (other, other_changed, other_text) = shown["changes"]
    assert (mine, mine_changed, other, other_changed) == ("mybot", "true", "otherbot", "false")
    assert "newly disallowed: Disallow: /drafts" in mine_text
    assert "nothing changed" in other_text
    screenshot(browser, "versions")  # docs/versions.md's picture (REP_TESTER_SCREENSHOTS=docs)

    # The change follows the crawlers as they are edited.
    agents = browser.find_element(By.ID, "agents")
    agents.clear()
    agents.send_keys("mybot-news,mybot")
    WebDriverWait(browser, 20).until(
        lambda d: (
            d.execute_script(
                "return Array.from(document.querySelectorAll('#versions .change'))"
                ".map(c => c.dataset.agent + '=' + c.dataset.changed).join(' ')"
            )
            == "mybot-news,mybot=true"
        )
    )
