"""The forms of REP_REDIS_URL: one server, Sentinel, Cluster (issue 46, docs/storage.md).

Pure parsing: what each form names, what is refused with the accepted forms,
and that no password reaches a message.
"""

from __future__ import annotations

from typing import Any

import pytest

from scrapy_rep.cache.storage.redis.urls import RedisAddress, parse_redis_url, safe_url
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.crawler.config.values import SettingError


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("redis://h:6379/0", {"kind": "server"}),
        ("unix:///run/redis.sock?db=2", {"kind": "server"}),
        (
            "redis+sentinel://s1,s2:26380,[::1]/mymaster",
            {
                "kind": "sentinel",
                "nodes": (("s1", 26379), ("s2", 26380), ("::1", 26379)),
                "service": "mymaster",
                "db": 0,
                "password": None,
            },
        ),
        (
            "redis+sentinel://app:p%40ss@S1:5000/my%20master/3"
            "?sentinel_password=sp&sentinel_username=watcher",
            {
                "nodes": (("s1", 5000),),
                "service": "my master",
                "db": 3,
                "username": "app",
                "password": "p@ss",
                "sentinel_username": "watcher",
                "sentinel_password": "sp",
            },
        ),
        (
            "redis+cluster://:pw@10.0.0.1:7000,10.0.0.2",
            {
                "kind": "cluster",
                "nodes": (("10.0.0.1", 7000), ("10.0.0.2", 6379)),
                "password": "pw",
            },
        ),
        ("REDIS+CLUSTER://h:7000/0", {"kind": "cluster", "db": 0}),
        # the ports at either end of the range, an IPv6 node with one
        ("redis+cluster://h:1,[::1]:65535", {"nodes": (("h", 1), ("::1", 65535))}),
        ("redis+sentinel://s/m?sentinel_password=", {"sentinel_password": ""}),  # said, empty
    ],
)
def test_each_form_names_its_nodes_service_and_secrets(url: str, expected: dict[str, Any]) -> None:
    address = parse_redis_url(url)
    assert isinstance(address, RedisAddress) and address.url == url
    assert {name: getattr(address, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://h:6379", "the scheme must be one of"),
        ("redis+sentinel://s1:26379", "names its service"),
        ("redis+sentinel://s1/mymaster/zero", "the database is a number"),
        ("redis+sentinel://s1/mymaster?password=x", "unknown option 'password'"),
        ("redis+cluster://h:7000/1", "one database, 0"),
        ("redis+cluster://h:7000?sentinel_password=x", "unknown option 'sentinel_password'"),
        ("redis+cluster://h:70000", "bad address 'h:70000'"),
        ("redis+cluster://h:65536", "bad address 'h:65536'"),
        ("redis+cluster://h:0", "bad address 'h:0'"),
        ("redis+sentinel://s1/mymaster?password=", "unknown option 'password'"),
        ("redis+cluster://h1,,h2", "bad address ''"),
        ("redis+cluster://[::1", "bad address '[::1'"),
        ("redis+cluster:///", "no host"),
    ],
)
def test_a_bad_url_says_why_and_lists_the_accepted_forms(url: str, why: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_redis_url(url)
    assert why in str(caught.value)
    for form in ("redis://", "rediss://", "unix://", "redis+sentinel://", "redis+cluster://"):
        assert form in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("redis://user:s3cret@h:1/0", "redis://user:***@h:1/0"),
        (
            "rediss://h?password=s3cret&ssl_cert_reqs=none",
            "rediss://h?password=***&ssl_cert_reqs=none",
        ),
        (
            "redis+sentinel://:s3cret@a,b/m?sentinel_password=s3cret",
            "redis+sentinel://:***@a,b/m?sentinel_password=***",
        ),
        ("redis+cluster://u:s3cret@a:1,b:2", "redis+cluster://u:***@a:1,b:2"),
        # a user and no password: nothing to hide, and no password said to be there
        ("redis://alice@h:1/0", "redis://alice@h:1/0"),
        ("redis+cluster://alice@a:1,b:2", "redis+cluster://alice@a:1,b:2"),
        ("localhost:6379", "localhost:6379"),  # not a URL: shown as given
        ("redis://alice:@h:1/0", "redis://alice:***@h:1/0"),
    ],
)
def test_messages_never_show_a_password(url: str, shown: str) -> None:
    assert safe_url(url) == shown


def test_a_bad_redis_url_fails_at_start_up_naming_the_setting_not_its_password() -> None:
    with pytest.raises(SettingError) as caught:
        Config.from_settings(
            {"REP_STORAGE": "redis", "REP_REDIS_URL": "redis+cluster://:s3cret@h:7000/2"}
        )
    message = str(caught.value)
    assert caught.value.setting == "REP_REDIS_URL" and "s3cret" not in message
    assert "one database, 0" in message and "redis+sentinel://" in message


@pytest.mark.parametrize(
    ("url", "shown", "hidden"),
    [
        ("redis+cluster://alice@h:7000/2", "'redis+cluster://alice@h:7000/2'", None),
        ("redis+cluster://alice:s3cret@h:7000/2", "'redis+cluster://alice:***@h:7000/2'", "s3cret"),
    ],
)
def test_a_bad_redis_url_is_named_with_its_user_and_only_its_password_hidden(
    url: str, shown: str, hidden: str | None
) -> None:
    """The start-up message shows the URL as given, the password aside: a
    user without a password is not said to have one (docs/storage.md)."""
    with pytest.raises(SettingError) as caught:
        Config.from_settings({"REP_STORAGE": "redis", "REP_REDIS_URL": url})
    message = str(caught.value)
    assert shown in message, message
    assert hidden is None or hidden not in message


def test_the_new_forms_are_read_as_settings() -> None:
    url = "redis+sentinel://s1,s2/mymaster?sentinel_password=x"
    assert Config.from_settings({"REP_STORAGE": "redis", "REP_REDIS_URL": url}).redis_url == url
