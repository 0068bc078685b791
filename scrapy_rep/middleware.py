"""The downloader middleware: request -> origin -> access -> verdict -> pass or drop.

Glue only. The origin comes from ``origin.py``, the access from the
``Resolver`` (which fetches through the ``Fetcher``), the verdict from the
engine. What is left here is what only Scrapy can do: read the spider's
settings, raise ``IgnoreRequest``, count stats, send signals.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterable, Iterable
from typing import TYPE_CHECKING

from scrapy import signals as scrapy_signals
from scrapy.exceptions import DontCloseSpider, IgnoreRequest, NotConfigured
from scrapy.http import Request
from scrapy.robotstxt import RobotParser
from scrapy.utils.httpobj import urlparse_cached

from scrapy_rep import signals
from scrapy_rep._compat import Parking, builtin_robotstxt_enabled, unplug_builtin_robotstxt
from scrapy_rep.agents import product_token
from scrapy_rep.document import RobotsTxt, Rule
from scrapy_rep.fetcher import META_KEY, Fetcher
from scrapy_rep.origin import Origin, origin_of, robots_url
from scrapy_rep.outcome import Access, AccessState, FetchOutcome
from scrapy_rep.resolver import Resolver
from scrapy_rep.settings import Config

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = [
    "ForbiddenByRobotsTxt",
    "RepRobotParser",
    "RobotsTxtDisallowed",
    "RobotsTxtMiddleware",
    "RobotsTxtUnreachable",
]

logger = logging.getLogger(__name__)


class RobotsTxtDisallowed(IgnoreRequest):
    """A request dropped because of robots.txt; ``reason`` says why."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.url = url


class ForbiddenByRobotsTxt(RobotsTxtDisallowed):
    """A rule of the origin's robots.txt forbids the URL (SPEC §8.1)."""

    def __init__(self, rule: Rule, url: str, robotstxt_url: str) -> None:
        super().__init__(
            f"forbidden by rule {rule.pattern} at line {rule.line} of {robotstxt_url}", url
        )
        self.rule = rule


class RobotsTxtUnreachable(RobotsTxtDisallowed):
    """The origin's robots.txt could not be fetched, so the origin is closed (SPEC §2.2, §2.4)."""


