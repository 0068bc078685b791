"""Usage preferences in real crawls (issue 15): REP_PURPOSES and REP_USAGE_ACTION.

A site's robots.txt (``Content-Usage`` / ``Content-Signal`` lines) and its
``Content-Usage`` response header say what content may be used for; a crawl
that declares its purposes must not fetch what robots.txt refuses for them,
must drop (or tag) what the header refuses, and must record where every
preference came from. A crawl that declares none must behave exactly as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from scrapy import Spider
from scrapy.http import Request, Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep import signals
from scrapy_rep.crawler.config.settings import Config, SettingError
from scrapy_rep.crawler.errors import RobotsTxtUsageDenied
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
from scrapy_rep.crawler.page.usage_check import UsageCheck
from scrapy_rep.crawler.request_checks import RobotsCheck
from scrapy_rep.engine.usage import LABELS

from .conftest import SETTINGS, RecordingSpider, crawl, spider_of, stats
from .servers import Reply, SiteServer

TRAIN_AI = {"REP_PURPOSES": ["train-ai"]}
ROBOTS = (
    b"User-agent: *\n"
    b"Allow: /\n"
    b"Content-Usage: train-ai=y\n"
    b"Content-Usage: /private/ train-ai=n, search=y\n"
    b"Disallow: /admin/\n"
)


class MetaSpider(RecordingSpider):
    """Records ``response.meta["rep_usage"]`` per URL."""

    name = "meta"

    def parse(self, response: Response) -> None:
        super().parse(response)
        self.usage = {**getattr(self, "usage", {}), response.url: response.meta.get("rep_usage")}


def usage_of(crawler: Any) -> dict[str, Any]:
    spider = crawler.spider
    assert isinstance(spider, MetaSpider)
    return getattr(spider, "usage", {})


@deferred_f_from_coro_f
async def test_aipref_attach_refused_path_never_reaches_the_server() -> None:
    dropped: list[dict[str, Any]] = []
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        crawler = get_crawler(MetaSpider, {**SETTINGS, **TRAIN_AI})
        crawler.signals.connect(
            lambda **kw: dropped.append(kw), signal=signals.request_dropped, weak=False
        )
        urls = [site.url("/private/a"), site.url("/open/b"), site.url("/admin/c")]
        await crawler.crawl_async(urls=urls)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/open/b"]  # /private/ is refused, /admin/ forbidden
    error = spider.dropped[site.url("/private/a")]
    assert isinstance(error, RobotsTxtUsageDenied)
    assert error.labels == ("train-ai",)
    assert error.reason == (
        "usage train-ai refused by Content-Usage: /private/ train-ai=n, search=y "
        f"at line 4 of {site.url('/robots.txt')}"
    )
    assert [rule.line for rule in error.rules] == [4]
    assert [kw["request"].url for kw in dropped] == [site.url("/private/a"), site.url("/admin/c")]
    assert dropped[0]["exception"] is error
    values = stats(crawler)
    assert values["robotstxt/usage/forbidden"] == 1
    assert values["robotstxt/usage/denied/train-ai"] == 1
    assert values["robotstxt/forbidden"] == 1  # /admin/: the rules, as before
    meta = usage_of(crawler)[site.url("/open/b")]
    assert meta["purposes"] == ["train-ai"] and meta["denied"] == []
    assert meta["robotstxt"] == site.url("/robots.txt")
    assert meta["labels"]["train-ai"] == {
        "state": "allowed",
        "by": [{"source": "content-usage", "line": 3, "text": "train-ai=y", "global": False}],
    }
    assert meta["labels"]["search"]["state"] == "unstated"


@deferred_f_from_coro_f
async def test_scrapy_without_purposes_nothing_changes() -> None:
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        crawler = await crawl([site.url("/private/a"), site.url("/admin/c")], spidercls=MetaSpider)
        middleware = crawler.get_downloader_middleware(RobotsTxtMiddleware)
    assert type(middleware) is RobotsTxtMiddleware  # the plain class: its hot path as before
    assert site.paths() == ["/robots.txt", "/private/a"]
    assert usage_of(crawler) == {site.url("/private/a"): None}  # no meta added
    assert not [key for key in stats(crawler) if key.startswith("robotstxt/usage")]


@deferred_f_from_coro_f
async def test_aipref_vocab_only_declared_purposes_drop() -> None:
    """``search`` is allowed on /private/: a search crawl fetches it, and is told of train-ai."""
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        crawler = await crawl(
            [site.url("/private/a")], {"REP_PURPOSES": "search"}, spidercls=MetaSpider
        )
    assert site.paths() == ["/robots.txt", "/private/a"]
    meta = usage_of(crawler)[site.url("/private/a")]
    assert meta["purposes"] == ["search"] and meta["denied"] == []
    assert meta["labels"]["train-ai"]["state"] == "denied"
    assert meta["labels"]["search"]["by"][0]["line"] == 4


@deferred_f_from_coro_f
async def test_cloudflare_content_signal_refuses_train_ai() -> None:
    robots = b"User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        crawler = await crawl([site.url("/page")], TRAIN_AI)
    assert site.paths() == ["/robots.txt"]
    error = spider_of(crawler).dropped[site.url("/page")]
    assert isinstance(error, RobotsTxtUsageDenied)
    assert "Content-Signal: search=yes, ai-train=no at line 2" in error.reason


@deferred_f_from_coro_f
async def test_aipref_attach_agent_specific_group_applies_only_to_its_token() -> None:
    robots = (
        b"User-agent: otherbot\nContent-Usage: train-ai=n\n\n"
        b"User-agent: testbot\nContent-Usage: /mine/ train-ai=n\nAllow: /\n"
    )
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        urls = [site.url("/open"), site.url("/mine/x")]
        crawler = await crawl(urls, TRAIN_AI)
        other = await crawl(urls, {**TRAIN_AI, "ROBOTSTXT_USER_AGENT": "otherbot"})
    assert spider_of(crawler).got == [site.url("/open")]  # testbot: its own group only
    assert list(spider_of(crawler).dropped) == [site.url("/mine/x")]
    assert spider_of(other).got == [] and len(spider_of(other).dropped) == 2


def header_site(value: str) -> dict[str, Reply]:
    page = Reply(200, b"<html>p</html>", {"Content-Type": "text/html", "Content-Usage": value})
    return {"/robots.txt": Reply(404), "/page": page}


@deferred_f_from_coro_f
async def test_aipref_attach_header_refusal_drops_the_response() -> None:
    with SiteServer(header_site("train-ai=n, search=y")) as site:
        crawler = await crawl([site.url("/page")], TRAIN_AI)
    spider = spider_of(crawler)
    assert site.paths() == ["/robots.txt", "/page"]  # known only once downloaded
    assert spider.got == []
    error = spider.dropped[site.url("/page")]
    assert isinstance(error, RobotsTxtUsageDenied)
    assert error.reason == (
        "usage train-ai refused by the Content-Usage response header (train-ai=n, search=y)"
    )
    values = stats(crawler)
    assert values["robotstxt/usage/header_dropped"] == 1
    assert values["robotstxt/usage/denied/train-ai"] == 1


@deferred_f_from_coro_f
async def test_aipref_attach_header_refusal_tagged() -> None:
    with SiteServer(header_site("train-ai=n")) as site:
        crawler = await crawl(
            [site.url("/page")], {**TRAIN_AI, "REP_USAGE_ACTION": "tag"}, spidercls=MetaSpider
        )
    meta = usage_of(crawler)[site.url("/page")]
    assert meta["denied"] == ["train-ai"]
    assert meta["labels"]["train-ai"] == {
        "state": "denied",
        "by": [{"source": "header", "line": None, "text": "train-ai=n", "global": False}],
    }
    assert stats(crawler)["robotstxt/usage/tagged"] == 1
    assert "robotstxt/usage/header_dropped" not in stats(crawler)


@deferred_f_from_coro_f
async def test_aipref_vocab_header_and_robots_combine_with_provenance() -> None:
    """robots.txt allows train-ai, the header states search: both kept, each with its source."""
    routes = header_site("search=n")
    routes["/robots.txt"] = Reply(200, b"User-agent: *\nContent-Usage: train-ai=y\n")
    with SiteServer(routes) as site:
        crawler = await crawl([site.url("/page")], TRAIN_AI, spidercls=MetaSpider)
    labels = usage_of(crawler)[site.url("/page")]["labels"]
    assert labels["train-ai"]["by"] == [
        {"source": "content-usage", "line": 2, "text": "train-ai=y", "global": False}
    ]
    assert labels["search"] == {
        "state": "denied",
        "by": [{"source": "header", "line": None, "text": "search=n", "global": False}],
    }


@deferred_f_from_coro_f
async def test_scrapy_addon_drops_refused_requests_before_the_scheduler() -> None:
    settings = {**TRAIN_AI, "ADDONS": {"scrapy_rep.Addon": 0}, "DOWNLOADER_MIDDLEWARES": {}}

    class Follower(RecordingSpider):
        name = "follower"

        def parse(self, response: Response) -> Any:
            super().parse(response)
            if response.url.endswith("/open"):
                yield Request(response.urljoin("/private/z"), errback=self.errback)

    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        crawler = await crawl([site.url("/open")], settings, spidercls=Follower)
    assert site.paths() == ["/robots.txt", "/open"]
    assert isinstance(spider_of(crawler).dropped[site.url("/private/z")], RobotsTxtUsageDenied)
    assert stats(crawler)["robotstxt/dropped_early"] == 1


def test_scrapy_a_project_subclass_keeps_its_own_methods() -> None:
    class Mine(RobotsTxtMiddleware):
        def mine(self) -> str:
            return "mine"

    crawler = get_crawler(Spider, {**SETTINGS, **TRAIN_AI})
    middleware = Mine.from_crawler(crawler)
    assert isinstance(middleware, Mine)
    assert any(isinstance(check, UsageCheck) for check in middleware.checks)
    assert middleware.mine() == "mine"


def test_scrapy_without_purposes_the_usage_check_is_not_there() -> None:
    # No purposes declared: nothing of the usage check runs, at no cost.
    # Only the usage check is named: another request check may come beside it.
    plain = RobotsTxtMiddleware.from_crawler(get_crawler(Spider, SETTINGS))
    plain_kinds = [type(check) for check in plain.checks]
    assert plain_kinds[0] is RobotsCheck
    assert UsageCheck not in plain_kinds
    declared = RobotsTxtMiddleware.from_crawler(get_crawler(Spider, {**SETTINGS, **TRAIN_AI}))
    declared_kinds = [type(check) for check in declared.checks]
    assert declared_kinds[0] is RobotsCheck
    assert declared_kinds.count(UsageCheck) == 1


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("REP_PURPOSES", ["train-llm"], ", ".join(repr(label) for label in LABELS)),
        ("REP_PURPOSES", "train-ai, tdm", "a list of usage labels"),
        ("REP_PURPOSES", 3, "a list of usage labels"),
        ("REP_USAGE_ACTION", "ignore", "'drop' or 'tag'"),
    ],
)
def test_scrapy_bad_usage_setting_fails_at_start_up(name: str, value: Any, accepted: str) -> None:
    crawler = get_crawler(Spider, {**SETTINGS, name: value})
    with pytest.raises(SettingError, match=name) as raised:
        RobotsTxtMiddleware.from_crawler(crawler)
    assert accepted in str(raised.value)


@deferred_f_from_coro_f
async def test_scrapy_bad_usage_setting_stops_the_crawl_before_any_request() -> None:
    with (
        SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site,
        pytest.raises(SettingError, match="REP_PURPOSES"),
    ):
        await crawl([site.url("/page")], {"REP_PURPOSES": ["ai-training"]})
    assert site.paths() == []


def test_scrapy_usage_settings_defaults_and_spellings() -> None:
    default = Config.from_settings({})
    assert (default.purposes, default.usage_action, default.page_directives) == ((), "drop", False)
    config = Config.from_settings(
        {"REP_PURPOSES": "train-ai, search,train-ai", "REP_USAGE_ACTION": "tag"}
    )
    assert config.purposes == ("train-ai", "search") and config.usage_action == "tag"
    assert Config.from_settings({"REP_PURPOSES": []}).purposes == ()
