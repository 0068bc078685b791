"""Start-up failures stop the crawl before any request is taken (issue 23 §2).

A store that cannot be opened or a spider's unusable ``robotstxt_user_agent``
closes the spider while it opens: the engine never asks the spider for a start
request, so nothing is scheduled, dropped or downloaded, and a JOBDIR or
scrapy-redis queue keeps its requests for a run that can check them. Scrapy
older than the declared floor ignored such a close (issue 23, audit finding 3):
the crawl ran to ``finished``, dropping every request (the store) or crawling
with the default tokens (the attribute).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from local_redis import free_port
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep import __version__
from scrapy_rep.crawler.errors import SETTING_CLOSE_REASON, STORAGE_CLOSE_REASON

from .conftest import RecordingSpider, crawl, spider_of, stats
from .servers import Reply, SiteServer

ALLOW_ALL = b"User-agent: *\nDisallow:\n"
MIDDLEWARE_LOG = "scrapy_rep.crawler.middleware"


class TakenSpider(RecordingSpider):
    """Records each start request the engine takes from it."""

    name = "taken"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.taken: list[str] = []

    async def start(self) -> AsyncIterator[Request]:
        async for request in super().start():
            self.taken.append(request.url)
            yield request


class BadTokens(TakenSpider):
    name = "bad_tokens"
    robotstxt_user_agent = ("gamma", 42)


def assert_nothing_taken(spider: RecordingSpider, crawl_stats: dict[str, Any]) -> None:
    assert isinstance(spider, TakenSpider)
    assert spider.taken == []  # the engine never asked for a request
    assert spider.got == [] and spider.dropped == {} and spider.failed == {}
    assert "scheduler/enqueued" not in crawl_stats
    assert "downloader/request_count" not in crawl_stats


@deferred_f_from_coro_f
async def test_scrapy_store_down_at_startup_stops_before_any_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # loopback, nothing listening
    settings = {"REP_STORAGE": "redis", "REP_REDIS_URL": url}
    with SiteServer({"/robots.txt": Reply(200, ALLOW_ALL)}) as site, caplog.at_level(logging.ERROR):
        crawler = await crawl([site.url("/a"), site.url("/b")], settings, spidercls=TakenSpider)
        seen = site.paths()
    assert seen == []  # the server saw no request at all
    crawl_stats = stats(crawler)
    assert crawl_stats["finish_reason"] == STORAGE_CLOSE_REASON
    assert_nothing_taken(spider_of(crawler), crawl_stats)
    errors = [r.getMessage() for r in caplog.records if r.name == MIDDLEWARE_LOG]
    assert len(errors) == 1 and url in errors[0] and "closed without crawling" in errors[0]


@deferred_f_from_coro_f
async def test_scrapy_bad_robotstxt_user_agent_attribute_stops_before_any_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SiteServer({"/robots.txt": Reply(200, ALLOW_ALL)}) as site, caplog.at_level(logging.ERROR):
        crawler = await crawl([site.url("/x")], spidercls=BadTokens)
        seen = site.paths()
    assert seen == []  # neither robots.txt nor /x: nothing crawled with the default tokens
    crawl_stats = stats(crawler)
    assert crawl_stats["finish_reason"] == SETTING_CLOSE_REASON
    assert_nothing_taken(spider_of(crawler), crawl_stats)
    errors = [r.getMessage() for r in caplog.records if r.name == MIDDLEWARE_LOG]
    assert len(errors) == 1 and "BadTokens.robotstxt_user_agent" in errors[0]


@deferred_f_from_coro_f
async def test_scrapy_the_addon_has_a_readable_name_in_the_start_up_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy.addons")
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow:\n")}) as site:
        settings = {"ADDONS": {"scrapy_rep.Addon": 0}, "DOWNLOADER_MIDDLEWARES": {}}
        await crawl([site.url("/page")], settings)
    enabled = next(r.getMessage() for r in caplog.records if "Enabled addons" in r.getMessage())
    assert f"scrapy_rep.Addon ({__version__})" in enabled
    assert "object at 0x" not in enabled
