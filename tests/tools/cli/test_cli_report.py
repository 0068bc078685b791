"""``scrapy-rep report`` on a store holding one origin in each state (docs/cli.md):
filters, sorts (in memory and merged from run files), the outputs and the
exit codes. The store is written with the policy's own records, placed in
time relative to now; tests/tools/tester/test_report_page.py gets the same
states from real crawls."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.report.rows import Filters, Summary, deep_reader, report_rows, sorted_rows

NOW = time.time()
POLICY = PolicyConfig()
GOOD = b"User-agent: *\nDisallow: /private\n"
FORBIDS = b"User-agent: *\nDisallow: /\n"
LINTED = b"User-agent: *\nDisalow: /typo\nDisallow: /x\n"


def outcome(kind: FetchKind, status: int | None, body: bytes = GOOD, **more: Any) -> FetchOutcome:
    reason = f"HTTP {status}" if status else "connection refused"
    return FetchOutcome(kind, "x", NOW, status, body if status == 200 else b"", reason, **more)


def history(*steps: tuple[float, FetchOutcome]) -> OriginRecord:
    record: OriginRecord | None = None
    for ago, fetched in steps:
        record = record_outcome(record, fetched, NOW - ago, POLICY, random=lambda: 0.0)
    assert record is not None
    return record


OK, GONE, DOWN = FetchKind.SUCCESS, FetchKind.UNAVAILABLE, FetchKind.UNREACHABLE
#: origin -> its record: one per state and flag of docs/cli.md
RECORDS = {
    "https://rules.example": history((HOUR, outcome(OK, 200))),
    "https://forbids.example": history((2 * HOUR, outcome(OK, 200, FORBIDS))),
    "https://linted.example": history((3 * HOUR, outcome(OK, 200, LINTED))),
    "https://expired.example": history((25 * HOUR, outcome(OK, 200))),
    "https://gone.example": history((HOUR, outcome(GONE, 404))),
    "http://closed.example:8080": history((3 * DAY, outcome(OK, 200)), (HOUR, outcome(DOWN, 503))),
    "https://ratelimited.example": history((2 * HOUR, outcome(DOWN, 429))),
    "https://copy.example": history((3 * DAY, outcome(OK, 200)), (13 * HOUR, outcome(DOWN, 500))),
    "https://copy-forbids.example": history(
        (9 * DAY, outcome(OK, 200, FORBIDS)), (8 * DAY, outcome(DOWN, None))
    ),
    # asked again after its 12 h (docs/spec.md §2.2), and still no answer
    "https://noanswer.example": history(
        (20 * HOUR, outcome(DOWN, None)), (7 * HOUR, outcome(DOWN, None))
    ),
    "https://cut.example": history((HOUR, outcome(OK, 200, truncated=True))),
    "https://moved.example": history(
        (HOUR, outcome(OK, 200, final_url="https://www.moved.example/robots.txt"))
    ),
}
STATES = {
    "https://rules.example": "rules",
    "https://forbids.example": "rules",
    "https://linted.example": "rules",
    "https://expired.example": "rules",
    "https://gone.example": "allow-all",
    "http://closed.example:8080": "closed",
    "https://ratelimited.example": "closed",
    "https://copy.example": "last-copy",
    "https://copy-forbids.example": "last-copy",
    "https://noanswer.example": "outage-allow",
    "https://cut.example": "rules",
    "https://moved.example": "rules",
}


def scanned() -> Iterator[tuple[str, OriginRecord | None, int]]:
    for key, item in RECORDS.items():
        yield key, item, len(item.good_body or b"")
    yield "https://unreadable.example", None, 0


EVERY = Filters()


def rows(filters: Filters = EVERY, deep: bool = False) -> list[dict[str, Any]]:
    reader = deep_reader(["mybot"]) if deep else None
    return list(report_rows(scanned(), NOW, POLICY, filters, Summary(), reader))


def origins(found: list[dict[str, Any]]) -> set[str]:
    return {row["origin"] for row in found}


def test_report_states_times_and_flags_of_each_record() -> None:
    found = {row["origin"]: row for row in rows(deep=True)}
    assert {key: row["state"] for key, row in found.items()} == STATES
    closed = found["http://closed.example:8080"]
    assert (closed["cause"], closed["status"], closed["since"]) == ("5xx", 503, NOW - HOUR)
    assert closed["until"] == NOW - HOUR + 12 * HOUR
    assert found["https://ratelimited.example"]["cause"] == "429"
    assert found["https://noanswer.example"]["cause"] == "network"
    assert found["https://copy.example"]["until"] == NOW - 13 * HOUR + 30 * DAY
    assert found["https://expired.example"]["expired"] is True
    assert found["https://cut.example"]["cut"] is True
    assert found["https://moved.example"]["redirected_to"] == "https://www.moved.example/robots.txt"
    assert found["https://gone.example"]["size"] is None  # a 4xx keeps no file
    assert found["https://rules.example"]["size"] == len(GOOD)
    forbidding = {key for key, row in found.items() if row["forbids_all"]}
    assert forbidding == {"https://forbids.example", "https://copy-forbids.example"}
    assert {key for key, row in found.items() if row["lint_errors"]} == {"https://linted.example"}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (
            Filters(states=frozenset({"closed"})),
            {"http://closed.example:8080", "https://ratelimited.example"},
        ),
        (
            Filters(states=frozenset({"outage"})),
            {
                "http://closed.example:8080",
                "https://ratelimited.example",
                "https://copy.example",
                "https://copy-forbids.example",
                "https://noanswer.example",
            },
        ),
        (Filters(flags=frozenset({"cut"})), {"https://cut.example"}),
        (Filters(flags=frozenset({"expired"})), {"https://expired.example"}),
        (Filters(flags=frozenset({"redirected"})), {"https://moved.example"}),
        (
            Filters(host="c*.example"),
            {
                "http://closed.example:8080",
                "https://copy.example",
                "https://copy-forbids.example",
                "https://cut.example",
            },
        ),
        (Filters(host="http://*"), {"http://closed.example:8080"}),
        (Filters(host="closed.example"), {"http://closed.example:8080"}),  # the port aside
        # "answered 5xx or 429 all week": in an outage for 7 days or more
        (
            Filters(states=frozenset({"outage"}), older_than=7 * DAY),
            {"https://copy-forbids.example"},
        ),
        (
            Filters(states=frozenset({"outage"}), newer_than=2 * HOUR + 1),
            {"http://closed.example:8080", "https://ratelimited.example"},
        ),
        (Filters(states=frozenset({"rules"}), flags=frozenset({"cut", "expired"})), set()),
        # "at least" and "less than" an age: an outage of exactly 8 days, of exactly 1 hour
        (
            Filters(states=frozenset({"outage"}), older_than=8 * DAY),
            {"https://copy-forbids.example"},
        ),
        (Filters(states=frozenset({"outage"}), newer_than=HOUR), set()),
    ],
)
def test_report_filters(filters: Filters, expected: set[str]) -> None:
    assert origins(rows(filters)) == expected
    # a row at a time, as the Tester's report page filters by state
    assert origins([row for row in rows(deep=True) if filters.keeps(row)]) == expected


def test_report_deep_flags_filter_rows() -> None:
    forbidding = Filters(flags=frozenset({"forbids-all"}))
    assert origins(rows(forbidding, deep=True)) == {
        "https://forbids.example",
        "https://copy-forbids.example",
    }
    assert origins(rows(Filters(flags=frozenset({"lint-errors"})), deep=True)) == {
        "https://linted.example"
    }
    assert origins([row for row in rows(deep=True) if forbidding.keeps(row)]) == {
        "https://forbids.example",
        "https://copy-forbids.example",
    }


@pytest.mark.parametrize("run_rows", [2, 3, 7, 1000])  # 6, 4, 2 runs and 1
@pytest.mark.parametrize("column", ["origin", "until", "size", "since", "status"])
def test_report_sort_merged_from_runs_equals_a_sort_in_memory(run_rows: int, column: str) -> None:
    """Rows without a value (None) lead; ties by origin; the same with runs
    of 2 rows merged from files as sorted at once; and a limit's heap."""
    everything = rows()

    def key(row: dict[str, Any]) -> tuple[bool, Any, str]:
        value = row[column]
        return (value is not None, value if value is not None else 0, row["origin"])

    for reverse in (False, True):
        expected = sorted(everything, key=key, reverse=reverse)
        merged = list(sorted_rows(iter(everything), column, reverse=reverse, run_rows=run_rows))
        assert [row["origin"] for row in merged] == [row["origin"] for row in expected]
        top = list(sorted_rows(iter(everything), column, reverse=reverse, limit=3))
        assert [row["origin"] for row in top] == [row["origin"] for row in expected[:3]]


