"""Scrapy's ``robots_parsed`` signal names the request that waited for the
robots.txt (docs/stats-signals.md), as Scrapy's built-in middleware does:
code written against the built-in finds the page that asked."""

from __future__ import annotations

from typing import Any

from scrapy import signals
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from .conftest import SETTINGS, RecordingSpider
from .servers import Reply, SiteServer


@deferred_f_from_coro_f
async def test_robots_parsed_names_a_request_that_waited_for_it() -> None:
    parsed: list[dict[str, Any]] = []
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n")}) as site:
        crawler = get_crawler(RecordingSpider, SETTINGS)
        crawler.signals.connect(
            lambda **kw: parsed.append(kw), signal=signals.robots_parsed, weak=False
        )
        urls = [site.url("/a"), site.url("/b")]
        await crawler.crawl_async(urls=urls)
    assert len(parsed) == 1
    assert parsed[0]["request"] is not None and parsed[0]["request"].url in urls
