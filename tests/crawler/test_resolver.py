"""Resolver: single flight and the three RFC 9309 states, without Scrapy or a network."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.defer import Deferred

from scrapy_rep.cache.lifecycle import Event, OriginLifecycle
from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import PolicyConfig, decide_settled, record_outcome
from scrapy_rep.crawler.access.resolver import Resolver, shared_parsed_bodies
from scrapy_rep.engine.origin import Origin, robots_url

ORIGIN = Origin("http", "example.com", None)


def outcome(kind: FetchKind, body: bytes = b"", reason: str = "") -> FetchOutcome:
    return FetchOutcome(kind, robots_url(ORIGIN), 0.0, body=body, reason=reason)


class GatedFetch:
    """A fetch that finishes only when the test says so, and counts its calls."""

    def __init__(self, result: FetchOutcome) -> None:
        self.result = result
        self.calls: list[Origin] = []
        self.gate: asyncio.Future[None] | None = None

    async def __call__(self, origin: Origin) -> FetchOutcome:
        self.calls.append(origin)
        self.gate = asyncio.get_running_loop().create_future()
        await self.gate
        return self.result

    async def started(self) -> None:
        for _ in range(100):
            if self.gate is not None:
                return
            await asyncio.sleep(0)
        raise AssertionError("the fetch never started")

    def release(self) -> None:
        assert self.gate is not None
        self.gate.set_result(None)


def access_for(outcome: FetchOutcome, google_quirks: bool = False) -> Access:
    """The access a first fetch gives, through the policy as the resolver asks it."""
    config = PolicyConfig()
    record = record_outcome(None, outcome, 0.0, config)
    return decide_settled(record, 0.0, config).access(shared_parsed_bodies(google_quirks))


def test_rfc9309_success_means_rules_decide() -> None:
    access = access_for(outcome(FetchKind.SUCCESS, b"User-agent: *\nDisallow: /x\n", "HTTP 200"))
    assert access.state is AccessState.RULES
    assert access.allowed("/y", "bot") and not access.allowed("/x", "bot")


def test_rfc9309_unavailable_means_full_allow() -> None:
    access = access_for(outcome(FetchKind.UNAVAILABLE, reason="HTTP 404"))
    assert access.state is AccessState.ALLOW_ALL
    assert access.allowed("/anything", "bot")


def test_rfc9309_unreachable_means_full_disallow() -> None:
    access = access_for(outcome(FetchKind.UNREACHABLE, reason="HTTP 503"))
    assert access.state is AccessState.CLOSED
    assert access.reason == (
        "robots.txt unreachable (HTTP 503) since 1970-01-01T00:00:00Z; closed: every request to "
        "it is dropped until 1970-01-01T12:00:00Z (the first 12 h of an outage), or until "
        "robots.txt answers"
    )
    assert not access.allowed("/", "bot")


def test_google_quirks_reach_the_parser() -> None:
    body = b"user-agent: *\ndisalow: /x\n"  # misspelt: only Google's library reads it
    assert access_for(outcome(FetchKind.SUCCESS, body)).allowed("/x", "bot")
    assert not access_for(outcome(FetchKind.SUCCESS, body), google_quirks=True).allowed("/x", "b")


@deferred_f_from_coro_f
async def test_spec_3_5_concurrent_waiters_share_one_fetch() -> None:
    fetch = GatedFetch(outcome(FetchKind.SUCCESS, b"User-agent: *\nDisallow: /\n"))
    resolved: list[tuple[Origin, Access]] = []

    async def on_access(origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        assert fetched is not None  # announced with the fetch behind it
        resolved.append((origin, access))

    resolver = Resolver(fetch, on_access=on_access)
    waiters = [asyncio.ensure_future(resolver.access(ORIGIN)) for _ in range(25)]
    await fetch.started()
    assert resolver.pending(ORIGIN) and resolver.current(ORIGIN) is None
    assert not any(w.done() for w in waiters)  # docs/spec.md §8.3: nobody passes early
    fetch.release()
    accesses = await asyncio.gather(*waiters)
    assert len(fetch.calls) == 1
    assert len(resolved) == 1
    assert all(a.state is AccessState.RULES and not a.allowed("/p", "bot") for a in accesses)
    assert resolver.current(ORIGIN) is accesses[0]
    assert await resolver.access(ORIGIN) is accesses[0]  # known: no second fetch
    assert len(fetch.calls) == 1


@deferred_f_from_coro_f
async def test_spec_8_3_cancelled_waiter_does_not_strand_others() -> None:
    fetch = GatedFetch(outcome(FetchKind.UNAVAILABLE, reason="HTTP 404"))
    resolver = Resolver(fetch)
    first = asyncio.ensure_future(resolver.access(ORIGIN))
    second = asyncio.ensure_future(resolver.access(ORIGIN))
    await fetch.started()
    first.cancel()  # e.g. the request that started the fetch went away
    await asyncio.sleep(0)
    fetch.release()
    assert (await second).state is AccessState.ALLOW_ALL
    assert first.cancelled()


@deferred_f_from_coro_f
async def test_fetch_that_raises_closes_the_origin() -> None:
    async def broken(origin: Origin) -> FetchOutcome:
        raise RuntimeError("boom")

    access = await Resolver(broken).access(ORIGIN)
    assert access.state is AccessState.CLOSED
    assert "boom" in access.reason


@deferred_f_from_coro_f
async def test_synchronous_fetch_wakes_its_own_caller() -> None:
    async def instant(origin: Origin) -> FetchOutcome:
        return outcome(FetchKind.UNAVAILABLE, reason="HTTP 410")

    access = await Resolver(instant).access(ORIGIN)
    assert access.state is AccessState.ALLOW_ALL


@deferred_f_from_coro_f
async def test_origins_are_resolved_independently() -> None:
    other = Origin("https", "example.com", None)
    slow = GatedFetch(outcome(FetchKind.SUCCESS))
    calls: list[Origin] = []

    async def fetch(origin: Origin) -> FetchOutcome:
        calls.append(origin)
        if origin == ORIGIN:
            return await slow(origin)
        return FetchOutcome(FetchKind.UNAVAILABLE, robots_url(origin), 0.0, reason="HTTP 404")

    resolver = Resolver(fetch)
    hanging = asyncio.ensure_future(resolver.access(ORIGIN))
    await slow.started()
    assert (await resolver.access(other)).state is AccessState.ALLOW_ALL  # not delayed
    assert not hanging.done()
    slow.release()
    assert (await hanging).state is AccessState.RULES
    assert calls == [ORIGIN, other]


def test_deferred_waiters_without_asyncio_loop() -> None:
    """Under a non-asyncio reactor the waiter is a plain Deferred.

    Run in a thread: there, as under a non-asyncio reactor, no asyncio loop runs.
    """
    failures: list[BaseException] = []

    def run() -> None:
        try:
            deferred_waiters_without_asyncio_loop()
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert not failures, failures


def deferred_waiters_without_asyncio_loop() -> None:
    results: list[Access] = []
    gate: Deferred[FetchOutcome] = Deferred()

    async def fetch(origin: Origin) -> FetchOutcome:
        return await gate

    resolver = Resolver(fetch)
    Deferred.fromCoroutine(resolver.access(ORIGIN)).addCallback(results.append)
    Deferred.fromCoroutine(resolver.access(ORIGIN)).addCallback(results.append)
    assert results == []
    gate.callback(outcome(FetchKind.UNAVAILABLE, reason="HTTP 404"))
    assert [a.state for a in results] == [AccessState.ALLOW_ALL] * 2


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call into an origin's lifecycle, by event name, from now on."""
    calls: list[str] = []
    for name in ("known", *(event.value for event in Event)):
        original: Callable[..., Any] = getattr(OriginLifecycle, name)

        @functools.wraps(original)
        def counted(*args: Any, _name: str = name, _original: Any = original, **kw: Any) -> Any:
            calls.append(_name)
            return _original(*args, **kw)

        monkeypatch.setattr(OriginLifecycle, name, counted)
    return calls


@deferred_f_from_coro_f
async def test_scrapy_each_event_is_told_to_the_lifecycle_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A request as the middleware makes it (``current``, then ``access`` if
    that has no answer): a cold origin's first costs the load and the fetch,
    one call each; a warm origin's, one question (issue 25 item 2)."""
    now = [1_700_000_000.0]

    async def fetch(origin: Origin) -> FetchOutcome:
        return outcome(FetchKind.SUCCESS, b"User-agent: *\nDisallow: /x\n", "HTTP 200")

    async def on_access(origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        return None

    resolver = Resolver(
        fetch, clock=lambda: now[0], on_access=on_access, on_fetched=lambda o, f, a: None
    )

    async def request() -> Access:
        return resolver.current(ORIGIN) or await resolver.access(ORIGIN)

    calls = counting(monkeypatch)
    await request()
    assert calls == ["loaded", "fetched"]
    for step in (0.0, 2.0):
        now[0] += step
        calls.clear()
        assert not (await request()).allowed("/x", "bot")
        assert calls == ["known"]
