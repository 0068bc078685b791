"""What one process knows of each origin, in an LRU bounded in origins and bytes.

An evicted origin is not forgotten: its record is in the store, and the next
request for it loads it again. A waiter of a flight holds the state the
flight settled, so eviction never takes an answer from under it.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import Decision, OriginRecord
from scrapy_rep.engine.lines import MAX_BODY_BYTES
from scrapy_rep.engine.origin import Origin

__all__ = ["OriginState", "OriginStates"]

_Key = tuple[AccessState | None, bytes | None, str]

#: Seconds a policy decision is reused for the same record: the policy's
#: windows are hours long, and a busy origin sees many requests a second.
REUSE: Final = 1.0


@dataclass(eq=False)
class OriginState:
    """What this process knows of one origin."""

    record: OriginRecord | None
    key: _Key | None = None  # the decision ``access`` was made for
    access: Access | None = None
    #: The last fetch this process made (or saw), and the record it led to:
    #: the answer replayed to a spider asking for robots.txt itself.
    outcome: FetchOutcome | None = None
    outcome_record: OriginRecord | None = None
    #: A fetch not yet handed to ``on_access``.
    unannounced: FetchOutcome | None = None
    #: (record, decision, when): the policy's last answer for this very record,
    #: reused for a moment so that a busy origin does not re-decide per request.
    recent: tuple[OriginRecord | None, Decision, float] | None = None
    #: (access, record, until): ``access`` answers requests without asking the
    #: policy until the clock reaches ``until``, while the record is this one;
    #: set only for a plain answer (no refresh due, no streak, not stale), so
    #: the busy origins of a crawl cost a lookup and a clock reading per request.
    ready: tuple[Access, OriginRecord | None, float] | None = None

    def holds(self, decision: Decision) -> bool:
        """Is ``access`` the one this decision gives?"""
        return self.access is not None and self.key == decision_key(decision)

    def adopt(self, record: OriginRecord, outcome: FetchOutcome | None) -> None:
        """A new record: the next request settles (and announces) again."""
        self.record = record
        self.key = self.access = None
        if outcome is not None:
            self.outcome, self.outcome_record = outcome, record
            self.unannounced = outcome

    def replay(self, robotstxt_url: str) -> FetchOutcome | None:
        """The robots.txt answer behind the record, to replay to a spider.

        None when the origin is unreachable (or its body was not kept): the
        spider's own request should then go to the network.
        """
        record = self.record
        if record is None or record.kind is FetchKind.UNREACHABLE:
            return None
        if self.outcome is not None and self.outcome_record is record:
            return self.outcome
        if record.kind is FetchKind.SUCCESS and record.good_body is None:
            return None
        # Fetched by another process or an earlier run: status and body are kept,
        # the headers are not.
        return FetchOutcome(
            record.kind,
            robotstxt_url,
            record.fetched_at,
            status=record.status,
            body=record.good_body or b"",
            reason=record.reason,
            headers={"content-type": ["text/plain"]},
        )

    @property
    def size(self) -> int:
        """Bytes this state keeps alive: the bodies it holds, and some."""
        body = self.record.good_body if self.record is not None else None
        size = _STATE_OVERHEAD + (len(body) if body else 0)
        kept = self.outcome.body if self.outcome is not None else None
        if kept and kept is not body:
            size += len(kept)
        return size


#: What a state costs besides its bodies: the objects around them.
_STATE_OVERHEAD: Final = 1_024
_LARGEST_STATE: Final = MAX_BODY_BYTES + _STATE_OVERHEAD


def decision_key(decision: Decision) -> _Key:
    return (decision.state, decision.body, decision.reason)


class OriginStates:
    """Origin -> state, least recently used first, at most ``limit`` of them
    and ``max_bytes`` of bodies (the newest is kept even when alone over it)."""

    def __init__(self, limit: int, max_bytes: int = 32 * 1024 * 1024) -> None:
        self._limit = limit
        self._max_bytes = max_bytes
        self._states: OrderedDict[Origin, OriginState] = OrderedDict()
        self._sizes: dict[Origin, int] = {}
        self.bytes = 0
        #: States with a record (not a flight's first empty one): their count
        #: and bytes, the average ``room`` reads.
        self._answered: set[Origin] = set()
        self._answered_bytes = 0

    def get(self, origin: Origin) -> OriginState | None:
        return self._states.get(origin)

    def touch(self, origin: Origin) -> None:
        if origin in self._states:
            self._states.move_to_end(origin)

    def remember(self, origin: Origin, record: OriginRecord | None) -> OriginState:
        """The state of ``origin`` with ``record``; evicts the least recently used."""
        state = self._states.get(origin)
        if state is not None:
            state.record = record
            return state
        return self.keep(origin, OriginState(record))

    def keep(self, origin: Origin, state: OriginState) -> OriginState:
        """Keep ``state`` (a flight's, perhaps evicted meanwhile) as the newest,
        counting its bodies again (a fetch may have changed them)."""
        self._states[origin] = state
        self._states.move_to_end(origin)
        self._forget_size(origin)
        size = self._sizes[origin] = state.size
        self.bytes += size
        if state.record is not None:
            self._answered.add(origin)
            self._answered_bytes += size
        while len(self._states) > 1 and (
            len(self._states) > self._limit or self.bytes > self._max_bytes
        ):
            old, _ = self._states.popitem(last=False)
            self._forget_size(old)
        return state

    def drop(self, origin: Origin) -> bool:
        """Forget ``origin`` here (its record was forgotten in the store); True if held."""
        if self._states.pop(origin, None) is None:
            return False
        self._forget_size(origin)
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
        average = self._answered_bytes // count if count else _LARGEST_STATE
        return max(min(self._limit, self._max_bytes // average) // 2, 1)

    def __len__(self) -> int:
        return len(self._states)
