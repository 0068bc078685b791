"""The downloader middleware: request -> origin -> access -> verdict -> pass or drop.

Glue only. The origin comes from the engine, the access from the
``Resolver`` (storage + policy, fetching through the ``Fetcher``), the
verdict from the engine again. Beside it: ``RequestTokens`` (which tokens),
``Reporter`` (stats, logs, signals), ``spider_robots`` (a spider's own
robots.txt requests) and ``internals`` (what reaches into Scrapy).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Final, cast
from urllib.parse import ParseResult

from scrapy import signals as scrapy_signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.httpobj import urlparse_cached

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.crawler import spider_robots
from scrapy_rep.crawler.configured_storage import open_configured_storage
from scrapy_rep.crawler.errors import (
    SETTING_CLOSE_REASON,
    STORAGE_CLOSE_REASON,
    ForbiddenByRobotsTxt,
    RobotsTxtNoOrigin,
    RobotsTxtStorageUnavailable,
    RobotsTxtUnreachable,
)
from scrapy_rep.crawler.fetcher import (
    ENVIRONMENT,
    ROBOTSTXT_FETCH_META_KEY,
    Fetcher,
    Route,
    route_of,
)
from scrapy_rep.crawler.flights import unless_stopped
from scrapy_rep.crawler.forget_watch import ForgetWatch, watch_forgets
from scrapy_rep.crawler.internals import (
    Parking,
    builtin_robotstxt_enabled,
    unplug_builtin_robotstxt,
)
from scrapy_rep.crawler.pace import Pace
from scrapy_rep.crawler.reporting import Drop, Reporter
from scrapy_rep.crawler.resolver import Fetch, FetchStopped, Resolver
from scrapy_rep.crawler.settings import Config, SettingError
from scrapy_rep.crawler.spider_robots import ROBOTS_PATH
from scrapy_rep.crawler.tokens import RequestTokens
from scrapy_rep.engine.origin import Origin, origin_of, robots_url

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)

#: Bound of the per-netloc origin memo (cleared when full).
_MAX_REMEMBERED: Final = 100_000
#: Seconds between looks at whether the engine is stopping, while requests wait.
_STOP_POLL: Final = 0.25
_ALLOW_ALL: Final = AccessState.ALLOW_ALL
_DISALLOW_ALL: Final = AccessState.DISALLOW_ALL


class RobotsTxtMiddleware:
    """Obey each origin's robots.txt as RFC 9309 and Google say.

    Enable at priority 100 (before UserAgentMiddleware) with Scrapy's built-in
    robots middleware set to None, or use ``scrapy_rep.Addon``.

    The store (``REP_STORAGE``) is opened when the spider opens; if it cannot
    be (Redis down, an unusable path) the error is logged and the spider is
    closed with ``finish_reason = "robotstxt_storage_unavailable"`` before any
    request is sent.

    Its stats are those of docs/stats-signals.md (the built-in's five keys, and
    ``robotstxt/*`` for each drop and each cache answer).

    For other components: ``crawler.get_downloader_middleware(RobotsTxtMiddleware)``
    gives the instance, ``.config`` its settings (a ``Config``), and
    ``.tokens_for(request)`` the user-agent tokens a request is matched with
    (in preference order), e.g. for ``access.robots.crawl_delay(tokens)`` on
    the ``robotstxt_resolved`` signal.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.config = config = Config.of(crawler)
        if not config.obey:
            # Not a problem to warn about (Scrapy warns on a message): say it at INFO.
            logger.info("scrapy_rep's robots.txt middleware is off: ROBOTSTXT_OBEY is False")
            raise NotConfigured
        for note in config.notes:
            logger.warning(note)
        self._crawler = crawler
        self._tokens = RequestTokens(config)
        self._report = Reporter(crawler, config.default_user_agent)
        download_timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)
        self._parking = Parking(crawler)
        self._fetcher = Fetcher(
            crawler, config, clock=config.clock, stopping=lambda: self._parking.stopping
        )
        self._resolver = Resolver(
            self._fetch,
            fetch_for=self._fetch_for,
            policy=config.policy(),
            google_quirks=config.google_quirks,
            clock=config.clock,
            on_access=self._resolved,
            on_fetched=self._report.fetched,
            count=self._report.count,
            # The longest a fetch can take (one download timeout per hop, and
            # then some): how long to wait on another process's live fetch.
            max_wait=download_timeout * (config.max_redirects + 1) + 30.0,
            max_origins=config.memory_max_origins,
            max_bytes=config.memory_max_bytes // 4,
            parsed_max_bytes=config.memory_max_bytes // 2,
        )
        self._storage_opened = False
        self._storage_error: str | None = None
        # Each origin's pace across processes (issue 26); None unless asked for.
        self._pace = Pace.of(crawler, self._parking, self._tokens, lambda: self._resolver.storage)
        self._triggers: dict[Origin, Request] = {}  # the first waiting request per origin
        self._origins: dict[tuple[str, str], Origin | None] = {}  # (scheme, netloc) -> origin
        self._schemes = config.checked_schemes
        self._builtin_beside = builtin_robotstxt_enabled(crawler.settings)
        self._bypass = False
        self._forget_watch: ForgetWatch | None = None
        crawler.signals.connect(self._spider_opened, signal=scrapy_signals.spider_opened)
        crawler.signals.connect(self._spider_idle, signal=scrapy_signals.spider_idle)
        crawler.signals.connect(self._spider_closed, signal=scrapy_signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """With ``REP_PURPOSES`` set, the middleware with the usage check
        (``usage_check``); without, this class, its per-request path unchanged."""
        if Config.of(crawler).purposes:
            from scrapy_rep.crawler.usage_check import with_usage_check

            return cast("Self", with_usage_check(cls)(crawler))
        return cls(crawler)

    def tokens_for(self, request: Request) -> tuple[str, ...]:
        """The user-agent tokens ``request`` is matched with, in preference order.

        ROBOTSTXT_USER_AGENT, else the crawler named in the request's
        User-Agent header, else in USER_AGENT; () means only ``*`` applies.
        """
        return self._tokens(request)

    # --- the data's path -------------------------------------------------------------

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | None:
        if self._bypass:
            return None
        meta = request.meta
        if meta.get("dont_obey_robotstxt") or meta.get(ROBOTSTXT_FETCH_META_KEY):
            return None
        parts = urlparse_cached(request)
        origin = self._origin(request, parts)
        if origin is None:
            return None
        if parts.path == ROBOTS_PATH and spider_robots.is_robots_path(parts):
            # resolves the origin: this may be the fetch
            if await self._access(origin, request) is None:
                return self._requeued(request)
            answer = spider_robots.cached_response(request, self._resolver.last_answer(origin))
            if answer is not None:
                self._report.stats.inc_value("robotstxt/cache/served")
            return answer
        access = self._resolver.current(origin, request)
        if access is not None:
            self._check(request, origin, access)
        elif (access := await self._access(origin, request, check=True)) is None:
            return self._requeued(request)
        return None if self._pace is None else await self._pace.turn(request, origin, access)

    def _requeued(self, request: Request) -> Request:
        """The crawl stopped while ``request`` waited: back to the scheduler
        (JOBDIR keeps it for the next run), never downloaded after the stop."""
        self._report.stats.inc_value("robotstxt/requeued_on_stop")
        return request.replace(dont_filter=True)

    def _origin(self, request: Request, parts: ParseResult) -> Origin | None:
        """None for schemes that are not checked (``data:``, ``file:``, ...); a
        checked URL without an origin is dropped (failing closed)."""
        if parts.scheme not in self._schemes:
            return None
        origin = self._remembered_origin(parts.scheme, parts.netloc, request.url)
        if origin is None:
            reason = f"no origin: {request.url} names no host that robots.txt can be asked of"
            self._report.drop(request, RobotsTxtNoOrigin(reason, request.url), "no_origin")
        return origin

    def _remembered_origin(self, scheme: str, netloc: str, url: str) -> Origin | None:
        """An origin depends on the scheme and netloc only, so it is worked out
        (IDNA and all) once per netloc, not once per request."""
        key = (scheme, netloc)
        try:
            return self._origins[key]
        except KeyError:
            pass
        if len(self._origins) >= _MAX_REMEMBERED:
            self._origins.clear()
        origin = self._origins[key] = origin_of(url)
        return origin

    async def _access(self, origin: Origin, request: Request, check: bool = False) -> Access | None:
        """Wait for the origin's access (docs/spec.md §8.3): load or fetch its robots.txt.

        None: the crawl is stopping (a pause, a close), and the request
        should go back to the scheduler rather than keep the stop waiting or
        be downloaded after it (issue 23 §3). ``check``: then decide the request
        (a drop raises); one that passes waits for a place in
        CONCURRENT_REQUESTS again before it downloads.
        """
        if not self._storage_opened:
            await self._open_storage()
        if self._storage_error is not None:
            error = RobotsTxtStorageUnavailable(self._storage_error, request.url)
            self._report.drop(request, error, "storage_unavailable")
        # A waiting request gives its place in CONCURRENT_REQUESTS to other
        # origins: only the robots.txt download holds one (issue 14 §2).
        parked = self._parking.park(request)
        if not parked:
            self._parking.holding += 1
        self._triggers.setdefault(origin, request)
        try:
            # A stop gives it back to the scheduler (JOBDIR keeps it).
            access = await unless_stopped(
                self._resolver.access(origin, request), lambda: self._parking.stopping, _STOP_POLL
            )
            if access is None or self._parking.stopping:
                return None
            if check:
                self._check(request, origin, access)  # a drop needs no place
                # Every origin answering at once must not overfill the places:
                # a parked request took none while it waited, nor did one
                # holding its slot in ``active`` (issue 23 §4).
                if not await self._parking.place(ahead=True):
                    return None
            return access
        except FetchStopped:
            return None
        finally:
            if self._triggers.get(origin) is request:
                del self._triggers[origin]
            if parked:
                self._parking.unpark(request)
            else:
                self._parking.holding -= 1

    def _fetch_for(self, request: object) -> Fetch:
        """The fetch on behalf of ``request``, as its origin's flight starts:
        every attempt of that flight goes the request's route (issue 23 §1)."""
        route = route_of(request) if isinstance(request, Request) else ENVIRONMENT

        async def fetch(origin: Origin) -> FetchOutcome:
            return await self._fetch(origin, route)

        return fetch

    async def _fetch(self, origin: Origin, route: Route = ENVIRONMENT) -> FetchOutcome:
        """Fetch the way ``route`` says, once a place is free (none once the
        crawl is stopping); a redirect that ended at another origin's own
        /robots.txt answered for that origin too."""
        if not await self._parking.place():
            raise FetchStopped
        outcome = await self._fetcher.fetch(origin, route)
        target = origin_of(outcome.final_url) if outcome.final_url else None
        if (
            target is not None
            and target != origin
            and outcome.final_url == robots_url(target)
            and outcome.status is not None
            and 200 <= outcome.status < 500
            and outcome.kind is not FetchKind.UNREACHABLE
        ):
            own = replace(outcome, url=robots_url(target), final_url=None)
            await self._resolver.seed(target, own)
        return outcome

    def _check(self, request: Request, origin: Origin, access: Access) -> None:
        """The verdict: pass (return) or drop (raise)."""
        drop = self._verdict(request, origin, access)
        if drop is not None:
            self._report.announce(drop, request)
            raise drop.error

    def _verdict(self, request: Request, origin: Origin, access: Access) -> Drop | None:
        """None to pass; else why the request is dropped (twice per request:
        before the scheduler and at download, so kept to plain lookups)."""
        state, robots = access.state, access.robots
        if state is _ALLOW_ALL:
            return None
        url = request.url
        if state is _DISALLOW_ALL or robots is None:
            return Drop(RobotsTxtUnreachable(access.reason, url), "unreachable")
        tokens = self._tokens(request)
        if robots.allowed(url, tokens):
            return None
        verdict = robots.explain(url, tokens)  # why, for the drop
        if verdict.allowed or verdict.rule is None:
            return None
        error = ForbiddenByRobotsTxt(verdict.rule, url, robots_url(origin))
        return Drop(error, "forbidden", verdict.agent, tokens)

    def announce_early(self, drop: Drop, request: Request) -> None:
        """A drop decided before the scheduler: counted (its origin's answer was
        known: a cache hit, as the downloader would count it), logged, signalled."""
        self._report.count("hit")
        self._report.announce(drop, request, early=True)

    def early(self, request: Request) -> Drop | None:
        """For the spider middleware, before the scheduler (issue 14 §3): the
        drop this request would get if its origin's access is known already;
        else start its robots.txt now. None: schedule it (this middleware
        still checks it when it is downloaded)."""
        if self._bypass or self._storage_error is not None or not self._storage_opened:
            return None
        meta = request.meta
        if meta.get("dont_obey_robotstxt") or meta.get(ROBOTSTXT_FETCH_META_KEY):
            return None
        parts = urlparse_cached(request)
        if parts.scheme not in self._schemes:
            return None
        origin = self._remembered_origin(parts.scheme, parts.netloc, request.url)
        if origin is None or (parts.path == ROBOTS_PATH and spider_robots.is_robots_path(parts)):
            return None  # the download-time check decides these
        access = self._resolver.peek(origin)
        if access is None:
            self._resolver.prefetch(origin, request)
            return None
        return self._verdict(request, origin, access)

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """Learn from responses: a spider's own robots.txt, pages answering in a streak."""
        if self._bypass or self._storage_error is not None:
            return response
        if not self._resolver.streaking and ROBOTS_PATH not in request.url:
            return response  # nearly every response: nothing to learn, nothing parsed
        if request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return response
        parts = urlparse_cached(request)
        origin = self._origins.get((parts.scheme, parts.netloc))
        if origin is None:
            return response
        if spider_robots.is_robots_path(parts):
            outcome = spider_robots.outcome_of(
                origin, response, self.config.clock(), self.config.max_body_bytes
            )
            if outcome is not None:
                await self._resolver.seed(origin, outcome)
            return response
        record = self._resolver.record(origin)
        if record is not None and record.in_streak:
            await self._resolver.site_answered(origin)
        return response

    async def _resolved(self, origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        """Say so; Scrapy's ``robots_parsed`` names the request that waited first."""
        await self._report.resolved(origin, access, fetched, self._triggers.get(origin))

    # --- crawl life cycle ----------------------------------------------------------

    async def _spider_opened(self, spider: Spider) -> None:
        """A start-up failure closes the spider here, before the engine takes a
        request from it: Scrapy 2.18 and later honour a ``CloseSpider`` raised by
        a ``spider_opened`` handler (older ones logged and ignored it, which is
        why 2.18 is the floor; tests/crawler/test_startup.py)."""
        self._unplug_builtin(spider)
        if self._bypass:
            return
        try:
            self._tokens.read_spider(spider)
        except SettingError as error:
            logger.error("%s; the spider is closed without crawling", error)
            raise CloseSpider(SETTING_CLOSE_REASON) from error
        await self._open_storage()
        if self._storage_error is not None:
            raise CloseSpider(STORAGE_CLOSE_REASON)
        # ``scrapy-rep cache forget`` reaches this crawl too (issue 27 §6).
        self._forget_watch = await watch_forgets(
            self._resolver, self.config.forget_poll_interval, self._forgotten
        )

    def _forgotten(self, origin: Origin) -> None:
        self._report.stats.inc_value("robotstxt/cache/forgotten")

    async def _open_storage(self) -> None:
        """Open ``REP_STORAGE`` once; a failure is logged and every request dropped.

        Normally done when the spider opens, before any request; until then
        the resolver keeps records in memory.
        """
        if self._storage_opened:
            return
        self._storage_opened = True
        try:
            self._resolver.storage = await open_configured_storage(self.config)
        except Exception as exc:
            self._storage_error = f"robots.txt cache unavailable: {exc}"
            logger.error(
                "scrapy_rep cannot open its robots.txt cache (REP_STORAGE=%r): %s; "
                "the spider is closed without crawling",
                self.config.storage,
                exc,
                extra={"spider": self._crawler.spider},
            )

    async def _spider_closed(self, spider: Spider) -> None:
        if self._forget_watch is not None:
            self._forget_watch.stop()
        self._report.flush()  # before Scrapy dumps the stats
        await self._resolver.close()
        self._report.flush()  # what closing counted

    def _unplug_builtin(self, spider: Spider) -> None:
        if self._builtin_beside and not unplug_builtin_robotstxt(self._crawler, spider):
            self._bypass = True  # both would fetch: ours steps aside, loudly

    def _spider_idle(self, spider: Spider) -> None:
        """A parked request, or a robots.txt fetch or retry under way, is still work to do."""
        self._report.flush()  # a quiet moment: the stats catch up
        if self._resolver.busy:
            # Look again as soon as it is done, not at the engine's next heartbeat.
            self._resolver.call_when_idle(self._parking.wake_engine)
            raise DontCloseSpider
        if self._parking.count or self._triggers:
            raise DontCloseSpider
