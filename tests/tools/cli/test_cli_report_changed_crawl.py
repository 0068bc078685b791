"""``scrapy-rep report --changed`` over a store two real crawls wrote
(docs/versions.md): a site's robots.txt changes between them, the second
crawl's refresh keeps the version before, and the report names what
changed for the crawl's token. Time moves through REP_CLOCK, never by
sleeping: the crawls run a day and an hour ago, then the copy expires."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cache.conftest import FakeClock
from crawler.conftest import crawl, spider_of
from crawler.servers import Reply, SiteServer
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.versions import body_digest
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt
from scrapy_rep.tools.cli.console import main

HOUR = 3600.0
OLD = b"User-agent: testbot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
NEW = b"User-agent: testbot\nDisallow: /private\nDisallow: /drafts\n\nUser-agent: *\nDisallow: /\n"


class Switch:
    """The robots.txt route, changed between the crawls."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def __call__(self, host: str) -> Reply:
        return Reply(200, self.body)


@deferred_f_from_coro_f
async def test_two_crawls_then_report_changed_names_the_new_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "robotstxt.sqlite3"
    clock = FakeClock(offset=-26 * HOUR)
    settings = {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(path), "REP_CLOCK": clock}
    robots = Switch(OLD)
    with SiteServer({"/robots.txt": robots}) as site:
        urls = [site.url("/drafts/a"), site.url("/private/b")]
        first = await crawl(urls, settings)
        robots.body = NEW
        clock.advance(25 * HOUR)  # the copy expired an hour ago: the next request refetches
        second = await crawl(urls, settings)
        origin = site.url("/").rstrip("/")
    assert site.paths().count("/robots.txt") == 2
    assert site.url("/drafts/a") not in spider_of(first).dropped
    assert isinstance(spider_of(second).dropped[site.url("/drafts/a")], ForbiddenByRobotsTxt)

    code = main(["report", "--store", str(path), "--changed", "--json", "--agent", "testbot"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    (row,) = rows
    assert row["origin"].rstrip("/") == origin
    assert (row["before_digest"], row["after_digest"]) == (body_digest(OLD), body_digest(NEW))
    assert [r["pattern"] for r in row["newly_disallowed"]] == ["/drafts"]
    assert (
        main(["report", "--store", str(path), "--changed", "--since", "2h", "-a", "testbot"]) == 0
    )
    assert (
        main(["report", "--store", str(path), "--changed", "--since", "30m", "-a", "testbot"]) == 1
    )
    # Another crawler, in the * group both times: nothing changed for it.
    assert main(["report", "--store", str(path), "--changed", "--agent", "otherbot"]) == 1
