"""``scrapy-rep report --changed [--since AGE]`` (docs/versions.md, "What
changed, for this crawler"): a real store (SQLite, Redis) holding origins
with two versions, written by the policy's own ``record_outcome``; the
change is read with the crawler's tokens, the project's inside one."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.cache.storage.sqlite.store import SqliteStorage
from scrapy_rep.cache.versions import body_digest
from scrapy_rep.tools.cli.console import main

NOW = time.time()
POLICY = PolicyConfig()
OLD = b"User-agent: *\nDisallow: /private\n"
NEW = b"User-agent: *\nDisallow: /private\nDisallow: /drafts\n"
# Only another crawler's group changed: nothing for mybot.
OTHERS_OLD = b"User-agent: otherbot\nDisallow: /a\n\nUser-agent: *\nDisallow: /x\n"
OTHERS_NEW = b"User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n"
# Only mybot's own group changed: a change for mybot, none for the default token.
MINE_OLD = b"User-agent: mybot\nDisallow: /a\n\nUser-agent: *\nDisallow: /x\n"
MINE_NEW = b"User-agent: mybot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n"


def answer(status: int, body: bytes | None = None) -> FetchOutcome:
    kind = FetchKind.SUCCESS if status < 300 else FetchKind.UNAVAILABLE
    return FetchOutcome(kind, "x", NOW, status, body or b"", f"HTTP {status}")


def history(*steps: tuple[float, FetchOutcome]) -> OriginRecord:
    record: OriginRecord | None = None
    for ago, fetched in steps:
        record = record_outcome(record, fetched, NOW - ago, POLICY, random=lambda: 0.0)
    assert record is not None
    return record


RECORDS = {
    "https://drafts.example": history((3 * DAY, answer(200, OLD)), (HOUR, answer(200, NEW))),
    "https://others.example": history(
        (3 * DAY, answer(200, OTHERS_OLD)), (HOUR, answer(200, OTHERS_NEW))
    ),
    "https://mine.example": history(
        (3 * DAY, answer(200, MINE_OLD)), (HOUR, answer(200, MINE_NEW))
    ),
    "https://gone.example": history((3 * DAY, answer(200, OLD)), (2 * HOUR, answer(404))),
    "https://same.example": history((3 * DAY, answer(200, OLD)), (HOUR, answer(200, OLD))),
    "https://long-ago.example": history(
        (20 * DAY, answer(200, OLD)), (10 * DAY, answer(200, NEW)), (HOUR, answer(200, NEW))
    ),
}
#: Changed for mybot, and a few words of what changed.
CHANGED = {
    "https://drafts.example": "/drafts",
    "https://mine.example": "Disallow: /",
    "https://gone.example": "/private",
    "https://long-ago.example": "/drafts",
}


def fill_sqlite(path: Path, records: dict[str, OriginRecord]) -> None:
    async def fill() -> None:
        storage = await SqliteStorage.open(path)
        for key, item in records.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "robots.sqlite3"
    fill_sqlite(path, RECORDS)
    return path


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["report", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_changed_text_lists_the_origins_whose_rules_changed_for_the_token(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, err = report(capsys, "--store", str(store), "--changed", "--agent", "mybot")
    assert code == 0
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["ORIGIN", "CHANGED"]
    shown = {line.split()[0]: line for line in lines[1:]}
    assert set(shown) == set(CHANGED)  # not others.example, not same.example
    for origin, words in CHANGED.items():
        assert words in shown[origin], shown[origin]
    assert body_digest(NEW)[:15] in shown["https://drafts.example"]  # type: ignore[index]
    assert "404 (no rules)" in shown["https://gone.example"]
    assert "mybot" in err


def test_changed_depends_on_the_tokens(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, text, _ = report(capsys, "--store", str(store), "--changed", "--agent", "otherbot")
    shown = {line.split()[0] for line in text.splitlines()[1:]}
    assert "https://others.example" in shown and "https://mine.example" not in shown


def test_changed_since_keeps_the_recent_changes(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text, _ = report(capsys, "--store", str(store), "--changed", "--since", "7d", "-a", "mybot")
    shown = {line.split()[0] for line in text.splitlines()[1:]}
    assert shown == set(CHANGED) - {"https://long-ago.example"}  # its change is 10 days old
    _, text, _ = report(capsys, "--store", str(store), "--changed", "--since", "90m", "-a", "mybot")
    assert {line.split()[0] for line in text.splitlines()[1:]} == {
        "https://drafts.example",
        "https://mine.example",
    }  # gone.example's 404 came 2 hours ago
    code, _, err = report(capsys, "--store", str(store), "--changed", "--since", "1m")
    assert code == 1 and "no origin" in err


def test_changed_csv_and_json_lines(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, data, _ = report(capsys, "--store", str(store), "--changed", "--csv", "-a", "mybot")
    table = {row["origin"]: row for row in csv.DictReader(io.StringIO(data))}
    assert set(table) == set(CHANGED)
    drafts = table["https://drafts.example"]
    assert (drafts["before_digest"], drafts["after_digest"]) == (
        body_digest(OLD),
        body_digest(NEW),
    )
    assert drafts["changed_at"].endswith("Z") and "/drafts" in drafts["summary"]
    assert table["https://gone.example"]["after_digest"] == ""
    assert table["https://gone.example"]["after_status"] == "404"

    _, data, _ = report(capsys, "--store", str(store), "--changed", "--json", "-a", "mybot")
    objects: dict[str, Any] = {item["origin"]: item for item in map(json.loads, data.splitlines())}
    assert set(objects) == set(CHANGED)
    drafts = objects["https://drafts.example"]
    assert drafts["before_digest"] == body_digest(OLD)
    assert drafts["before_first_seen"] == pytest.approx(NOW - 3 * DAY)
    assert drafts["after_first_seen"] == drafts["changed_at"] == pytest.approx(NOW - HOUR)
    assert [(r["kind"], r["pattern"], r["added"]) for r in drafts["newly_disallowed"]] == [
        ("disallow", "/drafts", True)
    ]
    assert drafts["newly_allowed"] == [] and "/drafts" in drafts["summary"]
    gone = objects["https://gone.example"]
    assert gone["after_digest"] is None and gone["newly_allowed"][0]["pattern"] == "/private"


def test_changed_refuses_the_options_of_the_state_report(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--store", str(store), "--since", "7d"]) == 2
    assert "--since goes with --changed" in capsys.readouterr().err
    assert main(["report", "--store", str(store), "--changed", "--state", "rules"]) == 2
    assert "--state" in capsys.readouterr().err
    code, data, _ = report(capsys, "--store", str(store), "--changed", "--host", "dr*.example")
    assert code == 0 and [line.split()[0] for line in data.splitlines()[1:]] == [
        "https://drafts.example"
    ]


def test_changed_reads_a_redis_store(capsys: pytest.CaptureFixture[str], redis_server: Any) -> None:
    from scrapy_rep.cache.storage.redis.store import RedisStorage

    async def fill() -> None:
        storage = await RedisStorage.open(redis_server.url)
        for key, item in RECORDS.items():
            await storage.put(key, item, 31 * DAY)
        await storage.close()

    with ThreadPoolExecutor(1) as worker:
        worker.submit(asyncio.run, fill()).result()
    code, data, _ = report(
        capsys, "--store", redis_server.url, "--changed", "--json", "-a", "mybot"
    )
    assert code == 0
    assert {json.loads(line)["origin"] for line in data.splitlines()} == set(CHANGED)


def test_changed_inside_a_project_reads_with_its_tokens(tmp_path: Path) -> None:
    """No --store, no --agent: the project's store and its crawler's token
    (ROBOTSTXT_USER_AGENT), as its crawl reads the files."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "settings.py").write_text(
        'REP_STORAGE_PATH = "kept.sqlite3"\nROBOTSTXT_USER_AGENT = "mybot"\n'
    )
    (tmp_path / ".scrapy").mkdir()
    fill_sqlite(tmp_path / ".scrapy" / "kept.sqlite3", RECORDS)
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", "report", "--changed", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert {json.loads(line)["origin"] for line in done.stdout.splitlines()} == set(CHANGED)
    assert "this project's tokens" in done.stderr


def test_the_report_of_states_reads_records_with_versions(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its header-only scan reads a record with earlier versions as the
    record without them (once counted unreadable), its size the current body's."""
    code, data, err = report(capsys, "--store", str(store), "--json")
    assert code == 0 and "could not be read" not in err
    sizes = {item["origin"]: item["size"] for item in map(json.loads, data.splitlines())}
    expected = {
        key: len(item.good_body) if item.good_body else None for key, item in RECORDS.items()
    }
    assert sizes == expected
