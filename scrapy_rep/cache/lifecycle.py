"""One origin's robots.txt lifecycle, as a sans-I/O state machine (docs/spec.md §2.2, §3).

The driver (``crawler/access/driver.py``) does the I/O. It tells the machine
each event once, with the time it happened, and carries out in order the
effects every event hands back, all of one shape: a tuple (``cache/effects.py``).
``TRANSITIONS`` is the machine as data: from each ``Phase``, what an ``Event``
does (when what), the phase it leads to and the kinds of effect it hands back;
tests/cache/test_lifecycle_table.py walks every row. The rules are the pure
functions of ``policy``, asked once per event; this module remembers what the
walk settled (the access and its parse, the answer to replay), so that a busy
origin costs one call and a clock reading per request. No clock, no I/O.
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Final

from scrapy_rep.cache.effects import (
    FETCH_NOW,
    NOTHING,
    Announce,
    Effect,
    Effects,
    FetchNow,
    Save,
    Use,
    WaitBudget,
    WaitUntil,
)
from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    Action,
    Decision,
    PolicyConfig,
    decide,
    loaded_record,
    note_site_answer,
    quick_retry_at,
    record_outcome,
    retention,
    settled,
)
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.storage import ParsedBodies
from scrapy_rep.cache.versions import earlier_bytes
from scrapy_rep.engine.lines import MAX_BODY_BYTES
from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = [
    "LARGEST_SIZE",
    "REUSE",
    "TRANSITIONS",
    "Event",
    "LifecycleRules",
    "OriginLifecycle",
    "Phase",
    "Start",
    "Transition",
    "shared_parsed_bodies",
]

logger = logging.getLogger(__name__)

#: Seconds an answer is reused for the same record: the policy's windows are hours.
REUSE: Final = 1.0
#: The most robots.txt bytes one lifecycle can hold (``size``).
LARGEST_SIZE: Final = MAX_BODY_BYTES


class Phase(Enum):
    """Where an origin's lifecycle is (not a record's standing, ``cache/standing.py``)."""

    COLD = "cold"  # nothing known yet: the store not read, or a flight that failed
    FETCHING = "fetching"  # requests wait for a flight's first fetch (docs/spec.md §8.3)
    FRESH = "fresh"  # a record that applies as it is (docs/spec.md §3.1)
    EXPIRED = "expired"  # a record the next request fetches again first (docs/spec.md §3.3)
    OUTAGE = "outage"  # robots.txt unreachable: closed, the kept copy or allow (§2.2)


class Start(Enum):
    """How a flight starts (``OriginLifecycle.flight``)."""

    ASK = "ask"  # ask the lifecycle first (an early fetch, docs/decisions.md)
    FETCH = "fetch"  # a request was told to fetch: requests wait
    RETRY = "retry"  # an outage's background retry: nobody waits (docs/spec.md §2.2)


class Event(Enum):
    """What the driver tells the machine; each value is its method's name."""

    LOADED = "loaded"  # the store's record, at the start of a flight
    FLIGHT = "flight"  # a flight starts on an origin already held
    ASKED = "asked"  # a request wants the access now
    FETCHED = "fetched"  # the outcome of a fetch this process made
    SHARED = "shared"  # a record another process fetched meanwhile (docs/spec.md §3.5)
    LANDED = "landed"  # the flight ends as things are (it failed midway)
    SEEDED = "seeded"  # a robots.txt response the crawl downloaded itself (§3.4)
    SITE_ANSWERED = "site_answered"  # a page of the origin answered, during an outage


@dataclass(frozen=True, slots=True)
class Transition:
    """In ``phase``, ``event`` (``when`` so) leads to ``then``, with effects of these kinds."""

    phase: Phase
    event: Event
    when: str
    then: Phase
    effects: tuple[type[Effect], ...]
    cite: str


_P, _E = Phase, Event
_ANSWER: Final = (Announce, Use)  # a new access is announced, then used
_FETCHED: Final = (Save, *_ANSWER)  # a fetch is saved, announced, then used
_RETRY_SOON: Final = (Save, WaitUntil, FetchNow)  # a quick retry while requests wait

