"""``scrapy-rep report``, ``cache show`` and the Tester's report API on a
damaged or foreign store (docs/cli.md, "The states"; docs/tester.md): each
damage built for real, in a SQLite file or a redis-server of the test's own.
A record that cannot be read is counted and named, the others reported; a
store that cannot be read at all exits 2 (or answers 4xx/503) with a
message; never a traceback, a 500 with an exception's text, or a loop.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.storage.sqlite.once import SCAN_BATCH
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName

NOW = time.time()


def fetched(kind: FetchKind, status: int, ago: float) -> OriginRecord:
    body = b"User-agent: *\nDisallow: /private\n" if status == 200 else b""
    outcome = FetchOutcome(kind, "x", NOW, status, body, f"HTTP {status}")
    return record_outcome(None, outcome, NOW - ago, PolicyConfig(), random=lambda: 0.0)


RECORDS = {
    "https://rules.example": fetched(FetchKind.SUCCESS, 200, HOUR),
    "https://gone.example": fetched(FetchKind.UNAVAILABLE, 404, HOUR),
    "https://busy.example": fetched(FetchKind.UNREACHABLE, 503, HOUR),
}
STATES = {
    "https://rules.example": "rules",
    "https://gone.example": "allow-all",
    "https://busy.example": "closed",
}
GOOD = list(RECORDS)
#: How long a report of a few thousand rows may take on a loaded machine:
#: only a bound on a test that would otherwise never end (the old loop).
PATIENCE = 120


def run(coroutine: Any) -> Any:
    with ThreadPoolExecutor(1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def sqlite_store(path: Path) -> Path:
    """A crawl's store with three good records."""

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key in GOOD:
            await storage.put(key, RECORDS[key], 31 * DAY)
        await storage.close()

    run(fill())
    return path


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def origins_of(out: str) -> set[str]:
    return {json.loads(line)["origin"] for line in out.splitlines()}


# --- SQLite ------------------------------------------------------------------------


def test_a_text_value_is_counted_and_named_not_a_type_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A foreign writer's TEXT ``data``: the report used to stop with a
    TypeError (exit 1), ``cache show`` too."""
    path = sqlite_store(tmp_path / "s.sqlite3")
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO origins VALUES ('https://text.example', 'not a record', ?)",
            (NOW + DAY,),
        )
    for args in ([], ["--deep"], ["--csv"]):
        code, out, err = report(capsys, "--store", str(path), "--json", *args)
        if "--csv" in args:
            code, out, err = report(capsys, "--store", str(path), *args)
        assert code == 0, err
        assert "https://rules.example" in out and "text.example" not in out
        # (--deep also names the token it reads the files as, first)
        assert err.splitlines()[-1] == (
            "scrapy-rep: 1 record could not be read (a crawl treats it as absent and "
            "fetches robots.txt again): https://text.example"
        )
    code, out, err = report(capsys, "--store", str(path), "--summary", "--json")
    summary = json.loads(out)
    assert (code, summary["origins"], summary["unreadable"]) == (0, 3, 1)
    assert summary["unreadable_keys"] == ["https://text.example"]
    code, out, err = report(capsys, "--store", str(path), "--summary")
    assert "unreadable" in out and "https://text.example" in out
    code = main(["cache", "show", "https://text.example/x", "--store", str(path)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(
        f"scrapy-rep: https://text.example: the store {path} keeps a value that is not a record ("
    )


def test_blob_keys_past_a_batch_end_the_scan_and_are_counted_and_named(
    tmp_path: Path,
) -> None:
    """More BLOB keys than a batch (2,000): paging by the key's text made
    every BLOB key "after" the last one, and the report never ended (186,000
    rows in 8 s from 2,000). Run as a process with a bound, as a user would."""
    path = sqlite_store(tmp_path / "s.sqlite3")
    good = RECORDS["https://rules.example"].to_bytes()
    blobs = SCAN_BATCH + 100
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO origins VALUES (?, ?, ?)",
            [(n.to_bytes(4, "big"), good, NOW + DAY) for n in range(blobs)],
        )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scrapy_rep.tools.cli",
            "report",
            "--store",
            str(path),
            "--summary",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    summary = json.loads(done.stdout)
    assert (done.returncode, summary["origins"], summary["unreadable"]) == (0, 3, blobs)
    assert summary["unreadable_keys"][:2] == ["x'00000000'", "x'00000001'"]
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", "report", "--store", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=False,
    )
    assert done.returncode == 0 and origins_of(done.stdout) == set(GOOD)
    assert done.stderr.startswith(f"scrapy-rep: {blobs:,} records could not be read")
    assert "x'00000000', x'00000001'," in done.stderr and "more" in done.stderr


def test_a_foreign_sqlite_file_exits_2_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ``origins`` table of other columns, and a file that is no database."""
    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE origins (name TEXT, value INTEGER)")
    not_sqlite = tmp_path / "notes.sqlite3"
    not_sqlite.write_bytes(b"just some notes\n" * 100)
    for path in (foreign, not_sqlite):
        for args in ([], ["--summary"], ["--deep", "--json"]):
            code, out, err = report(capsys, "--store", str(path), *args)
            assert (code, out) == (2, ""), err
            assert err.startswith("scrapy-rep: ") and str(path) in err
            assert "Traceback" not in err


