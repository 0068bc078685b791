"""Config.from_settings: defaults, parsing, and start-up errors naming the setting."""

from __future__ import annotations

from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_rep.settings import Config, SettingError


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
    assert Config.from_settings({"ROBOTSTXT_USER_AGENT": "MyBot/1.0"}).user_agent_tokens == (
        "MyBot/1.0",
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
