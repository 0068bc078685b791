"""The one place that answers "what Access applies to this origin now?".

Per origin: the record from storage, ``policy.decide(record, now)``, and a
fetch when the policy asks for one. Data flows one way: storage -> policy ->
access; what a fetch brings goes back through ``policy.record_outcome`` into
storage.

Single flight (SPEC §3.5, §8.3): the first request for an origin that needs
a load or a fetch starts one flight, independent of that request (cancelling
the request does not cancel the fetch); every request that arrives meanwhile
gets its own waiter. Across processes, the storage's lock makes one process
fetch while the others poll the store for its record (``single_flight``).
No request passes before its origin has an answer.

Outages (SPEC §2.2): during an origin's first failing fetch the waiting
requests stay for quick retries, at most ``unreachable_wait``; later in the
streak the policy's answer applies at once and retries run in the background
on the policy's schedule. A crawl never hangs on a dead origin.

No Scrapy here: the fetch, the clock and the store are injected.
"""

from __future__ import annotations

import asyncio
import logging
import random as _random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from twisted.internet.defer import Deferred

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    Action,
    Decision,
    OriginRecord,
    PolicyConfig,
    decide,
    note_site_answer,
    quick_retry_at,
    record_outcome,
    retention,
)
from scrapy_rep.cache.storage import MemoryStorage, ParsedBodies, Storage, single_flight
from scrapy_rep.engine.origin import Origin, robots_url

__all__ = [
    "Count",
    "Fetch",
    "OnAccess",
    "OnFetched",
    "Resolver",
    "access_for",
    "shared_parser",
]

logger = logging.getLogger(__name__)

Fetch = Callable[[Origin], Awaitable[FetchOutcome]]
#: After each fetch this process makes, with the Access it leads to (logs).
OnFetched = Callable[[Origin, FetchOutcome, Access], None]
#: When an origin's Access is set or changes in this process, before the
#: requests that asked are answered; ``fetched`` is the fetch behind it, if
#: this process just made one (signals, stats).
OnAccess = Callable[[Origin, Access, "FetchOutcome | None"], Awaitable[None]]
#: Counts an event: "hit", "miss", "expired", "stale_used", "unreachable/<state>".
Count = Callable[[str], None]
Sleep = Callable[[float], Awaitable[object]]

T = TypeVar("T")

#: How a request's answer was found (the robotstxt/cache/<how> stats).
HIT: Final = "hit"
MISS: Final = "miss"
EXPIRED: Final = "expired"
#: robotstxt/unreachable/<state>, per request answered during a streak.
STREAK_STATES: Final = {
    AccessState.DISALLOW_ALL: "disallow",
    AccessState.RULES: "cached_copy",
    AccessState.ALLOW_ALL: "allow",
}

_PARSERS: dict[bool, ParsedBodies] = {}


def shared_parser(google_quirks: bool = False) -> ParsedBodies:
    """The process-wide parse cache: one ``RobotsTxt`` per distinct body.

    Shared by every origin, spider and crawler of the process, so a body that
    many origins serve is parsed once.
    """
    parser = _PARSERS.get(google_quirks)
    if parser is None:
        parser = _PARSERS[google_quirks] = ParsedBodies(google_quirks=google_quirks)
    return parser


def access_for(outcome: FetchOutcome, google_quirks: bool = False) -> Access:
    """RFC 9309 §2.3.1 without history: success -> rules, unavailable -> allow,
    unreachable -> disallow."""
    if outcome.kind is FetchKind.SUCCESS:
        robots = shared_parser(google_quirks)(outcome.body)
        return Access(AccessState.RULES, robots, f"robots.txt {outcome.reason}".strip())
    if outcome.kind is FetchKind.UNAVAILABLE:
        return Access(AccessState.ALLOW_ALL, None, f"robots.txt unavailable ({outcome.reason})")
    return Access(AccessState.DISALLOW_ALL, None, f"robots.txt unreachable ({outcome.reason})")


_Key = tuple[AccessState | None, bytes | None, str]


#: Seconds a policy decision is reused for the same record: the policy's
#: windows are hours long, and a busy origin sees many requests a second.
_REUSE = 1.0


@dataclass(eq=False)
class _State:
    """What this process knows of one origin."""

    record: OriginRecord | None
    key: _Key | None = None  # the decision ``access`` was made for
    access: Access | None = None
    #: The last fetch this process made (or saw), and the record it led to:
    #: the answer replayed to a spider asking for robots.txt itself.
    outcome: FetchOutcome | None = None
    outcome_record: OriginRecord | None = None
    #: A fetch not yet handed to ``on_access``.
    unannounced: FetchOutcome | None = None
    #: (record, decision, when): the policy's last answer for this very record,
    #: reused for a moment so that a busy origin does not re-decide per request.
    recent: tuple[OriginRecord | None, Decision, float] | None = None

    def holds(self, decision: Decision) -> bool:
        return self.access is not None and self.key == _key(decision)


