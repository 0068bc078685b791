"""``scrapy-rep cache show|forget`` and the Tester's store calls on a store
that is damaged, locked by another process, or in use by a crawl.

A look (``show``, the Tester's stored source) never writes: the file's bytes
and the directory's names are the same after it. A forget that cannot get
the file's lock waits ``--wait`` seconds (made small here), then says so
(exit 2), never with a traceback. docs/tester.md, "Refetch now" and "Safety".
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import open_storage
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName

from .conftest import Running

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[3]
ROBOTS = b"User-agent: *\nDisallow: /private\n"
KEY = "https://example.com"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a loop of its own (the test's thread runs the reactor's loop)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def record(now: float) -> OriginRecord:
    return OriginRecord(
        kind=FetchKind.SUCCESS,
        status=200,
        reason="HTTP 200",
        fetched_at=now,
        expires_at=now + 86400,
        good_body=ROBOTS,
        good_at=now,
        good_status=200,
    )


async def _fill(path: Path) -> None:
    storage = await open_storage("sqlite", path=path)
    await storage.put(KEY, record(time.time()), 3600)
    await storage.close()


def filled(tmp_path: Path) -> Path:
    """A store a crawl wrote and closed: one record, in WAL mode, no side files."""
    path = tmp_path / "store" / "robotstxt.sqlite3"
    run(_fill(path))
    return path


def snapshot(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The console script in a process of its own, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_show_on_a_damaged_file_says_so_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start_tester: Callable[..., Running]
) -> None:
    store = tmp_path / "robotstxt.sqlite3"
    store.write_bytes(b"this is not a database\n" * 200)
    before = snapshot(tmp_path)
    code = main(["cache", "show", f"{KEY}/", "--store", str(store)])
    err = capsys.readouterr().err
    tester = start_tester(store=StoreName(str(store)))
    status, answer = tester.call(f"/api/stored?url={KEY}/")
    assert code == 2
    assert str(store) in err and "damaged" in err and "nothing was changed" in err
    assert "delete" in err  # what to do about it
    assert status == 503 and "damaged" in answer["error"]
    assert snapshot(tmp_path) == before  # not renamed, no new store, no side file


def test_show_reads_a_closed_store_without_writing_or_creating_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = filled(tmp_path)
    before = snapshot(store.parent)
    code = main(["cache", "show", f"{KEY}/page", "--store", str(store)])
    out = capsys.readouterr().out
    assert code == 0 and "outcome     success (HTTP 200)" in out
    assert snapshot(store.parent) == before


def test_show_reads_a_store_a_crawl_has_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crawl holds the file (WAL, its side files there): a look reads the
    committed record and leaves the directory as the crawl keeps it."""
    path = tmp_path / "robotstxt.sqlite3"

    async def scenario() -> tuple[int, set[str], set[str]]:
        storage = await open_storage("sqlite", path=path)
        try:
            await storage.put(KEY, record(time.time()), 3600)
            names = {p.name for p in tmp_path.iterdir()}
            code = main(["cache", "show", f"{KEY}/", "--store", str(path)])
            return code, names, {p.name for p in tmp_path.iterdir()}
        finally:
            await storage.close()

    code, during, after = run(scenario())
    assert code == 0 and "outcome     success" in capsys.readouterr().out
    assert after == during


def test_forget_on_a_locked_file_waits_a_bounded_time_then_exits_2(
    tmp_path: Path, start_tester: Callable[..., Running]
) -> None:
    """Another process holds the file's write lock: ``forget`` gives up after
    ``--wait`` with a message naming the file, no traceback; ``show`` still
    reads (WAL readers do not wait); once the lock goes, ``forget`` works."""
    store = filled(tmp_path)
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        locked = cli("cache", "forget", f"{KEY}/", "--store", str(store), "--wait", "0.2")
        shown = cli("cache", "show", f"{KEY}/", "--store", str(store), "--wait", "0.2")
        tester = start_tester(store=StoreName(str(store), wait=0.2))
        status, answer = tester.call("/api/forget", {"url": f"{KEY}/"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert locked.returncode == 2, locked.stderr
    assert "Traceback" not in locked.stderr
    assert str(store) in locked.stderr and "locked" in locked.stderr
    assert shown.returncode == 0 and "outcome     success" in shown.stdout
    assert status == 503 and "locked" in answer["error"]
    done = cli("cache", "forget", f"{KEY}/", "--store", str(store), "--wait", "0.2")
    assert done.returncode == 0, done.stderr
    assert cli("cache", "show", f"{KEY}/", "--store", str(store)).returncode == 1


def test_a_forget_by_the_command_reaches_a_crawl_that_has_the_file_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command writes what a crawl's store writes: the record goes, and
    the crawl reads the origin in the store's log of forgotten origins."""
    path = tmp_path / "robotstxt.sqlite3"

    async def scenario() -> tuple[int, list[str], OriginRecord | None]:
        storage = await open_storage("sqlite", path=path)
        try:
            await storage.put(KEY, record(time.time()), 3600)
            cursor, _ = await storage.forgotten_since(None)  # type: ignore[attr-defined]
            code = main(["cache", "forget", f"{KEY}/x", "--store", str(path)])
            _, keys = await storage.forgotten_since(cursor)  # type: ignore[attr-defined]
            return code, keys, await storage.get(KEY)
        finally:
            await storage.close()

    code, keys, left = run(scenario())
    assert (code, keys, left) == (0, [KEY], None)
    assert "forgotten" in capsys.readouterr().out


def test_forget_on_a_damaged_file_says_so_and_moves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "robotstxt.sqlite3"
    store.write_bytes(b"\x00garbage" * 500)
    before = snapshot(tmp_path)
    assert main(["cache", "forget", f"{KEY}/", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert str(store) in err and "damaged" in err
    assert snapshot(tmp_path) == before
