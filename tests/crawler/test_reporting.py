"""What the middleware tells the crawl costs little per origin (issue 28)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from scrapy import Spider
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler

from scrapy_rep.cache.outcome import Access, AccessState
from scrapy_rep.crawler.reporting import Reporter, logs
from scrapy_rep.engine.origin import origin_of


class _Spider(Spider):
    name = "reporting"


def test_logs_says_whether_a_handler_would_take_the_record() -> None:
    # Scrapy leaves its loggers at NOTSET and filters at its handler: a
    # record below LOG_LEVEL was built, formatted and thrown away.
    parent = logging.Logger("parent")
    parent.addHandler(logging.NullHandler(logging.WARNING))
    child = logging.Logger("child")
    child.parent = parent
    assert not logs(logging.INFO, child)
    assert not logs(logging.DEBUG, child)
    assert logs(logging.WARNING, child)
    child.addHandler(logging.NullHandler(logging.DEBUG))
    assert logs(logging.DEBUG, child)
    child.propagate = False
    child.handlers[0].setLevel(logging.ERROR)
    assert not logs(logging.WARNING, child)  # the parent's handler is not reached
    child.setLevel(logging.CRITICAL)
    assert not logs(logging.ERROR, child)
    alone = logging.Logger("alone")  # no handler anywhere: Python's last resort, WARNING
    assert logs(logging.WARNING, alone) and not logs(logging.INFO, alone)


@deferred_f_from_coro_f
async def test_reporter_keeps_no_origin_alive() -> None:
    # The origins announced were kept, up to 100,000 of them, each an object
    # the garbage collector walks at every full collection.
    crawler = get_crawler(_Spider)
    crawler.spider = crawler._create_spider()
    crawler.stats.open_spider()
    reporter = Reporter(crawler, "bot")
    origin = origin_of("http://one.example/")
    assert origin is not None
    before = sys.getrefcount(origin)
    access = Access(AccessState.ALLOW_ALL, None, "HTTP 404")
    logging.disable(logging.CRITICAL)  # no captured log record holds it either
    try:
        await reporter.resolved(origin, access, None, None)
        again = origin_of("http://one.example/")
        assert again is not None and again is not origin
        await reporter.resolved(again, access, None, None)
    finally:
        logging.disable(logging.NOTSET)
    reporter.flush()
    assert sys.getrefcount(origin) == before
    assert crawler.stats.get_value("robotstxt/origins") == 1  # still once per origin


def test_heard_agrees_with_the_receivers_a_send_would_call() -> None:
    # A send to no one is skipped: ``_heard`` must never say no where
    # PyDispatcher would call someone (this sender or any, this signal or any).
    from pydispatch import dispatcher

    from scrapy_rep import signals

    crawler = get_crawler(_Spider)
    reporter = Reporter(crawler, "bot")
    sender = crawler.signals.sender

    def called(**_: object) -> None:
        pass

    def heard_by_pydispatch(signal: object) -> bool:
        return any(True for _ in dispatcher.getAllReceivers(sender, signal))

    arrangements = [
        (sender, signals.request_dropped),
        (sender, dispatcher.Any),
        (dispatcher.Any, signals.request_dropped),
        (dispatcher.Any, dispatcher.Any),
    ]
    assert not reporter._heard(signals.request_dropped)
    for connected_sender, connected_signal in arrangements:
        dispatcher.connect(called, signal=connected_signal, sender=connected_sender)
        try:
            for signal in (signals.request_dropped, signals.robotstxt_resolved):
                assert reporter._heard(signal) == heard_by_pydispatch(signal), (
                    connected_sender,
                    connected_signal,
                    signal,
                )
            assert reporter._heard(signals.request_dropped)
        finally:
            dispatcher.disconnect(called, signal=connected_signal, sender=connected_sender)
        assert not reporter._heard(signals.request_dropped)


@deferred_f_from_coro_f
async def test_scrapy_a_warm_run_says_how_many_origins_came_from_the_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With every robots.txt in the store, no per-origin line is logged at
    INFO: one line per crawl says where they came from (docs/stats-signals.md)."""
    from crawler.extras.conftest import SETTINGS, PagesSpider
    from crawler.servers import Reply, SiteServer

    settings = {
        **SETTINGS,
        "REP_STORAGE": "sqlite",
        "REP_STORAGE_PATH": str(tmp_path / "store.sqlite3"),
        "LOG_LEVEL": "INFO",
    }
    closing = "robots.txt: "
    with SiteServer({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /x\n")}) as site:
        urls = [site.url("/a"), site.url("/b", "localhost")]
        with caplog.at_level(logging.INFO):
            await get_crawler(PagesSpider, settings).crawl_async(urls=urls)
            first = [r.getMessage() for r in caplog.records]
            caplog.clear()
            await get_crawler(PagesSpider, settings).crawl_async(urls=urls)
            second = [r.getMessage() for r in caplog.records]
    # the cold run says each origin's fetch, the warm one a line for them all
    assert len([line for line in first if line.startswith("robots.txt of ")]) == 2
    assert not [line for line in first if line.startswith(closing)]
    assert not [line for line in second if line.startswith("robots.txt of ")]
    assert [line for line in second if line.startswith(closing)] == [
        "robots.txt: 2 origins answered from the store without a fetch, 0 origins fetched "
        "by this crawl"
    ]