# --- Redis -------------------------------------------------------------------------

#: A key of each Redis type but a string, under the records' prefix.
OTHER_TYPES = {
    "hash": lambda r, k: r.hset(k, "field", "value"),
    "list": lambda r, k: r.rpush(k, "a", "b"),
    "set": lambda r, k: r.sadd(k, "a"),
    "zset": lambda r, k: r.zadd(k, {"a": 1.0}),
    "stream": lambda r, k: r.xadd(k, {"a": "b"}),
}


def redis_store(url: str) -> None:
    from scrapy_rep.cache.storage.redis.store import RedisStorage

    async def fill() -> None:
        storage = await RedisStorage.open(url)
        for key in GOOD:
            await storage.put(key, RECORDS[key], 31 * DAY)
        await storage.close()

    run(fill())
    client = redis.Redis.from_url(url)
    for kind, make in OTHER_TYPES.items():
        make(client, f"scrapy_rep:origin:https://{kind}.example")
    client.close()


def test_every_redis_type_under_the_prefix_is_counted_and_named(
    capsys: pytest.CaptureFixture[str], redis_server: Any
) -> None:
    """A hash, list, set, sorted set and stream under ``origin:``: WRONGTYPE
    and exit 1 before, with ``--deep`` and ``--summary`` too."""
    redis_store(redis_server.url)
    named = sorted(f"https://{kind}.example" for kind in OTHER_TYPES)
    for args in ([], ["--deep"]):
        code, out, err = report(capsys, "--store", redis_server.url, "--json", *args)
        assert code == 0, err
        assert origins_of(out) == set(GOOD)
        assert err.splitlines()[-1].startswith("scrapy-rep: 5 records could not be read")
        assert all(name in err for name in named)
    code, out, err = report(capsys, "--store", redis_server.url, "--summary", "--json")
    summary = json.loads(out)
    assert (code, summary["origins"], summary["unreadable"]) == (0, 3, 5)
    assert sorted(summary["unreadable_keys"]) == named
    code = main(["cache", "show", "https://hash.example", "--store", redis_server.url])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("scrapy-rep: https://hash.example: ") and "WRONGTYPE" in err
    assert {origin: STATES[origin] for origin in GOOD} == {
        row["origin"]: row["state"]
        for row in map(
            json.loads, report(capsys, "--store", redis_server.url, "--json")[1].splitlines()
        )
    }


# --- the Tester's report API -----------------------------------------------------


@pytest.fixture
def report_api(start_tester: Callable[..., Any]) -> Callable[[str], tuple[int, dict[str, Any]]]:
    def ask(where: str) -> tuple[int, dict[str, Any]]:
        tester = start_tester(store=StoreName(where))
        return tester.call("/api/report?limit=10")  # type: ignore[no-any-return]

    return ask


