"""``scrapy-rep cache show|forget URL --store ...`` and the stores' ``forget``.

Against the store a real crawl filled (SQLite), a real redis-server, and the
memory store; forgetting removes the origin's record only, so the next crawl
sharing the store fetches robots.txt again (issue 27 §6).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from cache.conftest import run_crawlers
from crawler.servers import Reply, SiteServer
from local_redis import RedisServer

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.policy import OriginRecord
from scrapy_rep.cache.storage import MemoryStorage, StorageError, forget, open_storage
from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.store.view import StoreName, describe, read_origin

T = TypeVar("T")
ROBOTS = b"User-agent: *\nDisallow: /private\n"


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run on a loop of its own (the test's thread runs the reactor's loop)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def record(now: float, **fields: object) -> OriginRecord:
    base: dict[str, object] = {
        "kind": FetchKind.SUCCESS,
        "status": 200,
        "reason": "HTTP 200",
        "fetched_at": now,
        "expires_at": now + 86400,
        "good_body": ROBOTS,
        "good_at": now,
        "good_status": 200,
    }
    base.update(fields)
    return OriginRecord(**base)  # type: ignore[arg-type]


def test_cache_show_and_forget_on_the_store_a_crawl_filled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """show: what the crawl stored; forget: gone, the next crawl fetches again."""
    store = tmp_path / "robotstxt.sqlite3"
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        job = {"urls": [site.url("/a")], "settings": {"REP_STORAGE_PATH": str(store)}}
        run_crawlers(job, cwd=tmp_path)
        assert main(["cache", "show", site.url("/any/page"), "--store", str(store)]) == 0
        shown = capsys.readouterr().out
        assert main(["cache", "show", site.url("/"), "--store", str(store), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert main(["cache", "forget", site.url("/x"), "--store", str(store)]) == 0
        forgot = capsys.readouterr().out
        assert main(["cache", "show", site.url("/"), "--store", str(store)]) == 1
        after = capsys.readouterr().out
        assert main(["cache", "forget", site.url("/x"), "--store", str(store)]) == 1
        again = capsys.readouterr().out
        run_crawlers(job, cwd=tmp_path)
        assert site.count("/robots.txt") == 2
    origin = site.url("/").rstrip("/")
    assert shown.splitlines()[0] == f"{origin} in {store}"
    assert "outcome     success (HTTP 200)" in shown
    assert "good copy" in shown and "33 bytes" in shown
    assert (data["origin"], data["outcome"], data["body"], data["closed"]) == (
        origin,
        "success",
        ROBOTS.decode(),
        False,
    )
    assert "forgotten: every worker sharing the store fetches it again" in forgot
    assert after.strip() == f"{origin}: nothing kept in {store}"
    assert "nothing was kept" in again


def test_cache_command_names_a_missing_store_and_a_bad_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.sqlite3"
    assert main(["cache", "show", "https://example.com/", "--store", str(missing)]) == 2
    assert "no such store file" in capsys.readouterr().err
    assert not missing.exists()  # never created by a look
    store = tmp_path / "s.sqlite3"
    run(_put(StoreName(str(store)), "https://example.com", record(time.time())))
    assert main(["cache", "show", "not a url", "--store", str(store)]) == 2
    assert "not an absolute" in capsys.readouterr().err


async def _put(store: StoreName, key: str, found: OriginRecord) -> None:
    if store.kind == "sqlite":  # a crawl's first put creates the file
        storage = await open_storage("sqlite", path=store.where)
    else:
        storage = await store.open()
    await storage.put(key, found, 3600)
    await storage.close()


def test_cache_show_and_forget_in_redis(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Redis URL names the store as REP_REDIS_URL does; the prefix is honoured."""
    store = StoreName(redis_server.url, "crawl1:")
    key = "https://example.com"
    run(_put(store, key, record(time.time())))
    run(_put(StoreName(redis_server.url, "other:"), key, record(time.time())))
    args = ["--store", redis_server.url, "--redis-prefix", "crawl1:"]
    assert main(["cache", "show", "https://example.com/a", *args]) == 0
    assert "outcome     success" in capsys.readouterr().out
    assert main(["cache", "forget", "https://example.com/a", *args]) == 0
    assert read_origin(store, "https://example.com/")[1] is None
    assert read_origin(StoreName(redis_server.url, "other:"), "https://example.com/")[1]


