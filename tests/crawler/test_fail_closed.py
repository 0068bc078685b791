"""Issue 13 §8: where scrapy_rep cannot decide, it fails closed and says why."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.config.settings import Config, SettingError, SitemapConfig
from scrapy_rep.crawler.errors import RobotsTxtNoOrigin

from .conftest import crawl, spider_of, stats


@deferred_f_from_coro_f
async def test_scrapy_checked_scheme_without_origin_is_dropped() -> None:
    """``http://:80/x`` names no host to ask for robots.txt: dropped, not passed."""
    crawler = await crawl(["http://:80/x"])
    spider = spider_of(crawler)
    assert list(spider.dropped) == ["http://:80/x"]
    error = spider.dropped["http://:80/x"]
    assert isinstance(error, RobotsTxtNoOrigin)
    assert error.reason.startswith("no origin: http://:80/x")
    assert stats(crawler)["robotstxt/no_origin"] == 1
    assert spider.got == [] and spider.failed == {}


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("REP_CHECKED_SCHEMES", [], "a list of URL schemes (at least one)"),
        ("REP_CHECKED_SCHEMES", "", "a list of URL schemes (at least one)"),
        ("REP_CACHE_KEEP", 10**12, "<= 3.1536e+08"),
        ("REP_CACHE_KEEP", float("inf"), "<= 3.1536e+08"),
    ],
)
def test_scrapy_setting_out_of_range_fails_at_start(name: str, value: Any, accepted: str) -> None:
    with pytest.raises(SettingError, match=name) as raised:
        Config.from_settings({name: value})
    assert accepted in str(raised.value)


@pytest.mark.parametrize("value", [0, -1, "many", 1.5, True])
def test_scrapy_follow_sitemaps_max_must_be_a_positive_integer(value: Any) -> None:
    with pytest.raises(SettingError, match="REP_FOLLOW_SITEMAPS_MAX") as raised:
        SitemapConfig.from_settings({"REP_FOLLOW_SITEMAPS_MAX": value})
    assert "an integer >= 1" in str(raised.value)
    assert SitemapConfig.from_settings({}).max_per_robotstxt == 50


def test_rfc9309_follow_redirects_below_five_warns(caplog: pytest.LogCaptureFixture) -> None:
    config = Config.from_settings({"REP_FOLLOW_REDIRECTS": 2})
    assert config.max_redirects == 2
    assert any("REP_FOLLOW_REDIRECTS=2" in note and "at least 5" in note for note in config.notes)
    assert Config.from_settings({"REP_FOLLOW_REDIRECTS": 5}).notes == ()


@deferred_f_from_coro_f
async def test_rfc9309_follow_redirects_below_five_warning_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="scrapy_rep")
    await crawl([], {"REP_FOLLOW_REDIRECTS": 1})
    warnings = [r for r in caplog.records if "REP_FOLLOW_REDIRECTS=1" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING


@deferred_f_from_coro_f
async def test_spec_6_5_1_dot_segments_in_a_crawl() -> None:
    """Servers answer /a/../private/x as /private/x. Scrapy sends it as
    written with w3lib before 2.6, resolved (/private/x) from 2.6 on, which
    resolves dot segments as it builds a Request's URL: dropped either way."""
    from scrapy import Request

    from .servers import Reply, SiteServer

    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /private\n")}) as site:
        urls = [site.url("/a/../private/x"), site.url("/./private/y"), site.url("/a/../open")]
        crawler = await crawl(urls)
        paths = site.paths()
    spider = spider_of(crawler)
    assert sorted(spider.dropped) == sorted(Request(url).url for url in urls[:2])
    assert [p for p in paths if "private" in p] == []
    assert len(spider.got) == 1
