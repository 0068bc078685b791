"""An origin's fetch history + the clock -> what applies now (docs/spec.md §2.2, §3).

Pure: no Scrapy, no I/O, no clock reading. Every function takes ``now``
(seconds since the epoch) and a ``PolicyConfig``; randomness for back-off
jitter is passed in. The policy never parses: it hands back the body of the
copy to use, so the caller can parse each distinct body once and share it.

An origin goes through these states (the ``OriginRecord`` remembers which):

- fresh: a 2xx or 4xx answer younger than its TTL -> rules / allow-all;
- expired: older than its TTL -> fetch again before deciding (docs/spec.md §3.3);
- outage: the last fetches were unreachable (docs/spec.md §2.2). For the first
  ``unreachable_disallow`` of the outage the origin is closed; then the last good
  copy applies (none -> allow-all) until ``unreachable_max_age``; after that,
  ``long_outage`` decides. Retries go on in the background meanwhile.
The rules only: ``lifecycle`` walks an origin through them, event by event.
"""

from __future__ import annotations

import email.utils
import logging
import random as _random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import TypeVar

from scrapy_rep.cache.outcome import Access, AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy_config import (
    DAY,
    HOUR,
    LONG_OUTAGE_VALUES,
    LongOutage,
    PolicyConfig,
)
from scrapy_rep.cache.record import CLOCK_SKEW, OriginRecord
from scrapy_rep.cache.versions import kept_versions
from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = [
    "DAY",
    "HOUR",
    "LONG_OUTAGE_VALUES",
    "Action",
    "Decision",
    "LongOutage",
    "OriginRecord",
    "PolicyConfig",
    "decide",
    "decide_settled",
    "freshness",
    "loaded_record",
    "note_site_answer",
    "outage_start",
    "quick_retry_at",
    "record_outcome",
    "retention",
    "retry_after_delay",
    "settled",
    "span",
]

logger = logging.getLogger(__name__)
_T = TypeVar("_T")


def loaded_record(record: OriginRecord, now: float, config: PolicyConfig) -> OriginRecord | None:
    """A record read from a store, as far as this policy trusts it: None if
    it claims a fetch (or a site answer) in the future; its expiry capped at
    the fetch time plus the longest life this policy gives, its next retry at
    the fetch time plus the longest back-off (a row cannot keep an origin's
    rules, or its allow-all, forever, nor stop the retries of an outage)."""
    if record.fetched_at > now + CLOCK_SKEW:
        return None
    if record.site_reachable_at is not None and record.site_reachable_at > now + CLOCK_SKEW:
        return None
    longest = record.fetched_at + config.cache_max_ttl
    if record.expires_at > longest:
        record = replace(record, expires_at=longest)
    retry = record.next_retry_at
    back_off = max(config.retry_max, config.retry_busy_max, config.retry_after_max)
    latest = record.fetched_at + back_off
    if retry is not None and retry > latest:
        record = replace(record, next_retry_at=latest)
    return record


class Action(str, Enum):
    FETCH = "fetch"  # nothing usable: fetch robots.txt, requests wait (docs/spec.md §8.3)
    USE = "use"  # apply ``state`` now


@dataclass(frozen=True)
class Decision:
    """What the policy says for an origin at one instant."""

    action: Action
    state: AccessState | None = None  # set when action is USE
    body: bytes | None = None  # the body whose rules apply, when state is RULES
    reason: str = ""
    #: USE only: a background refetch is due (outage retry); requests do not wait.
    refresh_due: bool = False
    stale: bool = False  # the rules come from an expired copy (stats: stale_used)
    #: USE in an outage: when the next window of docs/spec.md §2.2 starts, if
    #: time alone changes what applies then; None when only a fetch (or a page
    #: of the site answering) does. ``standing`` shows it as the state's end.
    until: float | None = None

    def access(self, parse: Callable[[bytes], RobotsTxt]) -> Access:
        """The ``Access`` to apply; ``parse`` should share one parse per body."""
        if self.action is not Action.USE or self.state is None:
            raise ValueError("a FETCH decision has no access yet: fetch first")
        robots = None
        if self.state is AccessState.RULES and self.body is not None:
            robots = parse(self.body)
        return Access(self.state, robots, self.reason)


_FETCH = Decision(Action.FETCH)


# --- recording outcomes -------------------------------------------------------


