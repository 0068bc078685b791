"""One origin's lifecycle, event by event, on a hand-moved clock: no reactor, no I/O.

Each row tells the machine a few events and reads the effects it hands back,
written short: "fetch", "wait +2", "save", "use rules", "announce allow-all new"...
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from scrapy_rep.cache.effects import (
    FETCH_NOW,
    Announce,
    Effect,
    Effects,
    FetchNow,
    Save,
    Use,
    WaitBudget,
    WaitUntil,
)
from scrapy_rep.cache.lifecycle import LifecycleRules, OriginLifecycle
from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, PolicyConfig, record_outcome
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.engine.robotstxt import RobotsTxt

T0 = 1_700_000_000.0
URL = "http://a.example/robots.txt"
BODY = b"User-agent: *\nDisallow: /private\n"
WAIT = WaitBudget(T0, 10.0)  # requests wait for this flight, 10 s more at most


def answer(
    kind: FetchKind, status: int, at: float = 0.0, cache_control: str | None = None
) -> FetchOutcome:
    body = BODY if kind is FetchKind.SUCCESS else b""
    return FetchOutcome(
        kind, URL, T0 + at, status, body, reason=f"HTTP {status}", cache_control=cache_control
    )


OK = answer(FetchKind.SUCCESS, 200)
GONE = answer(FetchKind.UNAVAILABLE, 404)
BUSY = answer(FetchKind.UNREACHABLE, 503)


def stored(outcome: FetchOutcome, at: float = 0.0, **policy: object) -> OriginRecord:
    """The record another process (or an earlier run) wrote for ``outcome``."""
    config = PolicyConfig(retry_jitter=0, **policy)  # type: ignore[arg-type]
    return record_outcome(None, outcome, T0 + at, config, random=lambda: 0.0)


def said(effects: Effects | Use | None) -> list[str]:
    """What an event handed back, short: an announcement with the answer after
    it as one phrase, a quick retry's wait with its fetch as one."""
    if not effects:
        return ["unsettled"]
    words: list[str] = []
    told: Announce | None = None
    for effect in (effects,) if isinstance(effects, Use) else effects:
        if isinstance(effect, FetchNow):
            if not (words and words[-1].startswith("wait")):  # not a quick retry's fetch
                words.append("fetch" if effect.shared else "fetch here")
        elif isinstance(effect, WaitUntil):
            words.append(f"wait +{effect.at - T0:g}")
        elif isinstance(effect, Save):
            words.append("save")
        elif isinstance(effect, Announce):
            told = effect
        else:
            words.append(answered(effect, told))
            told = None
    return words


def answered(use: Use, told: Announce | None) -> str:
    words = ["announce" if told is not None else "use", use.access.state.value]
    if told is not None:
        assert told.access is use.access
        words += ["new"] if told.new else []
        words += [f"after {len(told.outcomes)}"] if told.outcomes else []
    words += ["stale"] if use.stale else []
    words += ["outage"] if use.outage is not None else []
    words += ["retry"] if use.retry else []
    return " ".join(words)


def one(kind: type[Effect], effects: Effects) -> Effect:
    """The one effect of ``kind`` that ``effects`` holds."""
    found = [effect for effect in effects if isinstance(effect, kind)]
    assert len(found) == 1, effects
    return found[0]


@dataclass
class Row:
    """Events for one origin (each a tuple: what, then its data and time in
    seconds from T0), and what the last of them hands back."""

    cite: str
    events: list[tuple[object, ...]]
    effects: list[str]
    policy: dict[str, object] = field(default_factory=dict)


