"""Shared test configuration: where the test data is; the reactor; a redis-server."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from local_redis import RedisServer
from reactor_choice import NONE, REACTOR_ENV, chosen_reactor
from redis_topologies import LocalCluster, LocalSentinels

ROOT = Path(__file__).resolve().parent.parent
#: Data the tests read, kept in the repository (tests/data/conformance/ORIGIN.md).
DATA = ROOT / "tests" / "data"
CONFORMANCE = DATA / "conformance" / "google"

# Property tests check what holds, never how fast: no per-example deadline
# (a busy CI machine, or the collector tidying a crawl's garbage, must not fail one).
settings.register_profile("rep", deadline=None)
settings.load_profile("rep")

#: REP_TEST_REACTOR -> pytest-twisted's --reactor for the in-process crawls.
#: Its "default" is the platform's reactor: epoll on Linux (checked below).
_PYTEST_TWISTED = {"asyncio": "asyncio", "epoll": "default"}


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Install the reactor ``REP_TEST_REACTOR`` names (before pytest-twisted does)."""
    name = chosen_reactor()
    if name == "asyncio":
        return  # addopts' --reactor=asyncio, or whatever the command line says
    if name == NONE:
        _go_reactorless(config)
        return
    if name not in _PYTEST_TWISTED:
        raise pytest.UsageError(
            f"{REACTOR_ENV}={name}: the in-process tests run under asyncio, epoll or none; "
            "tests/reactors crawls under poll and select in worker processes"
        )
    import twisted.internet.default

    if not twisted.internet.default.install.__module__.endswith(f".{name}reactor"):
        raise pytest.UsageError(f"{REACTOR_ENV}={name}: not this platform's default reactor")
    config.option.reactor = _PYTEST_TWISTED[name]


_AIOHTTP_NOTICE = "scrapy.core.downloader.handlers._base_streaming"


def _go_reactorless(config: pytest.Config) -> None:
    """Scrapy's reactorless mode for the in-process crawls: pytest-twisted
    installs no reactor, and importing one fails as in a reactorless crawl
    (Scrapy's import hook), so a path that reaches for it fails its test."""
    import pytest_twisted
    from scrapy.utils.reactorless import install_reactor_import_hook

    pytest_twisted.reactor_installers[NONE] = lambda: None
    config.option.reactor = NONE
    install_reactor_import_hook()
    # Scrapy's notice, once per crawl, that its reactorless download handler
    # is experimental: not a warning of this project's, which tests count.
    logging.getLogger(_AIOHTTP_NOTICE).setLevel(logging.ERROR)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """With ``REP_TEST_REACTOR=none``, each test runs on an asyncio loop of
    its own (a Deferred it returns is awaited there), not in pytest-twisted's
    reactor greenlet."""
    if chosen_reactor() != NONE:
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(_run_reactorless(pyfuncitem.obj, kwargs))
    return True


async def _run_reactorless(test: Any, kwargs: dict[str, Any]) -> None:
    from twisted.internet.defer import Deferred

    result = test(**kwargs)
    if isinstance(result, Deferred):
        await result.asFuture(asyncio.get_running_loop())
    elif inspect.isawaitable(result):
        await result


@pytest.fixture(scope="session")
def conformance_dir() -> Path:
    """Google's conformance cases (tests/data/conformance/google)."""
    if not CONFORMANCE.is_dir():
        pytest.fail(f"{CONFORMANCE} is missing: the conformance data is part of the repository")
    return CONFORMANCE


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of its own for one test, killed after it."""
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three Redis Cluster primaries for one module (about 2 s to form), removed after.

    Tests sharing it empty it first (``flush``)."""
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def redis_sentinels(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSentinels]:
    """A primary, a replica and three sentinels for one module, removed after."""
    group = LocalSentinels(tmp_path_factory.mktemp("sentinel"))
    try:
        group.start()
        yield group
    finally:
        group.stop()
