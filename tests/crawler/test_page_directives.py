"""Page-level rules in real crawls (issue 15): X-Robots-Tag and robots meta tags.

With ``REP_PAGE_DIRECTIVES = True`` a page's ``nofollow`` removes the requests
its callback yields (they never reach the server), and every rule is in
``response.meta["rep_directives"]``; rules addressed to another crawler's
token change nothing. Off (the default), nothing is read or removed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep.crawler.config.settings import SettingError
from scrapy_rep.crawler.page.page_rules import PageDirectivesMiddleware

from .conftest import SETTINGS, RecordingSpider, crawl, stats
from .servers import Reply, SiteServer

DIRECTIVES = "scrapy_rep.PageDirectivesMiddleware"
ON = {"REP_PAGE_DIRECTIVES": True, "SPIDER_MIDDLEWARES": {DIRECTIVES: 950}}
LINKS = b'<a href="/a">a</a> <a href="/b">b</a>'


class LinkSpider(RecordingSpider):
    """Follows every href of its start pages once; records the page rules it saw."""

    name = "links"

    def parse(self, response: Response) -> Iterator[Any]:
        super().parse(response)
        self.directives = {
            **getattr(self, "directives", {}),
            response.url: response.meta.get("rep_directives"),
        }
        if response.meta.get("followed"):
            return
        yield {"url": response.url}  # items always pass
        for href in re.findall(rb'href="([^"]+)"', response.body):
            yield Request(response.urljoin(href.decode()), meta={"followed": True})


def html(head: bytes = b"", headers: dict[str, str] | None = None) -> Reply:
    body = b"<html><head>" + head + b"</head><body>" + LINKS + b"</body></html>"
    return Reply(200, body, {"Content-Type": "text/html", **(headers or {})})


async def run(
    routes: dict[str, Reply], settings: dict[str, Any] | None = None
) -> tuple[SiteServer, Any]:
    with SiteServer({"/robots.txt": Reply(404), **routes}) as site:
        crawler = await crawl([site.url("/list")], {**ON, **(settings or {})}, LinkSpider)
    return site, crawler


def directives(crawler: Any, site: SiteServer) -> dict[str, Any]:
    spider = crawler.spider
    assert isinstance(spider, LinkSpider)
    found: dict[str, Any] = spider.directives[site.url("/list")]
    return found


@deferred_f_from_coro_f
async def test_google_x_robots_tag_nofollow_prunes_outlinks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, "scrapy_rep"):
        site, crawler = await run({"/list": html(headers={"X-Robots-Tag": "nofollow"})})
    assert site.paths() == ["/robots.txt", "/list"]  # /a and /b never requested
    assert stats(crawler)["robotstxt/page/nofollow_removed"] == 2
    assert stats(crawler)["robotstxt/page/nofollow_pages"] == 1
    assert stats(crawler)["item_scraped_count"] == 1  # the item passed
    found = directives(crawler, site)
    assert found["nofollow"] and not found["noindex"]
    assert found["rules"] == [{"source": "x-robots-tag", "agent": None, "text": "nofollow"}]
    lines = [r.getMessage() for r in caplog.records if "Not following" in r.getMessage()]
    assert lines == [
        f"Not following 2 request(s) from {site.url('/list')}: nofollow (x-robots-tag 'nofollow')"
    ]


@deferred_f_from_coro_f
async def test_google_meta_robots_nofollow_prunes_outlinks() -> None:
    page = html(b'<meta content="noindex, NoFollow" name="ROBOTS">')
    site, crawler = await run({"/list": page})
    assert site.paths() == ["/robots.txt", "/list"]
    found = directives(crawler, site)
    assert found["flags"] == ["nofollow", "noindex"]
    assert found["rules"][0]["source"] == "meta"


@deferred_f_from_coro_f
async def test_google_none_is_noindex_nofollow() -> None:
    site, crawler = await run({"/list": html(b'<meta name="robots" content="none">')})
    assert site.paths() == ["/robots.txt", "/list"]
    assert directives(crawler, site)["noindex"] is True


@deferred_f_from_coro_f
async def test_google_noindex_is_exposed_and_links_followed() -> None:
    headers = {"X-Robots-Tag": "noindex, max-snippet: 20"}
    site, crawler = await run({"/list": html(headers=headers)})
    assert sorted(site.paths()) == ["/a", "/b", "/list", "/robots.txt"]
    found = directives(crawler, site)
    assert found["noindex"] and not found["nofollow"] and found["max_snippet"] == 20


@pytest.mark.parametrize(
    ("head", "headers", "followed"),
    [
        (b"", {"X-Robots-Tag": "otherbot: nofollow"}, True),
        (b'<meta name="otherbot" content="nofollow">', {}, True),
        (b"", {"X-Robots-Tag": "otherbot: noindex, testbot: nofollow"}, False),
        (b'<meta name="testbot" content="nofollow">', {}, False),
    ],
    ids=["header-other", "meta-other", "header-ours", "meta-ours"],
)
@deferred_f_from_coro_f
async def test_google_agent_specific_rules_apply_only_to_their_token(
    head: bytes, headers: dict[str, str], followed: bool
) -> None:
    site, crawler = await run({"/list": html(head, headers)})
    assert ("/a" in site.paths()) is followed
    assert directives(crawler, site)["nofollow"] is not followed


@deferred_f_from_coro_f
async def test_scrapy_robotstxt_user_agent_names_the_addressed_token() -> None:
    page = html(b'<meta name="otherbot" content="nofollow">')
    site, _ = await run({"/list": page}, {"ROBOTSTXT_USER_AGENT": "otherbot"})
    assert site.paths() == ["/robots.txt", "/list"]


@deferred_f_from_coro_f
async def test_scrapy_only_html_is_scanned_for_meta_tags() -> None:
    body = b'<meta name="robots" content="nofollow"> ' + LINKS
    site, crawler = await run({"/list": Reply(200, body, {"Content-Type": "text/plain"})})
    assert "/a" in site.paths()
    assert directives(crawler, site)["nofollow"] is False


@deferred_f_from_coro_f
async def test_scrapy_meta_tags_beyond_the_byte_bound_are_not_read() -> None:
    padding = b"<p>" + b"x" * 5000 + b"</p>"
    page = html(padding + b'<meta name="robots" content="nofollow">')
    site, _ = await run({"/list": page}, {"REP_PAGE_DIRECTIVES_MAX_BYTES": 2048})
    assert "/a" in site.paths()


@deferred_f_from_coro_f
async def test_scrapy_opted_out_requests_are_kept() -> None:
    class OptedOut(LinkSpider):
        def parse(self, response: Response) -> Iterator[Any]:
            for item in super().parse(response):
                if isinstance(item, Request):
                    item.meta["dont_obey_robotstxt"] = True
                yield item

    with SiteServer(
        {"/robots.txt": Reply(404), "/list": html(headers={"X-Robots-Tag": "none"})}
    ) as site:
        await crawl([site.url("/list")], ON, OptedOut)
    assert "/a" in site.paths() and "/b" in site.paths()


@deferred_f_from_coro_f
async def test_scrapy_off_by_default_nothing_read_or_removed() -> None:
    routes = {"/robots.txt": Reply(404), "/list": html(headers={"X-Robots-Tag": "nofollow"})}
    with SiteServer(routes) as site:
        crawler = await crawl(
            [site.url("/list")], {"SPIDER_MIDDLEWARES": {DIRECTIVES: 950}}, LinkSpider
        )
    assert "/a" in site.paths()
    assert directives(crawler, site) is None
    assert "robotstxt/page/nofollow_removed" not in stats(crawler)


@deferred_f_from_coro_f
async def test_scrapy_addon_enables_it_when_the_setting_is_on() -> None:
    addon = {"ADDONS": {"scrapy_rep.Addon": 0}, "DOWNLOADER_MIDDLEWARES": {}}
    routes = {"/robots.txt": Reply(404), "/list": html(headers={"X-Robots-Tag": "nofollow"})}
    with SiteServer(routes) as site:
        on = await crawl([site.url("/list")], {**addon, "REP_PAGE_DIRECTIVES": True}, LinkSpider)
        off = await crawl([site.url("/list")], addon, LinkSpider)
    assert on.settings.getdict("SPIDER_MIDDLEWARES")[DIRECTIVES] == 950
    assert DIRECTIVES not in off.settings.getdict("SPIDER_MIDDLEWARES")
    assert stats(on)["robotstxt/page/nofollow_removed"] == 2
    assert site.count("/a") == 1  # the crawl without the setting only


@pytest.mark.parametrize(
    ("name", "value"),
    [("REP_PAGE_DIRECTIVES", "sometimes"), ("REP_PAGE_DIRECTIVES_MAX_BYTES", 10)],
)
def test_scrapy_bad_page_directive_setting_fails_at_start_up(name: str, value: Any) -> None:
    crawler = get_crawler(LinkSpider, {**SETTINGS, **ON, name: value})
    with pytest.raises(SettingError, match=name):
        PageDirectivesMiddleware.from_crawler(crawler)
