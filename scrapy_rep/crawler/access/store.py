"""Opening ``REP_STORAGE`` with the crawl's settings, under any reactor.

The cache layer knows the backends; this is where the crawl's ``Config``
(and Scrapy's project data dir) meets them. The backends are asyncio
coroutines: under Scrapy's asyncio reactor they run on its loop; under any
other reactor (epoll, poll, select) on a private loop in a thread of its own
(``loop_thread``), so the same backends serve every reactor.
"""

from __future__ import annotations

from scrapy.utils.project import data_path

from scrapy_rep.cache.storage import Storage, open_storage
from scrapy_rep.cache.storage.defaults import store_bytes
from scrapy_rep.crawler.access.loop_thread import LoopThread, ThreadedStorage
from scrapy_rep.crawler.async_bridge import asyncio_running
from scrapy_rep.crawler.config.settings import DEFAULT_STORAGE_FILE, Config

__all__ = ["open_configured_storage"]


async def open_configured_storage(config: Config) -> Storage:
    """The store ``config`` names; raises with a message naming the setting."""
    opening = open_storage(
        config.storage,
        path=data_path(config.storage_path or DEFAULT_STORAGE_FILE),
        redis_url=config.redis_url,
        max_origins=config.memory_max_origins,
        prefix=config.redis_prefix,
        clock=config.clock,
        redis_retry_interval=config.redis_retry_interval,
        max_bytes=store_bytes(config.memory_max_bytes),
    )
    # The memory store does no I/O and needs no loop: it runs where it is called.
    if asyncio_running() or config.storage == "memory":
        return await opening
    loop = LoopThread()
    loop.start()
    try:
        storage = await loop.run(opening)
    except BaseException:
        await loop.stop()
        raise
    return ThreadedStorage(storage, loop)
