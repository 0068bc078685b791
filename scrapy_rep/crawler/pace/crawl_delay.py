"""Crawl-delay: the robots.txt ``crawl-delay`` (or the interval a ``request-rate``
asks for, if longer), and the extension that reports it.

Google ignores ``crawl-delay`` (docs/spec.md §4.5) and so does every access decision
of scrapy_rep; ``REP_CRAWL_DELAY = "obey"`` only slows a crawl down. The pace
itself is kept by ``scrapy_rep.crawler.pace.turns`` (issue 26): each origin's turns
are reserved in the store, so the delay holds across every process sharing
it (the memory store: one process, through the same code). This extension
counts the origins whose delay is obeyed and warns once per origin when
``REP_CRAWL_DELAY_MAX`` cuts one.

It leaves Scrapy's download slots alone: a slot delay on top of the shared
turns would send some requests late and squeeze the gap to the next worker's
turn. The pace does not lower ``DOWNLOAD_DELAY`` or what AutoThrottle chose
either: the slot's own delay still applies after a request's turn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from scrapy_rep import signals
from scrapy_rep.crawler.access.tokens import RequestTokens, read_spider_tokens
from scrapy_rep.crawler.config.settings import Config, CrawlDelayConfig
from scrapy_rep.crawler.pace.turns import pacing
from scrapy_rep.engine.origin import Origin, origin_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request
    from typing_extensions import Self

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["CrawlDelay", "clamp"]

logger = logging.getLogger(__name__)

STAT: Final = "robotstxt/crawl_delay/applied"
CLAMPED_STAT: Final = "robotstxt/crawl_delay/clamped"


# --- the pure part ---------------------------------------------------------------


def clamp(delay: float, maximum: float) -> float:
    """A robots.txt delay cut to ``maximum`` (``crawl-delay: 86400`` must not freeze a crawl)."""
    return min(delay, maximum)


# --- the extension ----------------------------------------------------------------


class CrawlDelay:
    """Scrapy extension; enable with ``REP_CRAWL_DELAY = "obey"`` (see module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        config = CrawlDelayConfig.from_settings(crawler.settings)
        if not config.obey:
            raise NotConfigured  # off, as by default: silent (Scrapy warns on a message)
        rep = Config.of(crawler)
        if not rep.obey:
            logger.warning("REP_CRAWL_DELAY='obey' has no effect: ROBOTSTXT_OBEY is False")
            raise NotConfigured  # the warning above says why
        self._crawler = crawler
        self._max = config.max_delay
        #: The tokens the downloader middleware matches each request with: the
        #: same settings and spider attributes, read the same way.
        self._tokens = RequestTokens(rep)
        self._robots: dict[Origin, RobotsTxt] = {}  # only those with a crawl-delay
        self._delays: dict[Origin, dict[tuple[str, ...], float | None]] = {}
        # The tokens an origin's requests last came with, while they have a delay.
        self._last_tokens: dict[Origin, tuple[str, ...]] = {}
        self._warned: set[Origin] = set()
        self._counted: set[Origin] = set()
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(self._resolved, signal=signals.robotstxt_resolved)
        crawler.signals.connect(self._reached, signal=scrapy_signals.request_reached_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # --- signal handlers ---------------------------------------------------------

    def _spider_opened(self, spider: Spider) -> None:
        read_spider_tokens(self._tokens, spider)

    def _resolved(
        self, origin: Origin, robotstxt_url: str, access: Access, spider: Spider | None = None
    ) -> None:
        """First resolution or refresh: forget the old delays, count the new one."""
        robots = access.robots if access.robots is not None and _has_delay(access.robots) else None
        if robots is None:
            self._robots.pop(origin, None)
        else:
            self._robots[origin] = robots
        self._delays.pop(origin, None)
        self._counted.discard(origin)
        tokens = self._last_tokens.pop(origin, None)
        if robots is not None and tokens is not None:
            self._note(origin, tokens)

    def _reached(self, request: Request, spider: Spider | None = None) -> None:
        origin = origin_of(request.url)
        if origin is not None and origin in self._robots:
            self._note(origin, self._tokens(request))

    # --- the steps ----------------------------------------------------------------

    def _note(self, origin: Origin, tokens: tuple[str, ...]) -> None:
        """Remember the tokens of an origin whose delay applies to them."""
        if self._delay(origin, tokens) is None:
            self._last_tokens.pop(origin, None)
        else:
            self._last_tokens[origin] = tokens

    def _delay(self, origin: Origin, tokens: tuple[str, ...]) -> float | None:
        """The origin's clamped crawl-delay for these tokens; None when it has none."""
        known = self._delays.setdefault(origin, {})
        if tokens in known:
            return known[tokens]
        robots = self._robots.get(origin)
        wanted = pacing(robots, tokens) if robots is not None else None
        delay = None if wanted is None else clamp(wanted, self._max)
        known[tokens] = delay
        if wanted is not None and delay is not None and delay < wanted:
            self._stats_inc(CLAMPED_STAT)
            if origin not in self._warned:
                self._warned.add(origin)
                logger.warning(
                    "robots.txt of %(origin)s asks for crawl-delay %(wanted)g s; "
                    "using %(delay)g s (REP_CRAWL_DELAY_MAX)",
                    {"origin": origin, "wanted": wanted, "delay": delay},
                    extra={"spider": self._crawler.spider},
                )
        if delay and origin not in self._counted:
            self._counted.add(origin)
            self._stats_inc(STAT)
        return delay

    def _stats_inc(self, name: str) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.inc_value(name)


def _has_delay(robots: RobotsTxt) -> bool:
    """Whether any group paces requests: most robots.txt do not, and are not kept."""
    return any(pacing(robots, (agent,)) is not None for agent in robots.agents)
