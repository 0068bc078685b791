"""Lines a site writes for every crawler, in real crawls against a local site:
RSL ``License`` lines reach the spider (docs/spec.md §7.3), a global
``Content-Signal`` refuses for every group that states none of its own
(docs/usage-preferences.md, "Global lines"), and a new kind of line outside
any group is parsed, linted and handed over from its entry in
``engine/site_wide.py`` alone."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import RobotsTxt, signals
from scrapy_rep.crawler.errors import RobotsTxtUsageDenied
from scrapy_rep.engine.site_wide import SITE_WIDE, SiteWide, absolute_url
from scrapy_rep.tools.lint.lines import lint, report

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


# --- a new kind of line outside any group: one entry of the table --------------------

EXAMPLE_KIND = SiteWide(
    "x-example", "examples", "example", "examples", absolute_url, "an absolute URL",
    "example-not-absolute",
    "write the full URL, e.g. 'X-Example: https://example.com/terms'",
)  # fmt: skip


def example_robots_txt(site: SiteServer) -> str:
    return (
        f"X-Example: {site.url('/terms')}\n"
        "X-Example: /relative-terms\n"
        "\n"
        "User-agent: *\n"
        f"X-Example: {site.url('/terms')}\n"  # does not end the group, and is kept once
        "Disallow: /account/\n"
    )


class ExampleSpider(RecordingSpider):
    """Fetches what it is handed, by the method the entry's ``values`` names."""

    name = "example"

    def robotstxt_examples(
        self, examples: tuple[str, ...], robotstxt_url: str
    ) -> Iterator[Request]:
        self.example_calls = [*getattr(self, "example_calls", []), (examples, robotstxt_url)]
        for url in examples:
            yield Request(url, callback=self.parse, dont_filter=True)


@pytest.fixture
def x_example(monkeypatch: pytest.MonkeyPatch) -> SiteWide:
    """The one place a new kind is written: its entry in ``SITE_WIDE``."""
    monkeypatch.setitem(SITE_WIDE, EXAMPLE_KIND.key, EXAMPLE_KIND)
    return EXAMPLE_KIND


def test_scrapy_a_line_of_no_kind_in_the_table_is_an_unknown_field() -> None:
    body = b"X-Example: https://e.com/terms\nUser-agent: *\nDisallow: /x\n"
    assert RobotsTxt.parse(body).site_wide == {}
    assert [(f.line, f.code) for f in lint(body)] == [(1, "unknown-field")]


@deferred_f_from_coro_f
async def test_scrapy_a_new_kind_of_line_outside_groups_parsed_linted_handed_over(
    x_example: SiteWide, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="scrapy_rep")
    with SiteServer() as site:
        body = example_robots_txt(site)
        site.routes.update(
            {"/robots.txt": Reply(200, body.encode(), {}), "/terms": Reply(200, b"terms", {})}
        )
        # Parsed: both ways of reading a line, the relative value skipped.
        for quirks in (False, True):
            robots = RobotsTxt.parse(body, google_quirks=quirks)
            assert robots.site_wide == {"x-example": (site.url("/terms"),)}, quirks
            assert robots.agents == ("*",)
            assert not robots.allowed(site.url("/account/me"), "anybot")
        # Linted: the value it skips, by the entry's code; counted in the summary.
        findings = lint(body.encode())
        assert [(f.line, f.code, f.severity) for f in findings] == [
            (2, "example-not-absolute", "error")
        ]
        assert findings[0].message == (
            "the x-example '/relative-terms' is not an absolute URL: crawlers skip it"
        )
        summary = report("robots.txt", body.encode(), findings, None)["summary"]
        assert (summary["sitemaps"], summary["examples"]) == (0, 1)
        # Handed over: its signal and the spider's method, once per origin.
        received: list[dict[str, Any]] = []
        crawler = get_crawler(ExampleSpider, SETTINGS)
        crawler.signals.connect(
            lambda **kw: received.append(kw), signal=signals.found("examples"), weak=False
        )
        await crawler.crawl_async(urls=[site.url("/a"), site.url("/b")])
    assert [(kw["examples"], kw["robotstxt_url"]) for kw in received] == [
        ((site.url("/terms"),), site.url("/robots.txt"))
    ]
    spider = crawler.spider
    assert isinstance(spider, ExampleSpider)
    assert spider.example_calls == [((site.url("/terms"),), site.url("/robots.txt"))]
    assert site.count("/terms") == 1
    assert "0 sitemaps, 1 example" in caplog.text  # the origin's INFO line
