"""Page-level robots rules: ``X-Robots-Tag`` and robots ``<meta>`` tags (opt-in).

robots.txt says what may be fetched; a page's own rules say what may be done
with it once fetched. With ``REP_PAGE_DIRECTIVES = True`` this spider
middleware reads them for the spider's robots.txt tokens (agent-addressed
rules only for those tokens), as Google documents them
(``engine.page_directives``), and:

- ``nofollow``: removes the requests a callback yields from that page
  (stat ``robotstxt/page/nofollow_removed``, one DEBUG line per page; a
  request with ``dont_obey_robotstxt`` in its meta is kept);
- every rule (``noindex``, ``none``, ``nosnippet``, limits...) goes into
  ``response.meta["rep_directives"]`` before the callback runs, for the
  callback and item pipelines to act on: items are never removed.

Only HTML responses are searched for meta tags, within
``REP_PAGE_DIRECTIVES_MAX_BYTES``; headers are read on every response. At
most ``MAX_PAGE_RULES`` rules of each are read: a response with more counts
as ``none`` (noindex, nofollow), and a problem in ``rep_directives`` says so.
Off by default: then the component is not even loaded (``NotConfigured``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request

from scrapy_rep.crawler.access.tokens import RequestTokens, read_spider_tokens
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.engine.page_directives import (
    EMPTY,
    PageDirectives,
    combine_directives,
    meta_robots,
    x_robots_tag,
)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from typing_extensions import Self

__all__ = ["PAGE_RULES_META_KEY", "PageDirectivesMiddleware", "directives_meta"]

logger = logging.getLogger(__name__)

#: The response meta key with the page's rules.
PAGE_RULES_META_KEY: Final = "rep_directives"


def directives_meta(found: PageDirectives) -> dict[str, Any]:
    """``meta["rep_directives"]``: plain data, with where each rule came from."""
    return {
        "flags": sorted(found.flags),
        "noindex": found.noindex,
        "nofollow": found.nofollow,
        "nosnippet": found.nosnippet,
        "max_snippet": found.max_snippet,
        "max_image_preview": found.max_image_preview,
        "max_video_preview": found.max_video_preview,
        "unavailable_after": list(found.unavailable_after),
        "rules": [
            {"source": rule.source, "agent": rule.agent, "text": rule.text} for rule in found.rules
        ],
        "problems": list(found.problems),
    }


class PageDirectivesMiddleware:
    """Obey ``nofollow``, expose the rest; see the module docstring."""

    def __init__(self, crawler: Crawler) -> None:
        config = Config.of(crawler)
        if not config.page_directives:
            raise NotConfigured
        self._crawler = crawler
        self._max_bytes = config.page_directives_max_bytes
        #: The tokens the downloader middleware matches each request with: the
        #: same settings and spider attributes, read the same way.
        self._tokens = RequestTokens(config)
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def _spider_opened(self, spider: Spider) -> None:
        read_spider_tokens(self._tokens, spider)

    def process_spider_input(self, response: Response, spider: Spider | None = None) -> None:
        """Read the page's rules before the callback sees the response."""
        tokens = self._tokens(response.request) if response.request is not None else ()
        header = x_robots_tag(response.headers.getlist(b"X-Robots-Tag"), tokens)
        meta = EMPTY
        if isinstance(response, HtmlResponse):
            meta = meta_robots(response.body, tokens, max_bytes=self._max_bytes)
        found = combine_directives(header, meta)
        response.meta[PAGE_RULES_META_KEY] = directives_meta(found)

    async def process_spider_output(
        self, response: Response, result: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        # Async only: every supported Scrapy hands the output on as an async
        # iterable and takes this method (scrapy/core/spidermw.py, 2.18 on).
        removed = 0
        nofollow = self._nofollow(response)
        async for item in result:
            if nofollow and _followed(item):
                removed += 1
                continue
            yield item
        self._removed(response, removed)

    def _nofollow(self, response: Response) -> bool:
        found = response.meta.get(PAGE_RULES_META_KEY) if response.request is not None else None
        return bool(found and found["nofollow"])

    def _removed(self, response: Response, count: int) -> None:
        """Count, and say once per page what was not followed, and why."""
        if not count:
            return
        stats = self._crawler.stats
        assert stats is not None
        stats.inc_value("robotstxt/page/nofollow_removed", count)
        stats.inc_value("robotstxt/page/nofollow_pages")
        rules = [
            f"{rule['source']} {rule['text']!r}"
            for rule in response.meta[PAGE_RULES_META_KEY]["rules"]
            if "nofollow" in rule["text"].lower() or "none" in rule["text"].lower()
        ]
        logger.debug(
            "Not following %(count)d request(s) from %(url)s: nofollow (%(rules)s)",
            {"count": count, "url": response.url, "rules": ", ".join(rules)},
            extra={"spider": self._crawler.spider},
        )


def _followed(item: object) -> bool:
    """A request a page's nofollow removes: any Request not opted out."""
    return isinstance(item, Request) and not item.meta.get("dont_obey_robotstxt")
