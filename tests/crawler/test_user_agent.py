"""docs/spec.md §5.7 in a crawl: the crawler's own token, whatever User-Agent string announces it.

Found by running Scrapy's and Protego's own test suites against scrapy_rep:
the "compatible" form of a bot's User-Agent (``Mozilla/5.0 (compatible;
Foobot/1.0; +url)``) must select the bot's group, not a browser's name.
"""

from __future__ import annotations

import logging

import pytest
from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep import RobotsTxt
from scrapy_rep.crawler.robot_parser import RepRobotParser

from .conftest import RecordingSpider, crawl, spider_of
from .servers import Reply, SiteServer

FOOBOT_ROBOTS = b"User-agent: foobot\nDisallow: /private\n\nUser-agent: *\nDisallow:\n"
COMPATIBLE = "Mozilla/5.0 (compatible; Foobot/1.0; +https://example.com/bot)"
BROWSER = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Chrome/120.0 Safari/537.36"
)


@deferred_f_from_coro_f
async def test_scrapy_5_7_compatible_user_agent_selects_the_bots_group(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="scrapy_rep")
    with SiteServer({"/robots.txt": Reply(200, FOOBOT_ROBOTS)}) as site:
        urls = [site.url("/private/x"), site.url("/public")]
        crawler = await crawl(urls, {"USER_AGENT": COMPATIBLE})
    spider = spider_of(crawler)
    assert spider.got == [site.url("/public")]
    assert list(spider.dropped) == [site.url("/private/x")]
    assert "/private/x" not in site.paths()
    assert "(group foobot, as foobot)" in caplog.text  # the drop log names the token


@deferred_f_from_coro_f
async def test_scrapy_5_7_per_request_user_agent_header_selects_the_bots_group() -> None:
    with SiteServer({"/robots.txt": Reply(200, FOOBOT_ROBOTS)}) as site:
        request = Request(site.url("/private/y"), headers={"User-Agent": COMPATIBLE})
        crawler = await crawl([request], {"USER_AGENT": BROWSER})
    assert list(spider_of(crawler).dropped) == [site.url("/private/y")]
    assert "/private/y" not in site.paths()