@pytest.mark.parametrize("where", ["redis_cluster", "redis_sentinels"])
def test_cache_show_and_forget_on_a_cluster_and_through_sentinel(
    where: str, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    """--store takes every form of REP_REDIS_URL (issue 46); no password is printed."""
    url: str = request.getfixturevalue(where).url
    store = StoreName(url)
    assert store.kind == "redis"
    key = "https://example.com"
    run(_put(store, key, record(time.time())))
    assert main(["cache", "show", "https://example.com/a", "--store", url]) == 0
    out = capsys.readouterr().out
    assert "outcome     success" in out and ":***@" in out and "pw" not in out
    assert main(["cache", "forget", "https://example.com/a", "--store", url]) == 0
    assert "forgotten" in capsys.readouterr().out
    assert read_origin(store, "https://example.com/")[1] is None


def test_describe_says_closed_and_until_when_during_an_outage() -> None:
    """docs/spec.md §2.2: the first 12 hours of an outage close the origin."""
    now = 1_000_000.0
    failing = record(
        now,
        kind=FetchKind.UNREACHABLE,
        status=503,
        reason="HTTP 503",
        expires_at=now - 3600,
        good_at=now - 7200,
        outage_started_at=now - 3600,
        failures=2,
    )
    data = describe(failing, now)
    assert (data["closed"], data["closed_until"]) == (True, now - 3600 + 12 * 3600)
    assert data["good"] == {"at": now - 7200, "age": 7200}
    assert describe(failing, now + 12 * 3600)["closed"] is False
    assert describe(None, now) == {"kept": False}


def test_memory_store_forgets_and_a_store_without_forget_is_named() -> None:
    async def scenario() -> tuple[bool, bool, object]:
        memory = MemoryStorage()
        await memory.put("k", record(time.time()), 60)
        first, second = await forget(memory, "k"), await forget(memory, "k")
        return first, second, await memory.get("k")

    assert run(scenario()) == (True, False, None)

    class Plain:
        async def get(self, key: str) -> None: ...
        async def put(self, key: str, record: object, ttl_seconds: float) -> None: ...
        async def lock(self, key: str, ttl: float) -> bool: ...
        async def release(self, key: str) -> None: ...
        async def close(self) -> None: ...

    with pytest.raises(StorageError, match="Plain cannot forget"):
        run(forget(Plain(), "k"))  # type: ignore[arg-type]


def test_sqlite_forget_leaves_the_fetch_lock_alone(tmp_path: Path) -> None:
    """A worker fetching the origin right now keeps its lock: no second fetch."""

    async def scenario() -> tuple[bool, bool]:
        storage = await open_storage("sqlite", path=tmp_path / "s.sqlite3")
        other = await open_storage("sqlite", path=tmp_path / "s.sqlite3")
        try:
            await storage.put("k", record(time.time()), 60)
            assert await storage.lock("k", 30)
            assert await forget(other, "k")
            return await other.lock("k", 30), await storage.get("k") is None
        finally:
            await storage.close()
            await other.close()

    assert run(scenario()) == (False, True)


def test_a_store_that_is_down_is_named_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Redis that does not answer, or a SQLite file that is not there: exit 2."""
    from local_redis import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"
    assert main(["cache", "forget", "https://example.com/", "--store", url]) == 2
    assert f"127.0.0.1:{url.rsplit(':', 1)[1].split('/')[0]}" in capsys.readouterr().err
    missing = tmp_path / "typo.sqlite3"
    assert main(["cache", "forget", "https://example.com/", "--store", str(missing)]) == 2
    assert "no such store file" in capsys.readouterr().err
    assert not missing.exists()


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3])
    return subprocess.run(
        [sys.executable, "-m", "scrapy_rep.tools.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


def test_cache_show_inside_a_project_reads_the_projects_store(tmp_path: Path) -> None:
    """docs/cli.md: no --store needed where the project's settings say it."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = shop.settings\n")
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "__init__.py").write_text("")
    (tmp_path / "shop" / "settings.py").write_text('REP_STORAGE_PATH = "kept.sqlite3"\n')
    (tmp_path / ".scrapy").mkdir()
    store = tmp_path / ".scrapy" / "kept.sqlite3"
    run(_put(StoreName(str(store)), "https://example.com", record(time.time())))
    shown = _cli("cache", "show", "https://example.com/page", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f"https://example.com in {store}"
    with tempfile.TemporaryDirectory() as elsewhere:  # no scrapy.cfg here or above
        outside = _cli("cache", "show", "https://example.com/page", cwd=Path(elsewhere))
    assert outside.returncode == 2
    assert "give --store" in outside.stderr


def test_cache_show_names_a_project_whose_store_keeps_nothing(tmp_path: Path) -> None:
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = mem.settings\n")
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "__init__.py").write_text("")
    (tmp_path / "mem" / "settings.py").write_text('REP_STORAGE = "memory"\n')
    done = _cli("cache", "forget", "https://example.com/", cwd=tmp_path)
    assert done.returncode == 2
    assert "REP_STORAGE is 'memory'" in done.stderr


