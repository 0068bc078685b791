"""Origin records shared with other processes through the store, never fatal.

A store error costs sharing and persistence, never a request: it is logged
once, and the process goes on with what it knows (a load gives nothing, a
write is skipped, a shared fetch becomes a local one). Nor does another
process's fetch stall this one: its lock is a short lease (a dead holder
frees it within seconds), and a wait for a live one is bounded.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from scrapy_rep.cache.effects import Save
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.storage import MAX_WAIT, MemoryStorage, Sleep, Storage, single_flight
from scrapy_rep.crawler.async_bridge import sleep as reactor_sleep
from scrapy_rep.engine.origin import Origin

__all__ = ["SharedRecords"]

logger = logging.getLogger("scrapy_rep.crawler.access.resolver")


class SharedRecords:
    """Load, save and fetch-once for origin records, on a ``Storage``.

    What a record means (trusted, how long it is kept) is the lifecycle's to
    say: records pass through here as they are.
    """

    def __init__(
        self,
        storage: Storage,
        clock: Callable[[], float],
        *,
        sleep: Sleep | None = None,
        max_wait: float = MAX_WAIT,
        poll: float = 0.05,
    ) -> None:
        self.storage = storage
        self._clock = clock
        self._sleep = sleep or reactor_sleep
        self._max_wait = max_wait
        self._poll = poll
        self._warned = False
        self._told_waiting = False

    @property
    def in_process(self) -> bool:
        """The store is this process's own (the memory store): no other process
        shares it, so the in-process single flight is the only one needed."""
        return type(self.storage) is MemoryStorage

    async def load(self, origin: Origin) -> OriginRecord | None:
        try:
            record = await self.storage.get(str(origin))
        except Exception as exc:
            self.failed(exc)
            return None
        return record

    async def save(self, origin: Origin, save: Save) -> None:
        try:
            await self.storage.put(str(origin), save.record, save.keep)
        except Exception as exc:
            self.failed(exc)

    async def save_unless_newer(
        self, origin: Origin, save: Save, still: Callable[[], bool]
    ) -> None:
        """Save ``save`` if ``still()`` holds once the stored record is read, and
        that record is not newer: never over another process's newer fetch."""
        stored = await self.load(origin)
        if still() and (stored is None or stored.fetched_at <= save.record.fetched_at):
            await self.save(origin, save)

    async def fetch_once(
        self,
        origin: Origin,
        fetch: Callable[[], Awaitable[Save]],
        newer_than: float | None,
    ) -> OriginRecord | None:
        """One fetch across every process sharing the store (docs/spec.md §3.5): the
        record this or another process fetched; None if the store failed."""
        keep: list[float] = []

        async def fetch_record() -> OriginRecord:
            save = await fetch()
            keep.append(save.keep)
            return save.record

        try:
            return await single_flight(
                self.storage,
                str(origin),
                fetch_record,
                lambda _: keep[-1],
                newer_than=newer_than,
                max_wait=self._max_wait,
                poll=self._poll,
                sleep=_growing(self._sleep, self._poll),
                clock=self._clock,
                on_wait=self._waiting,
            )
        except Exception as exc:
            self.failed(exc)
            return None

    async def close(self) -> None:
        try:
            await self.storage.close()
        except Exception:
            logger.exception("Closing the robots.txt cache failed")

    def _waiting(self, key: str) -> None:
        """Say why requests wait: at INFO the first time, then at DEBUG."""
        level = logging.DEBUG if self._told_waiting else logging.INFO
        self._told_waiting = True
        logger.log(
            level,
            "Another process is fetching the robots.txt of %s: waiting for its result "
            "(at most %.0f s, then fetching it here)",
            key,
            self._max_wait,
        )

    def failed(self, exc: Exception) -> None:
        """Say once that the store failed; the crawl goes on."""
        if not self._warned:
            self._warned = True
            logger.warning(
                "The robots.txt cache failed (%r); going on with what this process knows",
                exc,
                exc_info=exc,
            )


def _growing(sleep: Sleep, first: float) -> Sleep:
    """Poll the store often at first, then less (up to 1 s) while another process fetches."""
    delay = first

    async def wait(_: float) -> object:
        nonlocal delay
        current, delay = delay, min(delay * 1.5, 1.0)
        return await sleep(current)

    return wait
