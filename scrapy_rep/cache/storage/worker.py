"""One thread that runs a store's blocking calls in order, in batches.

The event loop queues a call and awaits its future; the calls made in one
turn of the loop wake the thread once, the thread runs every call queued by
the time it wakes, then hands all their results back in one wake-up of the
loop. An executor costs a loop wake-up (a write to its
self-pipe) and a handful of futures per call; a broad crawl makes three calls
per new origin, a hundred origins at a time, so sharing the hops is most of
what a store in a thread costs (issue 28: the SQLite store's CPU per origin).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Worker"]

T = TypeVar("T")

#: A queued call: the loop and future to answer, the function and its arguments.
_Call = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]
#: A call's outcome: its future, and its result or the exception it raised.
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]


class Worker:
    """A daemon thread named ``name``; ``call`` runs a function there."""

    def __init__(self, name: str) -> None:
        self._calls: deque[_Call | None] = deque()  # None: stop after the calls before it
        self._wake = threading.Event()
        self._waking = False  # a wake-up is scheduled on the loop
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def call(self, func: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """``func(*args)`` in the thread, after every call queued before it."""
        if self._stopping:
            raise RuntimeError("cannot schedule new calls after the worker stopped")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.append((loop, future, func, args))
        if not self._waking:  # the calls made in this turn of the loop go together
            self._waking = True
            loop.call_soon(self._wake_up)
        return future

    def _wake_up(self) -> None:
        self._waking = False
        self._wake.set()

    def stop(self) -> None:
        """Run what is queued, then end the thread; later calls raise RuntimeError."""
        if not self._stopping:
            self._stopping = True
            self._calls.append(None)
            self._wake.set()

    def _serve(self) -> None:
        calls = self._calls
        while True:
            self._wake.wait()
            self._wake.clear()  # before taking: a call queued from now on wakes us again
            done: dict[asyncio.AbstractEventLoop, list[_Done]] = {}
            stop = False
            while calls:
                call = calls.popleft()
                if call is None:
                    stop = True
                    break
                loop, future, func, args = call
                try:
                    outcome: _Done = (future, func(*args), None)
                except BaseException as exc:  # handed to the awaiting coroutine
                    outcome = (future, None, exc)
                done.setdefault(loop, []).append(outcome)
            for loop, outcomes in done.items():
                with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits
                    loop.call_soon_threadsafe(_settle, outcomes)
            if stop:
                return


def _settle(outcomes: list[_Done]) -> None:
    """In the loop: answer each future not cancelled meanwhile."""
    for future, result, error in outcomes:
        if future.done():
            continue
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)
