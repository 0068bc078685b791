"""What one process knows of each origin, in an LRU bounded in origins and bytes.

An evicted origin is not forgotten: its record is in the store, and the next
request for it loads it again. A waiter of a flight holds the answer the
flight settled, so eviction never takes an answer from under it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from scrapy_rep.cache.lifecycle import LARGEST_SIZE, OriginLifecycle
from scrapy_rep.cache.storage.defaults import known_bytes
from scrapy_rep.engine.origin import Origin

__all__ = ["KnownOrigins", "Watch"]

#: Told when an origin is held anew (with its lifecycle) and when it is let go (None).
Watch = Callable[[Origin, OriginLifecycle | None], None]


class KnownOrigins:
    """Origin -> its lifecycle, least recently used first, at most ``limit`` of them
    and ``max_bytes`` of bodies (the newest is kept even when alone over it)."""

    def __init__(
        self,
        limit: int,
        max_bytes: int = known_bytes(),
        watch: Watch | None = None,
    ) -> None:
        self._limit = limit
        #: Told when an origin is held anew (its lifecycle) and let go (None): the gauges.
        self._watch = watch
        self._max_bytes = max_bytes
        self._lifecycles: OrderedDict[Origin, OriginLifecycle] = OrderedDict()
        self._sizes: dict[Origin, int] = {}
        self.bytes = 0
        #: Lifecycles with a record (not a flight's first empty one): their count
        #: and bytes, the average ``room`` reads.
        self._answered: set[Origin] = set()
        self._answered_bytes = 0
        #: Origins fetched ahead of their requests that no request has asked for yet.
        self._ahead: OrderedDict[Origin, None] = OrderedDict()

    def get(self, origin: Origin) -> OriginLifecycle | None:
        return self._lifecycles.get(origin)

    def touch(self, origin: Origin) -> None:
        if origin in self._lifecycles:
            self._lifecycles.move_to_end(origin)

    def keep(self, origin: Origin, lifecycle: OriginLifecycle) -> OriginLifecycle:
        """Keep ``lifecycle`` (a flight's, perhaps evicted meanwhile) as the newest,
        counting its bodies again (a fetch may have changed them)."""
        if self._watch is not None and self._lifecycles.get(origin) is not lifecycle:
            self._watch(origin, lifecycle)
        self._lifecycles[origin] = lifecycle
        self._lifecycles.move_to_end(origin)
        self._forget_size(origin)
        size = self._sizes[origin] = lifecycle.size
        self.bytes += size
        if lifecycle.record is not None:
            self._answered.add(origin)
            self._answered_bytes += size
        while len(self._lifecycles) > 1 and (
            len(self._lifecycles) > self._limit or self.bytes > self._max_bytes
        ):
            old, _ = self._lifecycles.popitem(last=False)
            self._forget_size(old)
            if self._watch is not None:
                self._watch(old, None)
        return lifecycle

    def asked_for(self, origin: Origin) -> OriginLifecycle | None:
        """A request asked for ``origin``: no longer ahead of its requests.
        Its lifecycle, if held (``get``: one call per request, not two)."""
        if self._ahead:
            self._ahead.pop(origin, None)
        return self._lifecycles.get(origin)

    def go_ahead(self, origin: Origin, under_way: int, pending: Callable[[Origin], bool]) -> bool:
        """May ``origin`` be fetched ahead of its requests? Not beyond ``room``
        answers fetched and not yet asked for, or ``under_way``: one fetched
        further ahead would be evicted before its requests come, and fetched
        again. If it may, it counts as ahead from now on."""
        ahead = self._ahead
        while ahead:  # those evicted unasked: fetched for nothing
            first = next(iter(ahead))
            if first in self._lifecycles or pending(first):
                break
            del ahead[first]
        # The answers of flights under way need keeping too, ahead or not.
        if max(len(ahead), under_way) >= self.room():
            return False
        ahead[origin] = None
        return True

    def drop(self, origin: Origin) -> bool:
        """Forget ``origin`` here (its record was forgotten in the store); True if held."""
        self._ahead.pop(origin, None)
        if self._lifecycles.pop(origin, None) is None:
            return False
        self._forget_size(origin)
        if self._watch is not None:
            self._watch(origin, None)
        return True

    def _forget_size(self, origin: Origin) -> None:
        size = self._sizes.pop(origin, 0)
        self.bytes -= size
        if origin in self._answered:
            self._answered.remove(origin)
            self._answered_bytes -= size

    def room(self) -> int:
        """How many answers may be fetched ahead of their requests: half of
        what the LRU holds (in origins, and in bytes at the average size of
        the states answered so far), so that they are not evicted before they
        are used. Before any is answered, each is taken to be as big as a body
        may be: a crawl's first burst must not fetch ahead what the budget
        cannot hold (the empty states of flights under way weigh nothing yet)."""
        count = len(self._answered)
        average = max(self._answered_bytes // count, 1) if count else LARGEST_SIZE
        return max(min(self._limit, self._max_bytes // average) // 2, 1)

    def __len__(self) -> int:
        return len(self._lifecycles)