#: The machine, row by row (docs/spec.md §2, §3, §8).
TRANSITIONS: Final = (
    Transition(_P.COLD, _E.LOADED, "no record stored", _P.FETCHING, (FetchNow,), "§8.3"),
    Transition(_P.COLD, _E.LOADED, "a fresh record", _P.FRESH, _ANSWER, "§3.4"),
    Transition(_P.COLD, _E.LOADED, "an expired record", _P.FETCHING, (FetchNow,), "§3.3"),
    Transition(_P.COLD, _E.LOADED, "a record from the future", _P.FETCHING, (FetchNow,), "§3.4"),
    Transition(_P.COLD, _E.LOADED, "a record in an outage", _P.OUTAGE, _ANSWER, "§2.3"),
    Transition(_P.COLD, _E.ASKED, "after a flight that failed", _P.FETCHING, (FetchNow,), "§8.3"),
    Transition(_P.COLD, _E.LANDED, "the store failed", _P.COLD, _ANSWER, "§8.3"),
    Transition(_P.FETCHING, _E.ASKED, "another request", _P.FETCHING, (FetchNow,), "§3.5"),
    Transition(_P.FETCHING, _E.FETCHED, "2xx", _P.FRESH, _FETCHED, "§2, §3.1"),
    Transition(_P.FETCHING, _E.FETCHED, "4xx", _P.FRESH, _FETCHED, "§2"),
    Transition(_P.FETCHING, _E.FETCHED, "5xx, a quick retry", _P.OUTAGE, _RETRY_SOON, "§2.2"),
    Transition(_P.FETCHING, _E.FETCHED, "5xx, the wait spent", _P.OUTAGE, _FETCHED, "§2.2"),
    Transition(_P.FETCHING, _E.SHARED, "a fresh record", _P.FRESH, _ANSWER, "§3.5"),
    Transition(_P.FETCHING, _E.SHARED, "no-store", _P.FETCHING, (FetchNow,), "§3.2, §3.5"),
    Transition(_P.FETCHING, _E.LANDED, "an expired record", _P.EXPIRED, (Use,), "§3.3"),
    Transition(_P.FRESH, _E.ASKED, "settled", _P.FRESH, (Use,), "§3.1"),
    Transition(_P.FRESH, _E.ASKED, "a record not yet told", _P.FRESH, _ANSWER, "§3.4"),
    Transition(_P.FRESH, _E.SEEDED, "a newer response", _P.FRESH, (Save,), "§3.4"),
    Transition(_P.FRESH, _E.SEEDED, "no newer", _P.FRESH, (), "§3.4"),
    Transition(_P.FRESH, _E.SITE_ANSWERED, "no outage", _P.FRESH, (), "§2.2"),
    Transition(_P.EXPIRED, _E.ASKED, "past its life", _P.FETCHING, (FetchNow,), "§3.3"),
    Transition(_P.EXPIRED, _E.FLIGHT, "ask", _P.FETCHING, (FetchNow,), "§3.3"),
    Transition(_P.EXPIRED, _E.FLIGHT, "fetch", _P.FETCHING, (FetchNow,), "§3.3"),
    Transition(_P.OUTAGE, _E.ASKED, "closed, settled", _P.OUTAGE, (Use,), "§2.2"),
    Transition(_P.OUTAGE, _E.ASKED, "a quick retry under way", _P.OUTAGE, _ANSWER, "§2.2"),
    Transition(_P.OUTAGE, _E.ASKED, "12 hours in, a copy", _P.OUTAGE, _ANSWER, "§2.2, §3.3"),
    Transition(_P.OUTAGE, _E.ASKED, "12 hours in, no copy", _P.FETCHING, (FetchNow,), "§2.2"),
    Transition(_P.OUTAGE, _E.FLIGHT, "retry", _P.OUTAGE, (FetchNow,), "§2.2"),
    Transition(_P.OUTAGE, _E.FETCHED, "a quick retry's 2xx", _P.FRESH, _FETCHED, "§2.2"),
    Transition(_P.OUTAGE, _E.FETCHED, "2xx, nobody waits", _P.FRESH, _FETCHED, "§2.2"),
    Transition(_P.OUTAGE, _E.FETCHED, "5xx, nobody waits", _P.OUTAGE, _FETCHED, "§2.2"),
    Transition(_P.OUTAGE, _E.SITE_ANSWERED, "first", _P.OUTAGE, (Save,), "§2.2, §2.3"),
    Transition(_P.OUTAGE, _E.SITE_ANSWERED, "marked within the hour", _P.OUTAGE, (), "§2.2"),
)

