"""The downloader middleware: request -> origin -> access -> verdict -> pass or drop.

Glue only. The origin comes from ``origin.py``, the access from the
``Resolver`` (storage + policy, fetching through the ``Fetcher``), the verdict
from the engine. What is left here is what only Scrapy can do: read the
spider's settings, open and close the store with the crawl, raise
``IgnoreRequest``, count stats, send signals.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from scrapy import signals as scrapy_signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from scrapy.http import Headers, Request, Response
from scrapy.responsetypes import responsetypes
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.project import data_path

from scrapy_rep import signals
from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome, kind_of_status
from scrapy_rep.cache.storage import Storage, open_storage
from scrapy_rep.crawler.errors import (
    SETTING_CLOSE_REASON,
    STORAGE_CLOSE_REASON,
    ForbiddenByRobotsTxt,
    RobotsTxtDisallowed,
    RobotsTxtStorageUnavailable,
    RobotsTxtUnreachable,
)
from scrapy_rep.crawler.fetcher import META_KEY, Fetcher
from scrapy_rep.crawler.internals import (
    Parking,
    builtin_robotstxt_enabled,
    unplug_builtin_robotstxt,
)
from scrapy_rep.crawler.resolver import Resolver
from scrapy_rep.crawler.robot_parser import RepRobotParser
from scrapy_rep.crawler.settings import (
    DEFAULT_STORAGE_FILE,
    Config,
    SettingError,
    parse_tokens,
    token_notes,
)
from scrapy_rep.engine.agents import user_agent_token
from scrapy_rep.engine.origin import Origin, origin_of, robots_url

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

#: Bound of the per-netloc and per-User-Agent memos (cleared when full).
_MAX_REMEMBERED = 100_000


class RobotsTxtMiddleware:
    """Obey each origin's robots.txt as RFC 9309 and Google say.

    Enable at priority 100 (before UserAgentMiddleware) with Scrapy's built-in
    robots middleware set to None, or use ``scrapy_rep.Addon``.

    The store (``REP_STORAGE``) is opened when the spider opens; if it cannot
    be (Redis down, an unusable path) the error is logged and the spider is
    closed with ``finish_reason = "robotstxt_storage_unavailable"`` before any
    request is sent.

    A spider's own request for an origin's robots.txt (a SitemapSpider with a
    robots.txt URL in ``sitemap_urls``) is answered from the cache with the
    status, headers and body we fetched, flagged ``"cached"``, so the server
    sees one robots.txt request; for an unreachable origin it goes to the
    network, and a robots.txt response a spider gets that way refreshes the
    cache.

    Stats, besides the built-in's five keys and ``robotstxt/origins``,
    ``robotstxt/unreachable``, ``robotstxt/forbidden``: per checked request
    one of ``robotstxt/cache/hit`` (answered from a record, in this process or
    in the store), ``robotstxt/cache/miss`` (no record: it waited for a
    fetch) or ``robotstxt/cache/expired`` (the record had expired: it waited
    for the refresh); ``robotstxt/cache/stale_used`` when an expired copy's
    rules applied (SPEC §2.2's last good copy); ``robotstxt/unreachable/<state>``
    per request answered during an outage streak, ``<state>`` being
    ``disallow``, ``cached_copy`` or ``allow``; ``robotstxt/cache/served`` per
    robots.txt request of the spider answered from the cache.

    For other components: the instance is ``crawler.rep_middleware``, its
    settings ``crawler.rep_middleware.config`` (a ``Config``), and
    ``crawler.rep_middleware.tokens_for(request)`` gives the user-agent tokens
    the request is matched with (in preference order), e.g. for
    ``access.robots.crawl_delay(tokens)`` on the ``robotstxt_resolved`` signal.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.config = config = Config.from_settings(crawler.settings)
        if not config.obey:
            raise NotConfigured("ROBOTSTXT_OBEY is False")
        for note in config.token_notes:
            logger.warning(note)
        self._crawler = crawler
        self._fetcher = Fetcher(crawler, config, clock=config.clock)
        download_timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)
        self._resolver = Resolver(
            self._fetcher.fetch,
            policy=config.policy(),
            google_quirks=config.google_quirks,
            clock=config.clock,
            on_access=self._resolved,
            on_fetched=self._fetched,
            count=self._count_cache,
            # Another process holding the fetch lock may take as long as a
            # fetch can: one download timeout per hop, and then some.
            lock_ttl=download_timeout * (config.max_redirects + 1) + 30.0,
            max_origins=config.memory_max_origins,
        )
        self._storage_opened = False
        self._storage_error: str | None = None
        self._parking = Parking(crawler)
        self._triggers: dict[Origin, Request] = {}  # the first waiting request per origin
        self._origins: dict[tuple[str, str], Origin | None] = {}  # (scheme, netloc) -> origin
        self._header_tokens: dict[bytes, tuple[str, ...]] = {}  # User-Agent -> tokens
        self._announced: set[Origin] = set()
        self._sitemaps_sent: set[Origin] = set()
        self._builtin_beside = builtin_robotstxt_enabled(crawler.settings)
        self._bypass = False
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=scrapy_signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = cls(crawler)
        setattr(crawler, "rep_middleware", middleware)  # noqa: B010 (Crawler declares no such attribute)
        return middleware

    def tokens_for(self, request: Request) -> tuple[str, ...]:
        """The user-agent tokens ``request`` is matched with, in preference order.

        ROBOTSTXT_USER_AGENT, else the product token of the request's
        User-Agent header, else of USER_AGENT; () means only ``*`` applies.
        """
        return self._tokens(request)

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Response | None:
        if self._bypass or request.meta.get("dont_obey_robotstxt") or request.meta.get(META_KEY):
            return None
        origin = self._origin(request)
        if origin is None:
            return None
        if self._storage_error is not None:
            self._drop(
                request,
                RobotsTxtStorageUnavailable(self._storage_error, request.url),
                "storage_unavailable",
            )
        if _is_robots_url(request):
            return await self._answer_robots_request(request, origin)
        access = self._resolver.current(origin)
        if access is None:
            access = await self._wait(origin, request)
        self._check(request, origin, access)
        return None

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """Learn from responses: a spider's own robots.txt, pages answering in a streak."""
        if self._bypass or request.meta.get(META_KEY) or self._storage_error is not None:
            return response
        origin = self._origin(request)
        if origin is None:
            return response
        if _is_robots_url(request):
            await self._seed(origin, request, response)
            return response
        record = self._resolver.record(origin)
        if record is not None and record.in_streak:
            await self._resolver.site_answered(origin)
        return response

    # --- the steps ---------------------------------------------------------------

    def _origin(self, request: Request) -> Origin | None:
        """None for schemes that are not checked (``data:``, ``file:``, ...).

        An origin depends on the scheme and netloc only, so it is worked out
        (IDNA and all) once per netloc, not once per request.
        """
        parts = urlparse_cached(request)
        if parts.scheme not in self.config.checked_schemes:
            return None
        key = (parts.scheme, parts.netloc)
        if key in self._origins:
            return self._origins[key]
        if len(self._origins) >= _MAX_REMEMBERED:
            self._origins.clear()
        origin = self._origins[key] = origin_of(request.url)
        return origin

    async def _wait(self, origin: Origin, request: Request) -> Access:
        if not self._storage_opened:
            await self._open_storage()
            if self._storage_error is not None:
                self._drop(
                    request,
                    RobotsTxtStorageUnavailable(self._storage_error, request.url),
                    "storage_unavailable",
                )
        # The first request holds its downloader slot for the fetch it starts;
        # the ones that follow give theirs to other origins while they wait.
        parked = self._resolver.pending(origin) and self._parking.park(request)
        self._triggers.setdefault(origin, request)
        try:
            return await self._resolver.access(origin)
        finally:
            if self._triggers.get(origin) is request:
                del self._triggers[origin]
            if parked:
                self._parking.unpark(request)

    # --- a spider's own robots.txt requests (SitemapSpider) ------------------------

    async def _answer_robots_request(self, request: Request, origin: Origin) -> Response | None:
        """Answer from the cache what we fetched, so the server sees one robots.txt request.

        An unreachable origin's robots.txt goes to the network as asked.
        """
        await self._wait(origin, request)  # resolves the origin: this may be the fetch
        answer = self._resolver.last_answer(origin)
        if answer is None or answer.status is None:
            return None
        headers = Headers(
            {
                name: values
                for name, values in answer.headers.items()
                if name not in ("content-length", "content-encoding", "transfer-encoding")
            }
        )
        respcls = responsetypes.from_args(headers=headers, url=request.url, body=answer.body)
        assert self._crawler.stats is not None
        self._crawler.stats.inc_value("robotstxt/cache/served")
        return respcls(
            url=request.url,
            status=answer.status,
            headers=headers,
            body=answer.body,
            flags=["cached"],
            request=request,
        )

    async def _seed(self, origin: Origin, request: Request, response: Response) -> None:
        """A robots.txt the spider downloaded itself: newer than ours, so keep it."""
        if "cached" in response.flags or 300 <= response.status < 400:
            return
        kind = kind_of_status(response.status)
        limit = self.config.max_body_bytes
        headers = {
            key.decode("latin-1").lower(): [value.decode("latin-1") for value in values]
            for key, values in response.headers.items()
        }
        outcome = FetchOutcome(
            kind,
            robots_url(origin),
            self.config.clock(),
            status=response.status,
            body=response.body[:limit] if kind is FetchKind.SUCCESS else b"",
            reason=f"HTTP {response.status} (the spider's own request)",
            cache_control=_first(headers, "cache-control"),
            retry_after=_first(headers, "retry-after"),
            headers=headers,
        )
        await self._resolver.seed(origin, outcome)

    def _check(self, request: Request, origin: Origin, access: Access) -> None:
        if access.state is AccessState.ALLOW_ALL:
            return
        if access.state is AccessState.DISALLOW_ALL or access.robots is None:
            self._drop(request, RobotsTxtUnreachable(access.reason, request.url), "unreachable")
        else:
            tokens = self._tokens(request)
            if access.robots.allowed(request.url, tokens):
                return
            verdict = access.robots.explain(request.url, tokens)  # why, for the drop
            if verdict.allowed or verdict.rule is None:
                return
            error = ForbiddenByRobotsTxt(verdict.rule, request.url, robots_url(origin))
            self._drop(request, error, "forbidden", agent=verdict.agent, tokens=tokens)

    def _tokens(self, request: Request) -> tuple[str, ...]:
        """ROBOTSTXT_USER_AGENT, else the crawler named in the User-Agent header,
        else the one named in USER_AGENT; a browser's name is never taken."""
        if self.config.user_agent_tokens:
            return self.config.user_agent_tokens
        header = request.headers.get(b"User-Agent") or b""
        tokens = self._header_tokens.get(header)
        if tokens is None:
            tokens = ()  # only the * group can apply
            for candidate in (header.decode("latin-1"), self.config.default_user_agent):
                token = user_agent_token(candidate)
                if token:
                    tokens = (token,)
                    break
            if len(self._header_tokens) >= _MAX_REMEMBERED:
                self._header_tokens.clear()
            self._header_tokens[header] = tokens
        return tokens

    def _drop(
        self,
        request: Request,
        error: RobotsTxtDisallowed,
        stat: str,
        agent: str | None = None,
        tokens: tuple[str, ...] = (),
    ) -> None:
        spider = self._crawler.spider
        assert self._crawler.stats is not None
        self._crawler.stats.inc_value(f"robotstxt/{stat}")
        logger.debug(
            "Dropped %(request)s: %(reason)s%(group)s",
            {
                "request": request,
                "reason": error.reason,
                "group": f" (group {agent}, as {'/'.join(tokens) or '*'})" if agent else "",
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

    # --- when an origin's access is set or changes ----------------------------------

    def _fetched(self, origin: Origin, outcome: FetchOutcome, access: Access) -> None:
        """One INFO line per robots.txt fetched (refreshes and retries included)."""
        logger.info(
            "robots.txt of %(origin)s: %(reason)s -> %(effect)s",
            {"origin": origin, "reason": outcome.reason, "effect": _effect(access)},
            extra={"spider": self._crawler.spider},
        )

    async def _resolved(self, origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        stats = self._crawler.stats
        assert stats is not None
        if origin not in self._announced:
            self._announced.add(origin)
            stats.inc_value("robotstxt/origins")
        if fetched is None:
            logger.debug(
                "robots.txt of %(origin)s from the cache: %(reason)s -> %(effect)s",
                {"origin": origin, "reason": access.reason, "effect": _effect(access)},
                extra={"spider": self._crawler.spider},
            )
        self._crawler.signals.send_catch_log(
            signal=signals.robotstxt_resolved,
            origin=origin,
            robotstxt_url=robots_url(origin),
            access=access,
            spider=self._crawler.spider,
        )
        await self._send_robots_parsed(access, self._triggers.get(origin))
        if (
            access.robots is not None
            and access.robots.sitemaps
            and origin not in self._sitemaps_sent
        ):
            self._sitemaps_sent.add(origin)
            await self._announce_sitemaps(access.robots.sitemaps, robots_url(origin))

    def _count_cache(self, event: str) -> None:
        """robotstxt/cache/<hit|miss|expired|stale_used>, robotstxt/unreachable/<state>."""
        assert self._crawler.stats is not None
        if event.startswith("unreachable/"):
            self._crawler.stats.inc_value(f"robotstxt/{event}")
        else:
            self._crawler.stats.inc_value(f"robotstxt/cache/{event}")

    async def _send_robots_parsed(self, access: Access, request: Request | None) -> None:
        """Scrapy's own signal (2.18+), for code written against the built-in."""
        signal = getattr(scrapy_signals, "robots_parsed", None)
        if signal is not None:
            parser = RepRobotParser(access, self.config.default_user_agent)
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

    async def _spider_opened(self, spider: Spider) -> None:
        self._unplug_builtin(spider)
        if self._bypass:
            return
        self._read_spider_tokens(spider)
        await self._open_storage()
        if self._storage_error is not None:
            raise CloseSpider(STORAGE_CLOSE_REASON)

    def _read_spider_tokens(self, spider: Spider) -> None:
        """SPEC §8.4: a ``robotstxt_user_agent`` spider attribute beats the setting."""
        value = getattr(spider, "robotstxt_user_agent", None)
        if value is None:
            return
        name = f"{type(spider).__name__}.robotstxt_user_agent"
        try:
            tokens = parse_tokens(name, value)
        except SettingError as error:
            logger.error("%s; the spider is closed without crawling", error)
            raise CloseSpider(SETTING_CLOSE_REASON) from error
        for note in token_notes(name, value):
            logger.warning(note, extra={"spider": spider})
        self.config = replace(self.config, user_agent_tokens=tokens)

    async def _open_storage(self) -> None:
        """Open ``REP_STORAGE`` once; a failure is logged and every request dropped.

        Normally done when the spider opens, before any request; until then
        the resolver keeps records in memory.
        """
        if self._storage_opened:
            return
        self._storage_opened = True
        try:
            self._resolver.storage = await self._make_storage()
        except Exception as exc:
            self._storage_error = f"robots.txt cache unavailable: {exc}"
            logger.error(
                "scrapy_rep cannot open its robots.txt cache (REP_STORAGE=%r): %s; "
                "the spider is closed without crawling",
                self.config.storage,
                exc,
                extra={"spider": self._crawler.spider},
            )

    async def _make_storage(self) -> Storage:
        config = self.config
        if config.storage != "memory" and not _loop():
            raise RuntimeError(
                f"REP_STORAGE={config.storage!r} needs Scrapy's asyncio reactor "
                "(TWISTED_REACTOR = 'twisted.internet.asyncioreactor.AsyncioSelectorReactor'); "
                "with another reactor set REP_STORAGE = 'memory'"
            )
        path = data_path(config.storage_path or DEFAULT_STORAGE_FILE)
        return await open_storage(
            config.storage,
            path=path,
            redis_url=config.redis_url,
            max_origins=config.memory_max_origins,
            prefix=config.redis_prefix,
            clock=config.clock,
            redis_retry_interval=config.redis_retry_interval,
        )

    async def _spider_closed(self, spider: Spider) -> None:
        await self._resolver.close()

    def _unplug_builtin(self, spider: Spider) -> None:
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
        """A parked request, or a robots.txt fetch or retry under way, is still work to do."""
        if self._resolver.busy:
            # Look again as soon as it is done, not at the engine's next heartbeat.
            self._resolver.call_when_idle(self._parking.wake_engine)
            raise DontCloseSpider
        if self._parking.count or self._triggers:
            raise DontCloseSpider


def _is_robots_url(request: Request) -> bool:
    """Is this the origin's /robots.txt (SPEC §1.2), whatever asked for it?"""
    parts = urlparse_cached(request)
    return parts.path == "/robots.txt" and not parts.query and not parts.params


def _first(headers: dict[str, list[str]], name: str) -> str | None:
    values = headers.get(name)
    return values[0] if values else None


def _loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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
