"""What the crawl is told: stats, log lines and signals, for drops and for origins.

The middleware decides; this room says so. Every drop goes through ``drop``
(one stat, one DEBUG line, the ``request_dropped`` signal, the exception);
every origin's new access through ``resolved`` (``robotstxt_resolved``,
Scrapy's ``robots_parsed``, and once per origin the values of each kind of
line outside any group: sitemaps, licences, ``engine/site_wide.py``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple, NoReturn

from pydispatch.dispatcher import Any, connections  # type: ignore[import-untyped]
from scrapy import signals as scrapy_signals
from scrapy.http import Request

from scrapy_rep import signals
from scrapy_rep.cache.outcome import Access, AccessState, FetchOutcome
from scrapy_rep.crawler.decision_log import PROVENANCE_META_KEY, DecisionLog
from scrapy_rep.crawler.errors import RobotsTxtDisallowed
from scrapy_rep.crawler.gauges import OriginGauges
from scrapy_rep.crawler.robot_parser import RepRobotParser
from scrapy_rep.engine.origin import Origin, robots_url
from scrapy_rep.engine.robotstxt import RobotsTxt, group_rules
from scrapy_rep.engine.site_wide import SITE_WIDE, SiteWide

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from scrapy_rep.crawler.config.settings import Config

__all__ = ["Drop", "Reporter"]

logger = logging.getLogger("scrapy_rep.crawler.middleware")  # one logger for the middleware

#: Bound of the sets of origins already announced (cleared when full).
_MAX_ORIGINS: Final = 100_000
_DEBUG: Final = logging.DEBUG
_INFO: Final = logging.INFO
#: Per-request and per-origin counts reach the stats this many at a time
#: (``Reporter.tally``).
COUNT_BATCH: Final = 100


class Drop(NamedTuple):
    """Why a request is dropped: the exception, its stat, the group and tokens."""

    error: RobotsTxtDisallowed
    stat: str
    agent: str | None = None
    tokens: tuple[str, ...] = ()


class Reporter:
    """Stats, logs and signals of one crawler's middleware."""

    def __init__(
        self,
        crawler: Crawler,
        default_user_agent: str,
        config: Config | None = None,
        tokens: Callable[[], Sequence[str]] = tuple,
    ) -> None:
        self._crawler = crawler
        self._default_user_agent = default_user_agent
        # Origins as strings: the collector does not track a set of strings
        # (nor its strings), nor does it keep the origins themselves alive.
        self._announced: set[str] = set()
        self._handed: dict[str, set[str]] = {}  # a kind's key -> origins handed its values
        self._pace_said: set[str] = set()
        self._tokens = tokens
        #: Origins whose robots.txt this crawl took from the store (or its own
        #: memory) without fetching, and those it fetched: the closing line.
        self.from_store = 0
        self.fetched_origins = 0
        self._tallies: dict[str, int] = {}  # stat -> counted, not yet in the stats
        self._cache_stats: dict[str, str] = {}  # count's event -> its stat
        #: robotstxt/origins_now/*: set in the stats at ``flush`` and every ``COUNT_BATCH`` changes,
        #: classified with the crawl's rules, clock and ``tokens`` (those of a request
        #: without a User-Agent of its own).
        self.gauges = OriginGauges(batch=COUNT_BATCH)
        if config is not None:
            self.gauges = OriginGauges(config.policy, config.clock, tokens, COUNT_BATCH)
        self.gauges.on_batch = self.set_gauges
        self._gauges_set = False
        #: REP_DECISION_LOG's file, when set: a line per request let through or dropped.
        self.decisions: DecisionLog | None = None

    @property
    def stats(self) -> StatsCollector:
        assert self._crawler.stats is not None
        return self._crawler.stats

    def drop(
        self,
        request: Request,
        error: RobotsTxtDisallowed,
        stat: str,
        agent: str | None = None,
        tokens: tuple[str, ...] = (),
    ) -> NoReturn:
        """Count, log and announce a drop, then raise it (docs/spec.md §2.4, §8.1)."""
        self.announce(Drop(error, stat, agent, tokens), request)
        raise error

    def announce(self, drop: Drop, request: Request, early: bool = False) -> None:
        """Count, log and signal a drop; ``early``: before the scheduler."""
        spider = self._crawler.spider
        error = drop.error
        self.tally(f"robotstxt/{drop.stat}")
        if early:
            self.tally("robotstxt/dropped_early")
        if self.decisions is not None:
            meta = request.meta.get(PROVENANCE_META_KEY)
            self.decisions.drop(request.url, meta, drop.stat, early)
        if logs(_DEBUG):
            tokens = "/".join(drop.tokens) or "*"
            group = f" (group {drop.agent}, as {tokens})" if drop.agent else ""
            logger.debug(
                "Dropped %(request)s%(where)s: %(reason)s%(group)s",
                {
                    "request": request,
                    "where": " before scheduling" if early else "",
                    "reason": error.reason,
                    "group": group,
                },
                extra={"spider": spider},
            )
        if self._heard(signals.request_dropped):
            self._crawler.signals.send_catch_log(
                signal=signals.request_dropped,
                request=request,
                reason=error.reason,
                spider=spider,
                exception=error,
            )

    def count(self, event: str) -> None:
        """robotstxt/cache/<hit|miss|expired|stale_used>, robotstxt/requests_in_outage/<state>."""
        stat = self._cache_stats.get(event)
        if stat is None:
            where = "robotstxt/" if event.startswith("requests_in_outage/") else "robotstxt/cache/"
            stat = self._cache_stats[event] = where + event
        self.tally(stat)

    def tally(self, stat: str) -> None:
        """Add one to ``stat``, in the crawl's stats ``COUNT_BATCH`` at a time (and
        at ``flush``): one ``inc_value`` costs Scrapy 2.19 more than the rest of
        a cached request's check, and a drop or a new origin would make three."""
        tally = self._tallies.get(stat, 0) + 1
        if tally < COUNT_BATCH:
            self._tallies[stat] = tally
        else:
            self._tallies[stat] = 0
            self.stats.inc_value(stat, tally)

    def flush(self) -> None:
        """Add what ``tally`` counted to the stats: before anyone reads them."""
        for stat, tally in self._tallies.items():
            if tally:
                self.stats.inc_value(stat, tally)
        self._tallies.clear()
        self.set_gauges()
        if self.decisions is not None:
            self.decisions.flush()

    def set_gauges(self) -> None:
        """The gauges' values in the stats, if they changed (docs/stats-signals.md)."""
        if self.gauges.changes or not self._gauges_set:
            for stat, value in self.gauges.values().items():
                self.stats.set_value(stat, value)
            self.gauges.changes = 0
            self._gauges_set = True

    def fetched(self, origin: Origin, outcomes: list[FetchOutcome], access: Access) -> None:
        """One INFO line per flight of fetches: what they came to, retries included."""
        if not logs(_INFO):
            return
        reason = outcomes[-1].reason
        if len(outcomes) > 1:
            earlier = ", ".join(outcome.reason for outcome in outcomes[:-1])
            retries = len(outcomes) - 1
            reason = (
                f"{earlier}, then {reason} ({retries} quick retr{'y' if retries == 1 else 'ies'})"
            )
        logger.info(
            "robots.txt of %(origin)s: %(reason)s -> %(effect)s",
            {"origin": origin, "reason": reason, "effect": effect(access)},
            extra={"spider": self._crawler.spider},
        )

    async def resolved(
        self,
        origin: Origin,
        access: Access,
        fetched: FetchOutcome | None,
        trigger: Request | None,
    ) -> None:
        """An origin's access is set or changed in this process."""
        self.gauges.resolved(origin, access)
        key = str(origin)
        if key not in self._announced:
            if len(self._announced) >= _MAX_ORIGINS:
                self._announced.clear()
            self._announced.add(key)
            self.tally("robotstxt/origins")
            if fetched is None:
                self.from_store += 1
            else:
                self.fetched_origins += 1
        if fetched is None and logs(_DEBUG):
            logger.debug(
                "robots.txt of %(origin)s from the cache: %(reason)s -> %(effect)s",
                {"origin": origin, "reason": access.reason, "effect": effect(access)},
                extra={"spider": self._crawler.spider},
            )
        if self._heard(signals.robotstxt_resolved):
            self._crawler.signals.send_catch_log(
                signal=signals.robotstxt_resolved,
                origin=origin,
                robotstxt_url=robots_url(origin),
                access=access,
                spider=self._crawler.spider,
            )
        if self._heard(scrapy_signals.robots_parsed):
            await self._send_robots_parsed(access, trigger)
        robots = access.robots
        if robots is None:
            return
        said = key in self._pace_said or not logs(_INFO)
        if not said and say_pace(self._crawler, origin, robots, tuple(self._tokens())):
            _first(self._pace_said, key)
        outside = robots.site_wide
        for kind in SITE_WIDE.values():
            values = outside.get(kind.key)
            if values and kind.handed and _first(self._handed.setdefault(kind.key, set()), key):
                await self._hand_over(kind, values, robots_url(origin))

    def closing_line(self) -> None:
        """One INFO line per crawl: how many origins' robots.txt came from the
        store without a fetch (a warm run logs no line per origin)."""
        if not logs(_INFO) or not self.from_store:
            return  # a cold run said each origin's fetch at INFO already
        logger.info(
            "robots.txt: %(stored)s answered from the store without a fetch, "
            "%(fetched)s fetched by this crawl",
            {
                "stored": plural(self.from_store, "origin"),
                "fetched": plural(self.fetched_origins, "origin"),
            },
            extra={"spider": self._crawler.spider},
        )

    def _heard(self, signal: object) -> bool:
        """Might anyone listen to ``signal``? A send to no one still costs a few
        microseconds per drop and per origin (for ``robots_parsed``, a Deferred
        and the parser it would carry). The four lists a send would read, as
        truth values (PyDispatcher's ``connections``: id of the sender -> signal
        -> receivers, emptied as they go); a dead receiver left in one only
        costs a send."""
        for sender in (self._crawler.signals.sender, Any):
            receivers = connections.get(id(sender))
            if receivers and (receivers.get(signal) or receivers.get(Any)):
                return True
        return False

    async def _send_robots_parsed(self, access: Access, request: Request | None) -> None:
        """Scrapy's own signal (new in 2.18, the floor), for code written against the built-in."""
        parser = RepRobotParser(access, self._default_user_agent)
        await self._crawler.signals.send_catch_log_async(
            signal=scrapy_signals.robots_parsed, robotparser=parser, request=request
        )

    async def _hand_over(self, kind: SiteWide, values: tuple[str, ...], robotstxt_url: str) -> None:
        """docs/spec.md §7.2, §7.3: the signal (``signals.found``: ``sitemaps_found``...),
        and the spider's method if any (``robotstxt_sitemaps``...); requests it
        gives are scheduled."""
        spider = self._crawler.spider
        signal = signals.found(kind.values)
        if self._heard(signal):
            await self._crawler.signals.send_catch_log_async(
                signal=signal,
                **{kind.values: values},
                robotstxt_url=robotstxt_url,
                spider=spider,
            )
        name = f"robotstxt_{kind.values}"
        method = getattr(spider, name, None)
        if not callable(method):
            return
        try:
            async for request in _requests(method(values, robotstxt_url)):
                assert self._crawler.engine is not None
                self._crawler.engine.crawl(request)
        except Exception:
            logger.exception(
                "%s.%s failed for %s",
                type(spider).__name__,
                name,
                robotstxt_url,
                extra={"spider": spider},
            )


