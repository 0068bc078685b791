"""The one place that answers "what Access applies to this origin now?".

Per origin: the record from storage, the policy's decision on it, and a fetch
when the policy asks for one. Data flows one way: storage -> policy ->
access; what a fetch brings goes back through ``policy.record_outcome`` into
storage. The policy is asked in one place (``_decision``), once per event:
a record loaded or fetched, or the clock moving on.

Beside it: ``OriginStates`` (what this process knows, bounded), ``Flights``
(one load or fetch per origin at a time; waiters get its result), and
``SharedStore`` (the store, shared across processes, never fatal).

Outages (docs/spec.md §2.2): during an origin's first failing fetch the waiting
requests stay for quick retries, at most ``unreachable_wait``; later in the
streak the policy's answer applies at once and retries run in the background
on the policy's schedule. A crawl never hangs on a dead origin.

No Scrapy here: the fetch, the clock and the store are injected.
"""

from __future__ import annotations

import logging
import random as _random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Final

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    Action,
    Decision,
    OriginRecord,
    PolicyConfig,
    decide,
    decide_settled,
    note_site_answer,
    quick_retry_at,
    record_outcome,
)
from scrapy_rep.cache.storage import MAX_WAIT, MemoryStorage, ParsedBodies, Storage
from scrapy_rep.crawler.flights import Flights
from scrapy_rep.crawler.flights import sleep as reactor_sleep
from scrapy_rep.crawler.origin_state import REUSE, OriginState, OriginStates, decision_key
from scrapy_rep.crawler.shared_store import SharedStore, Sleep
from scrapy_rep.engine.origin import Origin, robots_url

__all__ = [
    "Count",
    "Fetch",
    "FetchFor",
    "FetchStopped",
    "OnAccess",
    "OnFetched",
    "Resolver",
    "shared_parser",
]

logger = logging.getLogger(__name__)

Fetch = Callable[[Origin], Awaitable[FetchOutcome]]
#: What asked (a request, opaque here) -> the fetch made on its behalf: called
#: the moment a flight starts, so that it can note what it needs of the asker
#: then (the proxy its robots.txt goes through), before the asker moves on.
FetchFor = Callable[[object], Fetch]
#: After the fetches of one flight (a first failure and its quick retries,
#: or one refresh), with the Access they lead to (logs).
OnFetched = Callable[[Origin, list[FetchOutcome], Access], None]
#: When an origin's Access is set or changes in this process, before the
#: requests that asked are answered; ``fetched`` is the fetch behind it, if
#: this process just made one (signals, stats).
OnAccess = Callable[[Origin, Access, "FetchOutcome | None"], Awaitable[None]]
#: Counts an event: "hit", "miss", "expired", "stale_used", "unreachable/<state>".
Count = Callable[[str], None]

#: How a request's answer was found (the robotstxt/cache/<how> stats).
HIT: Final = "hit"
MISS: Final = "miss"
EXPIRED: Final = "expired"
#: Bound of ``Resolver.streaking`` (cleared when full).
_MAX_STREAKING: Final = 100_000
#: robotstxt/unreachable/<state>, per request answered during a streak.
STREAK_STATES: Final = {
    AccessState.DISALLOW_ALL: "disallow",
    AccessState.RULES: "cached_copy",
    AccessState.ALLOW_ALL: "allow",
}

_PARSERS: dict[bool, ParsedBodies] = {}


class FetchStopped(BaseException):
    """Raised by a fetch that did not start because the crawl is stopping.

    Nothing was fetched, so nothing is recorded or announced: the flight ends
    and its waiters get this, like a cancellation (hence a BaseException: no
    ``except Exception`` on the way takes it for an unreachable robots.txt).
    """


def shared_parser(google_quirks: bool = False) -> ParsedBodies:
    """The process-wide parse cache: one ``RobotsTxt`` per distinct body.

    Shared by every origin, spider and crawler of the process, so a body that
    many origins serve is parsed once.
    """
    parser = _PARSERS.get(google_quirks)
    if parser is None:
        parser = _PARSERS[google_quirks] = ParsedBodies(google_quirks=google_quirks)
    return parser


