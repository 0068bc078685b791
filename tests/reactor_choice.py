"""Which Twisted reactor the tests crawl under: ``REP_TEST_REACTOR``.

``asyncio`` (the default, Scrapy's own default), ``epoll``, ``poll``,
``select``, or ``none``: Scrapy's reactorless mode (``TWISTED_REACTOR_ENABLED
= False``, asyncio only, aiohttp downloads). ``.ci/test``, the test command,
runs the storage crawl suites again with ``REP_TEST_REACTOR=epoll`` and with
``REP_TEST_REACTOR=none``: the in-process crawls (pytest-twisted's reactor,
set in tests/conftest.py; with ``none``, no reactor, each test on an asyncio
loop of its own) and the crawler processes the tests start
(``crawl_worker.py``) then run that way. Worker scripts find this module
through tests/ on their path.
"""

from __future__ import annotations

import os

#: The environment variable naming the reactor.
REACTOR_ENV = "REP_TEST_REACTOR"

#: Short name -> Scrapy's TWISTED_REACTOR value.
REACTORS = {
    "asyncio": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
    "epoll": "twisted.internet.epollreactor.EPollReactor",
    "poll": "twisted.internet.pollreactor.PollReactor",
    "select": "twisted.internet.selectreactor.SelectReactor",
}
#: The short name of Scrapy's reactorless mode.
NONE = "none"


def chosen_reactor() -> str:
    """The short name in ``REP_TEST_REACTOR`` (``asyncio`` when unset)."""
    name = os.environ.get(REACTOR_ENV, "").strip().lower() or "asyncio"
    if name not in REACTORS and name != NONE:
        known = ", ".join([*REACTORS, NONE])
        raise ValueError(f"{REACTOR_ENV} must be one of {known}; got {name!r}")
    return name


def reactor_setting(name: str | None = None) -> dict[str, object]:
    """``{"TWISTED_REACTOR": ...}`` for ``name`` (default: the chosen reactor);
    for ``none``, ``{"TWISTED_REACTOR_ENABLED": False}``."""
    name = name or chosen_reactor()
    if name == NONE:
        return {"TWISTED_REACTOR_ENABLED": False}
    return {"TWISTED_REACTOR": REACTORS[name]}


def asyncio_process(name: str | None = None) -> bool:
    """Does a worker run its crawl with ``AsyncCrawlerProcess`` (asyncio, or
    no reactor at all), rather than ``CrawlerProcess`` (any reactor)?"""
    return (name or chosen_reactor()) in ("asyncio", NONE)
