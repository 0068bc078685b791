"""Which Twisted reactor the tests crawl under: ``REP_TEST_REACTOR``.

``asyncio`` (the default, Scrapy's own default), ``epoll``, ``poll`` or
``select``. ``.ci/test``, the test command, runs the storage crawl suites a
second time with ``REP_TEST_REACTOR=epoll``: the in-process crawls
(pytest-twisted's reactor, set in tests/conftest.py) and the crawler
processes the tests start (``crawl_worker.py``) then run on it. Worker
scripts find this module through tests/ on their path.
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


def chosen_reactor() -> str:
    """The short name in ``REP_TEST_REACTOR`` (``asyncio`` when unset)."""
    name = os.environ.get(REACTOR_ENV, "").strip().lower() or "asyncio"
    if name not in REACTORS:
        raise ValueError(f"{REACTOR_ENV} must be one of {', '.join(REACTORS)}; got {name!r}")
    return name


def reactor_setting(name: str | None = None) -> dict[str, str]:
    """``{"TWISTED_REACTOR": ...}`` for ``name`` (default: the chosen reactor)."""
    return {"TWISTED_REACTOR": REACTORS[name or chosen_reactor()]}