def record_outcome(
    record: OriginRecord | None,
    outcome: FetchOutcome,
    now: float,
    config: PolicyConfig,
    *,
    random: Callable[[], float] = _random.random,
) -> OriginRecord:
    """The record after one fetch: a new good copy, or one more failure.

    ``random`` returns a float in [0, 1) for back-off jitter; tests pass a
    constant.
    """
    if outcome.kind is FetchKind.UNREACHABLE:
        return _record_failure(record, outcome, now, config, random)
    ttl, no_store = _read_header(
        "Cache-Control",
        outcome.cache_control,
        lambda: freshness(outcome.cache_control, config),
        lambda: (min(max(config.cache_ttl, config.cache_min_ttl), config.cache_max_ttl), False),
    )
    success = outcome.kind is FetchKind.SUCCESS
    body = outcome.body if success else None
    good_since, earlier = kept_versions(
        record,
        outcome.status or 0,
        body,
        now,
        kept=config.versions_kept,
        max_bytes=config.versions_max_bytes,
    )
    return OriginRecord(
        kind=outcome.kind,
        status=outcome.status,
        reason=outcome.reason,
        fetched_at=now,
        expires_at=now + ttl,
        good_body=body,
        good_at=now,
        good_status=outcome.status,
        no_store=no_store and success,
        final_url=outcome.final_url,
        truncated=outcome.truncated and success,
        good_since=good_since,
        earlier=earlier,
    )


def _record_failure(
    record: OriginRecord | None,
    outcome: FetchOutcome,
    now: float,
    config: PolicyConfig,
    random: Callable[[], float],
) -> OriginRecord:
    failures = (record.failures if record is not None and record.in_outage else 0) + 1
    delay = _read_header(
        "Retry-After",
        outcome.retry_after,
        lambda: retry_after_delay(outcome.retry_after, now, config),
        lambda: None,
    )
    if delay is None:
        delay = _backoff(outcome.status, failures, config, random())
    if record is None:
        record = OriginRecord(FetchKind.UNREACHABLE, None, "", now, now)
    return replace(
        record,
        kind=FetchKind.UNREACHABLE,
        status=outcome.status,
        reason=outcome.reason or _status_reason(outcome.status),
        fetched_at=now,
        outage_started_at=record.outage_started_at if record.in_outage else now,
        next_retry_at=now + delay,
        failures=failures,
        final_url=outcome.final_url,  # ``truncated`` stays: it tells of the good body
    )


#: Headers whose reading failed once already in this process (said once).
_UNREADABLE_HEADERS: set[str] = set()


def _read_header(
    name: str, value: str | None, read: Callable[[], _T], default: Callable[[], _T]
) -> _T:
    """``read()``; if it raises anyway (no header value should make it), the
    header costs its meaning, never the answer: ``default()`` (docs/spec.md §3.2)."""
    try:
        return read()
    except Exception as exc:
        if name not in _UNREADABLE_HEADERS:
            _UNREADABLE_HEADERS.add(name)
            logger.warning(
                "Ignoring a %s header that could not be read (%r: %r); its default applies",
                name,
                value,
                exc,
            )
        return default()


def _backoff(status: int | None, failures: int, config: PolicyConfig, draw: float) -> float:
    if status in (429, 503):
        initial, cap = config.retry_busy_initial, config.retry_busy_max
    else:
        initial, cap = config.retry_initial, config.retry_max
    exponent = min(failures - 1, 64)  # 2**64 * anything is past every cap
    delay = min(initial * config.retry_factor**exponent, cap)
    return delay * (1.0 - config.retry_jitter * draw)


