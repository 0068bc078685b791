"""One origin's robots.txt lifecycle, as a sans-I/O state machine (docs/spec.md §2.2, §3).

The driver (``crawler/access/driver.py``) does the I/O: it loads and saves
records, fetches, sleeps and announces. It tells the machine each event
once, with the time it happened:

- ``loaded``: the record the store held, at the start of a flight;
- ``fetched``: the outcome of a fetch this process made;
- ``shared``: a record another process fetched meanwhile (docs/spec.md §3.5);
- ``seeded``: a robots.txt response someone else downloaded (the spider);
- ``site_answered``: a page of the origin answered, during an outage;
- ``asked``: a request wants the origin's access now;

and carries out the effects handed back, in order: ``Use`` (answer the
requests with this access), ``FetchNow``, ``WaitUntil`` (then fetch again),
``Save`` and ``Announce`` (a new access, and the fetches behind it).

Where an origin stands (read from its record at ``now``) and what each event
then hands back:

    cold (no record)   loaded          -> FetchNow (requests wait, docs/spec.md §8.3)
    fresh              loaded, asked   -> Use; Announce when the access is new
    expired            asked           -> FetchNow (docs/spec.md §3.3)
    fetching           fetched 2xx/4xx -> Save, Announce (docs/spec.md §2, §3.1)
    fetching           fetched 5xx     -> Save, then WaitUntil (a quick retry while
                                          requests may still wait) or Announce
    fetching           shared          -> as fetched; FetchNow here if not shareable
    outage             asked           -> Use (closed, the kept copy, or allow by
                                          docs/spec.md §2.2), ``retry`` when one is due

The rules are the pure functions of ``policy``; this module only walks an
origin through them, and remembers what the walk settled (the access and the
parse behind it, the answer to replay), so that a busy origin costs one call
and a clock reading per request. It reads no clock and does no I/O.
"""

from __future__ import annotations

import logging
import random as _random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final, NamedTuple

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    Action,
    Decision,
    PolicyConfig,
    decide,
    decide_settled,
    loaded_record,
    note_site_answer,
    quick_retry_at,
    record_outcome,
    retention,
)
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.storage import ParsedBodies
from scrapy_rep.engine.lines import MAX_BODY_BYTES
from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = [
    "FETCH_NOW",
    "LARGEST_SIZE",
    "REUSE",
    "Announce",
    "Effect",
    "FetchNow",
    "LifecycleRules",
    "OriginLifecycle",
    "Save",
    "Use",
    "WaitUntil",
    "Waiting",
    "shared_parsed_bodies",
]

logger = logging.getLogger(__name__)

#: Seconds an answer is reused for the same record: the policy's windows are
#: hours long, and a busy origin sees many requests a second.
REUSE: Final = 1.0
#: The most robots.txt bytes one lifecycle can hold (``size``).
LARGEST_SIZE: Final = MAX_BODY_BYTES


# --- effects: what the driver is to do ----------------------------------------------


@dataclass(frozen=True, slots=True)
class Use:
    """Answer the requests with ``access``."""

    access: Access
    stale: bool = False  # the rules come from an expired copy (stats: stale_used)
    #: In an outage: the state it gives (stats: requests_in_outage/<state>).
    outage: AccessState | None = None
    #: A background refetch is due: start it; requests do not wait for it.
    retry: bool = False


@dataclass(frozen=True, slots=True)
class FetchNow:
    """Fetch robots.txt now; tell ``fetched`` (or ``shared``) how it went."""

    #: Through the store's single flight (docs/spec.md §3.5); False: another
    #: process's copy could not be shared (no-store), fetch it here.
    shared: bool = True


FETCH_NOW: Final = FetchNow()


@dataclass(frozen=True, slots=True)
class WaitUntil:
    """A first failure's quick retry (docs/spec.md §2.2): sleep until ``at``, then fetch."""

    at: float


@dataclass(frozen=True, slots=True)
class Save:
    """Write ``record`` to the store, to be kept ``keep`` seconds."""

    record: OriginRecord
    keep: float


