"""What the peers' own test suites catch (Scrapy's, Protego's, crawler-commons'):
the crawler's token in a User-Agent string, and pacing lines per agent line."""

from __future__ import annotations

import pytest

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.agents import agent_tokens


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        ("Mozilla/5.0 (compatible; Foobot/1.0; +https://example.com/bot)", "foobot"),
        ("Mozilla/5.0 (compatible; Foobot; +https://example.com/bot)", "foobot"),
        (
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; "
            "+http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
            "bingbot",
        ),
        (
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 "
            "(KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; "
            "+http://www.google.com/bot.html)",
            "googlebot",
        ),
        ("Googlebot/2.1 (+http://www.google.com/bot.html)", "googlebot"),
        ("Googlebot-Image/1.0", "googlebot-image"),
        ("Scrapy/2.19.0 (+https://scrapy.org)", "scrapy"),
        ("mybot", "mybot"),
        # No crawler named: only the * group may apply.
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/120.0 Safari/537.36",
            "",
        ),
        ("Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.9) Gecko/2008 Firefox/3.0", ""),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
            "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
            "",
        ),
    ],
)
def test_scrapy_5_7_user_agent_string_gives_the_crawlers_token(user_agent: str, token: str) -> None:
    assert agent_tokens(user_agent)[:1] == ((token,) if token else ())


@pytest.mark.parametrize(
    ("value", "token"),
    [("bot2", "bot"), ("my bot", "my"), ("MyBot", "mybot"), ("MyBot/1.0", "mybot")],
)
def test_rfc9309_5_6_configured_token_is_the_leading_token(value: str, token: str) -> None:
    assert agent_tokens(value) == (token,)


PACED = (
    "User-agent: bingbot\nCrawl-delay: 5\n"
    "User-agent: yandex\nCrawl-delay: 10\n"
    "User-agent: *\nDisallow: /private\n"
)


@pytest.mark.parametrize("quirks", [False, True])
def test_scrapy_crawl_delay_belongs_to_the_agent_lines_before_it(quirks: bool) -> None:
    robots = RobotsTxt.parse(PACED, google_quirks=quirks)
    assert robots.crawl_delay("bingbot") == 5.0
    assert robots.crawl_delay("yandex") == 10.0
    assert robots.crawl_delay("other") is None
    # RFC 9309 §2.2.1: the three agent lines are still one group for the rules.
    for agent in ("bingbot", "yandex", "other"):
        assert not robots.allowed("/private", agent)


def test_scrapy_request_rate_belongs_to_the_agent_lines_before_it() -> None:
    robots = RobotsTxt.parse(
        "User-agent: a\nUser-agent: b\nRequest-rate: 1/10\n"
        "User-agent: c\nDisallow: /x\nRequest-rate: 1/20\nCrawl-delay: 3\nCrawl-delay: 4\n"
    )
    assert robots.request_rate("a") == robots.request_rate("b") == 10.0
    assert robots.request_rate("c") == 20.0
    assert robots.crawl_delay("c") == 3.0  # the first line for an agent wins
    assert robots.crawl_delay("a") is None


def test_scrapy_crawl_delay_of_a_merged_group_comes_from_its_own_lines() -> None:
    robots = RobotsTxt.parse(
        "User-agent: a\nDisallow: /1\n\nUser-agent: b\nCrawl-delay: 7\n\n"
        "User-agent: a\nCrawl-delay: 2\nDisallow: /2\n"
    )
    assert robots.crawl_delay("a") == 2.0
    assert robots.crawl_delay("b") == 7.0
