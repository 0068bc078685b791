"""What an origin's lifecycle asks its driver to do: the effects, one shape for all.

Every event of ``OriginLifecycle`` (cache/lifecycle.py) hands back a tuple
of these, to be carried out in order (docs/spec.md §2.2, §3.5, §8.1), so the
driver (crawler/access/driver.py) reads them in one loop, whatever the event.
Plain frozen data: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, NamedTuple

from scrapy_rep.cache.outcome import Access, AccessState, FetchOutcome
from scrapy_rep.cache.record import OriginRecord

__all__ = [
    "FETCH_NOW",
    "NOTHING",
    "Announce",
    "Effect",
    "Effects",
    "FetchNow",
    "Save",
    "Use",
    "WaitBudget",
    "WaitUntil",
]


@dataclass(frozen=True, slots=True)
class Use:
    """Answer the requests with ``access``."""

    access: Access
    stale: bool = False  # the rules come from an expired copy (stats: stale_used)
    #: In an outage: the state it gives (stats: requests_in_outage/<state>).
    outage: AccessState | None = None
    #: A background refetch is due: start it; requests do not wait for it.
    retry: bool = False


@dataclass(frozen=True, slots=True)
class FetchNow:
    """Fetch robots.txt now; tell ``fetched`` (or ``shared``) how it went."""

    #: Through the store's single flight (docs/spec.md §3.5); False: another
    #: process's copy could not be shared (no-store), fetch it here.
    shared: bool = True


FETCH_NOW: Final = FetchNow()


@dataclass(frozen=True, slots=True)
class WaitUntil:
    """Sleep until ``at`` (a first failure's quick retry, docs/spec.md §2.2);
    the ``FetchNow`` that follows it is the retry."""

    at: float


@dataclass(frozen=True, slots=True)
class Save:
    """Write ``record`` to the store, to be kept ``keep`` seconds (docs/spec.md §2.3)."""

    record: OriginRecord
    keep: float


@dataclass(frozen=True, slots=True)
class Announce:
    """Tell the crawl before any request is answered (docs/spec.md §8.1)."""

    access: Access
    #: The access is new in this process (signals, stats); with the fetch behind it.
    new: bool
    fetched: FetchOutcome | None
    #: A flight's fetches (a first failure and its quick retries), for the logs.
    outcomes: tuple[FetchOutcome, ...] = ()


Effect = Use | FetchNow | WaitUntil | Save | Announce
#: What every event hands back: the effects, in the order they are carried out.
Effects = tuple[Effect, ...]

#: An event with nothing to do.
NOTHING: Final[Effects] = ()


class WaitBudget(NamedTuple):
    """How long the requests of a flight may still wait for quick retries:
    since when they wait (the crawl's clock), and how many more seconds of
    real time they may (``unreachable_wait``, docs/spec.md §2.2)."""

    since: float
    left: float