def run(row: Row) -> tuple[OriginLifecycle, list[str]]:
    config = PolicyConfig(retry_jitter=0, **row.policy)  # type: ignore[arg-type]
    lifecycle = LifecycleRules(config, RobotsTxt.parse, random=lambda: 0.0).new()
    effects: Effects | Use | None = None
    for event in row.events:
        what, data, at = event[0], event[1], float(event[-1])  # type: ignore[arg-type]
        now = T0 + at
        waiting = event[2] if len(event) == 4 else None
        if what == "load":
            effects = lifecycle.loaded(data, now)  # type: ignore[arg-type]
        elif what == "fetched":
            effects = lifecycle.fetched(data, now, waiting)  # type: ignore[arg-type]
        elif what == "shared":
            effects = lifecycle.shared(data, now, waiting)  # type: ignore[arg-type]
        elif what == "seed":
            effects = lifecycle.seeded(data, now)  # type: ignore[arg-type]
        elif what == "site":
            effects = lifecycle.site_answered(now)
        elif what == "ask":
            effects = lifecycle.asked(now)
        elif what == "peek":
            effects = lifecycle.known(now)
        else:
            raise AssertionError(what)
    return lifecycle, said(effects) if row.events else []


ROWS = {
    "cold origin: requests wait for the fetch": Row(
        "docs/spec.md §8.3", [("load", None, 0)], ["fetch"]
    ),
    "2xx: save, then the rules decide": Row(
        "docs/spec.md §2, §3.1",
        [("load", None, 0), ("fetched", OK, 0)],
        ["save", "announce rules new after 1"],
    ),
    "4xx: save, then everything is allowed": Row(
        "docs/spec.md §2",
        [("load", None, 0), ("fetched", GONE, 0)],
        ["save", "announce allow-all new after 1"],
    ),
    "first 503 with requests waiting: a quick retry after the busy back-off": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, WAIT, 0)],
        ["save", "wait +2"],
    ),
    "the quick retry succeeds: its rules, both fetches told": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, WAIT, 0), ("fetched", OK, WAIT, 2)],
        ["save", "announce rules new after 2"],
    ),
    "first 503, nobody may wait longer: closed at once": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, WaitBudget(T0, 1.0), 0)],
        ["save", "announce closed new after 1 outage"],
    ),
    "503 in a background retry: closed, no quick retry": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, 0)],
        ["save", "announce closed new after 1 outage"],
    ),
    "a record another process stored, still fresh: no fetch": Row(
        "docs/spec.md §3.4",
        [("load", stored(OK), 60)],
        ["announce rules new"],
    ),
    "asked again within its life: the same answer, nothing to tell": Row(
        "docs/spec.md §3.1",
        [("load", stored(OK), 0), ("ask", 23 * HOUR)],
        ["use rules"],
    ),
    "expired after 24 hours: fetch again before deciding": Row(
        "docs/spec.md §3.1, §3.3",
        [("load", stored(OK), 0), ("ask", DAY)],
        ["fetch"],
    ),
    "Cache-Control max-age shortens the life": Row(
        "docs/spec.md §3.2",
        [
            ("load", None, 0),
            ("fetched", answer(FetchKind.SUCCESS, 200, cache_control="max-age=120"), 0),
            ("ask", 121),
        ],
        ["fetch"],
    ),
    "no-store body from another process: fetched here": Row(
        "docs/spec.md §3.2, §3.5",
        [
            ("load", stored(OK), 0),
            ("ask", DAY),
            (
                "shared",
                OriginRecord.from_bytes(
                    stored(answer(FetchKind.SUCCESS, 200, DAY, "no-store"), DAY).to_bytes()
                ),
                DAY,
            ),
        ],
        ["fetch here"],
    ),
    "another process's fresh fetch: adopted, no fetch here": Row(
        "docs/spec.md §3.5",
        [("load", stored(OK), 0), ("ask", DAY), ("shared", stored(GONE, DAY), WAIT, DAY)],
        ["announce allow-all new"],
    ),
    "expired refresh unreachable: closed for the first 12 hours": Row(
        "docs/spec.md §3.3, §2.2",
        [("load", stored(OK), 0), ("ask", DAY), ("fetched", BUSY, DAY)],
        ["save", "announce closed new after 1 outage"],
    ),
    "12 hours into the outage: the kept copy, stale, and a retry due": Row(
        "docs/spec.md §2.2, §3.3",
        [
            ("load", stored(OK), 0),
            ("fetched", BUSY, DAY),
            ("ask", DAY + 12 * HOUR),
        ],
        ["announce rules new stale outage retry"],
    ),
    "a 12-hour window of 0: the kept copy at once": Row(
        "docs/spec.md §3.3",
        [("load", stored(OK), 0), ("fetched", BUSY, DAY)],
        ["save", "announce rules new after 1 stale outage"],
        {"unreachable_disallow": 0},
    ),
    "12 hours into an outage without a copy: robots.txt asked again first": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, 0), ("ask", 12 * HOUR)],
        ["fetch"],
    ),
    "12 hours into an outage without a copy, asked again and down: everything allowed": Row(
        "docs/spec.md §2.2",
        [("load", None, 0), ("fetched", BUSY, 0), ("fetched", BUSY, 12 * HOUR)],
        ["save", "announce allow-all new after 1 outage"],
    ),
    "after 30 days, pages answering: robots.txt asked again first": Row(
        "docs/spec.md §2.2",
        [
            ("load", stored(OK), 0),
            ("fetched", BUSY, DAY),
            ("site", 31 * DAY),
            ("ask", 31 * DAY + 1),
        ],
        ["fetch"],
    ),
    "after 30 days, pages answering, asked again and down: as if no robots.txt": Row(
        "docs/spec.md §2.2",
        [
            ("load", stored(OK), 0),
            ("fetched", BUSY, DAY),
            ("site", 31 * DAY),
            ("fetched", BUSY, 31 * DAY + 1),
        ],
        ["save", "announce allow-all new after 1 outage"],
    ),
    "after 30 days, pages silent too: closed": Row(
        "docs/spec.md §2.2",
        [("load", stored(OK), 0), ("fetched", BUSY, DAY), ("ask", 31 * DAY + 1)],
        ["announce closed new outage retry"],
    ),
    "a page answering during an outage is saved (it outlives the process)": Row(
        "docs/spec.md §2.2, §2.3",
        [("load", None, 0), ("fetched", BUSY, 0), ("site", HOUR)],
        ["save"],
    ),
    "a page answering outside an outage: nothing to save": Row(
        "docs/spec.md §2.2",
        [("load", stored(OK), 0), ("site", HOUR)],
        ["unsettled"],
    ),
    "an outage's start from the store counts on: past 12 hours, the copy": Row(
        "docs/spec.md §2.3",
        [("load", record_outcome(stored(OK), BUSY, T0 + DAY, PolicyConfig()), DAY + 13 * HOUR)],
        ["announce rules new stale outage retry"],
    ),
    "a record fetched in the future is not trusted: fetch": Row(
        "docs/spec.md §3.4",
        [("load", stored(OK, 10 * DAY), 0)],
        ["fetch"],
    ),
    "the crawl's own robots.txt download: saved, told at the next request": Row(
        "docs/spec.md §3.4",
        [("load", stored(OK), 0), ("seed", answer(FetchKind.UNAVAILABLE, 404, 60), 60)],
        ["save"],
    ),
    "a seed no newer than the record: ignored": Row(
        "docs/spec.md §3.4",
        [("load", stored(OK, 60), 60), ("seed", GONE, 60)],
        ["unsettled"],
    ),
    "after a seed, an answer that must not wait says it is unsettled": Row(
        "docs/spec.md §3.4",
        [
            ("load", stored(OK), 0),
            ("seed", answer(FetchKind.UNAVAILABLE, 404, 60), 60),
            ("peek", 61),
        ],
        ["unsettled"],
    ),
    "after a seed, the next request announces it": Row(
        "docs/spec.md §3.4",
        [
            ("load", stored(OK), 0),
            ("seed", answer(FetchKind.UNAVAILABLE, 404, 60), 60),
            ("ask", 61),
        ],
        ["announce allow-all new"],
    ),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_lifecycle_transitions(name: str) -> None:
    row = ROWS[name]
    assert row.cite.startswith("docs/spec.md §")
    assert run(row)[1] == row.effects


