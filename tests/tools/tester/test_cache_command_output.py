"""What ``scrapy-rep cache show`` prints of a record, line by line and as
JSON (docs/cli.md, "scrapy-rep cache"): the times, the access a crawl gives
the origin now, the pace the kept copy asks, expired or not; and the
command on Redis as a user runs it, from a thread with no event loop.

Records are put in the store as a crawl puts them, at times chosen around
now, so each line is known in advance.
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from local_redis import RedisServer

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import HOUR, OriginRecord
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName, describe, read_origin

PACED = b"User-agent: *\nCrawl-delay: 5\nRequest-rate: 1/20s\n"
ORIGIN = "https://shop.example"


def record(now: float, **fields: Any) -> OriginRecord:
    base: dict[str, Any] = {
        "kind": FetchKind.SUCCESS,
        "status": 200,
        "reason": "HTTP 200",
        "fetched_at": now - 90,
        "expires_at": now + HOUR,
        "good_body": PACED,
        "good_at": now - 90,
        "good_status": 200,
    }
    base.update(fields)
    return OriginRecord(**base)


def in_a_thread(call: Any, *args: Any) -> Any:
    """Run ``call`` in a thread of its own: no event loop runs there, as in
    the command a user types (the test's thread runs the reactor's)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(call, *args).result()


def store_of(tmp_path: Path, *kept: tuple[str, OriginRecord]) -> Path:
    path = tmp_path / "kept.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key, found in kept:
            await storage.put(key, found, 30 * 24 * HOUR)
        await storage.close()

    in_a_thread(asyncio.run, fill())
    return path


def show(capsys: pytest.CaptureFixture[str], store: str, *more: str) -> tuple[int, str]:
    code = main(["cache", "show", ORIGIN + "/page", "--store", store, *more])
    return code, capsys.readouterr().out


def utc(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(moment))


def test_cache_show_prints_each_time_the_access_and_the_pace_the_copy_asks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/crawl-delay.md: the slower of Crawl-delay (5 s) and Request-rate
    (1/20s) is the pace; the copy's times as dates and ages."""
    now = time.time()
    kept = record(now)
    store = str(store_of(tmp_path, (ORIGIN, kept)))
    code, out = show(capsys, store)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == f"{ORIGIN} in {store}"
    assert lines[1] == "  outcome     success (HTTP 200)"
    for line, label, moment in ((lines[2], "fetched at", kept.fetched_at),
                                (lines[4], "good copy ", kept.good_at)):  # fmt: skip
        head = f"  {label}  {utc(moment)} ("
        assert line.startswith(head), line
        age = int(line[len(head) :].split(" s ago)")[0])
        assert 90 <= age < 90 + 120  # the seconds since, however slow the machine
    assert lines[3] == f"  expires     {utc(kept.expires_at)}"
    assert lines[4].endswith(f", {len(PACED)} bytes")
    assert lines[5] == "  access      rules: robots.txt rules"
    assert lines[6] == (
        "  pace        the copy asks 20 s between requests of scrapy (Crawl-delay or "
        'Request-rate; obeyed with REP_CRAWL_DELAY = "obey")'
    )
    assert len(lines) == 7  # open: no "closed" line
    code, out = show(capsys, store, "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["access"], data["access_reason"], data["pace"], data["tokens"]) == (
        "rules",
        "robots.txt rules",
        20.0,
        ["scrapy"],
    )
    assert (data["closed"], data["closed_until"], data["expired"]) == (False, None, False)
    assert (data["fetched"]["at"], data["good"]["at"]) == (kept.fetched_at, kept.good_at)


def test_a_copy_used_through_an_outage_is_not_expired_and_a_lapsed_one_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/cli.md, "The states": expired means the next request fetches
    again; in an outage past the copy's life the crawl keeps using the copy
    (docs/spec.md §2.2: last-copy after 12 hours) and the store says when
    it retries, not "expired"."""
    now = time.time()
    outage = record(
        now,
        kind=FetchKind.UNREACHABLE,
        status=503,
        reason="HTTP 503",
        fetched_at=now - 60,
        expires_at=now - 13 * HOUR,
        good_at=now - 37 * HOUR,
        outage_started_at=now - 13 * HOUR,
        next_retry_at=now + 600,
        failures=4,
    )
    lapsed = record(now, fetched_at=now - 2 * HOUR, good_at=now - 2 * HOUR, expires_at=now - 60)
    store = str(store_of(tmp_path, (ORIGIN, outage), ("https://old.example", lapsed)))
    code, out = show(capsys, store, "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["expired"], data["closed"], data["access"]) == (False, False, "rules")
    assert data["closed_until"] is None
    code, out = show(capsys, store)
    assert "(expired)" not in out
    assert f"  expires     {utc(outage.expires_at)}\n" in out
    assert main(["cache", "show", "https://old.example/", "--store", store]) == 0
    out = capsys.readouterr().out
    assert f"  expires     {utc(lapsed.expires_at)} (expired)\n" in out


def test_a_record_from_the_future_is_expired_from_its_expiry_on() -> None:
    """A record fetched after ``now`` by more than the clocks may differ (an
    hour) is one a crawl ignores (cache.standing); its expiry then reads as
    the record says, the moment itself included, as everywhere else
    (``now >= expires_at``)."""
    now = 1_000_000.0
    later = now + 2 * HOUR
    future = record(now, fetched_at=later, good_at=later, expires_at=now)
    assert describe(future, now)["expired"] is True
    assert describe(future, now - 1)["expired"] is False


def test_cache_show_and_forget_in_redis_as_the_command_runs(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command runs its Redis calls on a loop of its own (``asyncio.run``),
    none running in its thread."""
    store = StoreName(redis_server.url)
    from scrapy_rep.cache.storage import open_storage

    async def put() -> None:
        storage = await open_storage("redis", redis_url=redis_server.url)
        await storage.put(ORIGIN, record(time.time()), 3600)
        await storage.close()

    in_a_thread(asyncio.run, put())
    args = [ORIGIN + "/a", "--store", redis_server.url]
    assert in_a_thread(main, ["cache", "show", *args]) == 0
    assert "  outcome     success (HTTP 200)" in capsys.readouterr().out
    assert in_a_thread(main, ["cache", "forget", *args]) == 0
    assert "forgotten: every worker sharing the store" in capsys.readouterr().out
    assert in_a_thread(read_origin, store, ORIGIN + "/")[1] is None
    assert in_a_thread(main, ["cache", "show", *args]) == 1
    assert capsys.readouterr().out.strip() == f"{ORIGIN}: nothing kept in {redis_server.url}"
