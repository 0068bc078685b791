"""Under a Twisted reactor other than asyncio's no asyncio loop runs: the
forget watch reads the store's log at each interval all the same, and its
stop is no error. (Run in a thread of its own: the test's thread has
asyncio's loop running.)"""

from __future__ import annotations

import gc
import threading
from typing import Any

from twisted.internet.defer import Deferred
from twisted.logger import globalLogPublisher

from scrapy_rep.cache.storage import MemoryStorage
from scrapy_rep.crawler.access.forget_watch import ForgetWatch
from scrapy_rep.crawler.access.resolver import Resolver

from .test_cache_resolver import OK, A, B, ManualClock, Server


def test_without_an_asyncio_loop_a_forget_is_heard_at_the_next_interval() -> None:
    seen: list[object] = []
    errors: list[dict[str, Any]] = []

    def observe(event: dict[str, Any]) -> None:
        failure = event.get("log_failure")
        if failure is not None and "forget_watch" in failure.getTraceback():
            errors.append(event)  # this watch's, not another test's collected now

    def crawl_without_asyncio() -> None:
        clock = ManualClock()
        storage = MemoryStorage(clock=clock)
        rep = Resolver(Server(clock, OK), storage=storage, clock=clock)  # type: ignore[arg-type]
        for origin in (A, B):
            Deferred.fromCoroutine(rep.access(origin))
        ticks: list[Deferred[None]] = []

        def sleep(seconds: float) -> Deferred[None]:
            ticks.append(Deferred())
            return ticks[-1]

        watch = ForgetWatch(storage, rep.drop, interval=1.0, failed=rep.store_failed, sleep=sleep)
        started = Deferred.fromCoroutine(watch.start())
        Deferred.fromCoroutine(storage.forget(str(A)))
        seen.extend([started.called, rep.current(A) is not None, len(ticks)])
        ticks[-1].callback(None)  # an interval has passed
        seen.extend([rep.current(A) is None, rep.current(B) is not None, len(ticks)])
        watch.stop()

    thread = threading.Thread(target=crawl_without_asyncio)
    globalLogPublisher.addObserver(observe)
    try:
        thread.start()
        thread.join(10)
        gc.collect()  # a Deferred failed and left unhandled says so when collected
    finally:
        globalLogPublisher.removeObserver(observe)
    assert errors == []  # the stop's cancel is no error
    # started, A still held, one sleep; then A dropped, B kept, the next sleep
    assert seen == [True, True, 1, True, True, 2]