def test_spec_3_1_a_busy_origin_gets_one_answer_object_until_its_record_expires() -> None:
    """The answer of a plain origin is reused for a second at most, and never
    past its record's expiry (docs/spec.md §3.1)."""
    lifecycle, _ = run(Row("docs/spec.md §3.1", [("load", stored(OK), 0)], []))
    first = lifecycle.asked(T0 + 10)
    assert said(first) == ["use rules"] and lifecycle.asked(T0 + 10.5) is first
    assert lifecycle.asked(T0 + 11) is not first  # a second later: asked again
    assert lifecycle.asked(T0 + DAY - 0.25) is not first  # a new second: asked again
    assert lifecycle.asked(T0 + DAY) == (FETCH_NOW,)  # expired on the dot, not a second later


def test_spec_2_2_quick_retries_stop_when_the_wait_is_spent() -> None:
    """Requests waiting on a first failure wait for retries only within
    ``unreachable_wait`` (docs/spec.md §2.2): the third 503 ends the wait."""
    _, effects = run(
        Row(
            "docs/spec.md §2.2",
            [
                ("load", None, 0),
                ("fetched", BUSY, WAIT, 0),
                ("fetched", BUSY, WaitBudget(T0, 8.0), 2),
                ("fetched", BUSY, WaitBudget(T0, 4.0), 6),
            ],
            [],
        )
    )
    assert effects == ["save", "announce closed new after 3 outage"]


