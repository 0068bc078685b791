"""The outage and cache rules of docs/spec.md §2.2 and §3, on a fake clock."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scrapy_rep.cache.outcome import AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import (
    DAY,
    HOUR,
    Action,
    Decision,
    OriginRecord,
    PolicyConfig,
    decide,
    freshness,
    note_site_answer,
    quick_retry_at,
    record_outcome,
    retention,
    retry_after_delay,
)
from scrapy_rep.engine.robotstxt import RobotsTxt

T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z
MINUTE = 60.0
URL = "http://example.com/robots.txt"
BODY = b"User-agent: *\nDisallow: /private\n"
CONFIG = PolicyConfig()


def no_jitter() -> float:
    return 0.0


def success(body: bytes = BODY, cache_control: str | None = None, at: float = T0) -> FetchOutcome:
    return FetchOutcome(
        FetchKind.SUCCESS, URL, at, 200, body, "HTTP 200", cache_control=cache_control
    )


def failure(
    status: int | None = 503, retry_after: str | None = None, reason: str = ""
) -> FetchOutcome:
    reason = reason or (f"HTTP {status}" if status else "connection refused")
    return FetchOutcome(
        FetchKind.UNREACHABLE, URL, T0, status, reason=reason, retry_after=retry_after
    )


def unavailable(status: int = 404, cache_control: str | None = None) -> FetchOutcome:
    return FetchOutcome(
        FetchKind.UNAVAILABLE, URL, T0, status, reason=f"HTTP {status}", cache_control=cache_control
    )


def record(*steps: tuple[float, FetchOutcome], config: PolicyConfig = CONFIG) -> OriginRecord:
    """Apply outcomes at the given times, from no record."""
    current: OriginRecord | None = None
    for at, outcome in steps:
        current = record_outcome(current, outcome, at, config, random=no_jitter)
    assert current is not None
    return current


def outage(
    *,
    copy: bool,
    site_seen: float | None = None,
    config: PolicyConfig = CONFIG,
    asked: float | None = None,
) -> OriginRecord:
    """An origin whose robots.txt has been unreachable since T0; ``asked``:
    when it was last asked (and failed), T0 unless said."""
    steps: list[tuple[float, FetchOutcome]] = []
    if copy:
        steps.append((T0 - 2 * DAY, success(at=T0 - 2 * DAY)))
    steps.append((T0, failure(503)))
    current = record(*steps, config=config)
    fetched_at = current.fetched_at if asked is None else asked
    return replace(current, site_reachable_at=site_seen, fetched_at=fetched_at)


def assert_uses(decision: Decision, state: AccessState, body: bytes | None = None) -> None:
    assert decision.action is Action.USE, decision
    assert decision.state is state, decision
    assert decision.body == body


# --- §2.2 unreachable: 12 h closed, then the last good copy, then 30 d ----------


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("age", [0.0, 11 * HOUR + 59 * MINUTE])
def test_status_5xx_first_12h_full_disallow(copy: bool, age: float) -> None:
    decision = decide(outage(copy=copy), T0 + age, CONFIG)
    assert_uses(decision, AccessState.CLOSED)
    assert decision.reason.startswith(
        "robots.txt unreachable (HTTP 503) since 2023-11-14T22:13:20Z; closed: every request "
        "to it is dropped until 2023-11-15T10:13:20Z (the first 12 h of an outage), or until "
        "robots.txt answers"
    )


@pytest.mark.parametrize("age", [12 * HOUR + MINUTE, 29 * DAY])
def test_status_5xx_after_12h_last_good_copy(age: float) -> None:
    decision = decide(outage(copy=True), T0 + age, CONFIG)
    assert_uses(decision, AccessState.RULES, BODY)
    assert decision.stale
    assert "the rules of the last good copy (fetched 2023-11-12T22:13:20Z) apply" in decision.reason


@pytest.mark.parametrize("age", [12 * HOUR + MINUTE, 29 * DAY])
def test_status_5xx_after_12h_no_copy_full_allow(age: float) -> None:
    # asked again after the 12 h, and down (docs/spec.md §2.2)
    decision = decide(outage(copy=False, asked=T0 + age), T0 + age, CONFIG)
    assert_uses(decision, AccessState.ALLOW_ALL)
    assert "no earlier copy: everything allowed, as if it had no robots.txt" in decision.reason


@pytest.mark.parametrize("copy", [True, False])
def test_status_5xx_after_30d_site_reachable_full_allow(copy: bool) -> None:
    now = T0 + 31 * DAY
    decision = decide(outage(copy=copy, site_seen=now - HOUR, asked=now), now, CONFIG)
    assert_uses(decision, AccessState.ALLOW_ALL)
    assert "its pages answered at" in decision.reason and "everything allowed" in decision.reason


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("site_seen_ago", [None, 2 * DAY])
def test_status_5xx_after_30d_site_unreachable_full_disallow(
    copy: bool, site_seen_ago: float | None
) -> None:
    now = T0 + 31 * DAY
    seen = None if site_seen_ago is None else now - site_seen_ago
    decision = decide(outage(copy=copy, site_seen=seen), now, CONFIG)
    assert_uses(decision, AccessState.CLOSED)
    assert decision.reason.endswith(
        "closed: its pages do not answer either, 30 d into the outage: every request to it is "
        "dropped until robots.txt or a page answers"
    )


def test_network_error_is_unreachable_like_5xx() -> None:
    current = record((T0, failure(None, reason="connection refused")))
    decision = decide(current, T0 + HOUR, CONFIG)
    assert_uses(decision, AccessState.CLOSED)
    assert "robots.txt unreachable (connection refused)" in decision.reason


def test_status_5xx_outage_keeps_its_start_across_retries() -> None:
    current = record((T0, failure(503)), (T0 + 6 * HOUR, failure(500)), (T0 + 12 * HOUR, failure()))
    assert current.outage_started_at == T0
    assert current.failures == 3
    assert_uses(decide(current, T0 + 12 * HOUR + MINUTE, CONFIG), AccessState.ALLOW_ALL)


def test_status_5xx_outage_ends_on_success() -> None:
    current = record((T0, failure(503)), (T0 + HOUR, success(b"Disallow: /x", at=T0 + HOUR)))
    assert not current.in_outage and current.failures == 0 and current.next_retry_at is None
    assert_uses(decide(current, T0 + HOUR, CONFIG), AccessState.RULES, b"Disallow: /x")


def test_status_4xx_after_copy_then_5xx_means_no_robots_after_12h() -> None:
    current = record(
        (T0 - 3 * DAY, success(at=T0 - 3 * DAY)), (T0 - DAY, unavailable(404)), (T0, failure(503))
    )
    assert current.good_body is None
    current = replace(current, fetched_at=T0 + 13 * HOUR)  # asked again after 12 h: down
    decision = decide(current, T0 + 13 * HOUR, CONFIG)
    assert_uses(decision, AccessState.ALLOW_ALL)
    assert "the last answer (HTTP 404) meant no robots.txt" in decision.reason


# --- §2.2 retries: back-off with jitter, 503/429 sooner, Retry-After ----------


def test_status_5xx_retry_due_in_background() -> None:
    current = record((T0, failure(500)))
    assert current.next_retry_at == T0 + CONFIG.retry_initial
    before = decide(current, T0 + 1, CONFIG)
    after = decide(current, T0 + CONFIG.retry_initial, CONFIG)
    assert before.action is after.action is Action.USE  # never FETCH: requests never wait
    assert (before.refresh_due, after.refresh_due) == (False, True)
    # due exactly at the record's next_retry_at (Decision no longer repeats it)
    assert not decide(current, T0 + CONFIG.retry_initial - 0.001, CONFIG).refresh_due


@pytest.mark.parametrize(
    ("status", "delays"),
    [
        (500, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]),
        (None, [5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]),
        (503, [2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]),
        (429, [2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]),
    ],
)
def test_status_5xx_backoff_doubles_to_a_cap_503_429_sooner(
    status: int | None, delays: list[float]
) -> None:
    current: OriginRecord | None = None
    now = T0
    for expected in delays:
        current = record_outcome(current, failure(status), now, CONFIG, random=no_jitter)
        assert current.next_retry_at is not None
        assert current.next_retry_at - now == expected
        now = current.next_retry_at


def test_status_5xx_backoff_jitter_shortens_by_at_most_a_quarter() -> None:
    delays = []
    for draw in (0.0, 0.5, 0.999):
        current = record_outcome(None, failure(500), T0, CONFIG, random=iter([draw]).__next__)
        assert current.next_retry_at is not None
        delays.append(current.next_retry_at - T0)
    assert delays == pytest.approx([5.0, 4.375, 3.75125])


@pytest.mark.parametrize(
    ("header", "delay"),
    [
        ("120", 120.0),  # within bounds: as asked
        ("86400", HOUR),  # beyond: capped at retry_after_max
        ("0", 1.0),  # below: at least retry_after_min
        ("Tue, 14 Nov 2023 22:18:20 GMT", 300.0),  # an HTTP-date, 5 min after T0
        ("Tue, 14 Nov 2023 20:00:00 GMT", 1.0),  # a date in the past
        ("Tue, 21 Nov 2023 22:13:20 GMT", HOUR),  # a week ahead: capped
    ],
)
def test_status_429_retry_after_honoured_within_bounds(header: str, delay: float) -> None:
    assert retry_after_delay(header, T0, CONFIG) == delay
    current = record_outcome(None, failure(429, retry_after=header), T0, CONFIG, random=no_jitter)
    assert current.next_retry_at == T0 + delay


@pytest.mark.parametrize("header", [None, "", "soon", "-5", "1.5", "Tue, 99 Foo 2023"])
def test_status_503_unreadable_retry_after_falls_back_to_backoff(header: str | None) -> None:
    assert retry_after_delay(header, T0, CONFIG) is None
    current = record_outcome(None, failure(503, retry_after=header), T0, CONFIG, random=no_jitter)
    assert current.next_retry_at == T0 + CONFIG.retry_busy_initial


def test_status_503_retry_after_bounds_are_settings() -> None:
    config = PolicyConfig(retry_after_min=30, retry_after_max=6 * HOUR)
    assert retry_after_delay("5", T0, config) == 30
    assert retry_after_delay("86400", T0, config) == 6 * HOUR


# --- §2.2 / REP_UNREACHABLE_WAIT: quick retries for the first failure --------


def test_status_503_first_failure_requests_wait_for_quick_retries() -> None:
    waiting_since = T0 - 0.5  # a request arrived, the fetch failed at T0
    first = record((T0, failure(503)))
    assert quick_retry_at(first, waiting_since, T0, CONFIG) == T0 + 2
    second = record_outcome(first, failure(503), T0 + 2, CONFIG, random=no_jitter)
    assert quick_retry_at(second, waiting_since, T0 + 2, CONFIG) == T0 + 6
    third = record_outcome(second, failure(503), T0 + 6, CONFIG, random=no_jitter)
    assert third.next_retry_at == T0 + 14  # beyond 10 s of waiting: drop them
    assert quick_retry_at(third, waiting_since, T0 + 6, CONFIG) is None


def test_status_503_requests_arriving_during_a_outage_do_not_wait() -> None:
    current = record((T0, failure(503)))
    assert quick_retry_at(current, T0 + 1, T0 + 1, CONFIG) is None
    assert quick_retry_at(record((T0, success())), T0, T0, CONFIG) is None


# --- §2.2 site reachability -------------------------------------------------


def test_status_5xx_site_answers_are_noted_sparingly() -> None:
    assert note_site_answer(None, T0, CONFIG) is None
    assert note_site_answer(record((T0, success())), T0, CONFIG) is None  # no outage
    current = record((T0, failure()))
    noted = note_site_answer(current, T0 + 10, CONFIG)
    assert noted is not None and noted.site_reachable_at == T0 + 10
    assert note_site_answer(noted, T0 + 10 + 30 * MINUTE, CONFIG) is None  # recent enough
    later = note_site_answer(noted, T0 + 10 + HOUR, CONFIG)
    assert later is not None and later.site_reachable_at == T0 + 10 + HOUR


# --- §2.2 the older edition of Google's text --------------------------------


def test_google_older_rules_disallow_until_a_retry_succeeds() -> None:
    config = PolicyConfig.older_google()
    for age in (12 * HOUR + MINUTE, 29 * DAY):
        decision = decide(outage(copy=True, config=config), T0 + age, config)
        assert_uses(decision, AccessState.CLOSED)
        assert "(the first 30 d of an outage)" in decision.reason


def test_google_older_rules_after_30d_last_copy_or_allow() -> None:
    config = PolicyConfig.older_google()
    now = T0 + 31 * DAY
    assert_uses(decide(outage(copy=True, config=config), now, config), AccessState.RULES, BODY)
    # no copy: allow, whether or not the site answers
    # no copy, asked again after the 30 d (and down)
    bare = outage(copy=False, config=config, asked=now)
    assert_uses(decide(bare, now, config), AccessState.ALLOW_ALL)
    seen = outage(copy=False, site_seen=None, config=config, asked=now)
    assert_uses(decide(seen, now, config), AccessState.ALLOW_ALL)


def test_google_older_rules_accept_overrides() -> None:
    config = PolicyConfig.older_google(cache_min_ttl=10)
    assert (config.unreachable_disallow, config.long_outage, config.cache_min_ttl) == (
        30 * DAY,
        "cached",
        10,
    )


# --- §3.1 / §3.2 caching and Cache-Control ----------------------------------


@pytest.mark.parametrize(
    ("cache_control", "ttl"),
    [
        (None, DAY),  # absent: 24 h
        ("", DAY),
        ("public", DAY),
        ("max-age=3600", HOUR),  # shorter
        ("max-age=172800", DAY),  # longer: clamped to cache_max_ttl
        ("max-age=10", 60.0),  # shorter than cache_min_ttl: clamped
        ("max-age=0", 60.0),
        ("Max-Age=7200", 2 * HOUR),  # case-insensitive
        ('max-age="7200"', 2 * HOUR),  # quoted
        ("max-age=abc", DAY),  # unreadable: ignored
        ("max-age=-5", DAY),
        ("public, max-age=7200, s-maxage=600", 600.0),  # s-maxage wins: a shared cache
        ("s-maxage=600, max-age=7200", 600.0),
        ("no-cache", 60.0),
        ("no-cache, max-age=7200", 60.0),
    ],
)
def test_cache_3_2_cache_control_sets_ttl_within_bounds(
    cache_control: str | None, ttl: float
) -> None:
    assert freshness(cache_control, CONFIG) == (ttl, False)
    current = record((T0, success(cache_control=cache_control)))
    assert current.expires_at == T0 + ttl
    assert_uses(decide(current, T0 + ttl - 1, CONFIG), AccessState.RULES, BODY)
    assert decide(current, T0 + ttl, CONFIG).action is Action.FETCH


def test_cache_3_2_max_age_longer_than_24h_kept_when_max_ttl_allows() -> None:
    config = PolicyConfig(cache_max_ttl=7 * DAY)
    assert freshness("max-age=172800", config) == (2 * DAY, False)
    assert freshness(None, config) == (DAY, False)


def test_cache_3_2_no_store_not_persisted() -> None:
    assert freshness("no-store, max-age=7200", CONFIG) == (60.0, True)
    current = record((T0, success(cache_control="no-store")))
    assert current.no_store and current.good_body == BODY
    assert_uses(decide(current, T0 + 30, CONFIG), AccessState.RULES, BODY)  # in process
    stored = OriginRecord.from_bytes(current.to_bytes())
    assert stored.good_body is None and BODY not in current.to_bytes()
    assert decide(stored, T0 + 30, CONFIG).action is Action.FETCH  # elsewhere: fetch


def test_cache_3_1_unavailable_cached_as_full_allow() -> None:
    current = record((T0, unavailable(404)))
    decision = decide(current, T0 + DAY - 1, CONFIG)
    assert_uses(decision, AccessState.ALLOW_ALL)
    assert decision.reason == "robots.txt unavailable (HTTP 404): allow-all"
    assert decide(current, T0 + DAY, CONFIG).action is Action.FETCH
    short = record((T0, unavailable(410, cache_control="max-age=600")))
    assert decide(short, T0 + 600, CONFIG).action is Action.FETCH


def test_cache_3_1_no_record_fetches() -> None:
    assert decide(None, T0, CONFIG).action is Action.FETCH


def test_cache_3_1_ttl_bounds_are_settings() -> None:
    config = PolicyConfig(cache_ttl=HOUR, cache_min_ttl=5, cache_max_ttl=2 * HOUR)
    assert freshness(None, config) == (HOUR, False)
    assert freshness("max-age=1", config) == (5, False)
    assert freshness("max-age=99999", config) == (2 * HOUR, False)


# --- §3.3 an expired copy whose refresh is unreachable -----------------------


def test_cache_3_3_expired_copy_refresh_unreachable_disallow_12h_then_copy() -> None:
    fresh = record((T0, success()))
    expired_at = T0 + DAY
    assert decide(fresh, expired_at, CONFIG).action is Action.FETCH
    refreshed = record_outcome(fresh, failure(503), expired_at, CONFIG, random=no_jitter)
    assert refreshed.outage_started_at == expired_at
    for age in (0.0, 11 * HOUR + 59 * MINUTE):
        assert_uses(decide(refreshed, expired_at + age, CONFIG), AccessState.CLOSED)
    for age in (12 * HOUR + MINUTE, 29 * DAY):
        decision = decide(refreshed, expired_at + age, CONFIG)
        assert_uses(decision, AccessState.RULES, BODY)
        assert decision.stale


def test_cache_3_3_early_refresh_failure_keeps_a_copy_still_fresh() -> None:
    fresh = record((T0, success()))
    failed = record_outcome(fresh, failure(503), T0 + HOUR, CONFIG, random=no_jitter)
    decision = decide(failed, T0 + HOUR + MINUTE, CONFIG)
    assert_uses(decision, AccessState.RULES, BODY)
    assert not decision.stale
    # Once expired, the 12 h count from the expiry, not from the early failure.
    assert_uses(decide(failed, T0 + DAY, CONFIG), AccessState.CLOSED)
    assert_uses(decide(failed, T0 + DAY + 11 * HOUR + 59 * MINUTE, CONFIG), AccessState.CLOSED)
    assert_uses(decide(failed, T0 + DAY + 12 * HOUR + MINUTE, CONFIG), AccessState.RULES, BODY)


def test_cache_3_3_window_zero_keeps_the_last_copy_at_once() -> None:
    config = PolicyConfig(unreachable_disallow=0)
    fresh = record((T0, success()), config=config)
    refreshed = record_outcome(fresh, failure(503), T0 + DAY, config, random=no_jitter)
    assert_uses(decide(refreshed, T0 + DAY, config), AccessState.RULES, BODY)


# --- §2.3 the record persists: compact bytes ---------------------------------


def test_status_2_3_record_round_trips_through_bytes() -> None:
    body = b"User-agent: *\r\nDisallow: /\n\xff\xfe\x00binary\n"
    current = record((T0, success(body)), (T0 + DAY, failure(503, retry_after="60")))
    current = replace(current, site_reachable_at=T0 + DAY + 5)
    data = current.to_bytes()
    assert OriginRecord.from_bytes(data) == current
    assert len(data) < len(body) + 250
    plain = record((T0, unavailable(404)))
    assert OriginRecord.from_bytes(plain.to_bytes()) == plain


@pytest.mark.parametrize(
    "data",
    [b"", b"garbage", b'{"v":2}\n', b'{"v":1}\n', b"\xff\xfe\n", b'{"v":1,"k":"x"}\n', b"[1]\n"],
)
def test_status_2_3_malformed_record_bytes_raise_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        OriginRecord.from_bytes(data)


def test_status_2_3_retention_outlives_a_outage() -> None:
    current = record((T0, success()))
    assert retention(current, T0, CONFIG) == 31 * DAY
    long_lived = record(
        (T0, success(cache_control="max-age=99999999")), config=PolicyConfig(cache_max_ttl=90 * DAY)
    )
    assert retention(long_lived, T0, CONFIG) == 90 * DAY


# --- the decision turns into an Access ----------------------------------------


def test_decision_access_parses_through_the_given_parser() -> None:
    parsed: list[bytes] = []

    def parse(body: bytes) -> RobotsTxt:
        parsed.append(body)
        return RobotsTxt.parse(body)

    access = decide(record((T0, success())), T0, CONFIG).access(parse)
    assert access.state is AccessState.RULES and parsed == [BODY]
    assert not access.allowed("/private/x", "mybot") and access.allowed("/public", "mybot")
    closed = decide(record((T0, failure())), T0, CONFIG).access(parse)
    assert closed.robots is None and not closed.allowed("/public", "mybot")
    assert parsed == [BODY]
    with pytest.raises(ValueError, match="fetch first"):
        decide(None, T0, CONFIG).access(parse)


# --- configuration ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"unreachable_disallow": -1}, "unreachable_disallow must be >= 0"),
        ({"cache_min_ttl": float("nan")}, "cache_min_ttl must be >= 0"),
        ({"long_outage": "never"}, "long_outage must be one of"),
        ({"cache_min_ttl": 100, "cache_max_ttl": 10}, "cache_min_ttl"),
        ({"retry_after_min": 100, "retry_after_max": 10}, "retry_after_min"),
        ({"retry_jitter": 2}, "retry_jitter"),
    ],
)
def test_policy_config_rejects_bad_values(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        PolicyConfig(**kwargs)  # type: ignore[arg-type]
