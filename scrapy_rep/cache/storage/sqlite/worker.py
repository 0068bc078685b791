"""A store's blocking calls, in order: on the loop while none can block, else in a thread.

A call that cannot block (a SQLite statement that is not kept waiting by
another process) costs a few microseconds; handing it to a thread and back
costs more than that, and on a busy core far more: a wake-up each way and
the interpreter lock changing hands twice (docs/benchmarks.md: at 10,000 origins the
SQLite store cost 1.11x the built-in's CPU per request with every call in
a thread, 1.02x with the calls on the loop). So a call with none ahead of
it runs at once, on the loop, and its caller goes on in the same turn:
held over to a later turn, each caller's objects lived long enough to
reach the collector's oldest generation, and a crawl of 100,000 origins
paid twice the full collections (benchmarks/origins_million.py). A call
that would have to wait raises ``WouldBlock`` before it has done anything
and runs in the thread, where waiting is harmless; the calls after it wait
for its answer, then run on the loop again, in order. The thread takes
every call queued by the time it wakes and hands all their results back in
one wake-up of the loop.

One call runs at a time, on one side or the other, so a store may share one
connection between the two.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Worker", "WouldBlock"]

T = TypeVar("T")

#: A queued call: the loop and future to answer, the function and its arguments.
_Call = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]", Callable[..., Any], tuple[Any, ...]]
#: A call's outcome: its future, and its result or the exception it raised.
_Done = tuple["asyncio.Future[Any]", Any, BaseException | None]


class WouldBlock(Exception):
    """Raised by a call on the loop that would have to wait: run it in the thread."""


class Worker:
    """A daemon thread named ``name`` for the calls that may wait; ``call`` runs a function."""

    def __init__(self, name: str) -> None:
        #: Calls not started yet, and whether each may run on the loop.
        self._pending: deque[tuple[_Call, bool]] = deque()
        self._scheduled = False  # a run of the pending calls is scheduled on the loop
        self._calls: deque[_Call | None] = deque()  # for the thread; None: stop there
        self._away = 0  # calls handed to the thread and not answered yet
        self._wake = threading.Event()
        self._waking = False  # a wake-up of the thread is scheduled on the loop
        self._stopping = False
        self._ended = False  # the thread was told to end
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def call(self, func: Callable[..., T], *args: Any, here: bool = True) -> asyncio.Future[T]:
        """``func(*args)`` after every call made before it: on the loop unless
        ``func`` raises ``WouldBlock`` there or ``here`` is False."""
        if self._stopping:
            raise RuntimeError("cannot schedule new calls after the worker stopped")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        call = (loop, future, func, args)
        if here and not self._pending and not self._away:  # none ahead of it: now
            self._run_on_loop(call)
            return future
        self._pending.append((call, here))
        if not self._scheduled and not self._away:
            self._scheduled = True
            loop.call_soon(self._run_here)
        return future

    def in_thread(self) -> bool:
        """Whether the caller runs in the thread (where it may wait)."""
        return threading.current_thread() is self._thread

    def stop(self) -> None:
        """Run what is queued, then end the thread; later calls raise RuntimeError."""
        self._stopping = True
        if not self._pending:
            self._end_thread()

    def _end_thread(self) -> None:
        """After the last call sent to the thread (once: later ones find it set)."""
        if not self._ended:
            self._ended = True
            self._calls.append(None)
            self._wake.set()

    def _run_here(self) -> None:
        """Run the pending calls on the loop until one goes to the thread; the
        rest wait for the thread's answer, so the thread is idle again soon
        (were they sent after it, a busy crawl would keep it busy for good)."""
        self._scheduled = False
        pending = self._pending
        while pending and (not self._away or not pending[0][1]):  # thread calls queue on
            call, here = pending.popleft()
            if call[1].done():  # cancelled meanwhile
                continue
            if here:
                self._run_on_loop(call)
            else:
                self._send(call)
        if self._stopping and not pending:
            self._end_thread()

    def _run_on_loop(self, call: _Call) -> None:
        """Answer ``call`` here, or send it to the thread if it would block."""
        _, future, func, args = call
        try:
            result = func(*args)
        except WouldBlock:
            self._send(call)
        except Exception as exc:  # handed to the awaiting coroutine
            future.set_exception(exc)
        else:
            future.set_result(result)

    def _send(self, call: _Call) -> None:
        self._away += 1
        self._calls.append(call)
        if not self._waking:  # the calls sent in this turn of the loop go together
            self._waking = True
            call[0].call_soon(self._wake_up)

    def _wake_up(self) -> None:
        self._waking = False
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
                    loop.call_soon_threadsafe(self._settle, outcomes)
            if stop:
                return

    def _settle(self, outcomes: list[_Done]) -> None:
        """In the loop: answer each future not cancelled meanwhile; the thread
        idle, the calls that waited for it run."""
        self._away -= len(outcomes)
        if not self._away and self._pending and not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._run_here)
        for future, result, error in outcomes:
            if future.done():
                continue
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)
