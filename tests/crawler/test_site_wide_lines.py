"""Lines a site writes for every crawler, in real crawls against a local site:
RSL ``License`` lines reach the spider (docs/spec.md §7.3), and a global
``Content-Signal`` refuses for every group that states none of its own
(docs/usage-preferences.md, "Global lines")."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import signals
from scrapy_rep.crawler.errors import RobotsTxtUsageDenied

from .conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from .servers import Reply, SiteServer


def robots_txt(site: SiteServer) -> Reply:
    """A publisher's file: the policy's comment, the global lines, then groups."""
    return Reply(
        200,
        (
            "# As a condition of accessing this website, you agree to abide by\n"
            "# the following content signals (contentsignals.org).\n"
            "Content-Signal: search=yes, ai-train=no\n"
            f"License: {site.url('/license.xml')}\n"
            "License: /relative-license.xml\n"
            "\n"
            "User-agent: *\n"
            "Disallow: /account/\n"
            "\n"
            "User-agent: partnerbot\n"
            "Content-Signal: search=yes, ai-train=yes\n"
            "Allow: /\n"
            "\n"
            f"License: {site.url('/license.xml')}\n"
            f"Sitemap: {site.url('/sitemap.xml')}\n"
        ).encode(),
        {"Content-Type": "text/plain"},
    )


LICENSE = Reply(200, b"<rsl xmlns='https://rslstandard.org/rsl'></rsl>", {})


class LicenceSpider(RecordingSpider):
    """Fetches the licence it is handed, as a spider that reads its terms would."""

    name = "licence"

    def robotstxt_licenses(
        self, licenses: tuple[str, ...], robotstxt_url: str
    ) -> Iterator[Request]:
        self.license_calls = [*getattr(self, "license_calls", []), (licenses, robotstxt_url)]
        for url in licenses:
            yield Request(url, callback=self.parse, dont_filter=True)


@deferred_f_from_coro_f
async def test_spec_7_3_licenses_reach_the_spider_by_signal_and_method(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_rep")
    with SiteServer() as site:
        site.routes.update({"/robots.txt": robots_txt(site), "/license.xml": LICENSE})
        received: list[dict[str, Any]] = []
        crawler = get_crawler(LicenceSpider, SETTINGS)
        crawler.signals.connect(
            lambda **kw: received.append(kw), signal=signals.licenses_found, weak=False
        )
        urls = [site.url("/news/a"), site.url("/news/b"), site.url("/account/me")]
        await crawler.crawl_async(urls=urls)
    expected = (site.url("/license.xml"),)
    assert len(received) == 1  # once per origin, though three requests asked
    assert received[0]["licenses"] == expected
    assert received[0]["robotstxt_url"] == site.url("/robots.txt")
    assert received[0]["spider"] is crawler.spider
    spider = crawler.spider
    assert isinstance(spider, LicenceSpider)
    assert spider.license_calls == [(expected, site.url("/robots.txt"))]
    # Not fetched by scrapy_rep: only because the spider asked, once.
    assert site.count("/license.xml") == 1 and site.url("/license.xml") in spider.got
    assert site.count("/relative-license.xml") == 0
    assert "1 sitemap, 1 licence" in caplog.text  # the origin's INFO line


@deferred_f_from_coro_f
async def test_spec_7_3_licenses_not_fetched_without_a_spider_asking() -> None:
    with SiteServer() as site:
        site.routes.update({"/robots.txt": robots_txt(site), "/license.xml": LICENSE})
        crawler = await crawl([site.url("/news/a")])
    assert site.paths() == ["/robots.txt", "/news/a"]
    assert spider_of(crawler).got == [site.url("/news/a")]


@deferred_f_from_coro_f
async def test_scrapy_global_content_signal_refuses_before_download() -> None:
    """The "*" group writes no signal of its own: the global line refuses
    train-ai; partnerbot's own line replaces it and allows."""
    settings = {**SETTINGS, "REP_PURPOSES": ["train-ai"]}
    with SiteServer() as site:
        site.routes["/robots.txt"] = robots_txt(site)
        crawler = await crawl([site.url("/news/a")], settings)
        partner = await crawl(
            [site.url("/news/a")], {**settings, "ROBOTSTXT_USER_AGENT": "partnerbot"}
        )
    error = spider_of(crawler).dropped[site.url("/news/a")]
    assert isinstance(error, RobotsTxtUsageDenied)
    assert error.reason == (
        "usage train-ai refused by Content-Signal: search=yes, ai-train=no at line 3 "
        f"(global, before any User-agent line) of {site.url('/robots.txt')}"
    )
    assert [(rule.line, rule.is_global) for rule in error.rules] == [(3, True)]
    assert stats(crawler)["robotstxt/usage/forbidden"] == 1
    assert spider_of(partner).got == [site.url("/news/a")]
    assert site.count("/news/a") == 1  # fetched by partnerbot's crawl only