def test_cache_show_says_what_closed_means_and_until_when(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An origin's state in words a user reads without the docs: closed is
    "every request dropped", with its end."""
    from scrapy_rep.cache.storage.sqlite.store import SqliteStorage

    now = time.time()
    closed = record(
        now,
        kind=FetchKind.UNREACHABLE,
        status=503,
        reason="HTTP 503",
        failures=1,
        outage_started_at=now - 60,
        next_retry_at=now + 60,
        good_body=None,
        good_at=None,
        good_status=None,
    )
    store = tmp_path / "kept.sqlite3"

    async def fill() -> None:
        storage = await SqliteStorage.open(store)
        await storage.put("https://down.example", closed, 86400)
        await storage.close()

    run(fill())
    assert main(["cache", "show", "https://down.example/", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    until = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(now - 60 + 12 * 3600))
    assert (
        f"  closed      every request to it is dropped until {until}, unless robots.txt "
        "answers sooner (1 failed fetch so far)"
    ) in out
    assert "closed: every request to it is dropped until " in out  # the access line too


def test_forget_on_a_cluster_that_deletes_but_cannot_log_says_so(
    redis_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a Cluster the record and the log of forgotten origins live apart
    (docs/storage.md): a log that fails after the delete is said as such,
    with what to do, and exit 2; not as a record the store cannot read."""
    import redis

    redis_cluster.flush()
    url: str = redis_cluster.url
    run(_put(StoreName(url), "https://example.com", record(time.time())))
    from redis_topologies import PASSWORD

    seed = redis_cluster.nodes[0].port
    client = redis.RedisCluster(host="127.0.0.1", port=seed, password=PASSWORD)
    client.set("scrapy_rep:forgotten", "not a stream")  # the log's key, of another type
    client.close()
    assert main(["cache", "forget", "https://example.com/a", "--store", url]) == 2
    err = capsys.readouterr().err
    assert "the record of https://example.com was deleted but not logged" in err
    assert "forget it again to tell them" in err
    assert "cache forget removes it" not in err  # not called an unreadable record
    assert read_origin(StoreName(url), "https://example.com/")[1] is None


def test_forget_on_one_server_whose_log_is_of_another_type_says_nothing_was_deleted(
    redis_server: RedisServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """On one server the delete and the log are one script: when the log's
    key holds another type, neither happens, and the error says so rather
    than calling the record unreadable."""
    import redis

    store = StoreName(redis_server.url)
    run(_put(store, "https://example.com", record(time.time())))
    client = redis.Redis.from_url(redis_server.url)
    client.set("scrapy_rep:forgotten", "not a stream")
    client.close()
    assert main(["cache", "forget", "https://example.com/a", "--store", redis_server.url]) == 2
    err = capsys.readouterr().err
    assert "when asked to forget it; nothing was deleted" in err
    assert "cache forget removes it" not in err
    assert read_origin(store, "https://example.com/")[1] is not None
