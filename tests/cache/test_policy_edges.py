"""The policy's rules of docs/spec.md §2.2 and §3 at the instant each one turns,
where a mutation run (tests/mutation/run.py) found them untested. On a fake
clock: every time is T0 plus the seconds a row gives."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from scrapy_rep.cache import policy
from scrapy_rep.cache.outcome import AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    DAY,
    HOUR,
    Action,
    Decision,
    OriginRecord,
    PolicyConfig,
    decide,
    decide_settled,
    freshness,
    loaded_record,
    note_site_answer,
    quick_retry_at,
    record_outcome,
    retention,
    retry_after_delay,
)
from scrapy_rep.cache.record import CLOCK_SKEW

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
URL = "http://example.com/robots.txt"
BODY = b"User-agent: *\nDisallow: /private\n"
CONFIG = PolicyConfig()


def outcome(
    kind: FetchKind,
    status: int | None,
    at: float = 0.0,
    cache_control: str | None = None,
    retry_after: str | None = None,
) -> FetchOutcome:
    body = BODY if kind is FetchKind.SUCCESS else b""
    reason = f"HTTP {status}" if status else "connection refused"
    return FetchOutcome(
        kind, URL, T0 + at, status, body, reason, cache_control, retry_after=retry_after
    )


def history(*steps: tuple[float, FetchOutcome], config: PolicyConfig = CONFIG) -> OriginRecord:
    """The record after these fetches, each at T0 plus its seconds."""
    record: OriginRecord | None = None
    for at, fetched in steps:
        record = record_outcome(record, fetched, T0 + at, config, random=lambda: 0.0)
    assert record is not None
    return record


OK = outcome(FetchKind.SUCCESS, 200)
BUSY = outcome(FetchKind.UNREACHABLE, 503)
#: A copy two days old, then robots.txt unreachable from T0 on.
DOWN = history((-2 * DAY, outcome(FetchKind.SUCCESS, 200, -2 * DAY)), (0, BUSY))


def state(record: OriginRecord, at: float, config: PolicyConfig = CONFIG) -> AccessState | None:
    decision = decide(record, T0 + at, config)
    assert decision.action is Action.USE
    return decision.state


# --- §2.2 the outage's windows, on the dot -------------------------------------------------


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (12 * HOUR - 1, AccessState.CLOSED),
        (12 * HOUR, AccessState.RULES),  # the last good copy, from 12 h on
        (30 * DAY - 1, AccessState.RULES),
        (30 * DAY, AccessState.CLOSED),  # exactly 30 days: the long outage's rule
    ],
)
def test_status_2_2_outage_windows_turn_on_the_dot(age: float, expected: AccessState) -> None:
    assert state(DOWN, age) is expected


@pytest.mark.parametrize(
    ("seen_ago", "expected"),
    [
        (0.0, AccessState.ALLOW_ALL),
        (DAY, AccessState.ALLOW_ALL),  # a page answered exactly 24 h ago: still reachable
        (DAY + 1, AccessState.CLOSED),
    ],
)
def test_status_2_2_site_reachable_within_24h_on_the_dot(
    seen_ago: float, expected: AccessState
) -> None:
    now = 31 * DAY
    # asked again (and failed) since the 30 days ended, as retries go on
    record = replace(DOWN, site_reachable_at=T0 + now - seen_ago, fetched_at=T0 + 30 * DAY)
    assert state(record, now) is expected


@pytest.mark.parametrize(
    ("window", "said"),
    [
        (12 * HOUR, "12 h"),
        (DAY, "1 d"),
        (2 * DAY, "2 d"),
        (36 * HOUR, "36 h"),  # not a whole number of days: hours
        (HOUR, "1 h"),
        (90.0, "90 s"),
    ],
)
def test_status_2_2_closed_reason_names_the_window(window: float, said: str) -> None:
    config = PolicyConfig(unreachable_disallow=window, unreachable_max_age=max(window, 30 * DAY))
    record = history((0, BUSY), config=config)
    reason = decide(record, T0, config).reason
    assert "; closed: every request to it is dropped until " in reason
    assert reason.endswith(f" (the first {said} of an outage), or until robots.txt answers")


@pytest.mark.parametrize(
    ("good_status", "why"),
    [
        (200, "the last copy was not kept (no-store): no robots.txt"),
        (299, "the last copy was not kept (no-store): no robots.txt"),
        (404, "the last answer (HTTP 404) meant no robots.txt"),
        (None, "the last answer (network error) meant no robots.txt"),
    ],
)
def test_status_2_2_after_12h_an_answer_without_a_body_allows_and_says_why(
    good_status: int | None, why: str
) -> None:
    """A 2xx copy read back from another process without its body (no-store),
    or a 4xx: past 12 hours, once asked again, as if there were no robots.txt."""
    record = replace(DOWN, good_body=None, good_status=good_status, fetched_at=T0 + 12 * HOUR)
    decision = decide(record, T0 + 13 * HOUR, CONFIG)
    assert decision.state is AccessState.ALLOW_ALL
    assert decision.reason.endswith(f"; {why}")


@pytest.mark.parametrize(
    ("last_fetch", "action"),
    [
        (12 * HOUR - 1, Action.FETCH),  # not asked since the 12 h ended: ask first
        (12 * HOUR, Action.USE),  # asked again on the dot, and it failed: allow
    ],
)
def test_status_2_2_allow_all_at_the_windows_end_only_once_asked_again(
    last_fetch: float, action: Action
) -> None:
    """The end of the closed window is a reason to fetch, not to allow: with
    no copy, everything is allowed only once robots.txt failed again after it."""
    record = replace(DOWN, good_body=None, good_status=404, fetched_at=T0 + last_fetch)
    assert decide(record, T0 + 13 * HOUR, CONFIG).action is action


@pytest.mark.parametrize(
    ("last_fetch", "action"),
    [(30 * DAY - 1, Action.FETCH), (30 * DAY, Action.USE)],
)
def test_status_2_2_allow_all_after_30_days_only_once_asked_again(
    last_fetch: float, action: Action
) -> None:
    """After 30 days a site whose pages answer is open, once robots.txt was
    asked again after the 30 days (and failed)."""
    now = 31 * DAY
    record = replace(DOWN, site_reachable_at=T0 + now - 1, fetched_at=T0 + last_fetch)
    assert decide(record, T0 + now, CONFIG).action is action


def test_status_2_2_a_last_copys_rules_need_no_new_fetch_at_the_windows_end() -> None:
    """Only allowing waits for a fetch: a kept copy's rules apply at once."""
    assert state(DOWN, 12 * HOUR) is AccessState.RULES