def _first(sent: set[str], origin: str) -> bool:
    """Is this the origin's first hand-over? Remembers it (bounded: cleared when full)."""
    if origin in sent:
        return False
    if len(sent) >= _MAX_ORIGINS:
        sent.clear()
    sent.add(origin)
    return True


def logs(level: int, of: logging.Logger = logger) -> bool:
    """Would a record at ``level`` reach a handler? Scrapy leaves the loggers
    at NOTSET and filters in its handler (at LOG_LEVEL), so without this each
    origin's INFO line and each drop's DEBUG line would be built, with their
    arguments, only to be thrown away."""
    if not of.isEnabledFor(level):
        return False
    current: logging.Logger | None = of
    handled = False
    while current is not None:
        for handler in current.handlers:
            handled = True
            if level >= handler.level:
                return True
        if not current.propagate:
            break
        current = current.parent
    last = logging.lastResort
    return not handled and last is not None and level >= last.level


def say_pace(crawler: Crawler, origin: Origin, robots: RobotsTxt, tokens: tuple[str, ...]) -> bool:
    """The INFO line of an origin whose robots.txt paces the crawl's group: the
    value, and whether it is applied (docs/crawl-delay.md); False when it
    states no pace for that group."""
    delay, rate = robots.crawl_delay(tokens), robots.request_rate(tokens)
    if delay is None and rate is None:
        return False
    logger.info(
        "robots.txt of %(origin)s asks %(group)s for %(asked)s: %(applied)s",
        {
            "origin": origin,
            "group": f"group {group_rules(robots, tokens)[0] or '*'!r}",
            "asked": asked_pace(delay, rate),
            "applied": applied_pace(max(v for v in (delay, rate) if v is not None), crawler),
        },
        extra={"spider": crawler.spider},
    )
    return True