@dataclass(frozen=True, slots=True)
class Announce:
    """Tell the crawl, then answer with ``use``."""

    use: Use
    #: The access is new in this process (signals, stats); with the fetch behind it.
    new: bool
    fetched: FetchOutcome | None
    #: A flight's fetches (a first failure and its quick retries), for the logs.
    outcomes: tuple[FetchOutcome, ...] = ()


Effect = Use | FetchNow | WaitUntil | Save | Announce


class Waiting(NamedTuple):
    """Requests wait for this flight: since when (the clock), and for how
    many more seconds of real time they may (``unreachable_wait``)."""

    since: float
    left: float


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
        "_from",
        "_key",
        "_last",
        "_rules",
        "_unannounced",
        "_until",
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
        #: The last plain answer and the clock span it holds for (``REUSE``).
        self._last: Use | None = None
        self._from = self._until = 0.0
        #: The last fetch this process made (or saw) and its record: replayed
        #: to a spider asking for robots.txt itself.
        self.outcome: FetchOutcome | None = None
        self.outcome_record: OriginRecord | None = None
        self._unannounced: FetchOutcome | None = None  # a fetch not yet announced
        #: This flight's, for ``Announce.outcomes``; a tuple, so that an origin
        #: at rest keeps no object of it for the collector to walk.
        self._fetches: tuple[FetchOutcome, ...] = ()

    # --- events -----------------------------------------------------------------

    def asked(self, now: float, *, settle: bool = True) -> Use | Announce | FetchNow | None:
        """A request wants the access at ``now`` (docs/spec.md §2.2, §3.3).

        ``FETCH_NOW``: nothing usable; the requests wait for a flight. With
        ``settle=False`` (an answer that must not wait), None when the access
        changed and must be announced first: ask again with ``settle``.
        """
        last = self._last
        if last is not None and self._from <= now < self._until:
            return last
        decision = decide(self.record, now, self._rules.config)
        if decision.action is Action.FETCH:
            return FETCH_NOW
        if not settle and not self._holds(decision):
            return None
        return self._reused(self._answer(decision), now)

    def loaded(self, record: OriginRecord | None, now: float) -> Use | Announce | FetchNow:
        """The store's record, read at the start of a flight."""
        self.record = self._trusted(record, now)
        self._last = None
        decision = decide(self.record, now, self._rules.config)
        if decision.action is Action.FETCH:
            return FETCH_NOW
        return self._reused(self._answer(decision), now)

    def fetched(self, outcome: FetchOutcome, now: float, waiting: Waiting | None) -> list[Effect]:
        """This process's fetch ended: save the new record, then retry or settle.

        Counted on the record as it is now, not as it was when the fetch
        began: a page may have answered meanwhile (``site_answered``), and
        that mark is what opens the site 30 days into an outage.
        """
        record = _recorded(self.record, outcome, now, self._rules)
        self._adopt(record, outcome)
        self._fetches += (outcome,)
        save = Save(record, retention(record, now, self._rules.config))
        return [save, self._after_fetch(now, waiting)]

    def shared(
        self, record: OriginRecord | None, now: float, waiting: Waiting | None
    ) -> FetchNow | WaitUntil | Use | Announce:
        """Another process fetched for this one (docs/spec.md §3.5)."""
        trusted = self._trusted(record, now)
        if trusted is None or decide(trusted, now, self._rules.config).action is Action.FETCH:
            # Not shareable (a no-store body is not stored): fetch it here.
            return FetchNow(shared=False)
        self._adopt(trusted, None)
        return self._after_fetch(now, waiting)

    def landed(self, now: float) -> Use | Announce:
        """The flight ends as things are (it failed midway): answer its waiters."""
        return self._settle(now)

    def seeded(self, outcome: FetchOutcome, now: float) -> Save | None:
        """A robots.txt response the crawl downloaded itself: as new as a fetch
        of ours, unless the record is as new. The next request settles it."""
        known = self.record
        if known is not None and known.fetched_at >= now:
            return None
        record = record_outcome(known, outcome, now, self._rules.config, random=self._rules.random)
        self._adopt(record, outcome)
        return Save(record, retention(record, now, self._rules.config))

    def site_answered(self, now: float) -> Save | None:
        """A page answered during an outage: after 30 days that matters (docs/spec.md §2.2)."""
        marked = note_site_answer(self.record, now, self._rules.config)
        if marked is None:
            return None
        self.record, self._last = marked, None
        return Save(marked, retention(marked, now, self._rules.config))

    # --- what it knows ---------------------------------------------------------------

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
        """Bytes of robots.txt this lifecycle keeps alive (one object once).

        Bodies only (REP_MEMORY_MAX_BYTES's unit): the objects around them are
        bounded by the origin count. Counting them here too (a kilobyte each,
        once) capped a broad crawl's live origins near 30,000 whatever the
        setting, and a breadth-first crawl past that evicted every answer
        just before its origin's next request (docs/benchmarks.md, "At scale").
        """
        body = self.record.good_body if self.record is not None else None
        size = len(body) if body else 0
        kept = self.outcome.body if self.outcome is not None else None
        if kept and kept is not body:
            size += len(kept)
        return size

    # --- the walk ---------------------------------------------------------------------

    def _after_fetch(self, now: float, waiting: Waiting | None) -> WaitUntil | Use | Announce:
        """Requests that waited for a first failure wait a little more for
        quick retries, while the origin would be closed (docs/spec.md §2.2)."""
        record = self.record
        if waiting is not None and record is not None and record.in_outage:
            config = self._rules.config
            if decide(record, now, config).state is AccessState.CLOSED:
                at = quick_retry_at(record, waiting.since, now, config)
                if at is not None and at - now <= waiting.left:
                    return WaitUntil(at)
        return self._settle(now)

    def _settle(self, now: float) -> Use | Announce:
        """The answer right after a load or a flight: a record the policy
        already wants fetched again (a TTL of 0, a no-store body) applies as
        it is, this once."""
        outcomes, self._fetches = self._fetches, ()
        decision = decide(self.record, now, self._rules.config)
        if decision.action is Action.USE:
            return self._reused(self._answer(decision, outcomes), now)
        return self._answer(decide_settled(self.record, now, self._rules.config), outcomes)

    def _reused(self, answer: Use | Announce, now: float) -> Use | Announce:
        """Keep ``answer`` for the next requests, for a second at most and never
        past the record's expiry; not one that starts a retry."""
        use = answer.use if isinstance(answer, Announce) else answer
        if not use.retry:
            self._last, self._from = use, now
            expires = self.record.expires_at if self.record is not None else now
            self._until = now + REUSE if now >= expires else min(now + REUSE, expires)
        return answer

    def _answer(
        self, decision: Decision, outcomes: tuple[FetchOutcome, ...] = ()
    ) -> Use | Announce:
        new = not self._holds(decision)
        if new:
            self._key, self.access = _key(decision), self._access_of(decision)
            self._last = None
        assert self.access is not None
        record = self.record
        outage = decision.state if record is not None and record.in_outage else None
        use = Use(self.access, decision.stale, outage, decision.refresh_due)
        if not new and not outcomes:
            return use
        fetched = None
        if new:
            fetched, self._unannounced = self._unannounced, None
        return Announce(use, new, fetched, outcomes)

    def _holds(self, decision: Decision) -> bool:
        return self.access is not None and self._key == _key(decision)

    def _access_of(self, decision: Decision) -> Access:
        try:
            return decision.access(self._rules.parse)
        except Exception as exc:  # the engine promises not to raise; be safe anyway
            logger.exception("Parsing a robots.txt failed (%s)", decision.reason)
            return Access(AccessState.ALLOW_ALL, None, f"robots.txt unparsable ({exc!r})")

    def _adopt(self, record: OriginRecord, outcome: FetchOutcome | None) -> None:
        """A new record: the next answer settles (and announces) again."""
        self.record = record
        self.access = self._key = self._last = None
        if outcome is not None:
            self.outcome, self.outcome_record = outcome, record
            self._unannounced = outcome

    def _trusted(self, record: OriginRecord | None, now: float) -> OriginRecord | None:
        """A stored record, its expiry capped by the policy; one from the future is absent."""
        if record is None:
            return None
        trusted = loaded_record(record, now, self._rules.config)
        if trusted is None and not self._rules.warned_future:
            self._rules.warned_future = True
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
