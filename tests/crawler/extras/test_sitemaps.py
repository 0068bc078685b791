"""REP_FOLLOW_SITEMAPS: sitemaps listed in robots.txt are crawled (docs/spec.md §7.2),
once per crawl, and each through the robots.txt of its own origin."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Spider
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import Reply, SiteServer
from scrapy_rep.crawler.config.settings import SettingError, SitemapConfig
from scrapy_rep.crawler.page.sitemaps import SITEMAP_SOURCE_META

from .conftest import WIRINGS, crawl, spider_of, stats

FOLLOW = {"REP_FOLLOW_SITEMAPS": True}
SITEMAP = Reply(200, b"<urlset></urlset>", {"Content-Type": "application/xml"})


def robots(*lines: str) -> Reply:
    return Reply(200, "\n".join(lines).encode() + b"\n", {"Content-Type": "text/plain"})


@pytest.mark.parametrize("wiring", WIRINGS)
@deferred_f_from_coro_f
async def test_spec_7_2_follow_sitemaps_of_robots_txt_each_through_its_own_robots(
    wiring: str,
) -> None:
    with SiteServer() as home, SiteServer() as other:
        home.routes.update(
            {
                "/robots.txt": robots(
                    "User-agent: *",
                    "Disallow: /private",
                    f"Sitemap: {home.url('/sitemap.xml')}",
                    f"Sitemap: {other.url('/sitemap.xml', 'localhost')}",
                    f"Sitemap: {other.url('/open/sitemap.xml', 'localhost')}",
                ),
                "/sitemap.xml": SITEMAP,
            }
        )
        other.routes.update(
            {
                "/robots.txt": robots(
                    "User-agent: *",
                    "Disallow: /sitemap.xml",
                    # listed again on another origin: still scheduled once
                    f"Sitemap: {home.url('/sitemap.xml')}",
                ),
                "/open/sitemap.xml": SITEMAP,
            }
        )
        crawler = await crawl([home.url("/a"), home.url("/b")], {**WIRINGS[wiring], **FOLLOW})
    spider = spider_of(crawler)
    assert sorted(spider.got) == [home.url("/a"), home.url("/b")]
    got = sorted(response.url for response in spider.sitemaps)
    assert got == [home.url("/sitemap.xml"), other.url("/open/sitemap.xml", "localhost")]
    sources = {response.meta[SITEMAP_SOURCE_META] for response in spider.sitemaps}
    assert sources == {home.url("/robots.txt")}
    assert home.count("/sitemap.xml") == 1
    assert other.count("/sitemap.xml") == 0  # its own robots.txt forbids it: dropped
    assert other.count("/robots.txt") == 1 and other.count("/open/sitemap.xml") == 1
    values = stats(crawler)
    assert values["robotstxt/sitemaps/scheduled"] == 3
    assert values["robotstxt/forbidden"] == 1


@deferred_f_from_coro_f
async def test_spec_7_2_sitemaps_not_followed_by_default() -> None:
    with SiteServer() as site:
        site.routes["/robots.txt"] = robots("User-agent: *", f"Sitemap: {site.url('/s.xml')}")
        crawler = await crawl([site.url("/a")])
    assert site.count("/s.xml") == 0
    assert spider_of(crawler).sitemaps == []
    assert "robotstxt/sitemaps/scheduled" not in stats(crawler)


@deferred_f_from_coro_f
async def test_spec_7_2_follow_sitemaps_to_the_named_callback() -> None:
    class NamedSpider(Spider):
        name = "named"
        received: list[str]

        def __init__(self, urls: list[str], **kwargs: Any) -> None:
            super().__init__(start_urls=urls, **kwargs)
            self.received = []

        def parse(self, response: Any) -> None:
            pass

        def by_sitemap(self, response: Any) -> None:
            self.received.append(response.url)

    with SiteServer() as site:
        site.routes["/robots.txt"] = robots("User-agent: *", f"Sitemap: {site.url('/s.xml')}")
        crawler = await crawl(
            [site.url("/a")], {**FOLLOW, "REP_SITEMAP_CALLBACK": "by_sitemap"}, NamedSpider
        )
    assert isinstance(crawler.spider, NamedSpider)
    assert crawler.spider.received == [site.url("/s.xml")]


# --- settings ----------------------------------------------------------------------


def test_scrapy_follow_sitemaps_settings_defaults() -> None:
    assert SitemapConfig.from_settings({}) == SitemapConfig(False, "parse_sitemap")


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("REP_FOLLOW_SITEMAPS", "maybe", "True or False"),
        ("REP_SITEMAP_CALLBACK", "parse sitemap", "the name of a spider method"),
        ("REP_SITEMAP_CALLBACK", 3, "the name of a spider method"),
    ],
)
def test_scrapy_follow_sitemaps_bad_setting_is_named(
    name: str, value: object, accepted: str
) -> None:
    with pytest.raises(SettingError, match=name) as error:
        SitemapConfig.from_settings({name: value})
    assert accepted in str(error.value)


@deferred_f_from_coro_f
async def test_scrapy_follow_sitemaps_without_the_callback_fails_at_start() -> None:
    settings = {**FOLLOW, "REP_SITEMAP_CALLBACK": "parse_map"}
    with (
        SiteServer() as site,
        pytest.raises(SettingError, match="REP_SITEMAP_CALLBACK='parse_map'") as error,
    ):
        await crawl([site.url("/a")], settings)
    assert "PagesSpider.parse_map" in str(error.value)
    assert site.hits == []


@deferred_f_from_coro_f
async def test_scrapy_follow_sitemaps_bounded_per_robots_txt() -> None:
    """Issue 13 §8: a robots.txt listing 300 sitemaps schedules REP_FOLLOW_SITEMAPS_MAX."""
    with SiteServer() as site:
        listed = [f"Sitemap: {site.url(f'/sitemap-{n}.xml')}" for n in range(300)]
        site.routes["/robots.txt"] = robots("User-agent: *", "Disallow:", *listed)
        for n in range(300):
            site.routes[f"/sitemap-{n}.xml"] = SITEMAP
        crawler = await crawl([site.url("/a")], {**FOLLOW, "REP_FOLLOW_SITEMAPS_MAX": 7})
        fetched = [path for path in site.paths() if path.startswith("/sitemap-")]
    assert sorted(fetched) == sorted(f"/sitemap-{n}.xml" for n in range(7))
    assert len(spider_of(crawler).sitemaps) == 7
    assert stats(crawler)["robotstxt/sitemaps/scheduled"] == 7