def test_the_report_api_on_damaged_stores_answers_with_counts_or_a_message(
    tmp_path: Path, report_api: Callable[[str], tuple[int, dict[str, Any]]], redis_server: Any
) -> None:
    """The TEXT value, the BLOB keys and the Redis types: 200 with the
    unreadable ones counted and named (a 500 with the TypeError's text, a
    thread spinning forever, a 500 with WRONGTYPE before); a file that is
    no store: 503 with a message."""
    path = sqlite_store(tmp_path / "s.sqlite3")
    good = RECORDS["https://rules.example"].to_bytes()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO origins VALUES ('https://text.example', 'x', ?)", (NOW + DAY,))
        db.executemany(
            "INSERT INTO origins VALUES (?, ?, ?)",
            [(n.to_bytes(4, "big"), good, NOW + DAY) for n in range(SCAN_BATCH + 1)],
        )
    redis_store(redis_server.url)
    for where, unreadable in ((str(path), SCAN_BATCH + 2), (redis_server.url, 5)):
        status, answer = report_api(where)
        assert status == 200, answer
        assert (answer["summary"]["origins"], answer["summary"]["unreadable"]) == (3, unreadable)
        assert {row["origin"] for row in answer["rows"]} == set(GOOD)
        assert len(answer["summary"]["unreadable_keys"]) == min(unreadable, 10)  # ten named
    not_sqlite = tmp_path / "notes.sqlite3"
    not_sqlite.write_bytes(b"just some notes\n" * 100)
    status, answer = report_api(str(not_sqlite))
    assert status == 503 and str(not_sqlite) in answer["error"]


def test_show_stored_of_an_unreadable_record_answers_422_with_a_message(
    tmp_path: Path, start_tester: Callable[..., Any], redis_server: Any
) -> None:
    """*Show stored* of the TEXT value, and of a Redis hash under the prefix:
    what was found, not a 500 with a TypeError's or WRONGTYPE's text."""
    path = sqlite_store(tmp_path / "s.sqlite3")
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO origins VALUES ('https://text.example', 'x', ?)", (NOW + DAY,))
    redis_store(redis_server.url)
    for where, origin in ((str(path), "text"), (redis_server.url, "hash")):
        tester = start_tester(store=StoreName(where))
        status, answer = tester.call(f"/api/stored?url=https://{origin}.example/")
        assert status == 422, answer
        assert answer["error"].startswith(f"https://{origin}.example: ")
        assert "cache forget removes it" in answer["error"]