def retry_after_delay(value: str | None, now: float, config: PolicyConfig) -> float | None:
    """Seconds a ``Retry-After`` header asks for, clamped; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    seconds: float
    delta = _delta_seconds(value)
    if delta is not None:
        seconds = delta
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            if when.tzinfo is None:  # "-0000" means UTC too
                return None
            seconds = when.timestamp() - now
        except (TypeError, ValueError, IndexError, OverflowError, OSError):
            return None
    return min(max(seconds, config.retry_after_min), config.retry_after_max)


def freshness(cache_control: str | None, config: PolicyConfig) -> tuple[float, bool]:
    """(TTL in seconds, no_store) from a Cache-Control header (docs/spec.md §3.1, §3.2).

    ``s-maxage`` wins over ``max-age`` (this cache is shared); ``no-cache``
    and ``no-store`` mean the shortest life allowed. The result is clamped to
    ``[cache_min_ttl, cache_max_ttl]``.
    """
    directives = _cache_directives(cache_control)
    no_store = "no-store" in directives
    ttl = config.cache_ttl
    if no_store or "no-cache" in directives:
        ttl = config.cache_min_ttl
    else:
        for name in ("s-maxage", "max-age"):
            seconds = _delta_seconds(directives.get(name))
            if seconds is not None:
                ttl = seconds
                break
    return min(max(ttl, config.cache_min_ttl), config.cache_max_ttl), no_store


def _cache_directives(header: str | None) -> dict[str, str | None]:
    directives: dict[str, str | None] = {}
    for part in (header or "").split(","):
        name, eq, value = part.partition("=")
        name = name.strip().lower()
        if name and name not in directives:
            directives[name] = value.strip().strip('"') if eq else None
    return directives


def _delta_seconds(value: str | None) -> float | None:
    """A delta-seconds value: ASCII digits only (``str.isdigit`` takes "²",
    which ``float`` refuses), so any header byte gives a number or None."""
    if value is None or _ASCII_DIGITS.fullmatch(value) is None:
        return None
    return float(value)  # huge values are inf, clamped by the callers


_ASCII_DIGITS = re.compile(r"[0-9]{1,400}")


def note_site_answer(
    record: OriginRecord | None, now: float, config: PolicyConfig
) -> OriginRecord | None:
    """Remember that a page of the site answered, during an outage (docs/spec.md §2.2).

    Returns None when there is nothing worth writing: no outage, or a mark
    recent enough (within 1/24 of ``site_reachable_window``).
    """
    if record is None or not record.in_outage:
        return None
    seen = record.site_reachable_at
    if seen is not None and now - seen < config.site_reachable_window / 24:
        return None
    return replace(record, site_reachable_at=now)


def retention(record: OriginRecord, now: float, config: PolicyConfig) -> float:
    """How long storage should keep ``record`` (its ``ttl_seconds``)."""
    return max(config.cache_keep, record.expires_at - now, 1.0)


# --- deciding ---------------------------------------------------------------


def decide(record: OriginRecord | None, now: float, config: PolicyConfig) -> Decision:
    """What applies to the origin's requests at ``now`` (docs/spec.md §2.2, §3.3)."""
    if record is None:
        return _FETCH
    if record.in_outage:
        return _decide_outage(record, now, config)
    if now >= record.expires_at:
        return _FETCH  # expired: refresh before deciding (docs/spec.md §3.3)
    if record.kind is FetchKind.UNAVAILABLE:
        return Decision(Action.USE, AccessState.ALLOW_ALL, reason=_unavailable_reason(record))
    if record.good_body is None:
        return _FETCH  # a no-store body read back from storage: not kept
    return Decision(Action.USE, AccessState.RULES, record.good_body, "robots.txt rules")


def decide_settled(record: OriginRecord | None, now: float, config: PolicyConfig) -> Decision:
    """``decide`` right after a load or a fetch, when the requests must be answered.

    A record the policy already wants fetched again (a TTL of 0, a no-store
    body) applies as it is, this once, instead of asking for another fetch.
    """
    return settled(record, decide(record, now, config))


def settled(record: OriginRecord | None, decision: Decision) -> Decision:
    """``decision`` (``decide``'s for ``record``), with a fetch it asks for
    replaced by the record as it is: ``decide_settled`` for a caller that has
    decided already, so that an event asks the policy once (docs/spec.md §3.3)."""
    if decision.action is Action.USE:
        return decision
    if record is None:
        return Decision(Action.USE, AccessState.CLOSED, reason="robots.txt not resolved")
    if record.kind is FetchKind.SUCCESS and record.good_body is not None:
        return Decision(Action.USE, AccessState.RULES, record.good_body, "robots.txt rules")
    if record.kind is FetchKind.UNREACHABLE:
        reason = (
            f"robots.txt unreachable ({record.reason}); closed: every request to it is "
            "dropped until robots.txt answers"
        )
        return Decision(Action.USE, AccessState.CLOSED, reason=reason)
    reason = f"robots.txt unavailable ({record.reason}): allow-all"
    return Decision(Action.USE, AccessState.ALLOW_ALL, reason=reason)


def outage_start(record: OriginRecord) -> float:
    """When an outage's windows start counting (docs/spec.md §2.2): when the
    origin lost a valid copy, the outage's start, or the copy's expiry if an
    early refresh failed while it was fresh."""
    assert record.outage_started_at is not None
    start = record.outage_started_at
    if record.good_at is not None:
        start = max(start, record.expires_at)
    return start


