"""The store as the resolver uses it: shared across processes, never fatal.

A store error costs sharing and persistence, never a request: it is logged
once, and the process goes on with what it knows (a load gives nothing, a
write is skipped, a shared fetch becomes a local one). Nor does another
process's fetch stall this one: its lock is a short lease (a dead holder
frees it within seconds), and a wait for a live one is bounded.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from scrapy_rep.cache.policy import OriginRecord, PolicyConfig, loaded_record, retention
from scrapy_rep.cache.storage import MAX_WAIT, Storage, single_flight
from scrapy_rep.crawler.flights import sleep as reactor_sleep
from scrapy_rep.engine.origin import Origin

__all__ = ["SharedStore", "Sleep"]

logger = logging.getLogger("scrapy_rep.crawler.resolver")

Sleep = Callable[[float], Awaitable[object]]


class SharedStore:
    """Load, save and fetch-once for origin records, on a ``Storage``."""

    def __init__(
        self,
        storage: Storage,
        policy: PolicyConfig,
        clock: Callable[[], float],
        *,
        sleep: Sleep | None = None,
        max_wait: float = MAX_WAIT,
        poll: float = 0.05,
    ) -> None:
        self.storage = storage
        self._policy = policy
        self._clock = clock
        self._sleep = sleep or reactor_sleep
        self._max_wait = max_wait
        self._poll = poll
        self._warned = False
        self._warned_invalid = False
        self._told_waiting = False

    async def load(self, origin: Origin) -> OriginRecord | None:
        try:
            record = await self.storage.get(str(origin))
        except Exception as exc:
            self.failed(exc)
            return None
        return self._trusted(record)

    async def save(self, origin: Origin, record: OriginRecord) -> None:
        try:
            await self.storage.put(str(origin), record, self._keep(record))
        except Exception as exc:
            self.failed(exc)

    async def fetch_once(
        self,
        origin: Origin,
        fetch: Callable[[], Awaitable[OriginRecord]],
        newer_than: float | None,
    ) -> OriginRecord | None:
        """One fetch across every process sharing the store (docs/spec.md §3.5): the
        record this or another process fetched; None if the store failed."""
        try:
            found = await single_flight(
                self.storage,
                str(origin),
                fetch,
                self._keep,
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
        return self._trusted(found)

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

    def _trusted(self, record: OriginRecord | None) -> OriginRecord | None:
        """Expiry capped by the policy; a record from the future is absent."""
        if record is None:
            return None
        trusted = loaded_record(record, self._clock(), self._policy)
        if trusted is None and not self._warned_invalid:
            self._warned_invalid = True
            logger.warning(
                "The robots.txt cache holds a record fetched in the future (%s); "
                "records like it are ignored and fetched again",
                record.reason,
            )
        return trusted

    def _keep(self, record: OriginRecord) -> float:
        return retention(record, self._clock(), self._policy)


def _growing(sleep: Sleep, first: float) -> Sleep:
    """Poll the store often at first, then less (up to 1 s) while another process fetches."""
    delay = first

    async def wait(_: float) -> object:
        nonlocal delay
        current, delay = delay, min(delay * 1.5, 1.0)
        return await sleep(current)

    return wait