# --- §2.2 quick retries: the wait's edge ---------------------------------------------------


@pytest.mark.parametrize(("retry_in", "waits"), [(10.0, True), (10.001, False)])
def test_status_2_2_a_quick_retry_exactly_at_the_end_of_the_wait_is_waited_for(
    retry_in: float, waits: bool
) -> None:
    record = replace(history((0, BUSY)), next_retry_at=T0 + retry_in)
    assert quick_retry_at(record, T0, T0, CONFIG) == (T0 + retry_in if waits else None)


def test_status_2_2_a_outage_without_a_next_retry_has_no_quick_retry() -> None:
    record = replace(history((0, BUSY)), next_retry_at=None)
    assert quick_retry_at(record, T0, T0, CONFIG) is None


# --- §2.2 Retry-After ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "delay"),
    [
        (" 120 ", 120.0),  # surrounding spaces are not part of the value
        ("\t120", 120.0),
        ("Tue, 14 Nov 2023 22:18:20", None),  # a date with no zone: unreadable
    ],
)
def test_status_2_2_retry_after_values_read_as_written(header: str, delay: float | None) -> None:
    assert retry_after_delay(header, T0, CONFIG) == delay
    record = history((0, outcome(FetchKind.UNREACHABLE, 503, retry_after=header)))
    assert record.next_retry_at == T0 + (delay if delay is not None else 2.0)  # or back-off


# --- §2.2 the site's answers, noted sparingly ----------------------------------------------


def test_status_2_2_a_page_answer_is_noted_again_after_an_hour_on_the_dot() -> None:
    noted = note_site_answer(history((0, BUSY)), T0, CONFIG)
    assert noted is not None
    assert note_site_answer(noted, T0 + HOUR - 1, CONFIG) is None  # 1/24 of the window
    again = note_site_answer(noted, T0 + HOUR, CONFIG)
    assert again is not None and again.site_reachable_at == T0 + HOUR


# --- §3.2 Cache-Control --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "ttl"),
    [
        ("max-age=600, max-age=7200", 600.0),  # a repeated directive: the first counts
        ("max-age=7200, max-age=600", 7200.0),
        ("s-maxage=600, s-maxage=7200, max-age=60", 600.0),
        (", ,max-age=600", 600.0),  # empty parts are skipped
    ],
)
def test_cache_3_2_first_of_repeated_directives_counts(header: str, ttl: float) -> None:
    assert freshness(header, CONFIG) == (ttl, False)


