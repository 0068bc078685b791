"""The dotted paths users write in settings, as the docs list them, all load.

Modules inside the package may move; these names must not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scrapy.utils.misc import load_object

import scrapy_rep

GETTING_STARTED = Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"


def _documented_paths() -> list[str]:
    text = GETTING_STARTED.read_text(encoding="utf-8")
    section = text.split("## The dotted paths to write in settings", 1)[1].split("\n#", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    return sorted(set(re.findall(r"`(scrapy_rep\.[A-Za-z_.]+)`", table)))


def test_scrapy_docs_list_the_settings_paths() -> None:
    assert _documented_paths() == [
        "scrapy_rep.Addon",
        "scrapy_rep.CrawlDelay",
        "scrapy_rep.FollowSitemaps",
        "scrapy_rep.PageDirectivesMiddleware",
        "scrapy_rep.RepRobotParser",
        "scrapy_rep.RobotsTxtMiddleware",
        "scrapy_rep.RobotsTxtSpiderMiddleware",
        "scrapy_rep.Storage",
    ]


@pytest.mark.parametrize("path", _documented_paths())
def test_scrapy_settings_path_loads(path: str) -> None:
    assert isinstance(load_object(path), type)


@pytest.mark.parametrize("name", scrapy_rep.__all__)
def test_scrapy_public_name_is_importable(name: str) -> None:
    assert getattr(scrapy_rep, name) is not None


def test_scrapy_unknown_public_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        scrapy_rep.Nothing  # noqa: B018


#: A backend's class by the dotted path it had when its store was one module
#: (``REP_STORAGE`` takes a class's dotted path): the packages keep them.
OLD_BACKEND_PATHS = {
    "scrapy_rep.cache.storage.sqlite.SqliteStorage": "SqliteStorage",  # moves:keep
    "scrapy_rep.cache.storage.redis.RedisStorage": "RedisStorage",  # moves:keep
    "scrapy_rep.cache.storage.memory.MemoryStorage": "MemoryStorage",
}


@pytest.mark.parametrize("path", sorted(OLD_BACKEND_PATHS))
def test_scrapy_storage_class_paths_of_before_the_packages_load(path: str) -> None:
    loaded = load_object(path)
    assert isinstance(loaded, type) and loaded.__name__ == OLD_BACKEND_PATHS[path]


def test_scrapy_storage_package_without_the_name_is_an_attribute_error() -> None:
    import scrapy_rep.cache.storage.sqlite as sqlite_package  # moves:keep

    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        sqlite_package.Nothing  # noqa: B018
