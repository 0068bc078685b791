"""Config.from_settings: defaults, parsing, and start-up errors naming the setting."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from scrapy.settings import Settings
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.config.settings import Config, SettingError

from .conftest import crawl
from .servers import Reply, SiteServer


def test_scrapy_defaults_from_scrapy_settings() -> None:
    config = Config.from_settings(Settings())
    assert config.obey is False  # Scrapy's default; project templates set True
    assert config.user_agent_tokens == ()
    assert config.default_user_agent.startswith("Scrapy/")
    assert config.google_quirks is False
    assert config.max_redirects == 5
    assert config.max_body_bytes == 512_000
    assert config.checked_schemes == {"http", "https", "ftp"}


def test_scrapy_robotstxt_user_agent_string_or_list() -> None:
    # Kept as the tokens they stand for (docs/spec.md §5.7), lower-cased.
    assert Config.from_settings({"ROBOTSTXT_USER_AGENT": "MyBot/1.0"}).user_agent_tokens == (
        "mybot",
    )
    listed = Config.from_settings({"ROBOTSTXT_USER_AGENT": ["mybot-images", "mybot"]})
    assert listed.user_agent_tokens == ("mybot-images", "mybot")


def test_scrapy_settings_as_strings_from_the_command_line() -> None:
    config = Config.from_settings(
        Settings(
            {
                "ROBOTSTXT_OBEY": "True",
                "REP_GOOGLE_QUIRKS": "1",
                "REP_FOLLOW_REDIRECTS": "7",
                "REP_CHECKED_SCHEMES": "http, https",
            }
        )
    )
    assert config.obey and config.google_quirks
    assert config.max_redirects == 7
    assert config.checked_schemes == {"http", "https"}


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("ROBOTSTXT_OBEY", "maybe", "True or False"),
        ("REP_GOOGLE_QUIRKS", 2, "True or False"),
        ("REP_FOLLOW_REDIRECTS", -1, "an integer >= 0"),
        ("REP_FOLLOW_REDIRECTS", "five", "an integer >= 0"),
        ("REP_MAX_BODY_BYTES", 1000, "an integer >= 512000"),
        ("REP_DECISION_LOG_MAX_BYTES", 1000, "an integer >= 65536"),
        ("REP_DECISION_LOG", "", "a file path"),
        ("REP_ROBOTSTXT_TIMEOUT", 0, "a number of seconds > 0"),
        ("REP_ROBOTSTXT_TIMEOUT", "soon", "a number of seconds > 0"),
        ("REP_FORGET_POLL_INTERVAL", 0, "a number >= 0.01 and <= 86400"),
        ("REP_FORGET_POLL_INTERVAL", "soon", "a number >= 0.01 and <= 86400"),
        ("REP_CHECKED_SCHEMES", ["http", "no scheme"], "a list of URL schemes"),
        ("ROBOTSTXT_USER_AGENT", "/1.0", "product token"),
        ("ROBOTSTXT_USER_AGENT", ["mybot", 3], "product token"),
        ("ROBOTSTXT_USER_AGENT", [], "product token"),
    ],
)
def test_scrapy_bad_setting_fails_naming_setting_value_and_accepted(
    name: str, value: Any, accepted: str
) -> None:
    with pytest.raises(SettingError) as caught:
        Config.from_settings({name: value})
    message = str(caught.value)
    assert name in message
    assert repr(value) in message
    assert accepted in message
    assert isinstance(caught.value, ValueError)
    assert caught.value.setting == name


def test_config_is_frozen() -> None:
    config = Config()
    with pytest.raises(AttributeError):
        config.obey = True  # type: ignore[misc]


def test_cache_settings_defaults_follow_spec_2_2_and_3() -> None:
    config = Config.from_settings(Settings())
    assert config.storage == "sqlite" and config.storage_path is None
    assert config.memory_max_origins == 100_000
    assert config.redis_url is None and config.redis_prefix == "scrapy_rep:"
    policy = config.policy
    assert (policy.cache_ttl, policy.cache_min_ttl, policy.cache_max_ttl) == (86400, 60, 86400)
    assert policy.unreachable_disallow == 12 * 3600
    assert policy.unreachable_max_age == 30 * 86400
    assert policy.long_outage == "site"
    assert policy.unreachable_wait == 10
    assert config.clock() > 1_600_000_000  # the real clock


def test_google_legacy_preset_and_explicit_settings_win_over_it() -> None:
    legacy = Config.from_settings({"REP_OUTAGE_RULES": "google-legacy"}).policy
    assert legacy.unreachable_disallow == legacy.unreachable_max_age == 30 * 86400
    assert legacy.long_outage == "cached"
    tuned = Config.from_settings(
        {"REP_OUTAGE_RULES": "google-legacy", "REP_UNREACHABLE_DISALLOW": "0"}
    ).policy
    assert tuned.unreachable_disallow == 0 and tuned.long_outage == "cached"


def test_cache_settings_as_strings_and_redis_url_fallback() -> None:
    config = Config.from_settings(
        Settings(
            {
                "REP_STORAGE": "redis",
                "REDIS_URL": "redis://127.0.0.1:6379/1",
                "REP_CACHE_TTL": "3600",
                "REP_RETRY_JITTER": "0.5",
                "REP_CLOCK": "time.time",
            }
        )
    )
    assert config.redis_url == "redis://127.0.0.1:6379/1"
    assert config.policy.cache_ttl == 3600 and config.policy.retry_jitter == 0.5
    override = Config.from_settings(
        {"REDIS_URL": "redis://a:1/0", "REP_REDIS_URL": "redis://b:2/0"}
    )
    assert override.redis_url == "redis://b:2/0"


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("REP_STORAGE", "postgres", "'sqlite' (the default), 'memory', 'redis'"),
        ("REP_STORAGE_PATH", "", "a file path"),
        ("REP_MEMORY_MAX_ORIGINS", 0, "an integer >= 1"),
        ("REP_REDIS_URL", "http://localhost", "a Redis URL"),
        ("REP_CACHE_TTL", -1, "a number of seconds >= 0"),
        ("REP_CACHE_MIN_TTL", 90_000, "<= REP_CACHE_MAX_TTL"),
        ("REP_UNREACHABLE_WAIT", "soon", "a number of seconds >= 0"),
        ("REP_UNREACHABLE_DISALLOW", float("nan"), "a number of seconds >= 0"),
        ("REP_OUTAGE_RULES", "bing", "'google' or 'google-legacy'"),
        ("REP_LONG_OUTAGE", "allow", "'site' or 'cached'"),
        ("REP_RETRY_FACTOR", 0.5, "a number >= 1"),
        ("REP_RETRY_JITTER", 2, "a number >= 0 and <= 1"),
        ("REP_CLOCK", "no.such.clock", "a zero-argument callable"),
        ("REP_CLOCK", "os.getcwd", "a zero-argument callable"),
    ],
)
def test_cache_bad_setting_fails_naming_setting_value_and_accepted(
    name: str, value: Any, accepted: str
) -> None:
    with pytest.raises(SettingError) as caught:
        Config.from_settings({name: value})
    message = str(caught.value)
    assert name in message and accepted in message
    assert caught.value.setting == name


def test_cache_redis_storage_needs_a_url() -> None:
    with pytest.raises(SettingError, match=r"REP_REDIS_URL.*REDIS_URL"):
        Config.from_settings({"REP_STORAGE": "redis"})


@deferred_f_from_coro_f
async def test_scrapy_a_misspelt_setting_is_named_with_the_closest_one(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``REP_CRAWL_DELAYS`` crawled with no crawl-delay and no word; now the
    start-up says so, once, with the setting meant."""
    robots = b"User-agent: *\nCrawl-delay: 1\n"
    with SiteServer({"/robots.txt": Reply(200, robots)}) as site:
        settings = {"REP_CRAWL_DELAYS": "obey", "ROBOTSTXT_USERAGENT": "mybot", "REP_ZZZ": 1}
        await crawl([site.url("/page")], settings)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warnings if "not a setting scrapy_rep reads" in w] == [
        "REP_CRAWL_DELAYS is not a setting scrapy_rep reads, so it does nothing; "
        "did you mean REP_CRAWL_DELAY?",
        "REP_ZZZ is not a setting scrapy_rep reads, so it does nothing; "
        "the settings are in docs/settings.md",
        "ROBOTSTXT_USERAGENT is not a setting scrapy_rep reads, so it does nothing; "
        "did you mean ROBOTSTXT_USER_AGENT?",
    ]