def _key(decision: Decision) -> _Key:
    return (decision.state, decision.body, decision.reason)


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
        lock_ttl: float = 600.0,
        poll: float = 0.05,
        max_origins: int = 10_000,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self._fetch = fetch
        self.storage: Storage = storage if storage is not None else MemoryStorage(clock=clock)
        self.policy = policy if policy is not None else PolicyConfig()
        self._parse = shared_parser(google_quirks)
        self._clock = clock
        self._on_access = on_access
        self._on_fetched = on_fetched
        self._count = count or _ignore
        self._sleep = sleep or _sleep
        self._lock_ttl = lock_ttl
        self._poll = poll
        self._max_origins = max_origins
        self._random = random
        self._states: OrderedDict[Origin, _State] = OrderedDict()
        self._flights: dict[Origin, list[Deferred[str]]] = {}
        self._tasks: set[asyncio.Task[None] | Deferred[None]] = set()
        self._idle_callbacks: list[Callable[[], object]] = []
        self._storage_warned = False
        self._closed = False

    # --- answers ---------------------------------------------------------------

    def current(self, origin: Origin) -> Access | None:
        """The answer if it is known and still applies; never waits.

        May start a background retry (a streak) and counts the lookup, like
        ``access``; None means "call ``access``".
        """
        state = self._states.get(origin)
        if state is None:
            return None
        now = self._clock()
        recent = state.recent
        if recent is not None and recent[0] is state.record and 0 <= now - recent[2] < _REUSE:
            decision = recent[1]
        else:
            decision = decide(state.record, now, self.policy)
            if not decision.refresh_due:
                state.recent = (state.record, decision, now)
        if decision.action is Action.FETCH or not state.holds(decision):
            return None
        self._note_use(origin, state, decision, HIT)
        return state.access

    async def access(self, origin: Origin) -> Access:
        """The access for ``origin``, loading or fetching its robots.txt if needed."""
        state = self._states.get(origin)
        how = HIT
        decision = decide(state.record, self._clock(), self.policy) if state else None
        if state is None or decision is None or decision.action is Action.FETCH:
            state, how = await self._join(origin)
            decision = decide(state.record, self._clock(), self.policy)
            if decision.action is Action.FETCH:
                decision = _as_fetched(state)  # e.g. a TTL of 0: use what just came
        self._note_use(origin, state, decision, how)
        if state.holds(decision):
            assert state.access is not None
            return state.access
        return await self._settle(origin, state, decision)

    def pending(self, origin: Origin) -> bool:
        """A load or fetch is under way for ``origin``."""
        return origin in self._flights

    @property
    def busy(self) -> bool:
        """Some load, fetch or background retry is under way."""
        return bool(self._flights)

    def call_when_idle(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once no flight is under way (at once if none is)."""
        if not self._flights:
            callback()
        elif callback not in self._idle_callbacks:
            self._idle_callbacks.append(callback)

    def record(self, origin: Origin) -> OriginRecord | None:
        state = self._states.get(origin)
        return state.record if state is not None else None

    def last_answer(self, origin: Origin) -> FetchOutcome | None:
        """The robots.txt answer behind the current record, to replay to a spider.

        None when the origin is unreachable (or unknown, or its body was not
        kept): the spider's own request should then go to the network.
        """
        state = self._states.get(origin)
        record = state.record if state is not None else None
        if state is None or record is None or record.kind is FetchKind.UNREACHABLE:
            return None
        if state.outcome is not None and state.outcome_record is record:
            return state.outcome
        if record.kind is FetchKind.SUCCESS and record.good_body is None:
            return None
        # Fetched by another process or an earlier run: status and body are kept,
        # the headers are not.
        return FetchOutcome(
            record.kind,
            robots_url(origin),
            record.fetched_at,
            status=record.status,
            body=record.good_body or b"",
            reason=record.reason,
            headers={"content-type": ["text/plain"]},
        )

    # --- what else the crawl tells us -----------------------------------------------

    async def seed(self, origin: Origin, outcome: FetchOutcome) -> bool:
        """Take a robots.txt response someone else downloaded (a spider's own request).

        Ignored while a fetch is under way or when the record is as new.
        """
        if origin in self._flights or self._closed:
            return False
        state = self._states.get(origin)
        known = state.record if state is not None else await self._load(origin)
        now = self._clock()
        if known is not None and known.fetched_at >= now:
            return False
        record = record_outcome(known, outcome, now, self.policy, random=self._random)
        await self._put(origin, record)
        self._adopt(origin, record, outcome)
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
        stored = await self._load(origin)
        if stored is None or stored.fetched_at <= marked.fetched_at:
            await self._put(origin, marked)  # never over a newer record of another process

    async def close(self) -> None:
        """Stop background retries and close the store."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        try:
            await self.storage.close()
        except Exception:
            logger.exception("Closing the robots.txt cache failed")

    # --- the steps -------------------------------------------------------------------

    def _note_use(self, origin: Origin, state: _State, decision: Decision, how: str) -> None:
        self._states.move_to_end(origin)
        self._count(how)
        if decision.stale:
            self._count("stale_used")
        if state.record is not None and state.record.in_streak and decision.state is not None:
            self._count(f"unreachable/{STREAK_STATES[decision.state]}")
        if decision.refresh_due and origin not in self._flights and not self._closed:
            self._flights[origin] = []  # requests do not wait for a background retry
            self._start(self._fly(origin, background=True))

    async def _settle(self, origin: Origin, state: _State, decision: Decision) -> Access:
        """A new Access for a new decision; tell ``on_access`` before answering."""
        try:
            access = decision.access(self._parse)
        except Exception as exc:  # the engine promises not to raise; be safe anyway
            logger.exception("Parsing the robots.txt of %s failed", origin)
            access = Access(AccessState.ALLOW_ALL, None, f"robots.txt unparsable ({exc!r})")
        state.key, state.access = _key(decision), access
        fetched, state.unannounced = state.unannounced, None
        if self._on_access is not None:
            try:
                await self._on_access(origin, access, fetched)
            except Exception:
                logger.exception("Handling the robots.txt of %s failed", origin)
        return access

    async def _join(self, origin: Origin) -> tuple[_State, str]:
        waiter: Deferred[str] = Deferred()
        waiters = self._flights.get(origin)
        if waiters is not None:
            waiters.append(waiter)
        else:
            # Register before starting: a flight may finish synchronously.
            self._flights[origin] = [waiter]
            self._start(self._fly(origin, background=False))
        how = await _wait(waiter)
        state = self._states.get(origin)
        if state is None:  # evicted meanwhile (a crawl of very many origins)
            state = self._remember(origin, None)
        return state, how

    async def _fly(self, origin: Origin, *, background: bool) -> None:
        """Load, then fetch if the policy says so; wake the waiters with how it went."""
        how = EXPIRED
        try:
            state = self._states.get(origin)
            if state is None:
                state = self._remember(origin, await self._load(origin))
            fetch = True
            if not background:
                decision = decide(state.record, self._clock(), self.policy)
                fetch = decision.action is Action.FETCH
                how = HIT if not fetch else MISS if state.record is None else EXPIRED
            if fetch:
                await self._fetch_with_quick_retries(origin, state, quick=not background)
            # Settle (and announce) before any waiter is answered.
            decision = decide(state.record, self._clock(), self.policy)
            if decision.action is Action.FETCH:
                decision = _as_fetched(state)
            if not state.holds(decision):
                await self._settle(origin, state, decision)
        except Exception:
            logger.exception("Resolving the robots.txt of %s failed", origin)
        finally:
            for waiter in self._flights.pop(origin, []):
                if not waiter.called:  # a cancelled waiter has been called already
                    waiter.callback(how)
            if not self._flights:
                callbacks, self._idle_callbacks = self._idle_callbacks, []
                for callback in callbacks:
                    callback()

    async def _fetch_with_quick_retries(self, origin: Origin, state: _State, quick: bool) -> None:
        """SPEC §2.2: a first failure is retried soon while requests wait, a little."""
        since = self._clock()
        deadline = time.monotonic() + self.policy.unreachable_wait
        while True:
            record = await self._fetch_shared(origin, state)
            if not quick or self._closed:
                return
            now = self._clock()
            if decide(record, now, self.policy).state is not AccessState.DISALLOW_ALL:
                return
            retry_at = quick_retry_at(record, since, now, self.policy)
            if retry_at is None:
                return
            delay = max(retry_at - now, 0.0)
            if time.monotonic() + delay > deadline:
                return
            await self._sleep(delay)

    async def _fetch_shared(self, origin: Origin, state: _State) -> OriginRecord:
        """One fetch across every process sharing the store; the record it gives."""
        known = state.record
        done: list[tuple[FetchOutcome, OriginRecord]] = []

        async def fetch() -> OriginRecord:
            outcome = await self._fetch_outcome(origin)
            record = record_outcome(known, outcome, self._clock(), self.policy, random=self._random)
            done.append((outcome, record))
            return record

        try:
            record = await single_flight(
                self.storage,
                str(origin),
                fetch,
                lambda found: retention(found, self._clock(), self.policy),
                newer_than=known.fetched_at if known is not None else None,
                lock_ttl=self._lock_ttl,
                poll=self._poll,
                sleep=_growing(self._sleep, self._poll),
            )
        except Exception as exc:
            self._storage_failed(exc)
            record = done[-1][1] if done else await fetch()
        if not done and decide(record, self._clock(), self.policy).action is Action.FETCH:
            # Another process fetched a body it could not share (no-store): fetch it here.
            record = await fetch()
            await self._put(origin, record)
        outcome = done[-1][0] if done and done[-1][1] is record else None
        self._adopt(origin, record, outcome)
        if outcome is not None and self._on_fetched is not None:
            try:
                decision = decide(record, self._clock(), self.policy)
                self._on_fetched(origin, outcome, decision.access(self._parse))
            except Exception:
                logger.exception("Handling the robots.txt of %s failed", origin)
        return record

    async def _fetch_outcome(self, origin: Origin) -> FetchOutcome:
        try:
            return await self._fetch(origin)
        except Exception as exc:  # the fetch should not raise; never strand waiters
            logger.exception("Fetching %s failed", robots_url(origin))
            return FetchOutcome(
                FetchKind.UNREACHABLE,
                robots_url(origin),
                self._clock(),
                reason=f"{type(exc).__name__}: {exc}",
            )

    def _adopt(self, origin: Origin, record: OriginRecord, outcome: FetchOutcome | None) -> None:
        """A new record for ``origin``: the next request settles (and announces) again."""
        state = self._remember(origin, record)
        state.key = state.access = None
        if outcome is not None:
            state.outcome, state.outcome_record = outcome, record
            state.unannounced = outcome

    def _remember(self, origin: Origin, record: OriginRecord | None) -> _State:
        state = self._states.get(origin)
        if state is not None:
            state.record = record
            return state
        state = self._states[origin] = _State(record)
        while len(self._states) > self._max_origins:
            oldest = next(iter(self._states))
            if oldest in self._flights:
                self._states.move_to_end(oldest)
                break
            del self._states[oldest]
        return state

    # --- storage, never fatal ------------------------------------------------------

    async def _load(self, origin: Origin) -> OriginRecord | None:
        try:
            return await self.storage.get(str(origin))
        except Exception as exc:
            self._storage_failed(exc)
            return None

    async def _put(self, origin: Origin, record: OriginRecord) -> None:
        try:
            await self.storage.put(
                str(origin), record, retention(record, self._clock(), self.policy)
            )
        except Exception as exc:
            self._storage_failed(exc)

    def _storage_failed(self, exc: Exception) -> None:
        """A store error costs sharing and persistence, never a request: say so once."""
        if not self._storage_warned:
            self._storage_warned = True
            logger.warning(
                "The robots.txt cache failed (%r); going on with what this process knows",
                exc,
                exc_info=exc,
            )

    def _start(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` on its own (asyncio if a loop runs, else Twisted); keep it to cancel."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            deferred = Deferred.fromCoroutine(coro)
            if not deferred.called:
                self._tasks.add(deferred)
                deferred.addBoth(lambda _: self._tasks.discard(deferred))
            return
        task = loop.create_task(coro)
        self._tasks.add(task)  # a reference until done, as asyncio asks
        task.add_done_callback(self._tasks.discard)


def _as_fetched(state: _State) -> Decision:
    """A decision from the record as it is, for when the policy already wants it again."""
    record = state.record
    if record is None:
        return Decision(Action.USE, AccessState.DISALLOW_ALL, reason="robots.txt not resolved")
    if record.kind is FetchKind.SUCCESS and record.good_body is not None:
        return Decision(Action.USE, AccessState.RULES, record.good_body, "robots.txt rules")
    if record.kind is FetchKind.UNREACHABLE:
        reason = f"robots.txt unreachable ({record.reason})"
        return Decision(Action.USE, AccessState.DISALLOW_ALL, reason=reason)
    reason = f"robots.txt unavailable ({record.reason}): full allow"
    return Decision(Action.USE, AccessState.ALLOW_ALL, reason=reason)


def _growing(sleep: Sleep, first: float) -> Sleep:
    """Poll the store often at first, then less (up to 1 s) while another process fetches."""
    delay = first

    async def wait(_: float) -> object:
        nonlocal delay
        current, delay = delay, min(delay * 1.5, 1.0)
        return await sleep(current)

    return wait


def _ignore(_: str) -> None:
    return None


async def _sleep(seconds: float) -> None:
    """Sleep on asyncio if a loop runs, else on the Twisted reactor."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        from twisted.internet import reactor
        from twisted.internet.task import deferLater

        await deferLater(reactor, seconds)
        return
    await asyncio.sleep(seconds)


def _wait(waiter: Deferred[T]) -> Awaitable[T]:
    """A Deferred made awaitable from asyncio coroutines as well as Twisted ones."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return waiter
    return waiter.asFuture(loop)
