"""A first failure's quick retries (docs/spec.md §2.2): the requests that wait
get the retry's answer, never past ``unreachable_wait`` of real time whatever
the crawl's clock says; the crawl is told each fetch; a fetch that raises, a
failing handler of the answer or a broken step is logged and costs no request."""

from __future__ import annotations

import logging

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.crawler.access.resolver import Resolver
from scrapy_rep.engine.origin import Origin, robots_url

from .test_cache_resolver import DOWN, OK, T0, A, ManualClock, Server, resolver, settle


def waiting_resolver(
    server: Server, clock: ManualClock, waits: list[float], **kw: object
) -> Resolver:
    """A resolver whose sleeps move the clock (the crawl's and the real one alike)."""

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    return Resolver(
        server,  # type: ignore[arg-type]
        storage=MemoryStorage(clock=clock),
        policy=PolicyConfig(retry_jitter=0, unreachable_wait=10),
        clock=clock,
        monotonic=clock,
        sleep=sleep,
        random=lambda: 0.0,
        **kw,  # type: ignore[arg-type]
    )


@deferred_f_from_coro_f
async def test_requests_waiting_on_a_first_failure_get_the_quick_retrys_answer() -> None:
    clock = ManualClock()
    server = Server(clock, DOWN, OK)
    waits: list[float] = []
    access = await waiting_resolver(server, clock, waits).access(A)
    assert access.state is AccessState.RULES and not access.allowed("/private", "bot")
    assert len(server.calls) == 2 and waits and 0 < sum(waits) <= 10


@deferred_f_from_coro_f
async def test_quick_retries_stop_at_unreachable_wait_and_the_requests_are_dropped() -> None:
    clock = ManualClock()
    server = Server(clock, DOWN)
    waits: list[float] = []
    access = await waiting_resolver(server, clock, waits).access(A)
    assert access.state is AccessState.CLOSED
    assert len(server.calls) >= 2 and 0 < sum(waits) <= 10  # retried, within the wait


@deferred_f_from_coro_f
async def test_a_failing_handler_of_a_new_answer_is_logged_and_the_request_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    server = Server(clock, OK)

    async def on_access(origin: Origin, access: Access, fetched: FetchOutcome | None) -> None:
        raise RuntimeError("a signal handler broke")

    caplog.set_level(logging.ERROR, "scrapy_rep.crawler.access.resolver")
    access = await waiting_resolver(server, clock, [], on_access=on_access).access(A)
    assert access.state is AccessState.RULES
    assert [r.getMessage() for r in caplog.records] == [
        "Handling the robots.txt of http://a.example failed"
    ]


@deferred_f_from_coro_f
async def test_a_step_of_the_flight_that_breaks_is_logged_and_its_requests_still_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A wait between quick retries that fails (a bug, a reactor going away):
    the flight lands with what it knows, never strands its requests."""
    clock = ManualClock()
    server = Server(clock, DOWN, OK)

    async def broken_sleep(seconds: float) -> None:
        raise RuntimeError("the wait broke")

    rep = Resolver(
        server,  # type: ignore[arg-type]
        policy=PolicyConfig(retry_jitter=0, unreachable_wait=10),
        clock=clock,
        monotonic=clock,
        sleep=broken_sleep,
        random=lambda: 0.0,
    )
    caplog.set_level(logging.ERROR, "scrapy_rep.crawler.access.resolver")
    access = await rep.access(A)
    assert access.state is AccessState.CLOSED and len(server.calls) == 1  # the 503's answer
    assert [r.getMessage() for r in caplog.records] == [
        "Resolving the robots.txt of http://a.example failed"
    ]
    clock.now += 3  # the outage's first retry is due: the origin was not left stuck
    assert rep.current(A) is access
    await settle()
    assert not rep.pending(A) and len(server.calls) == 2
    assert (await rep.access(A)).state is AccessState.RULES


@deferred_f_from_coro_f
async def test_the_crawl_is_told_each_fetch_of_a_flight_with_the_answer_they_led_to() -> None:
    clock = ManualClock()
    server = Server(clock, DOWN, OK)
    told: list[tuple[Origin, list[int | None], AccessState]] = []

    def on_fetched(origin: Origin, outcomes: list[FetchOutcome], access: Access) -> None:
        told.append((origin, [outcome.status for outcome in outcomes], access.state))

    await waiting_resolver(server, clock, [], on_fetched=on_fetched).access(A)
    assert told == [(A, [503, 200], AccessState.RULES)]  # the 503, its quick retry


@deferred_f_from_coro_f
async def test_a_fetch_that_raises_is_logged_and_answers_as_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()

    async def broken(origin: Origin) -> FetchOutcome:
        raise OSError("no route")

    caplog.set_level(logging.ERROR, "scrapy_rep.crawler.access.resolver")
    access = await resolver(broken, clock, unreachable_wait=0).access(A)
    assert access.state is AccessState.CLOSED and "OSError: no route" in access.reason
    assert [r.getMessage() for r in caplog.records] == [
        "Fetching http://a.example/robots.txt failed"
    ]


@deferred_f_from_coro_f
async def test_quick_retries_end_on_real_time_whatever_the_crawls_clock_says() -> None:
    """A crawl clock that stands still (REP_CLOCK) while each fetch takes 4 s of
    real time (a timeout): the retries end once ``unreachable_wait`` seconds
    of real time have gone, and the requests are dropped."""
    clock = ManualClock()  # never moves
    real = ManualClock()
    waits: list[float] = []

    async def timing_out(origin: Origin) -> FetchOutcome:
        real.now += 4
        return FetchOutcome(FetchKind.UNREACHABLE, robots_url(origin), clock(), reason="timeout")

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        real.now += seconds
        if len(waits) > 100:
            raise RuntimeError("retried without end")

    rep = Resolver(
        timing_out,
        policy=PolicyConfig(retry_jitter=0, unreachable_wait=10),
        clock=clock,
        monotonic=real,
        sleep=sleep,
        random=lambda: 0.0,
    )
    assert (await rep.access(A)).state is AccessState.CLOSED
    assert real.now - T0 <= 10 + 4  # the last fetch started within the wait