_FETCH: Final[Effects] = (FETCH_NOW,)
_FETCH_HERE: Final[Effects] = (FetchNow(shared=False),)

_PARSERS: dict[bool, ParsedBodies] = {}


def shared_parsed_bodies(google_quirks: bool = False) -> ParsedBodies:
    """The process-wide parse cache: one ``RobotsTxt`` per distinct body.

    Shared by every origin, spider and crawler of the process, so a body that
    many origins serve is parsed once.
    """
    parser = _PARSERS.get(google_quirks)
    if parser is None:
        parser = _PARSERS[google_quirks] = ParsedBodies(google_quirks=google_quirks)
    return parser


class LifecycleRules:
    """What every origin's lifecycle shares: the policy, the parse cache, the dice."""

    def __init__(
        self,
        config: PolicyConfig,
        parse: Callable[[bytes], RobotsTxt],
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.config = config
        self.parse = parse
        self.random = random
        self.warned_future = False

    def new(self) -> OriginLifecycle:
        return OriginLifecycle(self)


_Key = tuple[AccessState | None, bytes | None, str]


class OriginLifecycle:
    """One origin: its record, the access settled for it, what is still to tell."""

    __slots__ = (
        "_fetches",
        "_fetching",
        "_from",
        "_key",
        "_last",
        "_rules",
        "_told",
        "_unannounced",
        "_until",
        "_waiting",
        "access",
        "outcome",
        "outcome_record",
        "record",
    )

    def __init__(self, rules: LifecycleRules) -> None:
        self._rules = rules
        self.record: OriginRecord | None = None
        self.access: Access | None = None  # the access settled (and announced)
        self._key: _Key | None = None  # the decision ``access`` was made for
        #: The last plain answer (alone, and as the effects of ``asked``) and
        #: the clock span it holds for (``REUSE``).
        self._last: Use | None = None
        self._told: Effects = NOTHING
        self._from = self._until = 0.0
        #: Requests wait for a flight's first fetch (``Phase.FETCHING``): one
        #: more joins it without asking the policy. Until the flight settles,
        #: they may wait for quick retries too (``_waiting``), while a new
        #: request meets the outage. A background retry nobody waits for.
        self._fetching = self._waiting = False
        #: The last fetch this process made (or saw) and its record: replayed
        #: to a spider asking for robots.txt itself.
        self.outcome: FetchOutcome | None = None
        self.outcome_record: OriginRecord | None = None
        self._unannounced: FetchOutcome | None = None  # a fetch not yet announced
        #: This flight's, for ``Announce.outcomes``; a tuple, so that an origin
        #: at rest keeps no object of it for the collector to walk.
        self._fetches: tuple[FetchOutcome, ...] = ()

    # --- events: each hands back a tuple of effects ------------------------------------

    def asked(self, now: float) -> Effects:
        """A request wants the access at ``now`` (docs/spec.md §2.2, §3.3): answer or fetch."""
        if self._last is not None and self._from <= now < self._until:
            return self._told
        if self._fetching:
            return _FETCH
        decision = decide(self.record, now, self._rules.config)
        if decision.action is Action.FETCH:
            self._fetching = self._waiting = True
            return _FETCH
        return self._answer(decision, now)

    def flight(self, start: Start, now: float) -> Effects:
        """A flight starts on an origin held already (docs/spec.md §3.5)."""
        if start is Start.ASK:
            return self.asked(now)
        self._fetching = self._waiting = start is Start.FETCH
        return _FETCH

    def loaded(self, record: OriginRecord | None, now: float) -> Effects:
        """The store's record, read at the start of a flight."""
        self.record = _trusted(record, now, self._rules)
        self._last = None
        decision = decide(self.record, now, self._rules.config)
        self._fetching = self._waiting = decision.action is Action.FETCH
        if self._fetching:
            return _FETCH
        return self._answer(decision, now)

    def fetched(self, outcome: FetchOutcome, now: float, budget: WaitBudget | None) -> Effects:
        """This process's fetch ended: save the new record, then retry or settle.

        Counted on the record as it is now, not as it was when the fetch
        began: a page may have answered meanwhile (``site_answered``), and
        that mark is what opens the site 30 days into an outage.
        """
        config = self._rules.config
        record = _recorded(self.record, outcome, now, self._rules)
        self._adopt(record, outcome)
        self._fetches += (outcome,)
        save = Save(record, retention(record, now, config))
        return (save, *self._after_fetch(now, budget, decide(record, now, config)))

    def shared(self, record: OriginRecord | None, now: float, budget: WaitBudget | None) -> Effects:
        """Another process fetched for this one (docs/spec.md §3.5)."""
        trusted = _trusted(record, now, self._rules)
        decision = decide(trusted, now, self._rules.config)
        if trusted is None or decision.action is Action.FETCH:
            return _FETCH_HERE  # not shareable (a no-store body is not stored): fetch here
        self._adopt(trusted, None)
        return self._after_fetch(now, budget, decision)

    def landed(self, now: float) -> Effects:
        """The flight ends as things are (it failed midway): answer its waiters."""
        return self._settle(now, decide(self.record, now, self._rules.config))

    def seeded(self, outcome: FetchOutcome, now: float) -> Effects:
        """A robots.txt response the crawl downloaded itself: as new as a fetch
        of ours, unless the record is as new. The next request settles it."""
        known = self.record
        if known is not None and known.fetched_at >= now:
            return NOTHING
        record = record_outcome(known, outcome, now, self._rules.config, random=self._rules.random)
        self._adopt(record, outcome)
        return (Save(record, retention(record, now, self._rules.config)),)

    def site_answered(self, now: float) -> Effects:
        """A page answered during an outage: after 30 days that matters (docs/spec.md §2.2)."""
        marked = note_site_answer(self.record, now, self._rules.config)
        if marked is None:
            return NOTHING
        self.record, self._last = marked, None
        return (Save(marked, retention(marked, now, self._rules.config)),)

    # --- what it knows ---------------------------------------------------------------

    def known(self, now: float) -> Use | None:
        """The answer at ``now`` if it needs no fetch nor announcement first (else None)."""
        last = self._last
        if last is not None and self._from <= now < self._until:
            return last
        if self._fetching:
            return None
        decision = decide(self.record, now, self._rules.config)
        if decision.action is Action.FETCH or not self._holds(decision):
            return None
        return self._use(decision, now)

    def phase(self, now: float) -> Phase:
        """Where the lifecycle is at ``now`` (the rows of ``TRANSITIONS``)."""
        record = self.record
        if self._fetching:
            return Phase.FETCHING
        if record is None:
            return Phase.COLD
        if record.in_outage:
            return Phase.OUTAGE
        if decide(record, now, self._rules.config).action is Action.FETCH:
            return Phase.EXPIRED
        return Phase.FRESH

    def replay(self, robotstxt_url: str) -> FetchOutcome | None:
        """The robots.txt answer behind the record, to replay to a spider.

        None when the origin is unreachable (or its body was not kept): the
        spider's own request should then go to the network.
        """
        record = self.record
        if record is None or record.kind is FetchKind.UNREACHABLE:
            return None
        if self.outcome is not None and self.outcome_record is record:
            return self.outcome
        if record.kind is FetchKind.SUCCESS and record.good_body is None:
            return None
        # Fetched by another process or an earlier run: status and body are
        # kept, the headers are not.
        return FetchOutcome(
            record.kind,
            robotstxt_url,
            record.fetched_at,
            status=record.status,
            body=record.good_body or b"",
            reason=record.reason,
            headers={"content-type": ("text/plain",)},
        )

    @property
    def size(self) -> int:
        """Bytes of robots.txt kept alive (one object once): bodies only, as the
        objects around them are bounded by the origin count; counting those
        too capped a broad crawl near 30,000 origins (docs/benchmarks.md, "At scale").
        The record's earlier versions count too (docs/versions.md)."""
        record = self.record
        body = record.good_body if record is not None else None
        size = (len(body) if body else 0) + (earlier_bytes(record) if record else 0)
        kept = self.outcome.body if self.outcome is not None else None
        if kept and kept is not body:
            size += len(kept)
        return size

    # --- the walk ---------------------------------------------------------------------

    def _after_fetch(self, now: float, budget: WaitBudget | None, decision: Decision) -> Effects:
        """Requests that waited for a first failure wait a little more for
        quick retries, while the origin would be closed (docs/spec.md §2.2)."""
        record = self.record
        closed = decision.state is AccessState.CLOSED
        if closed and budget is not None and self._waiting and record is not None:
            at = quick_retry_at(record, budget.since, now, self._rules.config)
            if at is not None and at - now <= budget.left:
                return (WaitUntil(at), FETCH_NOW)
        return self._settle(now, decision)

    def _settle(self, now: float, decision: Decision) -> Effects:
        """The answer right after a load or a flight: a record the policy
        already wants fetched again (a TTL of 0, a no-store body) applies as
        it is, this once (``settled``), and is not kept for the next requests."""
        outcomes, self._fetches = self._fetches, ()
        self._fetching = self._waiting = False
        if decision.action is Action.USE:
            return self._answer(decision, now, outcomes)
        return self._answer(settled(self.record, decision), None, outcomes)

    def _answer(
        self, decision: Decision, now: float | None, outcomes: tuple[FetchOutcome, ...] = ()
    ) -> Effects:
        """``Use``, after an ``Announce`` when the access is new or fetches are
        to be told (docs/spec.md §8.1); kept for the next requests unless
        ``now`` is None."""
        new = not self._holds(decision)
        if new:
            self._key, self.access = _key(decision), _access_of(decision, self._rules)
            self._last = None
        use = self._use(decision, now)
        if not new and not outcomes:
            return self._told if self._last is use else (use,)
        fetched = None
        if new:
            fetched, self._unannounced = self._unannounced, None
        return (Announce(use.access, new, fetched, outcomes), use)

    def _use(self, decision: Decision, now: float | None) -> Use:
        """The answer for ``decision``; kept for a second at most from ``now``
        and never past the record's expiry; not one that starts a retry."""
        assert self.access is not None
        record = self.record
        outage = decision.state if record is not None and record.in_outage else None
        use = Use(self.access, decision.stale, outage, decision.refresh_due)
        if now is not None and not use.retry:
            self._last, self._told, self._from = use, (use,), now
            expires = record.expires_at if record is not None else now
            self._until = now + REUSE if now >= expires else min(now + REUSE, expires)
        return use

    def _holds(self, decision: Decision) -> bool:
        return self.access is not None and self._key == _key(decision)

    def _adopt(self, record: OriginRecord, outcome: FetchOutcome | None) -> None:
        """A new record: the next answer settles (and announces) again."""
        self.record, self._fetching = record, False
        self.access = self._key = self._last = None
        if outcome is not None:
            self.outcome, self.outcome_record = outcome, record
            self._unannounced = outcome


def _access_of(decision: Decision, rules: LifecycleRules) -> Access:
    try:
        return decision.access(rules.parse)
    except Exception as exc:  # the engine promises not to raise; be safe anyway
        logger.exception("Parsing a robots.txt failed (%s)", decision.reason)
        return Access(AccessState.ALLOW_ALL, None, f"robots.txt unparsable ({exc!r})")


def _trusted(record: OriginRecord | None, now: float, rules: LifecycleRules) -> OriginRecord | None:
    """A stored record, its expiry capped by the policy; one from the future is absent."""
    if record is None:
        return None
    trusted = loaded_record(record, now, rules.config)
    if trusted is None and not rules.warned_future:
        rules.warned_future = True
        logger.warning(
            "The robots.txt cache holds a record fetched in the future (%s); "
            "records like it are ignored and fetched again",
            record.reason,
        )
    return trusted


def _recorded(
    record: OriginRecord | None, outcome: FetchOutcome, now: float, rules: LifecycleRules
) -> OriginRecord:
    """``record_outcome``, which must not raise; if it does anyway, the
    answer still counts (docs/spec.md §2): without its headers, else as
    unreachable with the usual back-off. Never a fetch again at once."""
    try:
        return record_outcome(record, outcome, now, rules.config, random=rules.random)
    except Exception:
        logger.exception("Recording %s failed; its headers are ignored", outcome.url)
    try:
        plain = replace(outcome, cache_control=None, retry_after=None, headers={})
        return record_outcome(record, plain, now, rules.config, random=rules.random)
    except Exception:
        logger.exception("Recording %s failed; it counts as unreachable", outcome.url)
    broken = FetchOutcome(
        FetchKind.UNREACHABLE, outcome.url, now, reason="an answer that could not be recorded"
    )
    return record_outcome(record, broken, now, rules.config, random=rules.random)


def _key(decision: Decision) -> _Key:
    return (decision.state, decision.body, decision.reason)
