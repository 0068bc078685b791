"""The downloader middleware: request -> origin -> access -> checks -> pass or drop.

Glue only. The origin comes from the engine (``checked_origins`` keeps it per
netloc), the access from the ``Resolver`` (storage + policy, fetching through
the ``Fetcher``) while the request is ``Waiting``, the verdict from the
``request_checks`` the config asks for (robots.txt's rules first).
Beside it: ``RequestTokens`` (which tokens), ``Reporter`` (stats, logs,
signals), ``CrawlLife`` (open, idle, close), ``spider_robots`` (a spider's
own robots.txt requests) and ``internals`` (what reaches into Scrapy).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.project import data_path

from scrapy_rep.cache.outcome import Access, FetchOutcome
from scrapy_rep.cache.storage.defaults import known_bytes, parsed_bytes
from scrapy_rep.crawler.access import spider_robots
from scrapy_rep.crawler.access.fetcher import (
    ENVIRONMENT,
    ROBOTSTXT_FETCH_META_KEY,
    Fetcher,
    Route,
    answered_for_another,
    route_of,
)
from scrapy_rep.crawler.access.origins import CheckedOrigins, opted_out
from scrapy_rep.crawler.access.provenance import PROVENANCE_META_KEY, Provenance, opted_out_meta
from scrapy_rep.crawler.access.resolver import (
    Fetch,
    FetchStopped,
    Resolver,
    shared_parsed_bodies,
)
from scrapy_rep.crawler.access.spider_robots import ROBOTS_PATH
from scrapy_rep.crawler.access.tokens import RequestTokens
from scrapy_rep.crawler.access.version_changes import VersionChanges
from scrapy_rep.crawler.access.waiting import Waiting
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.crawler.crawl_life import CrawlLife
from scrapy_rep.crawler.decision_log import DecisionLog
from scrapy_rep.crawler.errors import RobotsTxtStorageUnavailable
from scrapy_rep.crawler.internals import Parking
from scrapy_rep.crawler.pace.turns import Pace
from scrapy_rep.crawler.reporting import Drop, Reporter
from scrapy_rep.crawler.request_checks import ResponseCheck, first_drop, request_checks
from scrapy_rep.engine.origin import Origin

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RobotsTxtMiddleware"]

logger = logging.getLogger(__name__)


class RobotsTxtMiddleware:
    """Obey each origin's robots.txt as RFC 9309 and Google say.

    Enable at priority 100 (before UserAgentMiddleware) with Scrapy's built-in
    robots middleware set to None, or use ``scrapy_rep.Addon``.

    The store (``REP_STORAGE``) is opened when the spider opens; if it cannot
    be (Redis down, an unusable path) the error is logged and the spider is
    closed with ``finish_reason = "robotstxt_storage_unavailable"`` before any
    request is sent.

    Each checked request carries ``meta["rep_decision"]``: the robots.txt
    version and the rule (or state) that let it through or dropped it; with
    ``REP_DECISION_LOG`` set, a JSON line says the same (docs/versions.md).

    Its stats are those of docs/stats-signals.md (the built-in's five keys, and
    ``robotstxt/*`` for each drop and each cache answer).

    For other components: ``crawler.get_downloader_middleware(RobotsTxtMiddleware)``
    gives the instance, ``.config`` its settings (a ``Config``), ``.checks``
    the checks a request passes (``request_checks``: robots.txt's rules
    first; the usage check only when ``REP_PURPOSES`` is set), and
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
        tokens = self._tokens = RequestTokens(config)
        self._report = Reporter(crawler, config.default_user_agent, config, lambda: tokens.default)
        download_timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT", 180.0)
        self._parking = Parking(crawler)
        self._fetcher = Fetcher(
            crawler,
            config,
            self._report.tally,
            clock=config.clock,
            stopping=lambda: self._parking.stopping,
        )
        self._resolver = _resolver(
            config, self._report, download_timeout, self._fetch, self._fetch_for, self._resolved
        )
        # Why each request was fetched: meta["rep_decision"], and the decision log.
        self._provenance = Provenance(self._resolver.record, tokens)
        # What changed when a fetch brings a new version (docs/versions.md, "In the crawl").
        parse = shared_parsed_bodies(config.google_quirks)
        self._changes = VersionChanges(crawler, self._report, parse, lambda: tokens.default)
        if config.decision_log is not None:
            path = data_path(config.decision_log)
            self._report.decisions = DecisionLog(path, config.decision_log_max_bytes, config.clock)
        self.checks = request_checks(config, self._tokens, self._report)
        self._response_checks = tuple(c for c in self.checks if isinstance(c, ResponseCheck))
        # Each origin's pace across processes (docs/politeness.md); None unless asked for.
        self._pace = Pace.of(crawler, self._parking, self._tokens, lambda: self._resolver.storage)
        self._waiting = Waiting(self._resolver, self._parking)
        self._origins = CheckedOrigins(config.checked_schemes)
        self._life = CrawlLife(
            crawler,
            config,
            self._tokens,
            self._report,
            self._resolver,
            self._parking,
            waiting=lambda: bool(self._waiting.triggers),
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def tokens_for(self, request: Request) -> tuple[str, ...]:
        """The user-agent tokens ``request`` is matched with, in preference order.

        ROBOTSTXT_USER_AGENT, else the crawler's names in the request's
        User-Agent header, else in USER_AGENT; () means only ``*`` applies.
        """
        return self._tokens(request)

    @property
    def tokens_source(self) -> str:
        """Where the tokens come from: a setting's or a spider attribute's name."""
        return self._tokens.source

    # --- the data's path -------------------------------------------------------------

    async def process_request(
        self, request: Request, spider: Spider | None = None
    ) -> Request | Response | None:
        if self._life.bypass:
            return None
        if opted_out(request):
            if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):  # not our own fetch
                self._allowed(request, opted_out_meta())
            return None
        parts = urlparse_cached(request)
        origin = self._origins.checked(request, parts, self._report.drop)
        if origin is None:
            return None
        if parts.path == ROBOTS_PATH and spider_robots.is_robots_path(parts):
            # resolves the origin: this may be the fetch
            if (access := await self._access(origin, request)) is None:
                return _requeued(self._report, request)
            self._allowed(request, self._provenance.robots_txt(origin, access))
            answer = spider_robots.cached_response(request, self._resolver.last_answer(origin))
            if answer is not None:
                self._report.stats.inc_value("robotstxt/cache/served")
            return answer
        access = self._resolver.current(origin, request)
        if access is not None:
            self._check(request, origin, access)
        elif (access := await self._access(origin, request, check=True)) is None:
            return _requeued(self._report, request)
        return None if self._pace is None else await self._pace.turn(request, origin, access)

    async def _access(self, origin: Origin, request: Request, check: bool = False) -> Access | None:
        """Wait for the origin's access (``Waiting``); None: the crawl is stopping.
        ``check``: then decide the request (a drop raises)."""
        life = self._life
        if not life.storage_opened:
            await life.open_storage()
        if life.storage_error is not None:
            error = RobotsTxtStorageUnavailable(life.storage_error, request.url)
            self._report.drop(request, error, "storage_unavailable")
        return await self._waiting.access(origin, request, self._check if check else None)

    def _fetch_for(self, request: object) -> Fetch:
        """The fetch on behalf of ``request``, as its origin's flight starts:
        every attempt of that flight goes the request's route (docs/proxies.md)."""
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
        if self._pace is not None:  # a request too: before any process reads the record
            await self._pace.robots_fetched(origin)
        other = answered_for_another(origin, outcome)
        if other is not None:
            await self._resolver.seed(*other)
        return outcome

    def _check(self, request: Request, origin: Origin, access: Access) -> None:
        """The verdict: pass (return) or drop (raise); either way, why in its meta."""
        drop = first_drop(self.checks, request, origin, access)
        if drop is not None:
            meta = self._provenance.dropped(request, origin, access, drop)
            request.meta[PROVENANCE_META_KEY] = meta
            self._report.announce(drop, request)
            raise drop.error
        self._allowed(request, self._provenance.of(request, origin, access))

    def _allowed(self, request: Request, meta: dict[str, object]) -> None:
        """``meta["rep_decision"]`` of a request let through; its line in the decision log."""
        request.meta[PROVENANCE_META_KEY] = meta
        decisions = self._report.decisions
        if decisions is not None:
            decisions.allow(request.url, meta)

    def announce_early(self, drop: Drop, request: Request) -> None:
        """A drop decided before the scheduler: counted as the downloader would
        count it (its origin's answer was known: a cache hit, and its outage
        state or stale copy), logged, signalled."""
        origin = self._origins.known(urlparse_cached(request))
        if origin is not None:
            self._resolver.counted_early(origin)
        else:
            self._report.count("hit")
        self._report.announce(drop, request, early=True)

    def early(self, request: Request) -> Drop | None:
        """For the spider middleware, before the scheduler (docs/decisions.md,
        "Robots-aware scheduling"): the drop this request would get if its
        origin's access is known already; else start its robots.txt now.
        None: schedule it (this middleware still checks it when downloaded)."""
        life = self._life
        if life.bypass or life.storage_error is not None or not life.storage_opened:
            return None
        parts = urlparse_cached(request)
        if parts.scheme not in self._origins.schemes or opted_out(request):
            return None
        origin = self._origins.origin(parts)
        if origin is None or (parts.path == ROBOTS_PATH and spider_robots.is_robots_path(parts)):
            return None  # the download-time check decides these
        access = self._resolver.peek(origin, request)  # starts a retry that is due
        if access is None:
            self._resolver.prefetch(origin, request)
            return None
        drop = first_drop(self.checks, request, origin, access)
        if drop is not None:
            meta = self._provenance.dropped(request, origin, access, drop)
            request.meta[PROVENANCE_META_KEY] = meta
        return drop

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        """Learn from the response; then the checks that read responses (a drop raises)."""
        life = self._life
        # Nearly every response has nothing to teach: nothing parsed for it.
        if (self._resolver.outages or ROBOTS_PATH in request.url) and not (
            life.bypass or life.storage_error is not None
        ):
            await self._learn(request, response)
        for check in self._response_checks:
            check.response(request, response)
        return response

    async def _learn(self, request: Request, response: Response) -> None:
        """A spider's own robots.txt, pages answering in an outage."""
        if request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return
        parts = urlparse_cached(request)
        origin = self._origins.known(parts)
        if origin is None:
            return
        if spider_robots.is_robots_path(parts):
            outcome = spider_robots.outcome_of(
                origin, response, self.config.clock(), self.config.max_body_bytes
            )
            if outcome is not None:
                await self._resolver.seed(origin, outcome)
            return
        record = self._resolver.record(origin)
        if record is not None and record.in_outage:
            await self._resolver.site_answered(origin)

    async def _resolved(self, origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        """Say so, and what changed; Scrapy's ``robots_parsed`` names the request
        that waited first."""
        self._changes.fetched(origin, self._resolver.record(origin), fetched)
        await self._report.resolved(origin, access, fetched, self._waiting.triggers.get(origin))


def _resolver(
    config: Config,
    report: Reporter,
    download_timeout: float,
    fetch: Callable[[Origin], Awaitable[FetchOutcome]],
    fetch_for: Callable[[object], Fetch],
    on_access: Callable[[Origin, Access, FetchOutcome | None], Awaitable[None]],
) -> Resolver:
    """The resolver of a crawl with these settings: how it fetches, when, and
    what it holds (docs/decisions.md)."""
    return Resolver(
        fetch,
        fetch_for=fetch_for,
        policy=config.policy,
        google_quirks=config.google_quirks,
        clock=config.clock,
        # REP_CLOCK (a testing hook) may also time the waits between quick retries.
        sleep=getattr(config.clock, "sleep", None),
        monotonic=getattr(config.clock, "monotonic", time.monotonic),
        on_access=on_access,
        on_fetched=report.fetched,
        count=report.count,
        # The longest a fetch can take (one download timeout per hop, and
        # then some): how long to wait on another process's live fetch.
        max_wait=config.longest_wait(download_timeout),
        max_origins=config.memory_max_origins,
        max_bytes=known_bytes(config.memory_max_bytes),
        parsed_max_bytes=parsed_bytes(config.memory_max_bytes),
        watch=report.gauges.watch,  # robotstxt/origins_now/* (docs/stats-signals.md)
    )


def _requeued(report: Reporter, request: Request) -> Request:
    """The crawl stopped while it waited: rescheduled (JOBDIR keeps it), not downloaded."""
    report.stats.inc_value("robotstxt/requeued_on_stop")
    return request.replace(dont_filter=True)
