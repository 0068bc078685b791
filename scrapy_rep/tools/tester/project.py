"""The tester's view of a Scrapy project: ``scrapy robots --serve``.

Read from the project's settings through the crawl's own ``Config``, so the
page tests the tokens the crawl sends, fetches with its User-Agent, size cap,
redirect limit and timeout, and reads and forgets in the crawl's store.
"""

from __future__ import annotations

from collections.abc import Sequence

from scrapy.settings import BaseSettings

from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.engine.agents import agent_tokens
from scrapy_rep.tools.store.project import store_of
from scrapy_rep.tools.tester.server import TesterConfig

__all__ = ["tester_config"]


def tester_config(
    settings: BaseSettings, agents: Sequence[str] = (), purposes: Sequence[str] = ()
) -> TesterConfig:
    """The tester configured as this project's crawl is."""
    config = Config.from_settings(settings)
    tokens = config.user_agent_tokens or agent_tokens(config.default_user_agent)  # as the crawl
    store = store_of(config, create=True)
    return TesterConfig(
        agents=tuple(agents) or (",".join(tokens) or "*",),
        purposes=tuple(purposes) or config.purposes,
        google_quirks=config.google_quirks,
        store=store,
        user_agent=config.default_user_agent or "Scrapy",
        timeout=config.fetch_timeout(settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)),
        max_body_bytes=config.max_body_bytes,
        max_redirects=config.max_redirects,
        policy=config.policy,
    )