def plural(count: int, word: str) -> str:
    """``1 rule``, ``2 rules``, ``0 sitemaps``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def effect(access: Access) -> str:
    """What an access means for the origin's requests, for a log line."""
    if access.state is AccessState.ALLOW_ALL:
        return "everything allowed"
    if access.state is AccessState.CLOSED or access.robots is None:
        return "every request dropped"
    robots = access.robots
    outside = robots.site_wide
    counts = "".join(
        f", {kind.counted(len(outside.get(key, ())))}"
        for key, kind in SITE_WIDE.items()
        if kind.said_when_none or key in outside
    )
    return f"{plural(robots.rule_count, 'rule')} for {plural(len(robots.agents), 'agent')}{counts}"


def asked_pace(delay: float | None, rate: float | None) -> str:
    """What a group's pacing lines ask: ``Crawl-delay: 1 s``, ``Request-rate:
    one request every 5 s``, or both."""
    said = []
    if delay is not None:
        said.append(f"Crawl-delay: {delay:g} s between requests")
    if rate is not None:
        said.append(f"Request-rate: one request every {rate:g} s")
    return " and ".join(said)


def applied_pace(seconds: float, crawler: Crawler) -> str:
    """Whether the crawl waits so, and how to make it (docs/crawl-delay.md)."""
    from scrapy_rep.crawler.config.settings import CrawlDelayConfig
    from scrapy_rep.crawler.config.values import SettingError

    try:
        pace = CrawlDelayConfig.from_settings(crawler.settings)
    except SettingError:  # the pace fails the crawl at start-up, naming the setting
        pace = CrawlDelayConfig()
    if not pace.obey:
        return (
            'not applied: REP_CRAWL_DELAY is "ignore" (the default), so only '
            'DOWNLOAD_DELAY spaces this origin\'s requests; set REP_CRAWL_DELAY = "obey" '
            "to apply it"
        )
    if seconds > pace.max_delay:
        return (
            f"applied as {pace.max_delay:g} s between this origin's requests "
            '(cut by REP_CRAWL_DELAY_MAX; REP_CRAWL_DELAY = "obey")'
        )
    return f'applied: {seconds:g} s between this origin\'s requests (REP_CRAWL_DELAY = "obey")'


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