def _decide_outage(record: OriginRecord, now: float, config: PolicyConfig) -> Decision:
    assert record.outage_started_at is not None
    start = outage_start(record)
    age = now - start
    since = f"robots.txt unreachable ({record.reason}) since {_iso(record.outage_started_at)}"
    due = record.next_retry_at is None or now >= record.next_retry_at

    def use(
        state: AccessState, why: str, body: bytes | None = None, until: float | None = None
    ) -> Decision:
        stale = body is not None and now >= record.expires_at
        return Decision(Action.USE, state, body, f"{since}; {why}", due, stale, until)

    if age < 0:  # an early refresh failed: the copy is still valid until it expires
        return replace(_last_good_copy(record, use), until=start)
    if age < config.unreachable_disallow:
        closed_until = start + config.unreachable_disallow
        return use(
            AccessState.CLOSED,
            f"closed: every request to it is dropped until {_iso(closed_until)} (the first "
            f"{span(config.unreachable_disallow)} of an outage), or until robots.txt answers",
            until=closed_until,
        )
    if age < config.unreachable_max_age or config.long_outage == "cached":
        copy_until = None if config.long_outage == "cached" else start + config.unreachable_max_age
        copy = replace(_last_good_copy(record, use), until=copy_until)
        return _asked_since(copy, record, start + config.unreachable_disallow)
    seen = record.site_reachable_at
    if seen is not None and now - seen <= config.site_reachable_window:
        allow = use(
            AccessState.ALLOW_ALL,
            f"its pages answered at {_iso(seen)}: everything allowed, as if it had no robots.txt",
            until=seen + config.site_reachable_window,
        )
        return _asked_since(allow, record, start + config.unreachable_max_age)
    return use(
        AccessState.CLOSED,
        f"closed: its pages do not answer either, {span(config.unreachable_max_age)} into "
        "the outage: every request to it is dropped until robots.txt or a page answers",
    )


def _asked_since(decision: Decision, record: OriginRecord, window_end: float) -> Decision:
    """Allow-all in an outage only once robots.txt was asked again after the
    window that opened it ended: a window's end is a reason to fetch, not to
    allow (docs/spec.md §2.2). Until then, requests wait for that fetch."""
    if decision.state is AccessState.ALLOW_ALL and record.fetched_at < window_end:
        return _FETCH
    return decision


def _last_good_copy(
    record: OriginRecord, use: Callable[[AccessState, str, bytes | None], Decision]
) -> Decision:
    if record.good_at is None:
        why = "no earlier copy: everything allowed, as if it had no robots.txt"
        return use(AccessState.ALLOW_ALL, why, None)
    if record.good_body is not None:
        why = f"the rules of the last good copy (fetched {_iso(record.good_at)}) apply"
        return use(AccessState.RULES, why, record.good_body)
    status = record.good_status
    if status is not None and 200 <= status < 300:
        why = "the last copy was not kept (no-store): no robots.txt"
    else:
        why = f"the last answer ({_status_reason(status)}) meant no robots.txt"
    return use(AccessState.ALLOW_ALL, why, None)


def quick_retry_at(
    record: OriginRecord, waiting_since: float, now: float, config: PolicyConfig
) -> float | None:
    """When to retry for requests still waiting on an origin's first failure.

    Requests that arrived before an origin's outage began may wait up to
    ``unreachable_wait`` (from ``waiting_since``) for quick retries; returns
    the retry time if it falls within that wait, else None (drop them).
    """
    if not record.in_outage or record.next_retry_at is None:
        return None
    assert record.outage_started_at is not None
    if record.outage_started_at < waiting_since:
        return None  # the outage is older than these requests: no waiting
    if record.next_retry_at > waiting_since + config.unreachable_wait:
        return None
    return max(record.next_retry_at, now)


def _unavailable_reason(record: OriginRecord) -> str:
    return f"robots.txt unavailable ({record.reason or _status_reason(record.status)}): allow-all"


def _status_reason(status: int | None) -> str:
    return f"HTTP {status}" if status is not None else "network error"


def _iso(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def span(seconds: float) -> str:
    """A duration as people read it: ``12 h``, ``30 d``, ``5 s``."""
    if seconds >= DAY and seconds % DAY == 0:
        return f"{seconds / DAY:g} d"
    if seconds >= HOUR:
        return f"{seconds / HOUR:g} h"
    return f"{seconds:g} s"