def test_spec_2_2_retry_after_sets_the_quick_retry() -> None:
    """A Retry-After header replaces the back-off (docs/spec.md §2.2)."""
    busy = FetchOutcome(FetchKind.UNREACHABLE, URL, T0, 429, retry_after="7")
    _, effects = run(Row("docs/spec.md §2.2", [("load", None, 0), ("fetched", busy, WAIT, 0)], []))
    assert effects == ["save", "wait +7"]


def test_spec_2_3_what_is_saved_outlives_a_outage() -> None:
    """The record is kept in the store at least ``cache_keep`` (31 days), so
    the last good copy outlives a 30-day outage (docs/spec.md §2.3)."""
    lifecycle, _ = run(Row("docs/spec.md §2.3", [("load", None, 0)], []))
    save = one(Save, lifecycle.fetched(BUSY, T0, None))
    assert isinstance(save, Save) and save.keep == 31 * DAY
    assert save.record.in_outage and lifecycle.record is save.record


def test_spec_3_4_a_spider_asking_for_robots_txt_gets_the_answer_behind_the_record() -> None:
    """The fetch this process made is replayed as it came; a record from the
    store as status and body; an unreachable one not at all (docs/spec.md §3.4)."""
    fetched, _ = run(Row("docs/spec.md §3.4", [("load", None, 0), ("fetched", OK, 0)], []))
    assert fetched.replay(URL) is OK
    loaded, _ = run(Row("docs/spec.md §3.4", [("load", stored(OK), 0)], []))
    replay = loaded.replay(URL)
    assert replay is not None and (replay.status, replay.body) == (200, BODY)
    down, _ = run(Row("docs/spec.md §2.2", [("load", None, 0), ("fetched", BUSY, 0)], []))
    assert down.replay(URL) is None


def test_spec_2_2_an_answer_that_cannot_be_recorded_still_counts() -> None:
    """A header that breaks the policy costs the header, never the answer
    (docs/spec.md §3.2): here an outcome whose Cache-Control is not a string."""
    broken = FetchOutcome(FetchKind.SUCCESS, URL, T0, 200, BODY, cache_control=42)  # type: ignore[arg-type]
    lifecycle, effects = run(
        Row("docs/spec.md §3.2", [("load", None, 0), ("fetched", broken, 0)], [])
    )
    assert effects == ["save", "announce rules new after 1"]
    assert lifecycle.record is not None and lifecycle.record.expires_at == T0 + DAY
