"""The SQLite store's calls (issue 28): in order, on the loop while none would
block, else in the thread, answered in batches."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.cache.storage.sqlite.worker import Worker, WouldBlock


@deferred_f_from_coro_f
async def test_calls_run_in_order_in_the_thread_and_errors_reach_the_caller() -> None:
    seen: list[tuple[int, str]] = []

    def note(n: int) -> int:
        seen.append((n, threading.current_thread().name))
        if n == 3:
            raise KeyError(n)
        return n * 10

    async def main() -> list[Any]:
        worker = Worker("test-worker")
        try:
            calls = [worker.call(note, n, here=False) for n in range(6)]
            return await asyncio.gather(*calls, return_exceptions=True)
        finally:
            worker.stop()

    answers = await main()
    assert answers[:3] == [0, 10, 20] and answers[4:] == [40, 50]
    assert isinstance(answers[3], KeyError)
    assert seen == [(n, "test-worker") for n in range(6)]


@deferred_f_from_coro_f
async def test_calls_queued_together_wake_the_loop_once() -> None:
    """What an executor does not: fifty calls queued while the thread is busy
    are answered in one wake-up of the loop, not fifty."""
    busy = threading.Event()

    async def main() -> tuple[list[int], int]:
        loop = asyncio.get_running_loop()
        wakeups = 0
        original = loop.call_soon_threadsafe

        def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal wakeups
            wakeups += 1
            return original(*args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        worker = Worker("test-worker")
        try:
            first = worker.call(busy.wait, 10, here=False)
            rest = [worker.call(int, n, here=False) for n in range(50)]
            busy.set()
            await first
            return list(await asyncio.gather(*rest)), wakeups
        finally:
            worker.stop()
            del loop.call_soon_threadsafe  # the loop's own method again

    answers, wakeups = await main()
    assert answers == list(range(50))
    assert wakeups <= 2  # the busy call's own batch, then the fifty


@deferred_f_from_coro_f
async def test_stop_runs_what_is_queued_then_refuses_new_calls() -> None:
    async def main() -> list[int]:
        worker = Worker("test-worker")
        queued = [worker.call(int, 7, here=False), worker.call(int, 8)]  # not sent yet
        worker.stop()
        with pytest.raises(RuntimeError, match="stopped"):
            worker.call(int, 9)
        answers = list(await asyncio.gather(*queued))
        worker._thread.join(5)
        assert not worker._thread.is_alive()
        return answers

    assert await main() == [7, 8]


@deferred_f_from_coro_f
async def test_a_call_with_none_ahead_of_it_is_answered_before_call_returns() -> None:
    """Its caller goes on in the same turn of the loop (issue 28: held over,
    every caller's objects lived into the collector's oldest generation)."""

    async def main() -> tuple[bool, bool, bool]:
        worker = Worker("test-worker")
        try:
            first = worker.call(int, 1)
            blocked = worker.call(threading.Event().wait, 0.2, here=False)
            behind = worker.call(int, 2)  # waits for the call in the thread
            done = (first.done(), blocked.done(), behind.done())
            await asyncio.gather(blocked, behind)
            return done
        finally:
            worker.stop()

    assert await main() == (True, False, False)


@deferred_f_from_coro_f
async def test_a_cancelled_caller_is_skipped() -> None:
    release = threading.Event()

    async def main() -> int:
        worker = Worker("test-worker")
        try:
            blocked = worker.call(release.wait, 10, here=False)
            cancelled = worker.call(int, 1)
            cancelled.cancel()
            after = worker.call(int, 2)
            release.set()
            await blocked
            return await after
        finally:
            worker.stop()

    assert await main() == 2


@deferred_f_from_coro_f
async def test_calls_run_on_the_loop_while_the_thread_is_idle() -> None:
    loop_thread = threading.current_thread().name

    async def main() -> list[str]:
        worker = Worker("test-worker")
        try:
            name = lambda: threading.current_thread().name  # noqa: E731
            return list(await asyncio.gather(*(worker.call(name) for _ in range(3))))
        finally:
            worker.stop()

    assert await main() == [loop_thread] * 3


@deferred_f_from_coro_f
async def test_a_call_that_would_block_moves_to_the_thread_and_the_next_wait_for_it() -> None:
    """Order is kept: the calls after a blocked one run once it is answered,
    on the loop again (sent after it, a busy crawl would keep the thread busy
    for good)."""
    seen: list[tuple[int, str]] = []

    def note(n: int) -> int:
        here = threading.current_thread().name
        if n == 1 and here != "test-worker":
            raise WouldBlock
        seen.append((n, here))
        return n

    async def main() -> tuple[list[int], list[int]]:
        worker = Worker("test-worker")
        try:
            first = await asyncio.gather(*(worker.call(note, n) for n in range(3)))
            second = [worker.call(note, n) for n in range(3, 5)]
            return list(first), list(await asyncio.gather(*second))
        finally:
            worker.stop()

    loop_thread = threading.current_thread().name
    assert await main() == ([0, 1, 2], [3, 4])
    assert seen == [
        (0, loop_thread),
        (1, "test-worker"),
        (2, loop_thread),
        (3, loop_thread),
        (4, loop_thread),
    ]


@deferred_f_from_coro_f
async def test_calls_made_while_the_thread_works_wait_for_it_then_run_on_the_loop() -> None:
    release = threading.Event()
    seen: list[str] = []

    async def main() -> None:
        worker = Worker("test-worker")
        try:
            blocked = worker.call(release.wait, 10, here=False)
            after = worker.call(lambda: seen.append(threading.current_thread().name))
            for _ in range(5):
                await asyncio.sleep(0)
            assert not after.done()  # not run past the call in the thread
            release.set()
            await blocked
            await after
        finally:
            worker.stop()

    await main()
    assert seen == [threading.current_thread().name]
