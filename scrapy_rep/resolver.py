"""The one place that answers "what Access applies to this origin now?".

Single flight (SPEC §3.5, §8.3): the first request for an origin starts one
fetch, independent of that request (so cancelling the request does not
cancel the fetch); every request that arrives meanwhile gets its own waiter,
and each is woken with the result. No request passes before its origin has an
answer.

For now the answer is kept in memory for the crawl; the cache issue replaces
``_known`` with a store and ``access_for`` with the time-based policy. The
fetch is injected, so this module needs neither Scrapy nor a network.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from twisted.internet.defer import Deferred

from scrapy_rep.document import RobotsTxt
from scrapy_rep.origin import Origin, robots_url
from scrapy_rep.outcome import Access, AccessState, FetchKind, FetchOutcome

__all__ = ["Fetch", "OnResolved", "Resolver", "access_for"]

logger = logging.getLogger(__name__)

Fetch = Callable[[Origin], Awaitable[FetchOutcome]]
#: Called once per fetch, before the waiters wake (signals, stats, logs).
OnResolved = Callable[[Origin, FetchOutcome, Access], Awaitable[None]]

T = TypeVar("T")


def access_for(outcome: FetchOutcome, google_quirks: bool = False) -> Access:
    """RFC 9309 §2.3.1 without history: success -> rules, unavailable -> allow,
    unreachable -> disallow."""
    if outcome.kind is FetchKind.SUCCESS:
        robots = RobotsTxt.parse(outcome.body, google_quirks=google_quirks)
        return Access(AccessState.RULES, robots, f"robots.txt {outcome.reason}".strip())
    if outcome.kind is FetchKind.UNAVAILABLE:
        return Access(AccessState.ALLOW_ALL, None, f"robots.txt unavailable ({outcome.reason})")
    return Access(AccessState.DISALLOW_ALL, None, f"robots.txt unreachable ({outcome.reason})")


class Resolver:
    """Per-origin access with one fetch at a time per origin."""

    def __init__(
        self,
        fetch: Fetch,
        *,
        google_quirks: bool = False,
        on_resolved: OnResolved | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self._fetch = fetch
        self._google_quirks = google_quirks
        self._on_resolved = on_resolved
        self._clock = clock
        self._known: dict[Origin, Access] = {}
        self._waiters: dict[Origin, list[Deferred[Access]]] = {}

    def peek(self, origin: Origin) -> Access | None:
        """The answer if it is known already; never starts a fetch."""
        return self._known.get(origin)

    def pending(self, origin: Origin) -> bool:
        return origin in self._waiters

    async def access(self, origin: Origin) -> Access:
        """The access for ``origin``, fetching its robots.txt if nobody has yet."""
        known = self._known.get(origin)
        if known is not None:
            return known
        waiter: Deferred[Access] = Deferred()
        waiters = self._waiters.get(origin)
        if waiters is not None:
            waiters.append(waiter)
        else:
            # Register before starting: a fetch may finish synchronously.
            self._waiters[origin] = [waiter]
            _start(self._resolve(origin))
        return await _wait(waiter)

    async def _resolve(self, origin: Origin) -> None:
        try:
            outcome = await self._fetch(origin)
        except Exception as exc:  # the fetch should not raise; never strand waiters
            logger.exception("Fetching %s failed", robots_url(origin))
            outcome = FetchOutcome(
                FetchKind.UNREACHABLE,
                robots_url(origin),
                self._clock() if self._clock else 0.0,
                reason=f"{type(exc).__name__}: {exc}",
            )
        try:
            access = access_for(outcome, self._google_quirks)
        except Exception as exc:  # the engine promises not to raise; be safe anyway
            logger.exception("Parsing %s failed", robots_url(origin))
            access = Access(AccessState.ALLOW_ALL, None, f"robots.txt unparsable ({exc!r})")
        if self._on_resolved is not None:
            try:
                await self._on_resolved(origin, outcome, access)
            except Exception:
                logger.exception("Handling the robots.txt of %s failed", origin)
        self._known[origin] = access
        for waiter in self._waiters.pop(origin, []):
            if not waiter.called:  # a cancelled waiter has been called already
                waiter.callback(access)


def _start(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` on its own, on asyncio if a loop runs, else on Twisted."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        Deferred.fromCoroutine(coro)
        return
    task = loop.create_task(coro)
    _TASKS.add(task)  # keep a reference until done, as asyncio asks
    task.add_done_callback(_TASKS.discard)


_TASKS: set[asyncio.Task[None]] = set()


def _wait(waiter: Deferred[T]) -> Awaitable[T]:
    """A Deferred made awaitable from asyncio coroutines as well as Twisted ones."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return waiter
    return waiter.asFuture(loop)
