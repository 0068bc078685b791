"""The store a Scrapy project's crawls use, read from its settings.

``scrapy-rep cache show|forget`` without ``--store`` inside a project, and
``scrapy robots --serve``, look where the project's crawls keep their
records (``REP_STORAGE``, ``REP_STORAGE_PATH``, ``REP_REDIS_URL``), as the
crawl's own ``Config`` reads them (docs/cli.md). Imports Scrapy: loaded only
when a project is asked about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.tools.store_view import StoreName

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from scrapy_rep.crawler.config.settings import Config

__all__ = ["ProjectStoreError", "ProjectView", "project_store", "project_view", "store_of"]


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


def project_view(settings: BaseSettings | None = None) -> ProjectView:
    """``project_store``, with the project's policy and tokens (as its crawl's)."""
    from scrapy.utils.project import get_project_settings

    from scrapy_rep.crawler.config.settings import Config
    from scrapy_rep.engine.agents import agent_tokens

    store = project_store(settings)
    config = Config.from_settings(settings if settings is not None else get_project_settings())
    tokens = config.user_agent_tokens or agent_tokens(config.default_user_agent)
    return ProjectView(store, config.policy(), tokens, config.google_quirks)
