"""The middleware's part in a crawl's life: open, idle, close.

When the spider opens: step aside if Scrapy's built-in robots middleware
cannot be unplugged, read the spider's own tokens, open the store
(``REP_STORAGE``) and watch it for forgotten origins. While requests wait for
a robots.txt the spider is kept open; when it closes, the stats are flushed
and the store closed. A start-up failure closes the spider before the engine
takes a request from it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import scrapy
from scrapy import signals as scrapy_signals
from scrapy.exceptions import CloseSpider, DontCloseSpider

from scrapy_rep.crawler.access.forget_watch import ForgetWatch, watch_forgets
from scrapy_rep.crawler.access.store import open_configured_storage
from scrapy_rep.crawler.config.settings import CrawlDelayConfig
from scrapy_rep.crawler.config.values import SettingError
from scrapy_rep.crawler.errors import SETTING_CLOSE_REASON, STORAGE_CLOSE_REASON
from scrapy_rep.crawler.internals import (
    builtin_robotstxt_enabled,
    missing_internals,
    unplug_builtin_robotstxt,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler

    from scrapy_rep.crawler.access.resolver import Resolver
    from scrapy_rep.crawler.access.tokens import RequestTokens
    from scrapy_rep.crawler.config.settings import Config
    from scrapy_rep.crawler.internals import Parking
    from scrapy_rep.crawler.reporting import Reporter
    from scrapy_rep.engine.origin import Origin

__all__ = ["CrawlLife"]

logger = logging.getLogger("scrapy_rep.crawler.middleware")  # said as the middleware


class CrawlLife:
    """The middleware's handlers of ``spider_opened``, ``spider_idle`` and
    ``spider_closed``, and what they found: the store, or why it failed."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        tokens: RequestTokens,
        report: Reporter,
        resolver: Resolver,
        parking: Parking,
        waiting: Callable[[], bool],
    ) -> None:
        self._crawler = crawler
        self._config = config
        self._tokens = tokens
        self._report = report
        self._resolver = resolver
        self._parking = parking
        self._waiting = waiting  # are requests waiting for an origin's first answer?
        self._builtin_beside = builtin_robotstxt_enabled(crawler.settings)
        self._forget_watch: ForgetWatch | None = None
        #: True when Scrapy's built-in middleware could not be unplugged:
        #: both would fetch, so ours steps aside, loudly.
        self.bypass = False
        self.storage_opened = False
        #: Why the store could not be opened; every request is dropped then.
        self.storage_error: str | None = None
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=scrapy_signals.spider_closed)

    async def _spider_opened(self, spider: Spider) -> None:
        """A start-up failure closes the spider here, before the engine takes a
        request from it: Scrapy 2.18 and later honour a ``CloseSpider`` raised by
        a ``spider_opened`` handler (older ones logged and ignored it, which is
        why 2.18 is the floor; tests/crawler/test_startup.py)."""
        if self._builtin_beside and not unplug_builtin_robotstxt(self._crawler, spider):
            self.bypass = True
        if self.bypass:
            return
        self._say_missing_internals(spider)
        try:
            self._tokens.read_spider(spider)
        except SettingError as error:
            logger.error("%s; the spider is closed without crawling", error)
            raise CloseSpider(SETTING_CLOSE_REASON) from error
        download_timeout = self._crawler.settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)
        logger.info(
            "%(tokens)s; a robots.txt download times out after %(timeout)g s "
            "(REP_ROBOTSTXT_TIMEOUT), so a request waits at most %(wait)g s for its "
            "robots.txt (docs/decisions.md)",
            {
                "tokens": self._tokens.describe(),
                "timeout": self._config.fetch_timeout(download_timeout),
                "wait": self._config.longest_wait(download_timeout),
            },
            extra={"spider": spider},
        )
        await self.open_storage()
        if self.storage_error is not None:
            raise CloseSpider(STORAGE_CLOSE_REASON)
        # ``scrapy-rep cache forget`` reaches this crawl too (docs/tester.md, "Refetch now").
        self._forget_watch = await watch_forgets(
            self._resolver, self._config.forget_poll_interval, self._forgotten
        )

    def _say_missing_internals(self, spider: Spider) -> None:
        """A Scrapy whose internals moved loses parking or the pace: said once, by name."""
        delays = CrawlDelayConfig.from_settings(self._crawler.settings)
        missing = missing_internals(self._crawler, pace=delays.obey or delays.retry_after)
        if missing:
            logger.warning(
                "scrapy_rep does not find in Scrapy %s what it relies on: %s. Requests "
                "waiting for robots.txt may count against CONCURRENT_REQUESTS, and "
                "REP_CRAWL_DELAY/REP_RETRY_AFTER may not hold their pace "
                '(docs/decisions.md, "Scrapy\'s moving parts")',
                scrapy.__version__,
                "; ".join(missing),
                extra={"spider": spider},
            )

    def _forgotten(self, origin: Origin) -> None:
        self._report.stats.inc_value("robotstxt/cache/forgotten")

    async def open_storage(self) -> None:
        """Open ``REP_STORAGE`` once; a failure is logged and every request dropped.

        Normally done when the spider opens, before any request; until then
        the resolver keeps records in memory.
        """
        if self.storage_opened:
            return
        self.storage_opened = True
        try:
            self._resolver.storage = await open_configured_storage(self._config)
        except Exception as exc:
            self.storage_error = f"robots.txt cache unavailable: {exc}"
            logger.error(
                "scrapy_rep cannot open its robots.txt cache (REP_STORAGE=%r): %s; "
                "the spider is closed without crawling",
                self._config.storage,
                exc,
                extra={"spider": self._crawler.spider},
            )

    def _spider_idle(self, spider: Spider) -> None:
        """A parked request, or a robots.txt fetch or retry under way, is still work to do."""
        self._report.flush()  # a quiet moment: the stats catch up
        if self._resolver.busy:
            # Look again as soon as it is done, not at the engine's next heartbeat.
            self._resolver.call_when_idle(self._parking.wake_engine)
            raise DontCloseSpider
        if self._parking.count or self._waiting():
            raise DontCloseSpider

    async def _spider_closed(self, spider: Spider) -> None:
        if self._forget_watch is not None:
            self._forget_watch.stop()
        self._report.closing_line()
        self._report.flush()  # before Scrapy dumps the stats
        await self._resolver.close()
        self._report.flush()  # what closing counted
        if self._report.decisions is not None:
            self._report.decisions.close()
