"""A site changes its robots.txt between two crawls on one store: what the second one says.

The second crawl's fetch brings a version that differs from the one the
first crawl stored (docs/versions.md, "In the crawl"): one INFO line, the
``robotstxt_changed`` signal and the stat ``robotstxt/changed`` say the same
change, once; the pages name the version that let them through. On SQLite
and Redis the two crawls are two crawlers on one store; the memory store
lives and dies with its crawler, so there one crawl asks twice (two waves),
the site and the clock moved between them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep import signals
from scrapy_rep.cache.versions import body_digest
from scrapy_rep.crawler.access.provenance import PROVENANCE_META_KEY

from .conftest import SETTINGS, ArrivingSpider, stats
from .servers import Reply, SiteServer

T0 = 1_800_000_000.0
DAY = 24 * 3600.0
BEFORE = b"User-agent: *\nDisallow: /a\n"
AFTER = b"User-agent: *\nDisallow: /b\n# the same group, another rule\n"


class Clock:
    """The crawl's clock (REP_CLOCK), moved by the test."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def __deepcopy__(self, memo: dict[int, Any]) -> Clock:
        return self  # Scrapy deep-copies settings: the crawl must read this one


class ChangeSpider(ArrivingSpider):
    """Records each page's and drop's ``meta["rep_decision"]`` and each change said."""

    name = "changes"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.meta: dict[str, list[Any]] = {}
        self.changes: list[dict[str, Any]] = []

    async def start(self) -> Any:
        self.crawler.signals.connect(
            lambda **kw: self.changes.append(kw), signal=signals.robotstxt_changed, weak=False
        )
        async for request in super().start():
            yield request

    def parse(self, response: Response) -> None:
        self.meta.setdefault(response.url, []).append(response.meta.get(PROVENANCE_META_KEY))
        super().parse(response)

    def errback(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.meta.setdefault(request.url, []).append(request.meta.get(PROVENANCE_META_KEY))
        super().errback(failure)


async def run(urls: list[str], settings: dict[str, Any], **kwargs: Any) -> Any:
    crawler = get_crawler(ChangeSpider, {**SETTINGS, **settings})
    await crawler.crawl_async(urls=urls, **kwargs)
    return crawler


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if " changed (" in r.getMessage()]


def check_the_change(spider: ChangeSpider, site: SiteServer, lines: list[str]) -> None:
    """One change said three ways, and the pages it let through name the new version."""
    (sent,) = spider.changes
    origin = f"http://127.0.0.1:{site.port}"
    assert str(sent["origin"]) == origin
    assert sent["before"].digest == body_digest(BEFORE)
    assert sent["after"].digest == body_digest(AFTER)
    change = sent["change"]
    assert [str(rule.rule.pattern) for rule in change.newly_disallowed] == ["/b"]
    assert [str(rule.rule.pattern) for rule in change.newly_allowed] == ["/a"]
    (line,) = lines
    assert origin in line
    assert change.summary() in line
    assert body_digest(AFTER)[:19] in line  # "sha256:" and 12 hex digits
    meta = spider.meta[site.url("/a")][-1]
    assert meta["version"]["digest"] == body_digest(AFTER)
    assert meta["version"]["first_seen"] == T0 + 2 * DAY
    assert meta["decided_by"] == "no-rule"
    assert spider.meta[site.url("/b")][-1]["rule"]["pattern"] == "/b"


@pytest.mark.parametrize("store", ["sqlite", "redis"])
@deferred_f_from_coro_f
async def test_a_second_crawl_on_the_store_says_what_changed(
    store: str, tmp_path: Path, request: pytest.FixtureRequest, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    settings: dict[str, Any] = {"REP_CLOCK": clock, "REP_STORAGE": store}
    if store == "redis":
        settings["REP_REDIS_URL"] = request.getfixturevalue("redis_server").url
    else:
        settings["REP_STORAGE_PATH"] = str(tmp_path / "robots.sqlite3")
    with SiteServer({"/robots.txt": Reply(200, BEFORE)}) as site:
        urls = [site.url("/a"), site.url("/b")]
        with caplog.at_level(logging.INFO, logger="scrapy_rep"):
            first = await run(urls, settings)
            assert said(caplog) == []
            site.routes["/robots.txt"] = Reply(200, AFTER)
            clock.now += 2 * DAY  # the stored copy expired
            caplog.clear()
            second = await run(urls, settings)
            # A third crawl reads the changed version, fresh, from the store: nothing said.
            third = await run(urls, settings)
        assert site.count("/robots.txt") == 2
    assert first.spider.changes == []
    assert "robotstxt/changed" not in stats(first)
    check_the_change(second.spider, site, said(caplog)[:1])
    assert stats(second)["robotstxt/changed"] == 1
    assert len(said(caplog)) == 1
    assert third.spider.changes == []
    assert "robotstxt/changed" not in stats(third)
    assert third.spider.meta[site.url("/a")][-1]["version"]["digest"] == body_digest(AFTER)


@deferred_f_from_coro_f
async def test_the_memory_store_says_a_change_within_its_crawl(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    with SiteServer({"/robots.txt": Reply(200, BEFORE)}) as site:
        urls = [site.url("/a"), site.url("/b")]

        def move(spider: ArrivingSpider, wave: int) -> None:
            site.routes["/robots.txt"] = Reply(200, AFTER)
            clock.now += 2 * DAY

        settings = {"REP_CLOCK": clock, "REP_STORAGE": "memory"}
        with caplog.at_level(logging.INFO, logger="scrapy_rep"):
            crawler = await run(urls, settings, waves=[urls], before=move)
        assert site.count("/robots.txt") == 2
    spider = crawler.spider
    assert isinstance(spider, ChangeSpider)
    assert spider.meta[site.url("/b")][0]["version"]["digest"] == body_digest(BEFORE)
    check_the_change(spider, site, said(caplog))
    assert stats(crawler)["robotstxt/changed"] == 1


@deferred_f_from_coro_f
async def test_a_change_the_tokens_are_not_told_is_not_said(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    other = b"User-agent: otherbot\nDisallow: /\n\n" + BEFORE
    with SiteServer({"/robots.txt": Reply(200, BEFORE)}) as site:
        urls = [site.url("/b")]

        def move(spider: ArrivingSpider, wave: int) -> None:
            site.routes["/robots.txt"] = Reply(200, other)  # another crawler's group only
            clock.now += 2 * DAY

        settings = {"REP_CLOCK": clock, "REP_STORAGE": "memory"}
        with caplog.at_level(logging.INFO, logger="scrapy_rep"):
            crawler = await run(urls, settings, waves=[urls], before=move)
        assert site.count("/robots.txt") == 2
    spider = crawler.spider
    assert isinstance(spider, ChangeSpider)
    assert spider.changes == []
    assert said(caplog) == []
    assert "robotstxt/changed" not in stats(crawler)
    # The page still names the version that let it through: the new one.
    assert spider.meta[site.url("/b")][-1]["version"]["digest"] == body_digest(other)
