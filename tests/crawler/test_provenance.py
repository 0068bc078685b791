"""Why each page was fetched: ``meta["rep_decision"]`` and the decision log, in real crawls.

Every request the middleware lets through (or drops) says which robots.txt
version decided, and what in it (docs/versions.md, "Why each page was
fetched"); with ``REP_DECISION_LOG`` set, one JSON line per allow and per
drop says the same, bounded and rotated ("The decision log").
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.python.failure import Failure

from scrapy_rep.cache.versions import body_digest
from scrapy_rep.crawler.access.provenance import PROVENANCE_META_KEY
from scrapy_rep.crawler.decision_log import KEPT

from .conftest import WIRINGS, RecordingSpider, crawl, spider_of
from .servers import Reply, SiteServer

ROBOTS = b"User-agent: *\nDisallow: /private\nAllow: /private/ok\n"


class MetaSpider(RecordingSpider):
    """Records ``meta["rep_decision"]`` of every response and every drop, per URL."""

    name = "provenance"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.meta: dict[str, Any] = {}

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.meta[response.url] = response.meta.get(PROVENANCE_META_KEY)

    def errback(self, failure: Failure) -> None:
        super().errback(failure)
        request = failure.request  # type: ignore[attr-defined]
        self.meta[request.url] = request.meta.get(PROVENANCE_META_KEY)


def meta_of(crawler: Any) -> dict[str, Any]:
    spider = crawler.spider
    assert isinstance(spider, MetaSpider)
    return spider.meta


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_each_page_names_the_version_and_the_rule_that_let_it_through(
    wiring: str, tmp_path: Path
) -> None:
    log = tmp_path / "decisions.jsonl"
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        page, closed, opened = site.url("/page"), site.url("/private/x"), site.url("/private/ok")
        own = site.url("/robots.txt")
        unchecked = Request(site.url("/private/y"), meta={"dont_obey_robotstxt": True})
        settings = {**WIRINGS[wiring], "REP_DECISION_LOG": str(log)}
        crawler = await crawl([page, closed, opened], settings, MetaSpider)
        # The spider's own robots.txt and an opted-out request, once the origin is known.
        again = await crawl([own, unchecked], settings, MetaSpider)
    spider, meta = spider_of(crawler), meta_of(crawler)
    assert sorted(spider.got) == sorted([page, opened])
    assert list(spider.dropped) == [closed]
    origin = f"http://127.0.0.1:{site.port}"
    version = meta[page]["version"]
    assert version["digest"] == body_digest(ROBOTS)
    assert version["status"] == 200
    assert version["first_seen"] == version["fetched_at"] > 0
    shared = {"origin": origin, "robotstxt_url": f"{origin}/robots.txt", "state": "rules"}
    assert meta[page] == {
        **shared,
        "version": version,
        "decided_by": "no-rule",
        "rule": None,
        "group": "*",
    }
    assert meta[opened]["decided_by"] == "rule"
    assert meta[opened]["rule"] == {"kind": "allow", "pattern": "/private/ok", "line": 3}
    assert meta[closed]["rule"] == {"kind": "disallow", "pattern": "/private", "line": 2}
    assert meta[closed]["version"] == version
    assert meta_of(again)[own]["decided_by"] == "robots-txt"
    assert meta_of(again)[unchecked.url]["decided_by"] == "dont_obey_robotstxt"

    # The log: one line per allow and per drop, the meta's fields and the verdict.
    lines = lines_of(log)
    by_url = {line["url"]: line for line in lines}
    assert len(lines) == 5  # the first crawl's three, the second's two
    for url in (page, opened, own, unchecked.url):
        line = by_url[url]
        assert line["verdict"] == "allow"
        expected = meta.get(url) or meta_of(again)[url]
        assert {k: v for k, v in line.items() if k not in ("time", "verdict", "url")} == expected
    assert by_url[closed]["verdict"] == "drop"
    assert by_url[closed]["drop"] == "forbidden"
    assert by_url[closed]["rule"] == meta[closed]["rule"]


@deferred_f_from_coro_f
async def test_a_4xx_names_its_status_and_no_digest() -> None:
    with SiteServer({"/robots.txt": Reply(404, b"gone")}) as site:
        crawler = await crawl([site.url("/a")], {}, MetaSpider)
    meta = meta_of(crawler)[site.url("/a")]
    assert meta["state"] == meta["decided_by"] == "allow-all"
    assert meta["version"]["status"] == 404
    assert meta["version"]["digest"] is None


@deferred_f_from_coro_f
async def test_a_closed_origin_drops_with_no_version(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    with SiteServer({"/robots.txt": Reply(503, b"busy")}) as site:
        crawler = await crawl([site.url("/a")], {"REP_DECISION_LOG": str(log)}, MetaSpider)
    meta = meta_of(crawler)[site.url("/a")]
    assert meta["state"] == meta["decided_by"] == "closed"
    assert meta["version"] is None
    (line,) = lines_of(log)
    assert line["verdict"] == "drop"
    assert line["drop"] == "unreachable"
    assert line["state"] == "closed"


@deferred_f_from_coro_f
async def test_the_log_rotates_within_its_bound(tmp_path: Path) -> None:
    log = tmp_path / "decisions.jsonl"
    bound = 64 * 1024
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        urls = [site.url(f"/private/{n:04d}") for n in range(900)] + [site.url("/last")]
        settings = {"REP_DECISION_LOG": str(log), "REP_DECISION_LOG_MAX_BYTES": bound}
        crawler = await crawl(urls, settings, MetaSpider)
    assert len(spider_of(crawler).dropped) == 900
    files = [log, *(log.with_name(f"{log.name}.{n}") for n in range(1, KEPT + 1))]
    assert all(path.exists() for path in files)
    assert not log.with_name(f"{log.name}.{KEPT + 1}").exists()
    assert all(0 < path.stat().st_size <= bound for path in files)
    # Nothing cut: every kept file holds whole lines, the newest last.
    kept = [line for path in reversed(files) for line in lines_of(path)]
    assert len(kept) < 901  # the oldest went
    assert kept[-1]["url"] in {site.url("/last"), *urls}
    assert {line["url"] for line in kept} <= set(urls)


@deferred_f_from_coro_f
async def test_a_log_that_cannot_be_written_warns_once_and_the_crawl_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a-file").write_text("")
    log = tmp_path / "a-file" / "decisions.jsonl"  # its directory is a file
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        urls = [site.url(f"/{n}") for n in range(5)] + [site.url("/private/x")]
        with caplog.at_level(logging.WARNING):
            crawler = await crawl(urls, {"REP_DECISION_LOG": str(log)}, MetaSpider)
    spider = spider_of(crawler)
    assert len(spider.got) == 5
    assert list(spider.dropped) == [site.url("/private/x")]
    warned = [r for r in caplog.records if "decision log" in r.getMessage()]
    assert len(warned) == 1
    assert all(meta_of(crawler)[url] is not None for url in urls)


@deferred_f_from_coro_f
async def test_a_version_is_described_once_for_all_its_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scrapy_rep.crawler.access import provenance

    digests: list[bytes | None] = []

    def counted(body: bytes | None) -> str | None:
        digests.append(body)
        return body_digest(body)

    monkeypatch.setattr(provenance, "body_digest", counted)
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        urls = [site.url(f"/{n}") for n in range(20)]
        crawler = await crawl(urls, {}, MetaSpider)
    meta = meta_of(crawler)
    assert len(spider_of(crawler).got) == 20
    assert digests == [ROBOTS]  # once, not per request
    first = meta[urls[0]]["version"]
    assert all(meta[url]["version"] is first for url in urls)  # one shared part


@deferred_f_from_coro_f
async def test_a_drop_before_the_scheduler_names_its_rule_too(tmp_path: Path) -> None:
    from scrapy.utils.test import get_crawler

    from .conftest import SETTINGS, stats
    from .test_robotstxt_changes import ChangeSpider

    log = tmp_path / "decisions.jsonl"
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        closed = site.url("/private/x")
        crawler = get_crawler(ChangeSpider, {**SETTINGS, "REP_DECISION_LOG": str(log)})
        # The origin is known when the second wave comes: dropped before the scheduler.
        await crawler.crawl_async(urls=[site.url("/page")], waves=[[closed]])
    assert stats(crawler)["robotstxt/dropped_early"] == 1
    spider = crawler.spider
    assert isinstance(spider, ChangeSpider)
    (meta,) = spider.meta[closed]
    assert meta["rule"] == {"kind": "disallow", "pattern": "/private", "line": 2}
    assert meta["group"] == "*"
    (line,) = [line for line in lines_of(log) if line["url"] == closed]
    assert line["verdict"] == "drop"
    assert line["early"] is True
    assert {k: v for k, v in line.items() if k in meta} == meta
