"""The store a Scrapy project's crawls use, read from its settings.

``scrapy-rep cache show|forget`` without ``--store`` inside a project, and
``scrapy robots --serve``, look where the project's crawls keep their
records (``REP_STORAGE``, ``REP_STORAGE_PATH``, ``REP_REDIS_URL``), as the
crawl's own ``Config`` reads them (docs/cli.md). Imports Scrapy: loaded only
when a project is asked about.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.tools.store.view import StoreName

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from scrapy_rep.crawler.config.settings import Config

__all__ = [
    "ProjectAgent",
    "ProjectStoreError",
    "ProjectView",
    "crawl_tokens",
    "in_a_project",
    "project_agent",
    "project_store",
    "project_view",
    "store_of",
]


class ProjectStoreError(Exception):
    """No project here, or its crawls keep nothing a command could read."""


def store_of(config: Config, *, create: bool = False) -> StoreName | None:
    """Where crawls with ``config`` keep records; None for the memory store.

    ``create``: make the project's data folder if missing (a Tester may write
    there; a look never creates anything).
    """
    from scrapy.utils.project import data_path

    from scrapy_rep.crawler.config.settings import DEFAULT_STORAGE_FILE

    if config.storage == "sqlite":
        return StoreName(data_path(config.storage_path or DEFAULT_STORAGE_FILE, createdir=create))
    if config.storage == "redis" and config.redis_url:
        return StoreName(config.redis_url, config.redis_prefix)
    return None


def in_a_project() -> bool:
    """A Scrapy project around the working directory (a ``scrapy.cfg`` here or
    above, or ``SCRAPY_SETTINGS_MODULE``), found as Scrapy finds it but without
    importing Scrapy: the console script stays quick outside projects."""
    if os.environ.get("SCRAPY_SETTINGS_MODULE"):
        return True
    here = Path.cwd()
    return any((folder / "scrapy.cfg").is_file() for folder in (here, *here.parents))


def crawl_tokens(config: Config) -> tuple[str, ...]:
    """The tokens the crawl matches a request with that sends no User-Agent of
    its own (docs/spec.md §5.7): ``ROBOTSTXT_USER_AGENT``, else ``USER_AGENT``'s
    crawler names; () when neither names a crawler (only ``*`` groups apply)."""
    from scrapy_rep.engine.agents import agent_tokens

    return config.user_agent_tokens or agent_tokens(config.default_user_agent)


@dataclass(frozen=True)
class ProjectAgent:
    """Who a project's crawl is to robots.txt: its tokens, the setting they
    come from, and whether it reads robots.txt as Google does."""

    tokens: tuple[str, ...]
    source: str  # "ROBOTSTXT_USER_AGENT" or "USER_AGENT"
    google_quirks: bool

    def said(self) -> str:
        """For a note: ``shop (the project's USER_AGENT, as its crawl)``."""
        shown = " or ".join(self.tokens) or "* (it names no crawler)"
        return f"{shown} (this project's {self.source}, as its crawl)"


def project_agent() -> ProjectAgent | None:
    """The crawl's agent of the project around the working directory; None outside one."""
    if not in_a_project():
        return None
    from scrapy.utils.project import get_project_settings

    from scrapy_rep.crawler.config.settings import Config

    config = Config.from_settings(get_project_settings())
    source = "ROBOTSTXT_USER_AGENT" if config.user_agent_tokens else "USER_AGENT"
    return ProjectAgent(crawl_tokens(config), source, config.google_quirks)


def project_store(settings: BaseSettings | None = None) -> StoreName:
    """The store of the Scrapy project around the working directory.

    Raises ``ProjectStoreError`` outside a project, or when its crawls use
    the memory store or a store class of their own.
    """
    from scrapy.utils.project import get_project_settings, inside_project

    from scrapy_rep.crawler.config.settings import Config

    if settings is None:
        if not inside_project():
            raise ProjectStoreError(
                "not inside a Scrapy project (no scrapy.cfg here or above): give --store, "
                "the crawl's SQLite file or Redis URL"
            )
        settings = get_project_settings()
    config = Config.from_settings(settings)
    store = store_of(config)
    if store is None:
        raise ProjectStoreError(
            f"this project's REP_STORAGE is {config.storage!r}, which keeps nothing "
            "between crawls that a command can read: give --store"
        )
    return store


@dataclass(frozen=True)
class ProjectView:
    """What ``scrapy-rep report`` takes of a project: its store, its outage
    rules (to say what is closed, and until when) and its crawler's tokens."""

    store: StoreName
    policy: PolicyConfig
    tokens: tuple[str, ...]
    google_quirks: bool


def project_view(
    settings: BaseSettings | None = None, store: StoreName | None = None
) -> ProjectView:
    """``project_store`` (or ``store``), with the project's policy and tokens
    (as its crawl's)."""
    from scrapy.utils.project import get_project_settings

    from scrapy_rep.crawler.config.settings import Config

    store = store or project_store(settings)
    config = Config.from_settings(settings if settings is not None else get_project_settings())
    return ProjectView(store, config.policy, crawl_tokens(config), config.google_quirks)