#: A flight's result: the state it settled, and how its waiters' answer was found.
_Landed = tuple[OriginState, str]


class Resolver:
    """Per-origin access from storage through the policy, one fetch at a time."""

    def __init__(
        self,
        fetch: Fetch,
        *,
        storage: Storage | None = None,
        policy: PolicyConfig | None = None,
        google_quirks: bool = False,
        clock: Callable[[], float] = time.time,
        on_access: OnAccess | None = None,
        on_fetched: OnFetched | None = None,
        count: Count | None = None,
        sleep: Sleep | None = None,
        max_wait: float = MAX_WAIT,
        poll: float = 0.05,
        max_origins: int = 10_000,
        max_bytes: int = 32 * 1024 * 1024,
        parsed_max_bytes: int = 64 * 1024 * 1024,
        random: Callable[[], float] = _random.random,
        fetch_for: FetchFor | None = None,
    ) -> None:
        self._fetch = fetch
        self._fetch_for = fetch_for
        self.policy = policy if policy is not None else PolicyConfig()
        self._clock = clock
        self._sleep = sleep or reactor_sleep
        self._store = SharedStore(
            storage if storage is not None else MemoryStorage(clock=clock),
            self.policy,
            clock,
            sleep=self._sleep,
            max_wait=max_wait,
            poll=poll,
        )
        self._parse = shared_parser(google_quirks)
        self._parse.max_bytes = parsed_max_bytes  # process-wide: the last crawler's
        self._on_access = on_access
        self._on_fetched = on_fetched
        self._count = count or _ignore
        self._random = random
        self._states = OriginStates(max_origins, max_bytes)
        #: Origins whose record was in an outage streak when a request of theirs
        #: was last checked: the responses worth telling ``site_answered``. A
        #: superset (an origin leaves it at its next plain answer), so that the
        #: other responses cost the middleware nothing.
        self.streaking: set[Origin] = set()
        self._flights: Flights[Origin, _Landed] = Flights()
        #: Origins ``prefetch`` started that no request has asked for yet.
        self._ahead: OrderedDict[Origin, None] = OrderedDict()
        self._closed = False

    @property
    def storage(self) -> Storage:
        return self._store.storage

    @storage.setter
    def storage(self, storage: Storage) -> None:
        self._store.storage = storage

    # --- answers ---------------------------------------------------------------

    def current(self, origin: Origin, via: object = None) -> Access | None:
        """The answer if it is known and still applies; never waits.

        May start a background retry (a streak) on behalf of ``via`` and
        counts the lookup, like ``access``; None means "call ``access``".
        """
        if self._ahead:
            self._ahead.pop(origin, None)
        state = self._states.get(origin)
        if state is None:
            return None
        ready = self._ready(state)
        if ready is not None:  # the hot path of a crawl: a plain answer, just checked
            self._states.touch(origin)
            self._count(HIT)
            return ready
        known = self._known(origin, state)
        if known is None:
            return None
        self._note_use(origin, state, known, HIT, via)
        return state.access

    def peek(self, origin: Origin) -> Access | None:
        """The answer if it is known and still applies: nothing counted or started."""
        state = self._states.get(origin)
        if state is None:
            return None
        ready = self._ready(state)
        if ready is not None:
            return ready
        return state.access if self._known(origin, state) is not None else None

    def _ready(self, state: OriginState) -> Access | None:
        """``state.ready``'s access, if it still answers now."""
        ready = state.ready
        if ready is None or ready[1] is not state.record or ready[0] is not state.access:
            return None
        now = self._clock()
        return ready[0] if ready[2] - REUSE <= now < ready[2] else None

    def _known(self, origin: Origin, state: OriginState) -> Decision | None:
        """The policy's decision now, if ``state.access`` is what it gives."""
        decision = self._decision(state)
        if decision.action is Action.FETCH or not state.holds(decision):
            return None
        record = state.record
        if not (decision.refresh_due or decision.stale or (record and record.in_streak)):
            assert state.access is not None
            state.ready = (state.access, record, self._clock() + REUSE)
            self.streaking.discard(origin)
        return decision

    def prefetch(self, origin: Origin, via: object = None) -> None:
        """Start loading (or fetching) the origin's robots.txt now, if nothing
        is known or under way; the requests that come later join that flight.

        Not beyond ``OriginStates.room`` answers fetched and not yet asked
        for, or under way: one fetched further ahead of its requests would be
        evicted before they come, and fetched again. Those origins are fetched
        when their requests come instead.
        """
        if self._closed or self._flights.pending(origin) or self.peek(origin) is not None:
            return
        ahead = self._ahead
        while ahead:  # those evicted unasked: fetched for nothing
            first = next(iter(ahead))
            if self._states.get(first) is not None or self._flights.pending(first):
                break
            del ahead[first]
        # The answers of flights under way need keeping too, ahead or not.
        if max(len(ahead), len(self._flights)) >= self._states.room():
            return
        ahead[origin] = None
        self._flights.launch(origin, lambda: self._fly(origin, self._fetch_of(via)))

    async def access(self, origin: Origin, via: object = None) -> Access:
        """The access for ``origin``, loading or fetching its robots.txt if needed.

        A fetch this starts is made on behalf of ``via`` (``fetch_for``); one
        already under way is joined, whoever started it. Raises
        ``FetchStopped`` if the fetch it waited for did not start.
        """
        if self._ahead:
            self._ahead.pop(origin, None)
        state = self._states.get(origin)
        decision = self._decision(state) if state is not None else None
        how = HIT
        if state is None or decision is None or decision.action is Action.FETCH:
            state, how = await self._flights.join(
                origin, lambda: self._fly(origin, self._fetch_of(via))
            )
            decision = self._decision(state, settled=True)
        self._note_use(origin, state, decision, how, via)
        if state.holds(decision):
            assert state.access is not None
            return state.access
        return await self._settle(origin, state, decision)

    def pending(self, origin: Origin) -> bool:
        """A load or fetch is under way for ``origin``."""
        return self._flights.pending(origin)

    @property
    def busy(self) -> bool:
        """Some load, fetch or background retry is under way."""
        return self._flights.busy

    def call_when_idle(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once no flight is under way (at once if none is)."""
        self._flights.call_when_idle(callback)

    def record(self, origin: Origin) -> OriginRecord | None:
        state = self._states.get(origin)
        return state.record if state is not None else None

    def last_answer(self, origin: Origin) -> FetchOutcome | None:
        """The robots.txt answer behind the current record, to replay to a spider."""
        state = self._states.get(origin)
        return state.replay(robots_url(origin)) if state is not None else None

    # --- what else the crawl tells us -----------------------------------------------

    async def seed(self, origin: Origin, outcome: FetchOutcome) -> bool:
        """Take a robots.txt response someone else downloaded (a spider's own request).

        Ignored while a fetch is under way or when the record is as new.
        """
        if self._flights.pending(origin) or self._closed:
            return False
        state = self._states.get(origin)
        known = state.record if state is not None else await self._store.load(origin)
        now = self._clock()
        if known is not None and known.fetched_at >= now:
            return False
        record = record_outcome(known, outcome, now, self.policy, random=self._random)
        await self._store.save(origin, record)
        state = self._states.remember(origin, record)
        state.adopt(record, outcome)
        self._states.keep(origin, state)  # its bodies changed: count them again
        return True

    async def site_answered(self, origin: Origin) -> None:
        """A page of ``origin`` answered: during a streak, that matters after 30 days."""
        state = self._states.get(origin)
        if state is None or state.record is None or not state.record.in_streak:
            return
        marked = note_site_answer(state.record, self._clock(), self.policy)
        if marked is None:
            return
        state.record = marked
        if self._flights.pending(origin):
            return  # a fetch under way records its outcome on top of this mark
        stored = await self._store.load(origin)
        if state.record is not marked:
            return  # a fetch landed meanwhile, on top of the mark: its record is newer
        if stored is None or stored.fetched_at <= marked.fetched_at:
            await self._store.save(origin, marked)  # never over another process's newer record

    def drop(self, origin: Origin) -> bool:
        """Forget what this process holds of ``origin`` (``cache forget`` ran;
        ``forget_watch``): its next request loads the store, or fetches, again.
        True if it was held. A flight under way lands as usual."""
        self._ahead.pop(origin, None)
        self.streaking.discard(origin)
        return self._states.drop(origin)

    def store_failed(self, exc: Exception) -> None:
        """Say once that the store failed (the same one warning as a failed load)."""
        self._store.failed(exc)

    async def close(self) -> None:
        """Stop background retries and close the store."""
        self._closed = True
        self._flights.cancel_all()
        await self._store.close()

    # --- the policy, asked in one place -----------------------------------------------

    def _decision(self, state: OriginState, settled: bool = False) -> Decision:
        """The policy's answer for the state's record now.

        ``settled``: just loaded or fetched, so the requests are answered with
        the record as it is even if the policy wants it again. A decision is
        reused for a moment for the same record (a busy origin).
        """
        now = self._clock()
        recent = state.recent
        if recent is not None and recent[0] is state.record and 0 <= now - recent[2] < REUSE:
            decision = recent[1]
        else:
            decision = decide(state.record, now, self.policy)
            if not decision.refresh_due:
                state.recent = (state.record, decision, now)
        if settled and decision.action is Action.FETCH:
            return decide_settled(state.record, now, self.policy)
        return decision

    def _note_use(
        self, origin: Origin, state: OriginState, decision: Decision, how: str, via: object
    ) -> None:
        self._states.touch(origin)
        self._count(how)
        if decision.stale:
            self._count("stale_used")
        if state.record is not None and state.record.in_streak:
            if len(self.streaking) >= _MAX_STREAKING:
                self.streaking.clear()  # its next checked request puts it back
            self.streaking.add(origin)
            if decision.state is not None:
                self._count(f"unreachable/{STREAK_STATES[decision.state]}")
        if decision.refresh_due and not self._closed:
            # requests do not wait for a background retry; it goes their way
            self._flights.launch(
                origin, lambda: self._fly(origin, self._fetch_of(via), background=True)
            )

    def _fetch_of(self, via: object) -> Fetch:
        """The fetch on behalf of ``via``, told now, as its flight starts."""
        if via is None or self._fetch_for is None:
            return self._fetch
        return self._fetch_for(via)

    async def _settle(self, origin: Origin, state: OriginState, decision: Decision) -> Access:
        """A new Access for a new decision; tell ``on_access`` before answering."""
        try:
            access = decision.access(self._parse)
        except Exception as exc:  # the engine promises not to raise; be safe anyway
            logger.exception("Parsing the robots.txt of %s failed", origin)
            access = Access(AccessState.ALLOW_ALL, None, f"robots.txt unparsable ({exc!r})")
        state.key, state.access = decision_key(decision), access
        fetched, state.unannounced = state.unannounced, None
        if self._on_access is not None:
            try:
                await self._on_access(origin, access, fetched)
            except Exception:
                logger.exception("Handling the robots.txt of %s failed", origin)
        return access

    # --- a flight: load, fetch if needed, settle -----------------------------------

    async def _fly(self, origin: Origin, fetch_it: Fetch, background: bool = False) -> _Landed:
        """Load, then fetch (with ``fetch_it``, every attempt) if the policy
        says so; the state and how it went."""
        how = EXPIRED
        state = self._states.get(origin)
        try:
            if state is None:
                state = self._states.remember(origin, await self._store.load(origin))
            fetch = background
            if not background:
                fetch = self._decision(state).action is Action.FETCH
                how = HIT if not fetch else MISS if state.record is None else EXPIRED
            if fetch:
                await self._fetch_with_quick_retries(
                    origin, state, fetch_it, quick=not background
                )
            # Settle (and announce) before any waiter is answered.
            decision = self._decision(state, settled=True)
            if not state.holds(decision):
                await self._settle(origin, state, decision)
        except Exception:
            logger.exception("Resolving the robots.txt of %s failed", origin)
        if state is None:
            state = OriginState(None)
        self._states.keep(origin, state)  # evicted meanwhile? it is the newest now
        return state, how

    async def _fetch_with_quick_retries(
        self, origin: Origin, state: OriginState, fetch_it: Fetch, quick: bool
    ) -> None:
        """docs/spec.md §2.2: a first failure is retried soon while requests wait, a little."""
        since = self._clock()
        deadline = time.monotonic() + self.policy.unreachable_wait
        fetched: list[FetchOutcome] = []
        try:
            while True:
                record, outcome = await self._fetch_shared(origin, state, fetch_it)
                if outcome is not None:
                    fetched.append(outcome)
                if not quick or self._closed:
                    return
                now = self._clock()
                if self._decision(state).state is not AccessState.DISALLOW_ALL:
                    return
                retry_at = quick_retry_at(record, since, now, self.policy)
                if retry_at is None:
                    return
                delay = max(retry_at - now, 0.0)
                if time.monotonic() + delay > deadline:
                    return
                await self._sleep(delay)
        finally:
            if fetched:
                self._tell_fetched(origin, state, fetched)

    def _tell_fetched(
        self, origin: Origin, state: OriginState, fetched: list[FetchOutcome]
    ) -> None:
        """What the flight's fetches came to, once: not a 503 its retry then undid."""
        if self._on_fetched is None:
            return
        try:
            decision = decide_settled(state.record, self._clock(), self.policy)
            self._on_fetched(origin, fetched, decision.access(self._parse))
        except Exception:
            logger.exception("Handling the robots.txt of %s failed", origin)

    def _recorded(self, known: OriginRecord | None, outcome: FetchOutcome) -> OriginRecord:
        """``record_outcome``, which must not raise; if it does anyway, the
        answer still counts (issue 13 §1): without its headers, else as
        unreachable with the usual back-off. Never a store failure, never a
        fetch again at once."""
        now = self._clock()
        try:
            return record_outcome(known, outcome, now, self.policy, random=self._random)
        except Exception:
            logger.exception("Recording %s failed; its headers are ignored", outcome.url)
        try:
            plain = replace(outcome, cache_control=None, retry_after=None, headers={})
            return record_outcome(known, plain, now, self.policy, random=self._random)
        except Exception:
            logger.exception("Recording %s failed; it counts as unreachable", outcome.url)
        broken = FetchOutcome(
            FetchKind.UNREACHABLE, outcome.url, now, reason="an answer that could not be recorded"
        )
        return record_outcome(known, broken, now, self.policy, random=self._random)

    async def _fetch_shared(
        self, origin: Origin, state: OriginState, fetch_it: Fetch
    ) -> tuple[OriginRecord, FetchOutcome | None]:
        """One fetch across every process sharing the store: the record it gives,
        and the outcome if this process made the fetch."""
        known = state.record
        done: list[tuple[FetchOutcome, OriginRecord]] = []

        async def fetch() -> OriginRecord:
            outcome = await _fetch_safely(fetch_it, origin, self._clock)
            # On the record as it is now, not as it was when the fetch began: a
            # page may have answered meanwhile (``site_answered``), and that
            # mark is what opens the site 30 days into an outage.
            record = self._recorded(state.record, outcome)
            done.append((outcome, record))
            return record

        newer_than = known.fetched_at if known is not None else None
        record = await self._store.fetch_once(origin, fetch, newer_than)
        if record is None:  # the store failed: this process fetches on its own
            record = done[-1][1] if done else await fetch()
        if not done and decide(record, self._clock(), self.policy).action is Action.FETCH:
            # Another process fetched a body it could not share (no-store): fetch it here.
            record = await fetch()
            await self._store.save(origin, record)
        outcome = done[-1][0] if done and done[-1][1] is record else None
        state.adopt(record, outcome)
        return record, outcome


async def _fetch_safely(fetch: Fetch, origin: Origin, clock: Callable[[], float]) -> FetchOutcome:
    try:
        return await fetch(origin)
    except Exception as exc:  # the fetch should not raise; never strand waiters
        logger.exception("Fetching %s failed", robots_url(origin))
        return FetchOutcome(
            FetchKind.UNREACHABLE,
            robots_url(origin),
            clock(),
            reason=f"{type(exc).__name__}: {exc}",
        )


def _ignore(_: str) -> None:
    return None
