"""One flight per origin at a time (docs/spec.md §3.5, §8.3): a retry already
under way is not started again, the crawl is busy until it lands, and a stop
lets a waiting request go while the fetch goes on for the next one."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from twisted.internet.defer import Deferred

from scrapy_rep.cache.outcome import AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.storage.memory import MemoryStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.crawler.async_bridge import FetchStopped, StopSignal
from scrapy_rep.engine.origin import Origin, robots_url

from .test_cache_resolver import BODY, DOWN, OK, A, ManualClock, Server, resolver, settle


@deferred_f_from_coro_f
async def test_a_due_retry_asked_again_while_it_runs_fetches_once_and_keeps_the_crawl_busy() -> (
    None
):
    clock = ManualClock()
    server = Server(clock, DOWN)
    rep = resolver(server, clock, unreachable_wait=0)
    closed = await rep.access(A)
    assert closed.state is AccessState.CLOSED and not rep.busy
    idle: list[bool] = []
    rep.call_when_idle(lambda: idle.append(False))  # nothing under way: at once
    assert idle == [False]
    clock.now += 2.5  # the first retry is due 2 s after the 503
    server.gate = asyncio.Event()
    assert rep.current(A) is closed  # starts the retry in the background
    await settle()
    assert rep.busy and len(server.calls) == 2
    rep.call_when_idle(lambda: idle.append(True))
    rep.call_when_idle(lambda: idle.append(True))
    for _ in range(3):  # more requests while the retry runs: none starts another
        assert rep.current(A) is closed and rep.peek(A) is closed
    await settle()
    assert len(server.calls) == 2 and rep.busy and idle == [False]
    server.answers = [OK]
    server.gate.set()
    await settle()
    assert not rep.busy and idle == [False, True, True]  # each callback once the retry landed
    assert (await rep.access(A)).state is AccessState.RULES and len(server.calls) == 2


async def stopped_waiter(rep: Resolver) -> None:
    """A request waiting for A's fetch, let go by a stop; the fetch goes on."""
    stopping = False
    waiting = asyncio.ensure_future(rep.access(A, stop=StopSignal(lambda: stopping, poll=0.01)))
    await settle()
    assert rep.pending(A) and not waiting.done()
    stopping = True
    with pytest.raises(FetchStopped):
        await asyncio.wait_for(waiting, 10)
    assert rep.pending(A)  # the fetch was not cancelled with its request


@deferred_f_from_coro_f
async def test_a_request_waiting_for_robots_txt_is_let_go_at_a_stop_and_the_fetch_goes_on() -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = resolver(server, clock)
    await stopped_waiter(rep)
    later = asyncio.ensure_future(rep.access(A))  # joins the same fetch
    await settle()
    assert not later.done() and len(server.calls) == 1
    server.gate.set()
    assert (await asyncio.wait_for(later, 10)).state is AccessState.RULES
    assert (await rep.access(A)).state is AccessState.RULES and len(server.calls) == 1


@deferred_f_from_coro_f
async def test_closing_ends_the_fetch_under_way_and_its_waiting_request_rather_than_hang(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    server = Server(clock, OK)
    server.gate = asyncio.Event()
    rep = resolver(server, clock)
    await stopped_waiter(rep)
    waiting = asyncio.ensure_future(rep.access(A))
    await settle()
    assert rep.busy and not waiting.done()
    with caplog.at_level(logging.ERROR):
        await rep.close()
        await settle()
    assert not rep.busy  # nothing keeps the closed crawl open
    assert caplog.records == []  # the cancelled fetch is no error
    with pytest.raises(asyncio.CancelledError):  # not left waiting for a fetch that never ends
        await asyncio.wait_for(waiting, 10)
    assert rep.current(A) is None  # nothing was learnt


def test_without_an_asyncio_loop_closing_ends_a_prefetch_under_way() -> None:
    """Under a Twisted reactor other than asyncio's no asyncio loop runs: a
    flight is a Deferred, cancelled all the same when the crawl closes. (Run
    in a thread of its own: the test's thread has asyncio's loop running.)"""
    seen: list[object] = []

    def crawl_without_asyncio() -> None:
        clock = ManualClock()
        gate: Deferred[None] = Deferred()

        async def held(origin: Origin) -> FetchOutcome:
            await gate
            return FetchOutcome(FetchKind.SUCCESS, robots_url(origin), clock(), 200, BODY)

        rep = resolver(held, clock, unreachable_wait=0)
        rep.prefetch(A)
        seen.append(rep.busy)
        closing = Deferred.fromCoroutine(rep.close())
        seen.extend([closing.called, gate.called, rep.busy])

    thread = threading.Thread(target=crawl_without_asyncio)
    thread.start()
    thread.join(10)
    assert seen == [True, True, True, False]  # busy; closed, its fetch cancelled, not busy


def test_without_an_asyncio_loop_a_close_mid_fetch_records_nothing_and_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Twisted's cancellation is an ``Exception``, asyncio's is not: a close
    while robots.txt is fetched under a Twisted reactor was logged as an ERROR
    and taken for a failed fetch (unreachable). It ends the flight as
    asyncio's does: nothing logged, and nothing saved for the next crawl."""
    found: list[object] = []
    storage = MemoryStorage(clock=ManualClock())

    def crawl_without_asyncio() -> None:
        clock = ManualClock()
        gate: Deferred[None] = Deferred()

        async def held(origin: Origin) -> FetchOutcome:
            await gate
            return FetchOutcome(FetchKind.SUCCESS, robots_url(origin), clock(), 200, BODY)

        rep = resolver(held, clock, storage, unreachable_wait=0)
        rep.prefetch(A)
        Deferred.fromCoroutine(rep.close())
        Deferred.fromCoroutine(storage.get(str(A))).addCallback(found.append)

    with caplog.at_level(logging.WARNING):
        thread = threading.Thread(target=crawl_without_asyncio)
        thread.start()
        thread.join(10)
    assert found == [None]  # no record: not an outage for the next crawl
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