class RobotsTxtMiddleware:
    """Obey each origin's robots.txt as RFC 9309 and Google say.

    Enable at priority 100 (before UserAgentMiddleware) with Scrapy's built-in
    robots middleware set to None, or use ``scrapy_rep.Addon``.
    """

    def __init__(self, crawler: Crawler) -> None:
        self._config = config = Config.from_settings(crawler.settings)
        if not config.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        self._crawler = crawler
        self._fetcher = Fetcher(crawler, config)
        self._resolver = Resolver(
            self._fetcher.fetch,
            google_quirks=config.google_quirks,
            on_resolved=self._resolved,
            clock=time.time,
        )
        self._parking = Parking(crawler)
        self._triggers: dict[Origin, Request] = {}  # the first request of each origin
        self._sitemaps_sent: set[Origin] = set()
        self._builtin_beside = builtin_robotstxt_enabled(crawler.settings)
        self._bypass = False
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request, spider: Spider | None = None) -> None:
        if self._bypass or request.meta.get("dont_obey_robotstxt") or request.meta.get(META_KEY):
            return
        origin = self._origin(request)
        if origin is None:
            return
        access = self._resolver.peek(origin)
        if access is None:
            access = await self._wait(origin, request)
        self._check(request, origin, access)

    # --- the steps ---------------------------------------------------------------

    def _origin(self, request: Request) -> Origin | None:
        """None for schemes that are not checked (``data:``, ``file:``, ...)."""
        if urlparse_cached(request).scheme not in self._config.checked_schemes:
            return None
        return origin_of(request.url)

    async def _wait(self, origin: Origin, request: Request) -> Access:
        # The first request holds its downloader slot for the fetch it starts;
        # the ones that follow give theirs to other origins while they wait.
        parked = self._resolver.pending(origin) and self._parking.park(request)
        self._triggers.setdefault(origin, request)
        try:
            return await self._resolver.access(origin)
        finally:
            if parked:
                self._parking.unpark(request)

    def _check(self, request: Request, origin: Origin, access: Access) -> None:
        if access.state is AccessState.ALLOW_ALL:
            return
        if access.state is AccessState.DISALLOW_ALL or access.robots is None:
            self._drop(request, RobotsTxtUnreachable(access.reason, request.url), "unreachable")
        else:
            verdict = access.robots.explain(request.url, self._tokens(request))
            if verdict.allowed or verdict.rule is None:
                return
            error = ForbiddenByRobotsTxt(verdict.rule, request.url, robots_url(origin))
            self._drop(request, error, "forbidden", agent=verdict.agent)

    def _tokens(self, request: Request) -> tuple[str, ...]:
        """ROBOTSTXT_USER_AGENT, else the User-Agent header's token, else USER_AGENT's."""
        if self._config.user_agent_tokens:
            return self._config.user_agent_tokens
        header = request.headers.get(b"User-Agent")
        for candidate in (
            header.decode("latin-1") if header else "",
            self._config.default_user_agent,
        ):
            token = product_token(candidate)
            if token:
                return (token,)
        return ()  # only the * group can apply

    def _drop(
        self, request: Request, error: RobotsTxtDisallowed, stat: str, agent: str | None = None
    ) -> None:
        spider = self._crawler.spider
        assert self._crawler.stats is not None
        self._crawler.stats.inc_value(f"robotstxt/{stat}")
        logger.debug(
            "Dropped %(request)s: %(reason)s%(group)s",
            {
                "request": request,
                "reason": error.reason,
                "group": f" (group {agent})" if agent else "",
            },
            extra={"spider": spider},
        )
        self._crawler.signals.send_catch_log(
            signal=signals.request_dropped,
            request=request,
            reason=error.reason,
            spider=spider,
            exception=error,
        )
        raise error

    # --- once per fetched robots.txt -------------------------------------------

    async def _resolved(self, origin: Origin, outcome: FetchOutcome, access: Access) -> None:
        assert self._crawler.stats is not None
        self._crawler.stats.inc_value("robotstxt/origins")
        logger.info(
            "robots.txt of %(origin)s: %(reason)s -> %(effect)s",
            {"origin": origin, "reason": outcome.reason, "effect": _effect(access)},
            extra={"spider": self._crawler.spider},
        )
        trigger = self._triggers.pop(origin, None)
        if outcome.status is not None:
            await self._send_robots_parsed(access, trigger)
        if (
            access.robots is not None
            and access.robots.sitemaps
            and origin not in self._sitemaps_sent
        ):
            self._sitemaps_sent.add(origin)
            await self._announce_sitemaps(access.robots.sitemaps, robots_url(origin))

    async def _send_robots_parsed(self, access: Access, request: Request | None) -> None:
        """Scrapy's own signal (2.18+), for code written against the built-in."""
        signal = getattr(scrapy_signals, "robots_parsed", None)
        if signal is not None:
            parser = RepRobotParser(access, self._config.default_user_agent)
            await self._crawler.signals.send_catch_log_async(
                signal=signal, robotparser=parser, request=request
            )

    async def _announce_sitemaps(self, sitemaps: tuple[str, ...], robotstxt_url: str) -> None:
        spider = self._crawler.spider
        await self._crawler.signals.send_catch_log_async(
            signal=signals.sitemaps_found,
            sitemaps=sitemaps,
            robotstxt_url=robotstxt_url,
            spider=spider,
        )
        method = getattr(spider, "robotstxt_sitemaps", None)
        if not callable(method):
            return
        try:
            async for request in _requests(method(sitemaps, robotstxt_url)):
                assert self._crawler.engine is not None
                self._crawler.engine.crawl(request)
        except Exception:
            logger.exception(
                "%s.robotstxt_sitemaps failed for %s",
                type(spider).__name__,
                robotstxt_url,
                extra={"spider": spider},
            )

    # --- crawl life cycle ----------------------------------------------------------

    def _spider_opened(self, spider: Spider) -> None:
        if not self._builtin_beside:
            return
        if unplug_builtin_robotstxt(self._crawler):
            logger.warning(
                "Scrapy's built-in RobotsTxtMiddleware is enabled beside scrapy_rep's; "
                "the built-in one is disabled for this crawl so that robots.txt is not "
                "fetched twice. Set it to None in DOWNLOADER_MIDDLEWARES or use "
                "ADDONS = {'scrapy_rep.Addon': 0}.",
                extra={"spider": spider},
            )
        else:
            self._bypass = True
            logger.warning(
                "Scrapy's built-in RobotsTxtMiddleware is enabled beside scrapy_rep's and "
                "could not be disabled; scrapy_rep's middleware is disabled for this crawl. "
                "Set the built-in to None in DOWNLOADER_MIDDLEWARES or use "
                "ADDONS = {'scrapy_rep.Addon': 0}.",
                extra={"spider": spider},
            )

    def _spider_idle(self, spider: Spider) -> None:
        """A request parked while waiting for robots.txt is still work to do."""
        if self._parking.count or self._triggers:
            raise DontCloseSpider


def _effect(access: Access) -> str:
    if access.state is AccessState.ALLOW_ALL:
        return "everything allowed"
    if access.state is AccessState.DISALLOW_ALL or access.robots is None:
        return "every request dropped"
    robots = access.robots
    return (
        f"{robots.rule_count} rules for {len(robots.agents)} agents, "
        f"{len(robots.sitemaps)} sitemaps"
    )


async def _requests(result: object) -> AsyncIterable[Request]:
    """What ``robotstxt_sitemaps`` gave: None, a request, or a (async) iterable of them."""
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, Request):
        yield result
    elif isinstance(result, AsyncIterable):
        async for item in result:
            if isinstance(item, Request):
                yield item
    elif isinstance(result, Iterable):
        for item in result:
            if isinstance(item, Request):
                yield item


class RepRobotParser(RobotParser):
    """``scrapy.robotstxt.RobotParser`` over scrapy_rep's engine.

    Sent with Scrapy's ``robots_parsed`` signal; also usable on its own as
    ``ROBOTSTXT_PARSER = "scrapy_rep.middleware.RepRobotParser"``.
    """

    def __init__(self, access: Access, default_user_agent: str = "") -> None:
        self.access = access
        self.robots: RobotsTxt | None = access.robots
        self._default_user_agent = default_user_agent

    @classmethod
    def from_crawler(cls, crawler: Crawler, robotstxt_body: bytes) -> Self:
        config = Config.from_settings(crawler.settings)
        robots = RobotsTxt.parse(robotstxt_body, google_quirks=config.google_quirks)
        return cls(Access(AccessState.RULES, robots), config.default_user_agent)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.access.allowed(_text(url), _text(user_agent) or self._default_user_agent)

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(_text(user_agent)) if self.robots is not None else None


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
