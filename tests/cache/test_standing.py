"""The report's classification (``cache.standing``): each state of docs/cli.md
from records the policy wrote, on a fixed clock, with its since and until."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.standing import State, forbids_everything, standing
from scrapy_rep.engine.robotstxt import RobotsTxt

T0 = 1_700_000_000.0
URL = "http://example.com/robots.txt"
BODY = b"User-agent: *\nDisallow: /private\n"
GOOGLE = PolicyConfig()
LEGACY = PolicyConfig.older_google()


def fetched(kind: FetchKind, status: int | None) -> FetchOutcome:
    body = BODY if kind is FetchKind.SUCCESS else b""
    reason = f"HTTP {status}" if status else "DNS failure"
    return FetchOutcome(kind, URL, T0, status, body, reason)


def history(*steps: tuple[float, FetchKind, int | None], config: PolicyConfig) -> OriginRecord:
    record: OriginRecord | None = None
    for at, kind, status in steps:
        record = record_outcome(record, fetched(kind, status), at, config, random=lambda: 0.0)
    assert record is not None
    return record


OK, GONE, DOWN = FetchKind.SUCCESS, FetchKind.UNAVAILABLE, FetchKind.UNREACHABLE
#: The copy of T0 - 2 days expired a day before the outage began at T0.
COPY = (T0 - 2 * DAY, OK, 200)

#: name -> (steps, now, config, state, since, until, cause, expired)
CASES = {
    "fresh 200": ([(T0, OK, 200)], T0 + HOUR, GOOGLE, State.RULES, T0, T0 + DAY, None, False),
    "expired 200": ([(T0, OK, 200)], T0 + 2 * DAY, GOOGLE, State.RULES, T0, T0 + DAY, None, True),
    "404": ([(T0, GONE, 404)], T0 + HOUR, GOOGLE, State.ALLOW_ALL, T0, T0 + DAY, None, False),
    "503 for an hour": (
        [COPY, (T0, DOWN, 503)],
        T0 + HOUR,
        GOOGLE,
        State.CLOSED,
        T0,
        T0 + 12 * HOUR,
        "5xx",
        False,
    ),
    "429 for an hour": (
        [COPY, (T0, DOWN, 429)],
        T0 + HOUR,
        GOOGLE,
        State.CLOSED,
        T0,
        T0 + 12 * HOUR,
        "429",
        False,
    ),
    "DNS for an hour, no copy": (
        [(T0, DOWN, None)],
        T0 + HOUR,
        GOOGLE,
        State.CLOSED,
        T0,
        T0 + 12 * HOUR,
        "network",
        False,
    ),
    "503 for 13 h, a copy": (
        [COPY, (T0, DOWN, 503)],
        T0 + 13 * HOUR,
        GOOGLE,
        State.LAST_COPY,
        T0,
        T0 + 30 * DAY,
        "5xx",
        False,
    ),
    "503 for 13 h, no copy, not asked since 12 h": (
        [(T0, DOWN, 503)],
        T0 + 13 * HOUR,
        GOOGLE,
        State.CLOSED,
        T0,
        None,
        "5xx",
        False,
    ),
    "503 for 13 h, no copy": (
        [(T0, DOWN, 503), (T0 + 12 * HOUR, DOWN, 503)],
        T0 + 13 * HOUR,
        GOOGLE,
        State.OUTAGE_ALLOW,
        T0,
        T0 + 30 * DAY,
        "5xx",
        False,
    ),
    "503 for 13 h after a 404": (
        [(T0 - 2 * DAY, GONE, 404), (T0, DOWN, 503), (T0 + 12 * HOUR, DOWN, 503)],
        T0 + 13 * HOUR,
        GOOGLE,
        State.OUTAGE_ALLOW,
        T0,
        T0 + 30 * DAY,
        "5xx",
        False,
    ),
    "503 for 31 days, the site silent": (
        [COPY, (T0, DOWN, 503)],
        T0 + 31 * DAY,
        GOOGLE,
        State.CLOSED,
        T0,
        None,
        "5xx",
        False,
    ),
    "older rules, 503 for 13 h": (
        [COPY, (T0, DOWN, 503)],
        T0 + 13 * HOUR,
        LEGACY,
        State.CLOSED,
        T0,
        T0 + 30 * DAY,
        "5xx",
        False,
    ),
    "older rules, 503 for 31 days": (
        [COPY, (T0, DOWN, 503)],
        T0 + 31 * DAY,
        LEGACY,
        State.LAST_COPY,
        T0,
        None,
        "5xx",
        False,
    ),
    "an early refresh failed": (
        [(T0 - HOUR, OK, 200), (T0, DOWN, 500)],
        T0 + HOUR,
        GOOGLE,
        State.LAST_COPY,
        T0,
        T0 + DAY - HOUR,
        "5xx",
        False,
    ),
    "a proxy's 407": (
        [(T0, DOWN, 407)],
        T0 + HOUR,
        GOOGLE,
        State.CLOSED,
        T0,
        T0 + 12 * HOUR,
        "other",
        False,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_standing_of_each_state_with_since_until_and_cause(case: tuple) -> None:  # type: ignore[type-arg]
    steps, now, config, state, since, until, cause, expired = case
    found = standing(history(*steps, config=config), now, config)
    assert found is not None
    assert (found.state, found.since, found.until, found.cause, found.expired) == (
        state,
        since,
        until,
        cause,
        expired,
    )
    assert found.reason  # the policy's words, as the crawl logs them


def test_standing_after_30_days_a_site_whose_pages_answered_is_open_until_a_day_later() -> None:
    down = history(COPY, (T0, DOWN, 503), (T0 + 30 * DAY, DOWN, 503), config=GOOGLE)
    record = replace(down, site_reachable_at=T0 + 30 * DAY)
    found = standing(record, T0 + 30 * DAY + HOUR, GOOGLE)
    assert found is not None
    assert (found.state, found.until) == (State.OUTAGE_ALLOW, T0 + 31 * DAY)


def test_standing_of_a_record_from_the_future_is_none_as_a_crawl_ignores_it() -> None:
    record = history((T0 + 2 * DAY, OK, 200), config=GOOGLE)
    assert standing(record, T0, GOOGLE) is None


FORBIDS = {
    "Disallow: /": (b"User-agent: *\nDisallow: /\n", ("mybot",), True),
    "Disallow: /*": (b"User-agent: *\nDisallow: /*\n", ("mybot",), True),
    "Disallow: *": (b"User-agent: *\nDisallow: *\n", ("mybot",), True),
    "and one Allow": (b"User-agent: *\nDisallow: /\nAllow: /public\n", ("mybot",), False),
    "a part only": (b"User-agent: *\nDisallow: /private\n", ("mybot",), False),
    "the home page only": (b"User-agent: *\nDisallow: /$\n", ("mybot",), False),
    "its own group allows": (
        b"User-agent: mybot\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n",
        ("mybot",),
        False,
    ),
    "its own group forbids": (
        b"User-agent: mybot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
        ("mybot",),
        True,
    ),
    "the second token's group": (
        b"User-agent: mybot\nDisallow: /\n",
        ("mybot-news", "mybot"),
        True,
    ),
    "no group applies": (b"User-agent: other\nDisallow: /\n", ("mybot",), False),
    "no token: the * group": (b"User-agent: *\nDisallow: /\n", (), True),
    "an empty file": (b"", ("mybot",), False),
}


@pytest.mark.parametrize("case", FORBIDS.values(), ids=FORBIDS.keys())
def test_forbids_everything_means_a_disallow_of_every_path_and_no_allow(
    case: tuple[bytes, tuple[str, ...], bool],
) -> None:
    body, tokens, expected = case
    robots = RobotsTxt.parse(body)
    assert forbids_everything(robots, tokens) is expected
    if expected:  # and the engine agrees on a few paths
        assert not any(robots.allowed(f"http://e.com{p}", tokens) for p in ("/", "/a", "/x/y?z"))