def test_a_bug_answers_500_without_the_exceptions_text(
    start_tester: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception the Tester did not expect: 500 and a fixed message; its
    text (a path, a value from the store) goes to the Tester's terminal."""
    from scrapy_rep.tools.tester import calls as tester_calls

    def broken(*_: object) -> dict[str, Any]:
        raise RuntimeError("/home/someone/secret.sqlite3 holds 'token=abc'")

    monkeypatch.setattr(tester_calls, "report_answer", broken)
    tester = start_tester(store=StoreName("/nowhere.sqlite3"))
    status, answer = tester.call("/api/report")
    assert status == 500
    assert answer == {"error": "the Tester failed on this request (a bug): see its terminal"}


def test_the_report_page_names_unreadable_records_and_says_why_a_store_fails(
    browser: Any, start_tester: Callable[..., Any], tmp_path: Path
) -> None:
    """The page shows the count and the names beside the states, and, for a
    file that is no store, the server's message (a 503), not a blank table."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    path = sqlite_store(tmp_path / "s.sqlite3")
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO origins VALUES ('https://text.example', 'x', ?)", (NOW + DAY,))
    not_sqlite = tmp_path / "notes.sqlite3"
    not_sqlite.write_bytes(b"just some notes\n" * 100)

    def shown(where: Path) -> tuple[str, str]:
        tester = start_tester(store=StoreName(str(where)))
        browser.get(tester.url + "report")
        WebDriverWait(browser, 30).until(
            lambda d: d.execute_script("return document.body.dataset.state") in ("ready", "error")
        )
        state = browser.execute_script("return document.body.dataset.state")
        text = browser.find_element(By.ID, "status" if state == "error" else "counts").text
        return state, text

    state, counts = shown(path)
    assert state == "ready" and "unreadable 1 (https://text.example)" in counts
    state, status = shown(not_sqlite)
    assert state == "error"
    assert status.startswith(f"report failed: the store {not_sqlite} is damaged")


# --- a poisoned store: output turned against its reader ------------------------------

#: What a terminal, an editor or a spreadsheet acts on (``lint.finding._CONTROL``).
ACTED_ON = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
EVIL_ORIGIN = "https://evil\u202etxt.exe\x9b31m.example"
EVIL_REASON = '=HYPERLINK("http://x.example")\x1b[2J\r'
EVIL_TO = "@SUM(1+1)\u2066"


def poisoned(path: Path) -> Path:
    """A store with a record whose key, reason and redirect a hostile writer chose."""
    sqlite_store(path)
    evil = dataclasses.replace(
        RECORDS["https://rules.example"], reason=EVIL_REASON, final_url=EVIL_TO
    )
    tab = dataclasses.replace(RECORDS["https://gone.example"], reason="\t+cmd|' /C calc'!A0")

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        await storage.put(EVIL_ORIGIN, evil, 31 * DAY)
        await storage.put("https://shown.example", evil, 31 * DAY)  # for cache show
        await storage.put("https://tab.example", tab, 31 * DAY)
        await storage.close()

    run(fill())
    return path


def test_text_output_escapes_controls_and_bidi_characters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """U+202E, U+2066, C1's one-byte CSI (U+009B), ESC and CR from the store:
    escaped in the report's lines, its summary and ``cache show``."""
    path = poisoned(tmp_path / "s.sqlite3")
    for args in ([], ["--summary"]):
        code, out, err = report(capsys, "--store", str(path), *args)
        assert code == 0 and not ACTED_ON.search(out + err), out
    code, out, _ = report(capsys, "--store", str(path))
    assert "https://evil\\u202etxt.exe\\x9b31m.example" in out
    assert '=HYPERLINK("http://x.example")\\x1b[2J\\x0d' in out
    code = main(["cache", "show", "https://shown.example", "--store", str(path)])
    out, _ = capsys.readouterr()
    assert code == 0 and not ACTED_ON.search(out) and "\\x1b[2J\\x0d" in out


def test_csv_neutralises_formula_cells_as_owasp_advises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cell starting with =, +, -, @, TAB or CR gets a single quote before
    it (OWASP, "CSV Injection"); no raw ESC or CR is written."""
    path = poisoned(tmp_path / "s.sqlite3")
    code, out, _ = report(capsys, "--store", str(path), "--csv")
    assert code == 0 and not ACTED_ON.search(out)
    table = list(csv.DictReader(io.StringIO(out)))
    evil = next(row for row in table if row["origin"].startswith("https://evil"))
    assert evil["reason"] == "'" + '=HYPERLINK("http://x.example")\\x1b[2J\\x0d'
    assert evil["redirected_to"] == "'@SUM(1+1)\\u2066"
    tab = next(row for row in table if row["origin"] == "https://tab.example")
    assert tab["reason"] == "'\\x09+cmd|' /C calc'!A0"
    starts = {cell[:1] for row in table for cell in row.values()}
    assert not starts & {"=", "+", "-", "@", "\t", "\r"}


def test_json_stays_json_with_the_same_values_and_nothing_raw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The characters a terminal acts on are written as ``\\uNNNN``: each
    line parses, and gives back the store's values exactly."""
    path = poisoned(tmp_path / "s.sqlite3")
    for args in (["--json"], ["--json", "--deep"], ["--json", "--summary"]):
        code, out, _ = report(capsys, "--store", str(path), *args)
        assert code == 0 and not ACTED_ON.search(out)
        values = [json.loads(line) for line in out.splitlines()]
    code, out, _ = report(capsys, "--store", str(path), "--json")
    evil = next(row for row in map(json.loads, out.splitlines()) if "evil" in row["origin"])
    assert (evil["origin"], evil["reason"], evil["redirected_to"]) == (
        EVIL_ORIGIN,
        EVIL_REASON,
        EVIL_TO,
    )
    code = main(["cache", "show", "https://shown.example", "--store", str(path), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0 and not ACTED_ON.search(out)
    assert json.loads(out)["reason"] == EVIL_REASON
    assert values
