"""The tester's view of a Scrapy project: ``scrapy robots --serve``.

Read from the project's settings through the crawl's own ``Config``, so the
page tests the tokens the crawl sends, fetches with its User-Agent, size cap,
redirect limit and timeout, and reads and forgets in the crawl's store.
"""

from __future__ import annotations

from collections.abc import Sequence

from scrapy.settings import BaseSettings
from scrapy.utils.project import data_path

from scrapy_rep.crawler.settings import DEFAULT_STORAGE_FILE, Config
from scrapy_rep.engine.agents import agent_tokens
from scrapy_rep.tools.store_view import StoreName
from scrapy_rep.tools.tester.server import TesterConfig

__all__ = ["tester_config"]


def tester_config(
    settings: BaseSettings, agents: Sequence[str] = (), purposes: Sequence[str] = ()
) -> TesterConfig:
    """The tester configured as this project's crawl is."""
    config = Config.from_settings(settings)
    tokens = config.user_agent_tokens or agent_tokens(config.default_user_agent)  # as the crawl
    store = None
    if config.storage == "sqlite":
        store = StoreName(data_path(config.storage_path or DEFAULT_STORAGE_FILE, createdir=True))
    elif config.storage == "redis" and config.redis_url:
        store = StoreName(config.redis_url, config.redis_prefix)
    return TesterConfig(
        agents=tuple(agents) or (",".join(tokens) or "*",),
        purposes=tuple(purposes) or config.purposes,
        google_quirks=config.google_quirks,
        store=store,
        user_agent=config.default_user_agent or "Scrapy",
        timeout=settings.getfloat("DOWNLOAD_TIMEOUT", 180.0),
        max_bytes=config.max_body_bytes,
        max_redirects=config.max_redirects,
        policy=config.policy(),
    )
