"""The bridge that runs the stores under any reactor (scrapy_rep/crawler/access/loop_thread.py).

These run under the suite's reactor: asyncio by default, epoll in .ci/test's
second pass (REP_TEST_REACTOR=epoll), where the bridge is what the crawl uses.
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro
from twisted.python.failure import Failure

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import StorageUnavailable
from scrapy_rep.crawler.access.loop_thread import LoopThread, ThreadedStorage
from scrapy_rep.crawler.async_bridge import sleep

THREAD = "scrapy_rep-storage"


class Probe:
    """A Storage that notes where it runs; ``get("slow")`` waits until cancelled,
    ``lock`` starts a background task as a lease renewal does."""

    def __init__(self) -> None:
        self.threads: set[str] = set()
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.background: asyncio.Task[None] | None = None
        self.closed = False

    def _note(self) -> None:
        asyncio.get_running_loop()  # raises off an asyncio loop
        self.threads.add(threading.current_thread().name)

    async def get(self, key: str) -> OriginRecord | None:
        self._note()
        if key == "down":
            raise StorageUnavailable("Redis went away")
        if key == "slow":
            self.started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return None

    async def put(self, key: str, record: OriginRecord, ttl_seconds: float) -> None:
        self._note()

    async def lock(self, key: str, ttl: float) -> bool:
        self._note()
        self.background = asyncio.get_running_loop().create_task(asyncio.Event().wait())
        return True

    async def release(self, key: str) -> None:
        self._note()

    async def close(self) -> None:
        self._note()
        self.closed = True


def opened(probe: Probe) -> tuple[ThreadedStorage, LoopThread]:
    loop = LoopThread()
    loop.start()
    return ThreadedStorage(probe, loop), loop


async def until(event: threading.Event) -> None:
    """Let the reactor run until the loop thread sets ``event`` (a handshake, not a time rule)."""
    for _ in range(500):
        if event.is_set():
            return
        await sleep(0.01)
    raise AssertionError("the loop thread never got there")


@deferred_f_from_coro_f
async def test_scrapy_store_calls_run_on_the_private_loop_and_keep_their_errors() -> None:
    probe = Probe()
    store, loop = opened(probe)
    assert await store.get("k") is None
    assert await store.lock("k", 10) is True
    with pytest.raises(StorageUnavailable, match="Redis went away"):
        await store.get("down")  # FallbackStorage and SharedStore see the same types
    await store.release("k")
    await store.close()
    assert probe.threads == {THREAD}
    assert probe.closed
    assert not loop.running


@deferred_f_from_coro_f
async def test_scrapy_store_pairs_of_calls_make_one_trip_to_the_loop() -> None:
    """A store without combined calls still gets them from the bridge: both
    calls of a pair run on the loop thread, in one trip from the reactor."""
    probe = Probe()
    store, loop = opened(probe)
    calls: list[str] = []
    for name in ("get", "put", "lock", "release"):
        method = getattr(probe, name)

        def noting(*args: object, _name: str = name, _method: object = method) -> object:
            calls.append(_name)
            return _method(*args)  # type: ignore[operator]

        setattr(probe, name, noting)
    trips = 0
    run = loop.run

    async def counted(coro: object) -> object:
        nonlocal trips
        trips += 1
        return await run(coro)  # type: ignore[arg-type]

    loop.run = counted  # type: ignore[method-assign]
    try:
        assert await store.lock_and_get("k", 10) == (True, None)
        now = 1_700_000_000.0
        record = OriginRecord(FetchKind.SUCCESS, 200, "HTTP 200", now, now + 60, b"", now, 200)
        await store.put_and_release("k", record, 60)
        assert calls == ["lock", "get", "put", "release"] and trips == 2
        assert probe.threads == {THREAD}
    finally:
        loop.run = run  # type: ignore[method-assign]
        await store.close()


@deferred_f_from_coro_f
async def test_scrapy_store_close_cancels_what_the_store_left_on_its_loop() -> None:
    """A lease renewal still running at close ends with the loop."""
    probe = Probe()
    store, loop = opened(probe)
    await store.lock("k", 10)
    assert probe.background is not None and not probe.background.done()
    await store.close()
    assert probe.background.cancelled()
    assert not loop.running


@deferred_f_from_coro_f
async def test_scrapy_cancelled_store_call_cancels_the_coroutine_on_the_loop() -> None:
    probe = Probe()
    store, loop = opened(probe)
    call = deferred_from_coro(store.get("slow"))
    failures: list[Failure] = []
    call.addErrback(failures.append)
    await until(probe.started)
    call.cancel()
    await until(probe.cancelled)
    await store.close()
    assert len(failures) == 1
    assert failures[0].check(asyncio.CancelledError, "twisted.internet.defer.CancelledError")
    assert not loop.running


@deferred_f_from_coro_f
async def test_scrapy_cancelled_sleep_is_a_cancellation_not_a_failure() -> None:
    """Under any reactor a cancelled wait raises asyncio's CancelledError, which
    ``except Exception`` (a store or fetch failure) does not take."""
    seen: list[BaseException] = []

    async def sleeper() -> None:
        try:
            await sleep(60)
        except Exception as exc:  # what a failure handler would catch
            seen.append(exc)
        except BaseException as exc:
            seen.append(exc)
            raise

    call = deferred_from_coro(sleeper())
    call.addErrback(lambda _: None)
    await sleep(0)
    call.cancel()
    await sleep(0)
    assert len(seen) == 1 and isinstance(seen[0], asyncio.CancelledError)
