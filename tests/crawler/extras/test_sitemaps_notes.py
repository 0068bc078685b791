"""REP_FOLLOW_SITEMAPS, what the crawl says as it follows (docs/spec.md §7.2,
docs/settings.md): a listed URL Scrapy cannot request is skipped and the
rest followed; a robots.txt listing more sitemaps than
REP_FOLLOW_SITEMAPS_MAX is named, one listing exactly that many is not; the
setting without ROBOTSTXT_OBEY warns that it does nothing."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from crawler.servers import Reply, SiteServer

from .conftest import crawl, spider_of, stats

FOLLOW = {"REP_FOLLOW_SITEMAPS": True}
SITEMAP = Reply(200, b"<urlset></urlset>", {"Content-Type": "application/xml"})
LOGGER = "scrapy_rep.crawler.page.sitemaps"


def robots(*lines: str) -> Reply:
    return Reply(200, "\n".join(lines).encode() + b"\n", {"Content-Type": "text/plain"})


def said(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


@deferred_f_from_coro_f
async def test_scrapy_a_sitemap_scrapy_cannot_request_is_skipped_and_the_next_followed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SiteServer() as site:
        site.routes.update(
            {
                "/robots.txt": robots(
                    "User-agent: *", "Sitemap: http://[oops/s.xml", f"Sitemap: {site.url('/s.xml')}"
                ),
                "/s.xml": SITEMAP,
            }
        )
        with caplog.at_level(logging.DEBUG, LOGGER):
            crawler = await crawl([site.url("/a")], FOLLOW)
    assert [response.url for response in spider_of(crawler).sitemaps] == [site.url("/s.xml")]
    assert stats(crawler)["robotstxt/sitemaps/scheduled"] == 1
    where = site.url("/robots.txt")
    assert said(caplog, logging.DEBUG) == [
        f"Skipping sitemap 'http://[oops/s.xml' of {where}: Invalid IPv6 URL",
        f"Scheduling sitemap {site.url('/s.xml')} (from {where})",
    ]


@deferred_f_from_coro_f
async def test_scrapy_more_sitemaps_than_the_bound_are_named_and_exactly_as_many_are_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SiteServer() as three, SiteServer() as four:
        for site, count in ((three, 3), (four, 4)):
            listed = [f"Sitemap: {site.url(f'/s{n}.xml')}" for n in range(count)]
            site.routes["/robots.txt"] = robots("User-agent: *", *listed)
            site.routes.update({f"/s{n}.xml": SITEMAP for n in range(count)})
        with caplog.at_level(logging.INFO, LOGGER):
            crawler = await crawl(
                [three.url("/a"), four.url("/a")], {**FOLLOW, "REP_FOLLOW_SITEMAPS_MAX": 3}
            )
    assert stats(crawler)["robotstxt/sitemaps/scheduled"] == 6
    assert said(caplog, logging.INFO) == [
        f"{four.url('/robots.txt')} lists 4 sitemaps; following the first 3 "
        "(REP_FOLLOW_SITEMAPS_MAX)"
    ]


@deferred_f_from_coro_f
async def test_scrapy_follow_sitemaps_without_obey_says_it_does_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with SiteServer() as site:
        site.routes["/robots.txt"] = robots("User-agent: *", f"Sitemap: {site.url('/s.xml')}")
        with caplog.at_level(logging.WARNING, LOGGER):
            crawler = await crawl([site.url("/a")], {**FOLLOW, "ROBOTSTXT_OBEY": False})
    assert site.paths() == ["/a"]
    assert spider_of(crawler).sitemaps == []
    assert said(caplog, logging.WARNING) == [
        "REP_FOLLOW_SITEMAPS has no effect: ROBOTSTXT_OBEY is False"
    ]