@deferred_f_from_coro_f
async def test_scrapy_5_7_browser_user_agent_warns_once_and_uses_the_star_group(
    caplog: pytest.LogCaptureFixture,
) -> None:
    robots = b"User-agent: mozilla\nDisallow: /\n\nUser-agent: *\nDisallow: /star-only\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        urls = [site.url("/page"), site.url("/star-only")]
        crawler = await crawl(urls, {"USER_AGENT": BROWSER})
    spider = spider_of(crawler)
    assert spider.got == [site.url("/page")]  # not the "mozilla" group
    assert list(spider.dropped) == [site.url("/star-only")]
    warnings = [r for r in caplog.records if "names no crawler" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING
    assert "ROBOTSTXT_USER_AGENT" in warnings[0].getMessage()


@deferred_f_from_coro_f
async def test_scrapy_5_7_invalid_configured_token_warns_with_the_token_used(
    caplog: pytest.LogCaptureFixture,
) -> None:
    robots = b"User-agent: bot\nDisallow: /cut\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        crawler = await crawl([site.url("/cut")], {"ROBOTSTXT_USER_AGENT": "bot2"})
    assert list(spider_of(crawler).dropped) == [site.url("/cut")]
    notes = [r.getMessage() for r in caplog.records if "not a valid RFC 9309" in r.getMessage()]
    assert notes == [
        "ROBOTSTXT_USER_AGENT='bot2' is not a valid RFC 9309 product token (letters, '-' "
        "and '_' only); robots.txt groups are matched as 'bot'"
    ]


# --- RepRobotParser: Scrapy's RobotParser contract -----------------------------


@pytest.mark.parametrize("body", [FOOBOT_ROBOTS, FOOBOT_ROBOTS.decode()], ids=["bytes", "str"])
def test_scrapy_robot_parser_from_crawler_without_a_crawler(body: bytes | str) -> None:
    parser = RepRobotParser.from_crawler(None, body)  # type: ignore[arg-type]
    assert not parser.allowed("https://example.com/private", "foobot")
    assert not parser.allowed(b"https://example.com/private", b"foobot")
    assert parser.allowed("https://example.com/private", "otherbot")
    assert parser.allowed(b"https://example.com/public", "foobot")
    assert not parser.allowed("https://example.com/private", COMPATIBLE)


def test_scrapy_robot_parser_from_crawler_with_a_crawler() -> None:
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(settings_dict={"USER_AGENT": COMPATIBLE})
    parser = RepRobotParser.from_crawler(crawler, FOOBOT_ROBOTS)
    assert not parser.allowed("https://example.com/private", "")  # USER_AGENT's token
    assert parser.allowed("https://example.com/public", "")


@pytest.mark.parametrize(
    "body", [b"", b"\xff\xfe\x00garbage\x80", "".encode("utf-16")], ids=["empty", "bad", "utf16"]
)
def test_scrapy_robot_parser_odd_bodies_allow_everything(body: bytes) -> None:
    parser = RepRobotParser.from_crawler(None, body)  # type: ignore[arg-type]
    assert parser.allowed("https://example.com/x", "foobot")
    assert parser.crawl_delay("foobot") is None


def test_scrapy_robot_parser_non_utf8_rule_still_applies() -> None:
    parser = RepRobotParser.from_crawler(None, b"User-agent: *\nDisallow: /caf\xe9\n")  # type: ignore[arg-type]
    assert not parser.allowed("https://example.com/caf%E9", "foobot")
    assert parser.allowed("https://example.com/cafe", "foobot")


def test_robotstxt_allowed_accepts_a_compatible_user_agent_string() -> None:
    robots = RobotsTxt.parse(FOOBOT_ROBOTS)
    assert not robots.allowed("/private", COMPATIBLE)
    assert robots.explain("/private", COMPATIBLE).agent == "foobot"
    assert robots.explain("/private", BROWSER).agent == "*"


# --- the User-Agent forms crawlers are configured with (docs/spec.md §5.7) ------------

#: What ``scrapy startproject shop`` writes into settings.py.
STARTPROJECT = "shop (+http://www.yourdomain.com)"
OWN_GROUP_ONLY = "User-agent: {}\nDisallow: /\n\nUser-agent: *\nAllow: /\n"


@pytest.mark.parametrize(
    ("user_agent", "token", "said"),
    [
        (STARTPROJECT, "shop", "token 'shop'"),
        ("AcmeBot (contact: ops@acme.example)", "acmebot", "token 'acmebot'"),
        ("acme-crawler (+https://acme.example/bot.html)", "acme-crawler", "token 'acme-crawler'"),
        (
            "Acme Research Crawler (+https://acme.example/crawler)",
            "acme",
            "tokens 'acme', 'research', 'crawler'",
        ),
    ],
)
@deferred_f_from_coro_f
async def test_scrapy_5_7_a_name_before_a_comment_obeys_its_own_group(
    user_agent: str, token: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    robots = OWN_GROUP_ONLY.format(token).encode()
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        urls = [site.url("/page"), site.url("/other")]
        crawler = await crawl(urls, {"USER_AGENT": user_agent})
    spider = spider_of(crawler)
    assert spider.got == []
    assert sorted(spider.dropped) == sorted(urls)
    assert site.paths() == ["/robots.txt"]
    messages = [record.getMessage() for record in caplog.records]
    assert any(message.startswith(f"robots.txt {said} from USER_AGENT") for message in messages)
    assert not any("names no crawler" in message for message in messages)


class NamedSpider(RecordingSpider):
    user_agent = "NewsHound/2.0 (+https://example.com/hound)"


@pytest.mark.filterwarnings("ignore:The 'user_agent' spider attribute is deprecated")
@deferred_f_from_coro_f
async def test_scrapy_5_7_the_spiders_user_agent_attribute_gives_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Scrapy sends a spider's ``user_agent`` (deprecated in 2.19, still sent)
    instead of USER_AGENT: so it is matched with."""
    robots = OWN_GROUP_ONLY.format("newshound").encode()
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        crawler = await crawl([site.url("/page")], {"USER_AGENT": STARTPROJECT}, NamedSpider)
    assert list(spider_of(crawler).dropped) == [site.url("/page")]
    # What reached the site (robots.txt alone) came with the spider's string.
    assert [(hit.path, hit.user_agent) for hit in site.hits] == [
        ("/robots.txt", NamedSpider.user_agent)
    ]
    assert "robots.txt token 'newshound' from NamedSpider.user_agent" in caplog.text
