"""What a crawl says of the pages whose links it did not follow
(docs/usage-preferences.md, docs/stats-signals.md): the stats count only pages with a ``nofollow``
that removed something, the DEBUG line names the rules that said so and no
others, and a spider's own ``robotstxt_user_agent`` is the token its
agent-addressed rules are read for, as the downloader middleware reads it.
"""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import crawl, stats
from .servers import Reply, SiteServer
from .test_page_directives import ON, LinkSpider, html, run


@deferred_f_from_coro_f
async def test_scrapy_pages_followed_are_not_counted_as_nofollow_pages() -> None:
    site, crawler = await run({"/list": html(headers={"X-Robots-Tag": "noindex"})})
    assert sorted(site.paths()) == ["/a", "/b", "/list", "/robots.txt"]
    values = stats(crawler)
    assert "robotstxt/page/nofollow_pages" not in values
    assert "robotstxt/page/nofollow_removed" not in values


@deferred_f_from_coro_f
async def test_scrapy_the_log_names_the_rules_that_stopped_the_links_and_no_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = html(b'<meta name="robots" content="none">', {"X-Robots-Tag": "noarchive"})
    with caplog.at_level(logging.DEBUG, "scrapy_rep"):
        site, crawler = await run({"/list": page})
    assert site.paths() == ["/robots.txt", "/list"]
    lines = [r.getMessage() for r in caplog.records if "Not following" in r.getMessage()]
    assert lines == [f"Not following 2 request(s) from {site.url('/list')}: nofollow (meta 'none')"]
    assert stats(crawler)["robotstxt/page/nofollow_pages"] == 1


@deferred_f_from_coro_f
async def test_scrapy_the_spiders_robotstxt_user_agent_names_the_addressed_token() -> None:
    class OtherBot(LinkSpider):
        robotstxt_user_agent = "otherbot"

    routes = {
        "/robots.txt": Reply(404),
        "/list": html(b'<meta name="otherbot" content="nofollow">'),
    }
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/list")], ON, OtherBot)
    assert site.paths() == ["/robots.txt", "/list"]
    assert stats(crawler)["robotstxt/page/nofollow_removed"] == 2
