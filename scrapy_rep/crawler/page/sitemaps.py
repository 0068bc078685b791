"""Follow the sitemaps robots.txt lists: crawl by sitemap with two settings.

With ``REP_FOLLOW_SITEMAPS = True`` every sitemap URL the middleware surfaces
(``sitemaps_found``, docs/spec.md §7.2) is scheduled once per crawl as a request to
the spider method named by ``REP_SITEMAP_CALLBACK``. The request goes through
the engine like any other, so the robots.txt of the sitemap's own origin
decides whether it is fetched (a sitemap may live on another host).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from scrapy.exceptions import NotConfigured
from scrapy.http import Request

from scrapy_rep import signals
from scrapy_rep.crawler.config.settings import Config, SettingError, SitemapConfig

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["SITEMAP_SOURCE_META", "FollowSitemaps"]

logger = logging.getLogger(__name__)

#: Set on each scheduled sitemap request: the robots.txt URL that listed it.
SITEMAP_SOURCE_META: Final = "rep_sitemap_source"
STAT: Final = "robotstxt/sitemaps/scheduled"
#: Bound of the set of sitemaps already scheduled (cleared when full).
_MAX_SEEN: Final = 100_000


class FollowSitemaps:
    """Scrapy extension; enable with ``REP_FOLLOW_SITEMAPS = True``."""

    def __init__(self, crawler: Crawler) -> None:
        config = SitemapConfig.from_settings(crawler.settings)
        if not config.follow:
            raise NotConfigured  # off, as by default: silent (Scrapy warns on a message)
        spider = crawler.spider if crawler.spider is not None else crawler.spidercls
        if not callable(getattr(spider, config.callback, None)):
            name = getattr(spider, "__name__", type(spider).__name__)
            raise SettingError(
                "REP_SITEMAP_CALLBACK",
                config.callback,
                f"the name of a method of {name} (REP_FOLLOW_SITEMAPS is on: define "
                f"{name}.{config.callback}(self, response) or set REP_SITEMAP_CALLBACK)",
            )
        if not Config.of(crawler).obey:
            logger.warning("REP_FOLLOW_SITEMAPS has no effect: ROBOTSTXT_OBEY is False")
            raise NotConfigured  # the warning above says why
        self._crawler = crawler
        self._callback = config.callback
        self._max = config.max_per_robotstxt
        self._seen: set[str] = set()
        crawler.signals.connect(self._sitemaps_found, signal=signals.sitemaps_found)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _sitemaps_found(
        self, sitemaps: tuple[str, ...], robotstxt_url: str, spider: Spider | None = None
    ) -> None:
        spider = spider or self._crawler.spider
        engine = self._crawler.engine
        if spider is None or engine is None:
            return
        callback = getattr(spider, self._callback)
        if len(sitemaps) > self._max:
            logger.info(
                "%(robots)s lists %(count)d sitemaps; following the first %(max)d "
                "(REP_FOLLOW_SITEMAPS_MAX)",
                {"robots": robotstxt_url, "count": len(sitemaps), "max": self._max},
                extra={"spider": spider},
            )
        for url in sitemaps[: self._max]:
            if url in self._seen:
                continue
            if len(self._seen) >= _MAX_SEEN:
                self._seen.clear()  # bounded; a sitemap seen again is filtered by Scrapy
            self._seen.add(url)
            try:
                request = Request(url, callback=callback, meta={SITEMAP_SOURCE_META: robotstxt_url})
            except ValueError as exc:
                logger.debug("Skipping sitemap %r of %s: %s", url, robotstxt_url, exc)
                continue
            logger.debug(
                "Scheduling sitemap %(url)s (from %(robots)s)",
                {"url": url, "robots": robotstxt_url},
                extra={"spider": spider},
            )
            if self._crawler.stats is not None:
                self._crawler.stats.inc_value(STAT)
            engine.crawl(request)
