"""A setting keeps its name, its default and its check from the table to the
object that uses it (CONTRIBUTING.md, "One name for one idea").

``Config`` reads each setting into the field the table names
(``crawler/config/table.py``), its own or its ``PolicyConfig``'s; the objects
further in take that field's name and, when built without the settings, its
default: a
``MemoryStorage()`` or a ``Resolver(...)`` behaves as a crawl left at its
defaults, and a default changed in one place is changed everywhere.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.policy_config import ORDERED, PolicyConfig
from scrapy_rep.cache.storage import (
    FallbackStorage,
    MemoryStorage,
    StorageError,
    StorageOptions,
    open_storage,
)
from scrapy_rep.cache.storage.defaults import known_bytes, parsed_bytes, store_bytes
from scrapy_rep.cache.storage.redis.store import RedisStorage
from scrapy_rep.crawler.access.known_origins import KnownOrigins
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.crawler.config.settings import SETTING_OF, Config, SettingError, field_default
from scrapy_rep.tools.fetch.live import fetch_live
from scrapy_rep.tools.store.view import StoreName
from scrapy_rep.tools.tester.server import TesterConfig


def default_of(owner: Any, name: str) -> Any:
    """The default of a dataclass field, or of a parameter of a callable."""
    if dataclasses.is_dataclass(owner):
        (found,) = [item for item in dataclasses.fields(owner) if item.name == name]
        return found.default
    return inspect.signature(owner).parameters[name].default


def config_default(setting: str) -> Any:
    """The default the table gives ``setting`` (its field's)."""
    (attribute,) = [field for field, name in SETTING_OF.items() if name == setting]
    return field_default(attribute)


def same(value: Any) -> Any:
    return value


#: (setting, the object that uses it, its field or parameter, the share it takes).
USES: list[tuple[str, Any, str, Callable[[Any], Any]]] = [
    ("REP_STORAGE", open_storage, "kind", same),
    ("REP_MEMORY_MAX_ORIGINS", MemoryStorage, "max_origins", same),
    ("REP_MEMORY_MAX_ORIGINS", open_storage, "max_origins", same),
    ("REP_MEMORY_MAX_ORIGINS", StorageOptions, "max_origins", same),
    ("REP_MEMORY_MAX_ORIGINS", Resolver, "max_origins", same),
    ("REP_MEMORY_MAX_BYTES", MemoryStorage, "max_bytes", store_bytes),
    ("REP_MEMORY_MAX_BYTES", open_storage, "max_bytes", store_bytes),
    ("REP_MEMORY_MAX_BYTES", Resolver, "max_bytes", known_bytes),
    ("REP_MEMORY_MAX_BYTES", KnownOrigins, "max_bytes", known_bytes),
    ("REP_MEMORY_MAX_BYTES", Resolver, "parsed_max_bytes", parsed_bytes),
    ("REP_REDIS_PREFIX", open_storage, "prefix", same),
    ("REP_REDIS_PREFIX", StorageOptions, "prefix", same),
    ("REP_REDIS_PREFIX", RedisStorage, "prefix", same),
    ("REP_REDIS_PREFIX", RedisStorage.open, "prefix", same),
    ("REP_REDIS_PREFIX", StoreName, "redis_prefix", same),
    ("REP_REDIS_RETRY_INTERVAL", open_storage, "redis_retry_interval", same),
    ("REP_REDIS_RETRY_INTERVAL", FallbackStorage, "retry_interval", same),
    ("REP_MAX_BODY_BYTES", TesterConfig, "max_body_bytes", same),
    ("REP_FOLLOW_REDIRECTS", TesterConfig, "max_redirects", same),
    ("REP_FOLLOW_REDIRECTS", fetch_live, "max_redirects", same),
]


@pytest.mark.parametrize(("setting", "owner", "name", "share"), USES)
def test_scrapy_an_object_built_without_settings_takes_the_tables_default(
    setting: str, owner: Any, name: str, share: Callable[[Any], Any]
) -> None:
    assert default_of(owner, name) == share(config_default(setting))


def test_scrapy_the_memory_defaults_are_those_the_docs_give() -> None:
    """docs/settings.md and docs/storage.md: 100,000 origins, 128 MiB."""
    assert config_default("REP_MEMORY_MAX_ORIGINS") == 100_000
    assert config_default("REP_MEMORY_MAX_BYTES") == 128 * 1024 * 1024
    assert MemoryStorage().max_origins == 100_000


@pytest.mark.parametrize("field", [item.name for item in dataclasses.fields(PolicyConfig)])
def test_scrapy_each_policy_field_is_named_and_defaulted_as_its_setting(field: str) -> None:
    assert field in SETTING_OF  # the table fills this very field
    unset = Config.from_settings({"REP_OUTAGE_RULES": "google"}).policy
    assert getattr(unset, field) == getattr(PolicyConfig(), field)
    changed = {"REP_OUTAGE_RULES": "google"} | {SETTING_OF[field]: _other(field)}
    assert getattr(Config.from_settings(changed).policy, field) == _other(field)


def _other(field: str) -> Any:
    """A valid value other than the default, for ``field``."""
    if field == "long_outage":
        return "cached"
    if field == "retry_jitter":
        return 0.5
    if field == "retry_factor":
        return 3.0
    if field == "versions_kept":
        return 5
    if field == "versions_max_bytes":
        return 1_000_000
    if field in {low for low, _ in ORDERED}:
        return 1.5  # a low bound: still under its high one
    return 40 * 24 * 3600.0  # a high bound or a duration, above every low one


@pytest.mark.parametrize(("low", "high"), ORDERED)
def test_scrapy_a_pair_of_bounds_is_checked_once_for_the_settings_and_the_policy(
    low: str, high: str
) -> None:
    value = getattr(PolicyConfig(), high) + 1
    with pytest.raises(SettingError, match=f"{SETTING_OF[low]}.*{SETTING_OF[high]}"):
        Config.from_settings({SETTING_OF[low]: value})
    with pytest.raises(ValueError, match=f"{low} .* exceeds {high}"):
        PolicyConfig(**{low: value})


@deferred_f_from_coro_f
async def test_scrapy_rep_memory_max_origins_is_refused_in_one_words() -> None:
    words = "an integer >= 1"
    with pytest.raises(SettingError, match=words):
        Config.from_settings({"REP_MEMORY_MAX_ORIGINS": 0})
    with pytest.raises(ValueError, match=f"REP_MEMORY_MAX_ORIGINS must be {words}"):
        MemoryStorage(0)
    with pytest.raises(StorageError, match=f"REP_MEMORY_MAX_ORIGINS must be {words}"):
        await open_storage("sqlite", path="unused", max_origins=0)
