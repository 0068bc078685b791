"""Crawl-delay: the robots.txt ``crawl-delay`` (or the interval a ``request-rate``
asks for, if longer), its settings, and the extension that reports it.

Google ignores ``crawl-delay`` (docs/spec.md §4.5) and so does every access decision
of scrapy_rep; ``REP_CRAWL_DELAY = "obey"`` only slows a crawl down. The pace
itself is kept by ``scrapy_rep.crawler.pace`` (issue 26): each origin's turns
are reserved in the store, so the delay holds across every process sharing
it (the memory store: one process, through the same code). This extension
counts the origins whose delay is obeyed and warns once per origin when
``REP_CRAWL_DELAY_MAX`` cuts one.

Before issue 26 the delay was the floor of the Scrapy download slot's delay
(``slot_timing``, ``rebase``, below). That code is kept but off (``_PACED``):
a slot delay on top of the shared turns sent some requests late and squeezed
the gap to the next worker's turn. The pace does not lower ``DOWNLOAD_DELAY``
or what AutoThrottle chose either: the slot's own delay still applies after
a request's turn.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from scrapy import signals as scrapy_signals
from scrapy.exceptions import NotConfigured

from scrapy_rep import signals
from scrapy_rep.crawler.internals import Timing, find_slot, read_timing, slot_key, write_timing
from scrapy_rep.crawler.settings import Config, Rejected, read_setting
from scrapy_rep.engine.agents import user_agent_token
from scrapy_rep.engine.origin import Origin, origin_of

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from typing_extensions import Self

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["CrawlDelay", "CrawlDelayConfig", "clamp", "pacing", "rebase", "slot_timing"]

logger = logging.getLogger(__name__)

_MODES: Final = ("ignore", "obey")
STAT: Final = "robotstxt/crawl_delay/applied"
CLAMPED_STAT: Final = "robotstxt/crawl_delay/clamped"
#: Crawl-delay is kept by ``scrapy_rep.crawler.pace`` (issue 26), not by slot delays.
_PACED: Final = True


# --- settings ------------------------------------------------------------------


@dataclass(frozen=True)
class CrawlDelayConfig:
    """REP_CRAWL_DELAY, REP_CRAWL_DELAY_MAX and REP_RETRY_AFTER, validated."""

    #: REP_CRAWL_DELAY == "obey": apply crawl-delay to download slots, and
    #: share each origin's pace through the store (``scrapy_rep.crawler.pace``).
    obey: bool = False
    #: REP_CRAWL_DELAY_MAX: seconds; a larger crawl-delay is cut to this.
    max_delay: float = 30.0
    #: REP_RETRY_AFTER == "obey": a 429/503 with Retry-After pauses its origin
    #: for every process sharing the store. Default: as REP_CRAWL_DELAY.
    retry_after: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> CrawlDelayConfig:
        defaults = cls()
        obey = read_setting(settings, "REP_CRAWL_DELAY", defaults.obey, _to_mode)
        return cls(
            obey=obey,
            max_delay=read_setting(
                settings, "REP_CRAWL_DELAY_MAX", defaults.max_delay, _to_seconds
            ),
            retry_after=read_setting(settings, "REP_RETRY_AFTER", obey, _to_mode),
        )


def _to_mode(value: object) -> bool:
    mode = value.strip().lower() if isinstance(value, str) else None
    if mode not in _MODES:
        raise Rejected(" or ".join(repr(mode) for mode in _MODES))
    return mode == "obey"


def _to_seconds(value: object) -> float:
    if not isinstance(value, bool):
        try:
            seconds = float(value) if isinstance(value, (int, float, str)) else None
        except ValueError:
            seconds = None
        if seconds is not None and 0 < seconds < float("inf"):
            return seconds
    raise Rejected("a number of seconds > 0, e.g. 30 or 2.5")


# --- the pure part ---------------------------------------------------------------


def clamp(delay: float, maximum: float) -> float:
    """A robots.txt delay cut to ``maximum`` (``crawl-delay: 86400`` must not freeze a crawl)."""
    return min(delay, maximum)


def slot_timing(base: Timing, floor: float) -> Timing:
    """The slot timing closest to ``base`` whose shortest wait is at least ``floor``.

    Scrapy waits ``delay × (1 ± jitter)``. A base whose shortest wait already
    reaches the floor is kept; a smaller delay is lifted to the floor without
    jitter; a larger delay is kept with its jitter narrowed.
    """
    if floor <= 0 or base.delay * (1 - base.jitter) >= floor:
        return base
    if base.delay <= floor:
        return Timing(floor, 0.0)
    return Timing(base.delay, 1 - floor / base.delay)


def rebase(base: Timing | None, applied: Timing | None, current: Timing) -> Timing:
    """The slot's own timing: what others (DOWNLOAD_DELAY, AutoThrottle) set.

    A field that differs from what this extension wrote last was changed by
    someone else and is taken as the new base; one that does not keeps the base.
    """
    if base is None or applied is None:
        return current
    return Timing(
        current.delay if current.delay != applied.delay else base.delay,
        current.jitter if current.jitter != applied.jitter else base.jitter,
    )


# --- the extension ----------------------------------------------------------------


@dataclass
class _SlotState:
    """What this extension knows about one download slot."""

    floors: dict[Origin, float] = field(default_factory=dict)  # origin -> clamped delay
    tokens: dict[Origin, tuple[str, ...]] = field(default_factory=dict)  # last seen
    base: Timing | None = None  # the slot's timing as others set it
    applied: Timing | None = None  # what this extension wrote last


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
        self._fallback_tokens = rep.user_agent_tokens or _tokens_of(rep.default_user_agent)
        self._robots: dict[Origin, RobotsTxt] = {}  # only those with a crawl-delay
        self._delays: dict[Origin, dict[tuple[str, ...], float | None]] = {}
        self._slots: dict[str, _SlotState] = {}
        self._warned: set[Origin] = set()
        self._counted: set[Origin] = set()
        crawler.signals.connect(self._resolved, signal=signals.robotstxt_resolved)
        crawler.signals.connect(self._reached, signal=scrapy_signals.request_reached_downloader)
        crawler.signals.connect(self._opened, signal=scrapy_signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    # --- signal handlers ---------------------------------------------------------

    def _opened(self, spider: Spider) -> None:
        # Connected now, after every extension's __init__ has run, so that this
        # handler runs after AutoThrottle's and lifts what it lowered before the
        # downloader computes the next wait.
        self._crawler.signals.connect(self._downloaded, signal=scrapy_signals.response_downloaded)

    def _resolved(
        self, origin: Origin, robotstxt_url: str, access: Access, spider: Spider | None = None
    ) -> None:
        """First resolution or refresh: forget the old delays, re-apply to known slots."""
        robots = access.robots if access.robots is not None and _has_delay(access.robots) else None
        if robots is None:
            self._robots.pop(origin, None)
        else:
            self._robots[origin] = robots
        self._delays.pop(origin, None)
        self._counted.discard(origin)
        for key, state in list(self._slots.items()):
            tokens = state.tokens.get(origin)
            if tokens is None:
                continue
            if robots is None:
                del state.tokens[origin]
                state.floors.pop(origin, None)
            else:
                self._set_floor(state, origin, tokens)
            self._apply(key, state)

    def _reached(self, request: Request, spider: Spider | None = None) -> None:
        key = slot_key(request)
        if key is None:
            return
        origin = origin_of(request.url)
        state = self._slots.get(key)
        if origin is not None and origin in self._robots:
            if state is None:
                state = self._slots[key] = _SlotState()
            tokens = self._tokens(request)
            if state.tokens.get(origin) != tokens or origin not in state.floors:
                state.tokens[origin] = tokens
                self._set_floor(state, origin, tokens)
        if state is not None:  # also for other origins of a slot with a floor
            self._apply(key, state)

    def _downloaded(
        self, response: Response, request: Request, spider: Spider | None = None
    ) -> None:
        key = slot_key(request)
        state = self._slots.get(key) if key is not None else None
        if key is not None and state is not None and state.floors:
            self._apply(key, state)

    # --- the steps ----------------------------------------------------------------

    def _tokens(self, request: Request) -> tuple[str, ...]:
        """The tokens the middleware matches this request with."""
        from scrapy_rep.crawler.middleware import RobotsTxtMiddleware

        middleware = self._crawler.get_downloader_middleware(RobotsTxtMiddleware)
        if middleware is None:
            return self._fallback_tokens
        return middleware.tokens_for(request)

    def _set_floor(self, state: _SlotState, origin: Origin, tokens: tuple[str, ...]) -> None:
        delay = self._delay(origin, tokens)
        if delay is None:
            state.floors.pop(origin, None)
        else:
            state.floors[origin] = delay

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

    def _apply(self, key: str, state: _SlotState) -> None:
        if _PACED:
            # The pace spaces the turns (in the store, across processes); a
            # slot delay on top would send some late and squeeze the next gap.
            if not state.floors:
                del self._slots[key]
            return
        slot = find_slot(self._crawler, key)
        current = read_timing(slot) if slot is not None else None
        if current is None:
            return
        state.base = rebase(state.base, state.applied, current)
        floor = max(state.floors.values(), default=0.0)
        timing = slot_timing(state.base, floor)
        if timing != current:
            write_timing(slot, timing)
            logger.debug(
                "Download slot %(slot)s: delay %(delay).2f s, jitter %(jitter).2f "
                "(crawl-delay floor %(floor)g s)",
                {"slot": key, "delay": timing.delay, "jitter": timing.jitter, "floor": floor},
                extra={"spider": self._crawler.spider},
            )
        state.applied = timing
        if not state.floors:  # back to what others set: nothing left to keep
            del self._slots[key]

    def _stats_inc(self, name: str) -> None:
        if self._crawler.stats is not None:
            self._crawler.stats.inc_value(name)


def pacing(robots: RobotsTxt, tokens: tuple[str, ...]) -> float | None:
    """The slowest of the group's ``crawl-delay`` and ``request-rate`` (seconds apart)."""
    found = [v for v in (robots.crawl_delay(tokens), robots.request_rate(tokens)) if v is not None]
    return max(found) if found else None


def _has_delay(robots: RobotsTxt) -> bool:
    """Whether any group paces requests: most robots.txt do not, and are not kept."""
    return any(pacing(robots, (agent,)) is not None for agent in robots.agents)


def _tokens_of(user_agent: str) -> tuple[str, ...]:
    token = user_agent_token(user_agent)
    return (token,) if token else ()