def test_cache_3_2_an_unreadable_cache_control_gives_the_default_life_within_bounds(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The default life applies (clamped to the bounds) and the body is kept:
    a header that could not be read says nothing about ``no-store``."""

    def broken(value: str | None) -> float | None:
        raise RuntimeError("a header nobody foresaw")

    monkeypatch.setattr(policy, "_delta_seconds", broken)
    monkeypatch.setattr(policy, "_UNREADABLE_HEADERS", set())
    config = PolicyConfig(cache_ttl=3 * DAY, cache_max_ttl=2 * DAY)
    with caplog.at_level(logging.WARNING, logger="scrapy_rep"):
        answer = outcome(FetchKind.SUCCESS, 200, cache_control="max-age=60")
        record = history((0, answer), config=config)
    assert record.expires_at == T0 + 2 * DAY
    assert not record.no_store and OriginRecord.from_bytes(record.to_bytes()).good_body == BODY
    assert len(caplog.records) == 1


def test_cache_3_2_a_record_is_kept_at_least_a_second() -> None:
    config = PolicyConfig(cache_keep=0)
    record = history((0, OK))
    assert retention(record, T0 + 2 * DAY, config) == 1.0
    assert retention(record, T0 + DAY - 30, config) == 30.0


# --- §3.4 records from another process or clock --------------------------------------------


@pytest.mark.parametrize(
    ("ahead", "trusted"),
    [(CLOCK_SKEW, True), (CLOCK_SKEW + 1, False), (-DAY, True)],
)
def test_storage_3_4_clocks_may_differ_by_an_hour(ahead: float, trusted: bool) -> None:
    """A record fetched (or a page answer noted) up to an hour ahead of this
    process's clock is another machine's clock, not a record from the future."""
    fetched_ahead = history((ahead, outcome(FetchKind.SUCCESS, 200, ahead)))
    assert (loaded_record(fetched_ahead, T0, CONFIG) is not None) is trusted
    seen_ahead = replace(DOWN, site_reachable_at=T0 + ahead)
    assert (loaded_record(seen_ahead, T0, CONFIG) is not None) is trusted


def test_storage_3_4_a_page_answer_within_the_skew_is_kept_as_written() -> None:
    seen = replace(DOWN, site_reachable_at=T0 + HOUR / 2)
    loaded = loaded_record(seen, T0, CONFIG)
    assert loaded is not None and loaded.site_reachable_at == T0 + HOUR / 2


# --- right after a load or a fetch: the answer must be given now -----------------------------


@pytest.mark.parametrize(
    ("record", "state", "reason"),
    [
        (None, AccessState.CLOSED, "robots.txt not resolved"),
        (
            history((0, outcome(FetchKind.SUCCESS, 200, cache_control="max-age=0")),
                    config=PolicyConfig(cache_min_ttl=0)),
            AccessState.RULES,
            "robots.txt rules",
        ),
        (
            history((0, outcome(FetchKind.UNAVAILABLE, 404, cache_control="max-age=0")),
                    config=PolicyConfig(cache_min_ttl=0)),
            AccessState.ALLOW_ALL,
            "robots.txt unavailable (HTTP 404): allow-all",
        ),
        (  # an unreachable fetch recorded without its outage (another writer's row)
            OriginRecord(FetchKind.UNREACHABLE, 503, "HTTP 503", T0, T0),
            AccessState.CLOSED,
            "robots.txt unreachable (HTTP 503); closed: every request to it is dropped "
            "until robots.txt answers",
        ),
    ],
)  # fmt: skip
def test_cache_3_1_a_record_already_expired_applies_this_once(
    record: OriginRecord | None, state: AccessState, reason: str
) -> None:
    """A TTL of 0 (``max-age=0`` with REP_CACHE_MIN_TTL 0): ``decide`` wants
    another fetch at once, ``decide_settled`` answers the waiting requests with
    the record as it is instead."""
    config = PolicyConfig(cache_min_ttl=0)
    assert decide(record, T0, config).action is Action.FETCH
    settled = decide_settled(record, T0, config)
    assert (settled.action, settled.state, settled.reason) == (Action.USE, state, reason)
    assert settled.body == (BODY if state is AccessState.RULES else None)


def test_cache_3_1_a_record_still_valid_is_settled_as_decided() -> None:
    record = history((0, OK))
    assert decide_settled(record, T0 + 5, CONFIG) == decide(record, T0 + 5, CONFIG)
    down = history((0, BUSY))
    assert decide_settled(down, T0 + 5, CONFIG) == decide(down, T0 + 5, CONFIG)


def test_cache_a_decision_to_use_needs_a_state() -> None:
    with pytest.raises(ValueError, match="fetch first"):
        Decision(Action.USE).access(lambda body: pytest.fail("nothing to parse"))
