"""The Tester's report API as the report page calls it (docs/tester.md,
"The report page"): ``GET /api/report`` with each filter, sort and limit
the page sends, and ``POST /api/forget-many`` (Refetch of a filter), on
stores filled as a crawl fills them, the times placed around now. A real
Tester on 127.0.0.1; no crawl, so each test takes a moment
(test_report_page.py has the crawls end to end).
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from local_redis import RedisServer
from redis_topologies import wait_until

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.storage import open_storage
from scrapy_rep.tools.report.output import COLUMNS, DEEP_COLUMNS
from scrapy_rep.tools.store.view import StoreName, read_origin

from .conftest import Running

RULES = b"User-agent: *\nDisallow: /private\n"
FORBIDS = b"User-agent: *\nDisallow: /\n"
TYPO = b"User-agent: *\nDisalow: /x\n"  # lint's error: a misspelt field


def fetched(
    kind: FetchKind, status: int, ago: float, body: bytes = RULES, now: float | None = None
) -> OriginRecord:
    """The record a crawl keeps of one fetch ``ago`` seconds before ``now``."""
    body = body if status == 200 else b""
    at = (time.time() if now is None else now) - ago
    outcome = FetchOutcome(kind, "x", at, status, body, f"HTTP {status}")
    return record_outcome(None, outcome, at, PolicyConfig(), random=lambda: 0.0)


def kept() -> dict[str, OriginRecord]:
    """origin -> its record, fetched that long before now (ties at one
    moment: sorted by origin); the state has held since the fetch."""
    now = time.time()
    return {
        "https://rules.example": fetched(FetchKind.SUCCESS, 200, 1 * HOUR, now=now),
        "https://forbids.example": fetched(FetchKind.SUCCESS, 200, 3 * HOUR, FORBIDS, now),
        "https://typo.example:8080": fetched(FetchKind.SUCCESS, 200, 2 * DAY, TYPO, now),
        "https://gone.example": fetched(FetchKind.UNAVAILABLE, 404, 3 * HOUR, now=now),
        "https://busy.example": fetched(FetchKind.UNREACHABLE, 503, 1 * HOUR, now=now),
    }


KEPT = list(kept())
STATES = {
    "https://rules.example": "rules",
    "https://forbids.example": "rules",
    "https://typo.example:8080": "rules",
    "https://gone.example": "allow-all",
    "https://busy.example": "closed",
}
BY_AGE = [  # youngest first: 1 h (two, by origin), 3 h (two), 2 days
    "https://busy.example",
    "https://rules.example",
    "https://forbids.example",
    "https://gone.example",
    "https://typo.example:8080",
]


def run(coroutine: Any) -> Any:
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def fill(store: StoreName, kept: dict[str, OriginRecord]) -> StoreName:
    async def put() -> None:
        if store.kind == "sqlite":
            storage = await open_storage("sqlite", path=store.where)
        else:
            storage = await store.open()
        for key, found in kept.items():
            await storage.put(key, found, 31 * DAY)
        await storage.close()

    run(put())
    return store


def many_closed(store: StoreName, count: int) -> list[str]:
    """``count`` more closed origins in the SQLite store, in one transaction."""
    data = fetched(FetchKind.UNREACHABLE, 503, HOUR).to_bytes()
    keys = [f"https://n{n:04d}.many.example" for n in range(count)]
    with sqlite3.connect(store.where) as db:
        db.executemany(
            "INSERT INTO origins VALUES (?, ?, ?)", [(key, data, time.time() + DAY) for key in keys]
        )
    return keys


@pytest.fixture
def store(tmp_path: Path) -> StoreName:
    return fill(StoreName(str(tmp_path / "robotstxt.sqlite3")), kept())


@pytest.fixture
def tester(start_tester: Callable[..., Running], store: StoreName) -> Running:
    return start_tester(store=store)


def report(tester: Running, **query: Any) -> tuple[int, dict[str, Any]]:
    return tester.call("/api/report?" + urlencode(query, doseq=True))


def origins(answer: dict[str, Any]) -> list[str]:
    return [row["origin"] for row in answer["rows"]]


def test_the_report_lists_every_origin_with_its_state_and_counts(
    tester: Running, store: StoreName
) -> None:
    asked = time.time()
    status, answer = report(tester)
    assert status == 200
    assert origins(answer) == sorted(KEPT)  # by origin, the default
    assert {row["origin"]: row["state"] for row in answer["rows"]} == STATES
    assert [list(row) for row in answer["rows"]] == [list(COLUMNS)] * len(KEPT)
    assert (answer["matched"], answer["deep"], answer["max_refetch"]) == (5, False, 1_000)
    assert answer["store"] == store.where
    assert answer["summary"]["origins"] == 5
    assert answer["summary"]["states"] == {
        "rules": 3,
        "allow-all": 1,
        "closed": 1,
        "last-copy": 0,
        "outage-allow": 0,
    }
    assert asked <= answer["now"] <= time.time()


def test_states_are_chosen_as_the_page_sends_them_and_a_wrong_one_is_refused(
    tester: Running,
) -> None:
    """``state`` repeated or comma-separated; the summary counts every state
    whatever the states chosen (the page's tabs)."""
    for query in ({"state": "closed"}, {"state": "closed,"}, {"state": ["closed", ""]}):
        status, answer = report(tester, **query)
        assert status == 200, query
        assert (origins(answer), answer["matched"]) == (["https://busy.example"], 1)
        assert answer["summary"]["origins"] == 5
    for query in ({"state": "closed,allow-all"}, {"state": ["closed", "allow-all"]}):
        _, answer = report(tester, **query)
        assert origins(answer) == ["https://busy.example", "https://gone.example"]
    status, refused = report(tester, state="closed,nonsense")
    assert status == 400
    assert refused["error"].startswith("state: nonsense is not one of rules, allow-all,")
    assert report(tester, flag="shiny")[0] == 400


def test_a_host_glob_keeps_its_origins(tester: Running) -> None:
    _, answer = report(tester, host="*.example:8080")
    assert (origins(answer), answer["summary"]["origins"]) == (["https://typo.example:8080"], 1)
    _, answer = report(tester, host="busy.example")
    assert origins(answer) == ["https://busy.example"]


@pytest.mark.parametrize(
    ("older", "kept"),
    [
        ("5400s", BY_AGE[2:]),  # 1.5 hours
        ("5400", BY_AGE[2:]),  # seconds without the unit
        ("90m", BY_AGE[2:]),
        ("2h", BY_AGE[2:]),
        ("0.5h", BY_AGE),
        ("1d", BY_AGE[4:]),
        ("0", BY_AGE),
        ("3d", []),
    ],
)
def test_older_keeps_the_states_held_at_least_that_long(
    tester: Running, older: str, kept: list[str]
) -> None:
    status, answer = report(tester, older=older, sort="age")
    assert status == 200, answer
    assert origins(answer) == kept


def test_newer_keeps_the_states_held_less_long(tester: Running) -> None:
    _, answer = report(tester, newer="2h", sort="age")
    assert origins(answer) == BY_AGE[:2]
    _, answer = report(tester, newer="2h", older="30m", sort="age")
    assert origins(answer) == BY_AGE[:2]


@pytest.mark.parametrize("age", ["soon", "-1h", "-5", "inf", "h", "2x"])
def test_an_age_that_is_none_is_refused(tester: Running, age: str) -> None:
    for name in ("older", "newer"):
        status, refused = report(tester, **{name: age})
        assert status == 400, (name, age)
        assert refused["error"] == (f"{name}: {age!r} is not an age such as 90s, 15m, 12h or 7d")


def test_rows_are_sorted_and_limited_as_asked_and_counted_all(tester: Running) -> None:
    _, answer = report(tester, sort="age")
    assert origins(answer) == BY_AGE
    for reverse in ("1", "true"):
        _, answer = report(tester, sort="age", reverse=reverse)
        assert origins(answer) == BY_AGE[::-1]
    _, answer = report(tester, sort="age", limit="2")
    assert (origins(answer), answer["matched"]) == (BY_AGE[:2], 5)
    _, answer = report(tester, sort="age", limit="1", reverse="1")
    assert (origins(answer), answer["matched"]) == (BY_AGE[4:], 5)
    assert report(tester, limit="1000")[0] == 200
    for limit in ("0", "1001", "ten", "-1"):
        status, refused = report(tester, limit=limit)
        assert (status, refused["error"]) == (400, "limit: a number from 1 to 1000")
    status, refused = report(tester, sort="shoe size")
    assert status == 400 and refused["error"].startswith("sort: one of origin, state,")


def test_two_hundred_rows_are_listed_unless_asked(tester: Running, store: StoreName) -> None:
    many_closed(store, 200)
    _, answer = report(tester)
    assert (len(answer["rows"]), answer["matched"]) == (200, 205)
    _, answer = report(tester, limit="1000")
    assert len(answer["rows"]) == 205


def test_deep_reads_the_stored_files_when_asked_or_a_flag_needs_them(tester: Running) -> None:
    for deep in ("1", "true"):
        _, answer = report(tester, deep=deep)
        assert answer["deep"] is True
        assert [list(row) for row in answer["rows"]] == [list(COLUMNS + DEEP_COLUMNS)] * 5
        by = {row["origin"]: row for row in answer["rows"]}
        assert by["https://forbids.example"]["forbids_all"] is True
        assert by["https://typo.example:8080"]["lint_errors"] is True
    _, answer = report(tester, deep="0")
    assert answer["deep"] is False
    _, answer = report(tester, flag="forbids-all")
    assert (answer["deep"], origins(answer)) == (True, ["https://forbids.example"])
    _, answer = report(tester, flag="lint-errors", state="rules")
    assert origins(answer) == ["https://typo.example:8080"]


def test_refetch_of_a_filter_forgets_its_origins_and_no_others(
    tester: Running, store: StoreName
) -> None:
    asked = time.time()
    status, done = tester.call("/api/forget-many", {"state": "closed", "expect": 1})
    assert status == 200
    assert (done["origins"], done["forgotten"], done["store"]) == (1, 1, store.where)
    assert asked <= done["at"] <= time.time()
    assert read_origin(store, "https://busy.example/")[1] is None
    assert all(read_origin(store, origin + "/")[1] for origin in KEPT if "busy" not in origin)
    # the filters of the report page, each as it sends them
    ask = {"state": ["rules"], "host": "*.example", "older": "2h", "newer": "1d", "expect": 1}
    status, done = tester.call("/api/forget-many", ask)
    assert (status, done["forgotten"]) == (200, 1)
    assert read_origin(store, "https://forbids.example/")[1] is None
    status, done = tester.call("/api/forget-many", {"state": "closed", "expect": 0})
    assert (status, done["origins"], done["forgotten"]) == (200, 0, 0)
    status, done = tester.call("/api/forget-many", {"flag": ["lint-errors"], "expect": 1})
    assert (status, done["forgotten"]) == (200, 1)
    assert read_origin(store, "https://typo.example:8080/")[1] is None


def test_refetch_names_the_count_the_page_showed(tester: Running, store: StoreName) -> None:
    """A count that is no longer right changes nothing (409); a count that
    is no count is refused (400)."""
    status, refused = tester.call("/api/forget-many", {"state": "rules", "expect": 2})
    assert status == 409
    assert refused["error"].startswith("3 origins match this filter now, not 2: nothing")
    for expect in (None, "3", True, -1, 3.0):
        status, refused = tester.call("/api/forget-many", {"state": "rules", "expect": expect})
        assert status == 400, expect
        assert refused["error"].startswith("expect: the number of origins")
    for value in (5, ["rules", 5], {"rules": 1}):
        status, refused = tester.call("/api/forget-many", {"state": value, "expect": 3})
        assert (status, refused["error"]) == (400, "filters are strings or lists of strings")
    assert all(read_origin(store, origin + "/")[1] for origin in KEPT)


def test_refetch_forgets_up_to_a_thousand_origins_at_once(
    tester: Running, store: StoreName
) -> None:
    """docs/tester.md, "Refetch now": a running crawl reads 1,000 forgotten
    origins in one poll; a filter of more changes nothing (413)."""
    keys = many_closed(store, 1_000)
    status, refused = tester.call("/api/forget-many", {"state": "closed", "expect": 1_001})
    assert status == 413
    assert refused["error"].startswith("1001 origins: at most 1000 are refetched at once")
    assert read_origin(store, keys[-1] + "/")[1] is not None
    ask = {"state": "closed", "host": "*.many.example", "expect": 1_000}
    status, done = tester.call("/api/forget-many", ask)
    assert (status, done["origins"], done["forgotten"]) == (200, 1_000, 1_000)
    assert read_origin(store, keys[0] + "/")[1] is None
    assert read_origin(store, keys[-1] + "/")[1] is None
    assert read_origin(store, "https://busy.example/")[1] is not None


@pytest.fixture
def no_collector() -> Iterator[None]:
    """Connections a call leaves open stay so until the cyclic collector runs:
    held off, a leak shows at once."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_refetch_and_show_stored_on_redis_close_their_connections(
    start_tester: Callable[..., Running], redis_server: RedisServer, no_collector: None
) -> None:
    """The Tester runs for hours: each look and each Refetch opens the store
    and closes it, so Redis never holds more of its connections than it uses."""
    store = fill(StoreName(redis_server.url), kept())
    tester = start_tester(store=store)
    client = redis.Redis.from_url(redis_server.url)
    try:
        for _ in range(3):
            status, shown = tester.call("/api/stored?url=https://rules.example/a")
            assert (status, shown["kept"]) == (200, True)
        status, done = tester.call("/api/forget-many", {"state": "rules", "expect": 3})
        assert (status, done["forgotten"]) == (200, 3)
        # this client's only, once Redis has seen the others go (it may read
        # a close after the next command)
        wait_until(lambda: client.info("clients")["connected_clients"] == 1, 10, "closed")
        assert read_origin(store, "https://rules.example/")[1] is None
        assert read_origin(store, "https://busy.example/")[1] is not None
    finally:
        client.close()