def test_report_sort_merged_from_runs_keeps_no_read_row() -> None:
    """A sort of more rows than a run holds, read as it merges: its memory is
    about a run's rows, not every row (20,000 rows of 2 KB, runs of 500, each
    run spanning the whole order, so that every run is read until the end)."""
    template = rows()[0]

    def many() -> Iterator[dict[str, Any]]:
        for n in range(20_000):
            spread = n * 7_919 % 20_000  # 7,919 is prime: each n once, out of order
            yield {**template, "origin": f"https://o{spread:05}.example", "reason": "x" * 2000}

    tracemalloc.start()
    try:
        count = 0
        for row in sorted_rows(many(), "origin", run_rows=500):
            assert row["origin"] == f"https://o{count:05}.example"
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 20_000
    assert peak < 8 * 2**20  # every row kept would be over 40 MiB


# --- the command -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "robotstxt.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key, item in RECORDS.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    return path


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["report", *args])
    return code, capsys.readouterr().out


def test_report_command_text_csv_json_and_summary_agree(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = report(capsys, "--store", str(store))
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["ORIGIN", "STATE", "STATUS"]
    shown = {line.split()[0]: line.split()[1] for line in lines[1:]}
    assert shown == STATES
    closed = next(line for line in lines if line.startswith("http://closed.example:8080"))
    assert "5xx, 1 failed fetch; HTTP 503" in closed

    code, data = report(capsys, "--store", str(store), "--csv", "--sort", "origin")
    table = list(csv.DictReader(io.StringIO(data)))
    assert [row["origin"] for row in table] == sorted(STATES)
    assert {row["origin"]: row["state"] for row in table} == STATES
    moved = next(row for row in table if row["origin"] == "https://moved.example")
    assert (moved["redirected"], moved["cut"]) == ("true", "false")
    assert moved["checked"].endswith("Z")

    code, data = report(capsys, "--store", str(store), "--json", "--deep", "--agent", "mybot")
    objects = [json.loads(line) for line in data.splitlines()]
    assert {item["origin"]: item["state"] for item in objects} == STATES
    assert {item["origin"] for item in objects if item["forbids_all"]} == {
        "https://forbids.example",
        "https://copy-forbids.example",
    }

    code, data = report(capsys, "--store", str(store), "--summary", "--json")
    summary = json.loads(data)
    assert summary["origins"] == len(STATES)
    assert summary["states"] == {
        "rules": 6,
        "allow-all": 1,
        "closed": 2,
        "last-copy": 2,
        "outage-allow": 1,
    }
    assert summary["causes"] == {"429": 1, "5xx": 2, "network": 2}
    assert summary["flags"] == {"expired": 1, "cut": 1, "redirected": 1}
    code, text = report(capsys, "--store", str(store), "--summary")
    assert "12 origins in" in text and re.search(r"\n  closed +2  ", text)


def test_report_command_filters_sort_limit_and_exit_codes(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = report(
        capsys,
        "--store",
        str(store),
        "--json",
        "--state",
        "outage",
        "--sort",
        "since",
        "--reverse",
        "--limit",
        "2",
    )
    assert code == 0
    assert [json.loads(line)["origin"] for line in data.splitlines()] == [
        "http://closed.example:8080",
        "https://ratelimited.example",
    ]
    code, data = report(
        capsys,
        "--store",
        str(store),
        "--json",
        "--state",
        "closed,last-copy",
        "--host",
        "*.example",
        "--older-than",
        "1d",
    )
    assert [json.loads(line)["origin"] for line in data.splitlines()] == [
        "https://copy-forbids.example"
    ]
    code, _ = report(capsys, "--store", str(store), "--state", "closed", "--flag", "cut")
    assert code == 1  # nothing matched
    assert main(["report", "--store", str(store), "--older-than", "soon"]) == 2
    assert main(["report", "--store", str(store.parent / "missing.sqlite3")]) == 2
    assert "no such store file" in capsys.readouterr().err


def test_report_command_reads_a_redis_store(
    capsys: pytest.CaptureFixture[str], redis_server: Any
) -> None:
    from scrapy_rep.cache.storage.redis.store import RedisStorage

    async def fill() -> None:
        storage = await RedisStorage.open(redis_server.url)
        for key, item in RECORDS.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    code, data = report(capsys, "--store", redis_server.url, "--json")
    assert code == 0
    assert {
        json.loads(line)["origin"]: json.loads(line)["state"] for line in data.splitlines()
    } == STATES


def test_report_a_record_from_the_future_counts_as_unreadable() -> None:
    summary = Summary()
    future = replace(RECORDS["https://rules.example"], fetched_at=NOW + 2 * DAY)
    found = list(report_rows([("https://f.example", future, 10)], NOW, POLICY, Filters(), summary))
    assert found == [] and summary.unreadable == 1


def test_report_inside_a_project_reads_its_store_with_its_rules_and_token(
    tmp_path: Path,
) -> None:
    """docs/cli.md: no --store in a project; its outage rules say what is
    closed (the older Google rules: 30 days), its token what forbids it all."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "settings.py").write_text(
        'REP_STORAGE_PATH = "kept.sqlite3"\nREP_OUTAGE_RULES = "google-legacy"\n'
        'ROBOTSTXT_USER_AGENT = "shopbot"\n'
    )
    (tmp_path / ".scrapy").mkdir()
    shut = b"User-agent: shopbot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    kept = {
        "https://copy.example": RECORDS["https://copy.example"],  # 13 h into an outage
        "https://shut.example": history((HOUR, outcome(OK, 200, shut))),
    }

    async def fill() -> None:
        storage = await SqliteStorage.open(tmp_path / ".scrapy" / "kept.sqlite3")
        for key, item in kept.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", "report", "--json", "--deep"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["origin"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert rows["https://copy.example"]["state"] == "closed"  # the default rules: last-copy
    assert rows["https://shut.example"]["forbids_all"] is True  # for shopbot, not for *


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("closed.example:8080", {"http://closed.example:8080"}),  # host:port
        ("closed.example:80", set()),
        ("http://closed.example:8080", {"http://closed.example:8080"}),  # the origin
        ("http://closed.example:8080/", {"http://closed.example:8080"}),  # a URL's slash
        ("https://rules.example/robots.txt", {"https://rules.example"}),  # a path aside
        ("*.example:8080", {"http://closed.example:8080"}),
    ],
)
def test_report_host_matches_host_port_and_url_forms(pattern: str, expected: set[str]) -> None:
    assert origins(rows(Filters(host=pattern))) == expected


def test_report_host_with_an_ipv6_address_and_its_port() -> None:
    from scrapy_rep.tools.report.rows import host_matches

    assert host_matches("[::1]", "http://[::1]:8080")
    assert host_matches("[::1]:8080", "http://[::1]:8080")
    assert not host_matches("[::1]:80", "http://[::1]:8080")


def test_report_host_that_matches_nothing_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "kept.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(store)
        await storage.put("http://127.0.0.1:8804", RECORDS["https://rules.example"], 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    assert main(["report", "--store", str(store), "--host", "127.0.0.1:8804"]) == 0
    assert "http://127.0.0.1:8804" in capsys.readouterr().out
    assert main(["report", "--store", str(store), "--host", "127.0.0.1:9999"]) == 1
    err = capsys.readouterr().err
    assert "no origin of" in err and "matches --host '127.0.0.1:9999'" in err


def test_expired_has_one_meaning_in_cache_show_and_the_report() -> None:
    """An origin in an outage is not "expired" (its state is the outage's),
    in ``cache show`` as in the report (docs/cli.md)."""
    from scrapy_rep.tools.store.view import describe

    for key, item in RECORDS.items():
        (row,) = [r for r in rows() if r["origin"] == key]
        shown = describe(item, NOW, POLICY)
        assert shown["expired"] is row["expired"], key
    copy = describe(RECORDS["https://copy.example"], NOW, POLICY)
    assert copy["expires_at"] < NOW and copy["expired"] is False  # past its life, in an outage


def test_report_deep_and_cache_show_give_the_pace_the_group_asks() -> None:
    from scrapy_rep.tools.store.view import describe

    paced = (
        b"User-agent: mybot\nCrawl-delay: 2\nRequest-rate: 1/5s\n\nUser-agent: *\nCrawl-delay: 9\n"
    )
    item = history((HOUR, outcome(OK, 200, paced)))
    reader = deep_reader(["mybot"])
    (row,) = report_rows(
        [("https://paced.example", item, len(paced))], NOW, POLICY, EVERY, Summary(), reader
    )
    assert row["pace"] == 5.0  # the longer of crawl-delay 2 and one request every 5 s
    assert describe(item, NOW, POLICY, tokens=("mybot",))["pace"] == 5.0
    assert describe(item, NOW, POLICY)["pace"] == 9.0  # scrapy: the * group
    assert [r["pace"] for r in rows(deep=True) if r["origin"] == "https://rules.example"] == [None]


def test_report_notes_count_lint_findings_in_the_right_number() -> None:
    import io

    from scrapy_rep.tools.report.output import write_text

    (row,) = [r for r in rows(deep=True) if r["origin"] == "https://linted.example"]
    out = io.StringIO()
    write_text([{**row, "errors": 1, "warnings": 1}], out)
    assert "lint 1 error, 1 warning" in out.getvalue()


def test_report_deep_counts_lints_findings_and_reads_nothing_where_no_file_is_kept() -> None:
    found = {row["origin"]: row for row in rows(deep=True)}
    linted = found["https://linted.example"]
    assert (linted["errors"], linted["warnings"]) == (1, 0)  # "Disalow": one error
    gone = found["https://gone.example"]  # a 404 keeps no file
    assert (gone["errors"], gone["warnings"], gone["forbids_all"]) == (0, 0, False)
    empty = history((HOUR, outcome(OK, 200, b"")))  # an empty file: everything allowed
    (row,) = report_rows(
        [("https://empty.example", empty, 0)], NOW, POLICY, EVERY, Summary(), deep_reader(["mybot"])
    )
    assert (row["state"], row["warnings"], row["forbids_all"]) == ("rules", 0, False)


def test_report_deep_reads_the_file_as_the_crawl_does_with_or_without_google_quirks() -> None:
    """``Disallow /`` (no colon) is a rule only in Google's reading
    (tests/known_differences.md, missing-colon): the default reader is the
    crawl's default."""
    record = history((HOUR, outcome(OK, 200, b"User-agent: *\nDisallow /\n")))

    def forbids(reader: Any) -> bool:
        (row,) = report_rows(
            [("https://o.example", record, 9)], NOW, POLICY, EVERY, Summary(), reader
        )
        return bool(row["forbids_all"])

    assert forbids(deep_reader(["mybot"])) is False
    assert forbids(deep_reader(["mybot"], google_quirks=True)) is True


def test_report_deep_reads_each_distinct_file_once_within_a_bounded_memo(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docs/cli.md: a file many origins serve is read once; the memo of files
    read is bounded (10,000; 2 here), so a store of many distinct files
    does not keep them all."""
    import scrapy_rep.tools.report.rows as report_module

    linted: list[bytes] = []
    real_lint = report_module.lint

    def counting_lint(body: bytes) -> Any:
        linted.append(body)
        return real_lint(body)

    monkeypatch.setattr(report_module, "lint", counting_lint)
    monkeypatch.setattr(report_module, "_DEEP_MEMO", 2)
    files = [f"User-agent: *\nDisallow: /{name}\n".encode() for name in "abc"]
    records = [history((HOUR, outcome(OK, 200, body))) for body in files]
    order = [0, 0, 1, 1, 0, 2, 0]  # the memo is full at the third distinct file
    scanned = [(f"https://o{n}.example", records[i], 9) for n, i in enumerate(order)]
    found = list(report_rows(scanned, NOW, POLICY, EVERY, Summary(), deep_reader(["mybot"])))
    assert len(found) == len(order)
    assert linted == [files[0], files[1], files[2], files[0]]


def test_report_command_flags_read_from_the_file_need_no_deep(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/cli.md: ``--flag forbids-all`` and ``--flag lint-errors`` read the
    stored files themselves, ``--deep`` or not."""
    code, data = report(capsys, "--store", str(store), "--json", "--flag", "forbids-all")
    assert code == 0
    assert {json.loads(line)["origin"] for line in data.splitlines()} == {
        "https://forbids.example",
        "https://copy-forbids.example",
    }
    code, data = report(capsys, "--store", str(store), "--json", "--flag", "lint-errors")
    assert code == 0
    assert [json.loads(line)["origin"] for line in data.splitlines()] == ["https://linted.example"]


def test_report_command_host_matches_an_ipv6_host_with_or_without_its_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--host`` leaves the port aside; an IPv6 host keeps its brackets."""
    path = tmp_path / "robotstxt.sqlite3"
    kept = ("http://[::1]:8080", "https://[::1]", "https://[::2]", "https://h1.example:8080")

    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key in kept:
            await storage.put(key, RECORDS["https://rules.example"], 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()

    def shown(host: str) -> set[str]:
        code, data = report(capsys, "--store", str(path), "--json", "--host", host)
        assert code in (0, 1)
        return {json.loads(line)["origin"] for line in data.splitlines()}

    # an IPv6 host's brackets are text in the pattern, not a glob's set
    assert shown("[::1]") == {"http://[::1]:8080", "https://[::1]"}
    assert shown("*::1]") == {"http://[::1]:8080", "https://[::1]"}
    assert shown("[::*]") == {"http://[::1]:8080", "https://[::1]", "https://[::2]"}
    assert shown("h1.example") == {"https://h1.example:8080"}
