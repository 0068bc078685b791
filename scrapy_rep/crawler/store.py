"""Opening ``REP_STORAGE`` with the crawl's settings.

The cache layer knows the backends; this is where the crawl's ``Config``
(and Scrapy's project data dir) meets them.
"""

from __future__ import annotations

from scrapy.utils.project import data_path

from scrapy_rep.cache.storage import Storage, open_storage
from scrapy_rep.crawler.flights import asyncio_running
from scrapy_rep.crawler.settings import DEFAULT_STORAGE_FILE, Config

__all__ = ["open_configured_storage"]


async def open_configured_storage(config: Config) -> Storage:
    """The store ``config`` names; raises with a message naming the setting."""
    if config.storage != "memory" and not asyncio_running():
        raise RuntimeError(
            f"REP_STORAGE={config.storage!r} needs Scrapy's asyncio reactor "
            "(TWISTED_REACTOR = 'twisted.internet.asyncioreactor.AsyncioSelectorReactor'); "
            "with another reactor set REP_STORAGE = 'memory'"
        )
    return await open_storage(
        config.storage,
        path=data_path(config.storage_path or DEFAULT_STORAGE_FILE),
        redis_url=config.redis_url,
        max_origins=config.memory_max_origins,
        prefix=config.redis_prefix,
        clock=config.clock,
        redis_retry_interval=config.redis_retry_interval,
        max_bytes=config.memory_max_bytes // 4,
    )
