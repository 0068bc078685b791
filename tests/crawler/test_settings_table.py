"""The settings table (``SETTINGS``) is the whole truth: what is read is documented.

docs/settings.md is generated from ``SETTINGS``; these tests fail when a
setting is read (by ``Config`` or any other component) without an entry.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import Any

from scrapy.settings import Settings

from scrapy_rep.cache.policy_config import PolicyConfig
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.crawler.config.table import SETTINGS

PACKAGE = Path(__file__).resolve().parents[2] / "scrapy_rep"
#: The testing hook kept out of the reference on purpose (CONTRIBUTING.md).
UNDOCUMENTED = {"REP_CLOCK"}
#: Config fields that no setting fills directly.
DERIVED = {"notes", "clock", "policy"}


class RecordingSettings(Settings):
    """Scrapy settings that remember every name asked for."""

    def __init__(self) -> None:
        self.asked: set[str] = set()
        super().__init__()
        self.asked.clear()  # Settings' own set-up asks for some

    def get(self, name: Any, default: Any = None) -> Any:
        self.asked.add(name)
        return super().get(name, default)

    def __getitem__(self, name: Any) -> Any:
        self.asked.add(name)
        return super().__getitem__(name)


def _names() -> set[str]:
    return {setting.name for setting in SETTINGS}


def _fallbacks() -> set[str]:
    return {setting.fallback for setting in SETTINGS if setting.fallback}


def test_scrapy_every_setting_config_reads_is_in_the_table() -> None:
    settings = RecordingSettings()
    Config.from_settings(settings)
    assert settings.asked - UNDOCUMENTED <= _names() | _fallbacks()
    # and the other way round: each entry Config owns is read
    owned = {setting.name for setting in SETTINGS if setting.attribute is not None}
    assert owned <= settings.asked


def _rep_names_in_source() -> Iterator[tuple[str, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in re.findall(r"\bREP_[A-Z][A-Z0-9_]*\b", path.read_text(encoding="utf-8")):
            yield name, str(path.relative_to(PACKAGE.parent))


def test_scrapy_every_rep_setting_named_in_the_package_is_in_the_table() -> None:
    # Catches a setting read outside Config (crawl-delay, sitemaps, the add-on...).
    missing = {
        (name, where)
        for name, where in _rep_names_in_source()
        if name not in _names() and name not in UNDOCUMENTED
    }
    assert not missing


def test_scrapy_table_entries_name_config_fields_or_their_reader() -> None:
    own = {field.name for field in dataclasses.fields(Config)}
    policy = {field.name for field in dataclasses.fields(PolicyConfig)}
    assert not own & policy  # a setting's attribute names one field
    fields = own | policy
    assert len(_names()) == len(SETTINGS)  # no setting listed twice
    for setting in SETTINGS:
        assert setting.accepted and setting.doc, setting.name
        if setting.attribute is None:
            assert setting.read_by and setting.default, setting.name
            source = Path(import_module(setting.read_by).__file__ or "").read_text("utf-8")
            assert f'"{setting.name}"' in source, (setting.name, setting.read_by)
        else:
            assert setting.attribute in fields and setting.parse is not None, setting.name
    filled = {setting.attribute for setting in SETTINGS if setting.attribute}
    assert fields - DERIVED == filled


def test_scrapy_fallback_setting_is_read_when_the_setting_is_unset() -> None:
    url = "redis://example.invalid:6379/0"
    assert Config.from_settings({"REDIS_URL": url}).redis_url == url
    assert Config.from_settings({"REDIS_URL": url, "REP_REDIS_URL": url + "1"}).redis_url == (
        url + "1"
    )


def test_the_crawl_delay_entry_agrees_with_its_page() -> None:
    """The pace leaves Scrapy's download slots alone (crawler/pace/turns.py):
    the table must not say otherwise than docs/crawl-delay.md."""
    from pathlib import Path

    from scrapy_rep.crawler.config.table import SETTINGS

    (entry,) = [setting for setting in SETTINGS if setting.name == "REP_CRAWL_DELAY"]
    page = (Path(__file__).resolve().parents[2] / "docs" / "crawl-delay.md").read_text()
    assert "download slots are left alone" in entry.doc
    assert "Scrapy's download slots are left alone" in page
    assert "slot's minimum delay" not in entry.doc
