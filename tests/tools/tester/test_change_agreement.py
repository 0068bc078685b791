"""One change of a site's robots.txt, said by every part that says it
(docs/versions.md): two real crawls on one SQLite store, the site's file
changed between them; the second crawl's INFO line and its
``robotstxt_changed`` signal, ``scrapy-rep report --changed`` over the store,
and the Tester's versions of the origin name the same change for the
crawl's token, the same two versions, and the page the crawl kept names the
version that let it through. Time moves through REP_CLOCK, never by sleeping."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from crawler.servers import Reply, SiteServer
from crawler.test_robotstxt_changes import Clock, run, said
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.versions import body_digest
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName

from .conftest import Running

DAY = 24 * 3600.0
TOKEN = "testbot"  # the crawl's USER_AGENT is "TestBot/1.0 (+http://127.0.0.1/)"
BEFORE = b"User-agent: testbot\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n"
AFTER = (
    b"User-agent: testbot\nDisallow: /b\nContent-Usage: train-ai=n\n\n"
    b"User-agent: *\nDisallow: /\nSitemap: https://example.com/s.xml\n"
)


@deferred_f_from_coro_f
async def test_the_crawl_the_report_and_the_tester_say_the_same_change(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
    start_tester: Callable[..., Running],
) -> None:
    clock = Clock()
    path = tmp_path / "robots.sqlite3"
    settings: dict[str, Any] = {
        "REP_CLOCK": clock,
        "REP_STORAGE": "sqlite",
        "REP_STORAGE_PATH": str(path),
    }
    with SiteServer({"/robots.txt": Reply(200, BEFORE)}) as site:
        urls = [site.url("/a"), site.url("/b")]
        with caplog.at_level(logging.INFO, logger="scrapy_rep"):
            await run(urls, settings)
            site.routes["/robots.txt"] = Reply(200, AFTER)
            clock.now += 2 * DAY  # the stored copy expired: the second crawl fetches
            caplog.clear()
            second = await run(urls, settings)
        origin = f"http://127.0.0.1:{site.port}"

    # The crawl: one signal, one line, the page it kept names the new version.
    (sent,) = second.spider.changes
    change = sent["change"]
    assert [str(rule.rule.pattern) for rule in change.newly_disallowed] == ["/b"]
    assert [str(rule.rule.pattern) for rule in change.newly_allowed] == ["/a"]
    assert [(u.key, u.after) for u in change.usage] == [("train-ai", "n")]
    assert change.sitemaps_added == ("https://example.com/s.xml",)
    (line,) = said(caplog)
    assert origin in line and change.summary() in line
    assert second.spider.meta[site.url("/a")][-1]["version"]["digest"] == body_digest(AFTER)
    crawl_said = json.loads(json.dumps(change.as_dict()))

    # The report over the store, for the crawl's token.
    capsys.readouterr()
    assert main(["report", "--store", str(path), "--changed", "--json", "--agent", TOKEN]) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["origin"].rstrip("/") == origin
    assert (row["before_digest"], row["after_digest"]) == (body_digest(BEFORE), body_digest(AFTER))
    assert {key: row[key] for key in crawl_said} == crawl_said

    # The Tester's versions of the origin, for the same token.
    tester = start_tester(store=StoreName(str(path)), agents=(TOKEN,))
    status, got = tester.call(f"/api/versions?url={origin}/a&agent={TOKEN}")
    assert status == 200
    assert [v["digest"] for v in got["versions"]] == [body_digest(AFTER), body_digest(BEFORE)]
    (tested,) = got["changes"]
    assert tested["change"]["changed"] is True
    assert {key: tested["change"][key] for key in crawl_said} == crawl_said
