"""What an origin's lifecycle tells the crawl, at the edges a mutation run
(tests/mutation/run.py) found untested: which fetch an announcement carries,
what is replayed to a spider, the warning about records from the future, the
first second of reuse. On a hand-moved clock: no reactor, no I/O."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

import pytest

from scrapy_rep.cache import lifecycle as lifecycle_module
from scrapy_rep.cache import policy
from scrapy_rep.cache.effects import (
    FETCH_NOW,
    Announce,
    Effects,
    FetchNow,
    Use,
    WaitBudget,
    WaitUntil,
)
from scrapy_rep.cache.lifecycle import REUSE, LifecycleRules, OriginLifecycle, shared_parsed_bodies
from scrapy_rep.cache.outcome import AccessState, FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, PolicyConfig
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.versions import Version
from scrapy_rep.engine.robotstxt import RobotsTxt

from .test_lifecycle import BODY, BUSY, GONE, OK, T0, URL, answer, one, stored


def lifecycle(rules: LifecycleRules | None = None, **policy: float) -> OriginLifecycle:
    config = PolicyConfig(retry_jitter=0, **policy)  # type: ignore[arg-type]
    return (rules or LifecycleRules(config, RobotsTxt.parse, random=lambda: 0.0)).new()


def announced(effects: Effects) -> Announce:
    """The announcement among ``effects``, the answer after it."""
    told = one(Announce, effects)
    assert isinstance(told, Announce) and one(Use, effects).access is told.access  # type: ignore[union-attr]
    return told


def used(effects: Effects) -> Use:
    use = one(Use, effects)
    assert isinstance(use, Use)
    return use


FETCHING = (FETCH_NOW,)


# --- docs/spec.md §8.1: each fetch is announced once, with the access it gave ---------------


def test_spec_8_1_the_fetch_behind_a_new_access_is_announced_with_it() -> None:
    origin = lifecycle()
    assert origin.loaded(None, T0) == FETCHING
    told = announced(origin.fetched(OK, T0, None))
    assert told.new and told.fetched is OK and told.outcomes == (OK,)


def test_spec_8_1_an_old_fetch_is_not_announced_again_with_a_later_access() -> None:
    """12 hours into an outage the access changes without a fetch (the last
    copy's rules): that change is announced with no fetch behind it, not with
    the 503 of 12 hours ago."""
    origin = lifecycle()
    origin.loaded(stored(OK, -DAY), T0)
    closed = announced(origin.fetched(BUSY, T0, None))
    assert closed.fetched is BUSY and closed.access.state is AccessState.CLOSED
    opened = announced(origin.asked(T0 + 12 * HOUR))
    assert opened.new and opened.access.state is AccessState.RULES
    assert opened.fetched is None and opened.outcomes == ()


def test_spec_2_2_twelve_hours_without_a_copy_ask_again_before_allowing() -> None:
    """With no copy, the window's end is a fetch; its failure then allows."""
    origin = lifecycle()
    origin.loaded(None, T0)
    origin.fetched(BUSY, T0, None)
    assert origin.asked(T0 + 12 * HOUR) == FETCHING
    later = answer(FetchKind.UNREACHABLE, 503, at=12 * HOUR)
    opened = announced(origin.fetched(later, T0 + 12 * HOUR, None))
    assert opened.new and opened.access.state is AccessState.ALLOW_ALL


def test_spec_8_1_a_flight_of_quick_retries_announces_each_of_its_fetches() -> None:
    origin = lifecycle()
    origin.loaded(None, T0)
    waiting = WaitBudget(T0, 10.0)
    assert one(WaitUntil, origin.fetched(BUSY, T0, waiting)) == WaitUntil(T0 + 2)
    retried = answer(FetchKind.SUCCESS, 200, at=2)
    effects = origin.fetched(retried, T0 + 2, WaitBudget(T0, 8.0))
    told = announced(effects)
    assert told.outcomes == (BUSY, retried) and told.fetched is retried
    # told once: the next request just uses it
    assert used(origin.asked(T0 + 2.5)) is used(effects)


def test_spec_8_1_a_refresh_that_brings_the_same_rules_is_announced_again() -> None:
    """Each fetch is told with the access it gave, the same rules or not."""
    origin = lifecycle()
    origin.loaded(None, T0)
    first = announced(origin.fetched(OK, T0, None))
    assert origin.asked(T0 + DAY) == FETCHING
    again = answer(FetchKind.SUCCESS, 200, at=DAY)
    second = announced(origin.fetched(again, T0 + DAY, None))
    assert second.new and second.fetched is again and second.outcomes == (again,)
    assert first.fetched is OK


# --- docs/spec.md §2.2: the quick retry's edge ---------------------------------------------


@pytest.mark.parametrize(("left", "waits"), [(2.0, True), (1.999, False)])
def test_spec_2_2_a_quick_retry_exactly_as_far_as_the_wait_left_is_waited_for(
    left: float, waits: bool
) -> None:
    origin = lifecycle()
    origin.loaded(None, T0)
    effects = origin.fetched(BUSY, T0, WaitBudget(T0, left))
    assert (WaitUntil(T0 + 2) in effects) is waits
    if not waits:
        assert announced(effects).access.state is AccessState.CLOSED


def test_spec_3_5_requests_joining_a_flight_do_not_ask_the_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While requests wait for a flight's first fetch, one more joins it at
    once (docs/spec.md §3.5); once that fetch failed, a new one meets the
    outage as it stands, not the quick retry (docs/spec.md §2.2)."""
    asked: list[float] = []
    real = policy.decide

    def decide(record: OriginRecord | None, now: float, config: PolicyConfig) -> policy.Decision:
        asked.append(now)
        return real(record, now, config)

    monkeypatch.setattr(lifecycle_module, "decide", decide)
    origin = lifecycle()
    assert origin.loaded(None, T0) == FETCHING and asked == [T0]
    assert origin.asked(T0 + 0.5) == FETCHING and origin.known(T0 + 0.5) is None
    assert asked == [T0]
    assert WaitUntil(T0 + 3) in origin.fetched(BUSY, T0 + 1, WaitBudget(T0, 10.0))
    assert announced(origin.asked(T0 + 1.5)).access.state is AccessState.CLOSED


def test_spec_3_1_an_answer_that_must_not_wait_is_the_one_held() -> None:
    """``known`` (an answer that must not wait) gives the answer kept for its
    second, the same access after it, and none once a fetch must come first."""
    origin = lifecycle()
    origin.loaded(stored(OK), T0)
    use = used(origin.asked(T0 + 1))
    assert origin.known(T0 + 1) is use and origin.known(T0 + 1.5) is use
    later = origin.known(T0 + 1 + REUSE)
    assert later is not None and later is not use and later.access is use.access
    assert origin.known(T0 + DAY) is None  # expired: a fetch first


def test_spec_2_2_a_page_answering_in_an_outage_drops_the_answer_kept_not_the_access() -> None:
    origin = lifecycle()
    origin.loaded(None, T0)
    closed = used(origin.fetched(BUSY, T0, None))
    assert origin.site_answered(T0 + 0.5)  # the mark, to save
    known = origin.known(T0 + 0.6)
    assert known is not None and known is not closed and known.access is closed.access


# --- docs/spec.md §3.4: what a spider asking for robots.txt is given -------------------------


def test_spec_3_4_a_stored_4xx_is_replayed_as_a_4xx() -> None:
    origin = lifecycle()
    origin.loaded(stored(GONE), T0 + 60)
    replay = origin.replay(URL)
    assert replay is not None
    assert (replay.kind, replay.status, replay.body) == (FetchKind.UNAVAILABLE, 404, b"")
    assert replay.fetched_at == T0 and replay.url == URL


def test_spec_3_4_a_stored_2xx_is_replayed_as_plain_text() -> None:
    origin = lifecycle()
    origin.loaded(stored(OK), T0 + 60)
    replay = origin.replay(URL)
    assert replay is not None and replay.kind is FetchKind.SUCCESS
    assert (replay.status, replay.body, replay.reason) == (200, BODY, "HTTP 200")
    assert replay.headers == {"content-type": ("text/plain",)}


def test_spec_3_4_a_2xx_whose_body_was_not_kept_is_not_replayed() -> None:
    no_store = answer(FetchKind.SUCCESS, 200, cache_control="no-store")
    from_the_store = OriginRecord.from_bytes(stored(no_store).to_bytes())
    origin = lifecycle()
    assert origin.loaded(from_the_store, T0 + 30) == FETCHING
    assert origin.replay(URL) is None  # the spider's request goes to the network


def test_spec_3_4_the_record_another_process_fetched_replaces_our_own_fetch() -> None:
    origin = lifecycle()
    origin.loaded(None, T0)
    origin.fetched(OK, T0, None)
    theirs = answer(FetchKind.SUCCESS, 200, at=DAY)
    theirs = replace(theirs, body=b"User-agent: *\nDisallow: /\n")
    assert origin.asked(T0 + DAY) == FETCHING
    assert announced(origin.shared(stored(theirs, DAY), T0 + DAY, None)).new
    replay = origin.replay(URL)
    assert replay is not None and replay is not OK and replay.body == theirs.body
    assert origin.size == len(BODY) + len(theirs.body)  # ours is kept for the logs too


@pytest.mark.parametrize(
    ("events", "size"),
    [
        ([], 0),
        ([("fetched", OK)], len(BODY)),  # one body, counted once
        ([("fetched", GONE)], 0),
        ([("load", OK)], len(BODY)),
        ([("fetched", BUSY)], 0),
    ],
)
def test_scrapy_size_counts_each_body_kept_once(
    events: list[tuple[str, FetchOutcome]], size: int
) -> None:
    """The bytes REP_MEMORY_MAX_BYTES counts for an origin (issue 28)."""
    origin = lifecycle()
    for what, outcome in events:
        if what == "load":
            origin.loaded(stored(outcome), T0)
        else:
            origin.loaded(None, T0)
            origin.fetched(outcome, T0, None)
    assert origin.size == size


def test_size_counts_the_earlier_versions_a_loaded_record_keeps() -> None:
    """docs/versions.md: the crawl's copies of the records are bounded in
    bytes (REP_MEMORY_MAX_BYTES) with their earlier versions' bodies."""
    earlier = (Version(200, b"User-agent: *\nDisallow: /old\n", T0 - DAY, T0 - HOUR),)
    origin = lifecycle()
    origin.loaded(replace(stored(OK), earlier=earlier), T0)
    assert origin.size == len(BODY) + len(earlier[0].body or b"")


# --- a flight that fails midway --------------------------------------------------------------


def test_spec_8_3_a_flight_that_failed_before_any_record_closes_then_fetches_again() -> None:
    """The store failed before it answered: the waiting requests are told the
    origin is not resolved (closed), and the next request starts a fetch."""
    origin = lifecycle()
    told = announced(origin.landed(T0))
    assert told.access.state is AccessState.CLOSED
    assert told.access.reason == "robots.txt not resolved"
    assert origin.asked(T0 + 0.5) == FETCHING


def test_spec_3_3_a_record_forgotten_in_the_store_is_fetched_again_at_once() -> None:
    """``scrapy-rep cache forget``: the next load finds nothing, and the next
    request fetches, even within the second an answer is reused for."""
    origin = lifecycle()
    assert announced(origin.loaded(stored(OK), T0)).new
    assert used(origin.asked(T0 + 0.1)).access.state is AccessState.RULES
    assert origin.loaded(None, T0 + 0.2) == FETCHING
    assert origin.asked(T0 + 0.3) == FETCHING


def test_spec_2_2_a_retry_due_a_second_after_an_answer_is_started() -> None:
    """An answer is reused for a second at most (``REUSE``): a retry that falls
    due after that is started by the next request."""
    origin = lifecycle()
    origin.loaded(None, T0)
    origin.fetched(BUSY, T0, None)  # the next retry is due at T0 + 2
    first = used(origin.asked(T0 + 2 - REUSE - 0.5))
    assert not first.retry
    due = used(origin.asked(T0 + 2))
    assert due.retry


@pytest.mark.parametrize(
    ("refresh_failed", "at"),
    [
        (False, 10.0),  # fresh
        (True, DAY),  # closed, from the very instant the copy expired
        (True, DAY + 13 * HOUR),  # the stale copy
    ],
)
def test_spec_3_1_one_answer_object_for_a_second_from_the_instant_it_is_given(
    refresh_failed: bool, at: float
) -> None:
    """A busy origin costs one decision a second (``REUSE``), whatever its state."""
    origin = lifecycle(retry_busy_initial=2 * DAY, retry_busy_max=2 * DAY)  # no retry due
    origin.loaded(stored(OK), T0)
    if refresh_failed:
        origin.fetched(BUSY, T0 + DAY, None)
    use = used(origin.asked(T0 + at))
    assert used(origin.asked(T0 + at)) is use  # the same instant
    assert used(origin.asked(T0 + at + REUSE / 2)) is use
    assert used(origin.asked(T0 + at + REUSE)) is not use


def test_spec_3_2_a_robots_txt_that_cannot_be_parsed_allows_everything_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The engine promises never to raise on content; if a parse raises anyway,
    the origin is open (as for a file with no rules) and the error is logged."""

    def parse(body: bytes) -> RobotsTxt:
        raise RecursionError("a body nobody foresaw")

    origin = LifecycleRules(PolicyConfig(), parse, random=lambda: 0.0).new()
    with caplog.at_level(logging.ERROR, logger="scrapy_rep"):
        told = announced(origin.loaded(stored(OK), T0))
    assert told.access.state is AccessState.ALLOW_ALL
    assert told.access.reason.startswith("robots.txt unparsable (RecursionError(")
    assert [r.getMessage() for r in caplog.records] == [
        "Parsing a robots.txt failed (robots.txt rules)"
    ]


# --- issue 13 §1: a policy that fails to record an answer -------------------------------------


def test_spec_3_2_an_answer_the_policy_cannot_record_counts_without_its_headers(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug nobody foresaw in reading the headers costs the headers, never the answer."""
    real = policy.record_outcome

    def failing_on_headers(
        record: OriginRecord | None,
        outcome: FetchOutcome,
        now: float,
        config: PolicyConfig,
        **kw: Callable[[], float],
    ) -> OriginRecord:
        if outcome.cache_control is not None:
            raise ArithmeticError("a header nobody foresaw")
        return real(record, outcome, now, config, **kw)

    monkeypatch.setattr(lifecycle_module, "record_outcome", failing_on_headers)
    origin = lifecycle()
    origin.loaded(None, T0)
    with caplog.at_level(logging.ERROR, logger="scrapy_rep"):
        fetched = answer(FetchKind.SUCCESS, 200, cache_control="max-age=60")
        effects = origin.fetched(fetched, T0, None)
    assert announced(effects).access.state is AccessState.RULES
    assert origin.record is not None and origin.record.expires_at == T0 + DAY  # the default life
    assert [r.getMessage() for r in caplog.records] == [
        f"Recording {URL} failed; its headers are ignored"
    ]


def test_spec_2_2_an_answer_the_policy_cannot_record_at_all_counts_as_unreachable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = policy.record_outcome

    def failing_but_on_failures(
        record: OriginRecord | None,
        outcome: FetchOutcome,
        now: float,
        config: PolicyConfig,
        **kw: Callable[[], float],
    ) -> OriginRecord:
        if outcome.kind is not FetchKind.UNREACHABLE:
            raise ArithmeticError("a body nobody foresaw")
        return real(record, outcome, now, config, **kw)

    monkeypatch.setattr(lifecycle_module, "record_outcome", failing_but_on_failures)
    origin = lifecycle()
    origin.loaded(None, T0)
    with caplog.at_level(logging.ERROR, logger="scrapy_rep"):
        effects = origin.fetched(OK, T0, None)
    told = announced(effects)
    assert told.access.state is AccessState.CLOSED
    assert told.access.reason.startswith(
        "robots.txt unreachable (an answer that could not be recorded) since "
    )
    assert [r.getMessage() for r in caplog.records] == [
        f"Recording {URL} failed; its headers are ignored",
        f"Recording {URL} failed; it counts as unreachable",
    ]


# --- records from the future: absent, and said once per crawl --------------------------------


def test_spec_3_4_a_record_from_the_future_is_said_once_for_every_origin(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rules = LifecycleRules(PolicyConfig(), RobotsTxt.parse, random=lambda: 0.0)
    future = stored(OK, 10 * DAY)
    with caplog.at_level(logging.WARNING, logger="scrapy_rep"):
        assert lifecycle(rules).loaded(stored(OK), T0) != FETCHING  # not from the future
        assert caplog.records == []
        assert lifecycle(rules).loaded(future, T0) == FETCHING
        assert lifecycle(rules).loaded(future, T0) == FETCHING
        assert lifecycle(rules).shared(future, T0, None) == (FetchNow(shared=False),)
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "fetched in the future (HTTP 200)" in warnings[0]


# --- one parse per body, per reading -------------------------------------------------------


def test_spec_4_5_one_parse_cache_per_reading_shared_by_the_process() -> None:
    plain, quirks = shared_parsed_bodies(), shared_parsed_bodies(True)
    assert plain is shared_parsed_bodies(False) and quirks is shared_parsed_bodies(True)
    assert plain is not quirks
    body = b"User-agent: *\nDisalow: /x\n"  # a misspelling only Google's library reads
    assert plain(body).allowed("https://a.example/x", "mybot")
    assert not quirks(body).allowed("https://a.example/x", "mybot")