def test_scrapy_known_settings_and_the_testing_hook_get_no_note() -> None:
    settings = {"REP_CRAWL_DELAY": "obey", "REP_CLOCK": "time.time", "ROBOTSTXT_PARSER": "x"}
    assert Config.from_settings(settings).notes == ()


@pytest.mark.parametrize(
    ("settings", "timeout", "wait"),
    [
        ({}, 30.0, 30.0 * 6 + 30),  # not Scrapy's 180 s DOWNLOAD_TIMEOUT
        ({"DOWNLOAD_TIMEOUT": 10}, 10.0, 10.0 * 6 + 30),  # a shorter DOWNLOAD_TIMEOUT holds
        ({"REP_ROBOTSTXT_TIMEOUT": "45", "DOWNLOAD_TIMEOUT": 10}, 45.0, 45.0 * 6 + 30),
        ({"REP_ROBOTSTXT_TIMEOUT": 5, "REP_FOLLOW_REDIRECTS": 0}, 5.0, 5.0 + 30),
    ],
)
def test_scrapy_robotstxt_timeout_and_the_longest_wait(
    settings: dict[str, Any], timeout: float, wait: float
) -> None:
    """docs/decisions.md: a robots.txt fetch's own timeout, and the longest a
    request waits for one (a timeout per hop, and 30 s of slack)."""
    config = Config.from_settings(settings)
    download_timeout = float(settings.get("DOWNLOAD_TIMEOUT", 180))
    assert config.fetch_timeout(download_timeout) == timeout
    assert config.longest_wait(download_timeout) == wait


def test_the_longest_wait_is_written_where_people_look() -> None:
    """docs/decisions.md and docs/troubleshooting.md give the formula and the
    default that ``Config.longest_wait`` computes."""
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    default = Config.from_settings({}).longest_wait(180.0)
    assert default == 210.0
    for page in ("decisions.md", "troubleshooting.md"):
        text = " ".join((docs / page).read_text(encoding="utf-8").split())
        assert "REP_ROBOTSTXT_TIMEOUT × (REP_FOLLOW_REDIRECTS + 1) + 30 s" in text, page
        assert f"{default:g} s" in text, page
