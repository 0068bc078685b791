"""Outages as users wire the plugin: the add-on, requests arriving over time.

With the add-on, most requests of a known origin are answered before the
scheduler (the spider middleware's early check), never reaching the
downloader middleware. An origin in an outage must still be asked again on
its schedule (docs/decisions.md, "Robots-aware scheduling"), and the end of
the unreachable window is a reason to ask again, not to allow
(docs/spec.md §2.2). Time moves on the injected clock (REP_CLOCK); the
spider yields each request once the one before it has been decided.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import Response
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from twisted.python.failure import Failure

from scrapy_rep import signals as rep_signals
from scrapy_rep.cache.outcome import Access, AccessState

from .conftest import RecordingSpider
from .servers import Reply, SiteServer
from .test_proxies import Proxy, proxy  # noqa: F401 (the fixture)

ROBOTS = b"User-agent: *\nDisallow: /private\n"
ADDON: dict[str, Any] = {
    "ADDONS": {"scrapy_rep.Addon": 0},
    "ROBOTSTXT_OBEY": True,
    "DOWNLOAD_TIMEOUT": 5,
    "RETRY_ENABLED": False,
    "USER_AGENT": "TestBot/1.0",
    "LOG_LEVEL": "DEBUG",
    # no quick retries while requests wait: each fetch here is one the test asked for
    "REP_UNREACHABLE_WAIT": 0,
}
#: How long to wait for a background retry to reopen an origin (real time):
#: it never comes on the code these tests guard against.
REOPEN_WAIT = 10.0


class Clock:
    """The crawl's clock (REP_CLOCK), moved by the spider between its requests."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def __deepcopy__(self, memo: dict[int, Any]) -> Clock:
        return self  # Scrapy deep-copies settings: the crawl must read this one


#: One step of a spider's plan: before it (the site changes, time passes),
#: then the paths it requests, each decided before the next step.
Step = tuple[Callable[[], None], tuple[str, ...]]


class ArrivingSpider(RecordingSpider):
    """Requests arrive over time: each step's requests are yielded once the
    previous step's were decided (fetched, dropped early or in the
    downloader). ``reopen_first``: before that step, wait until the origin's
    robots.txt rules apply (the ``robotstxt_resolved`` signal)."""

    name = "arriving"

    def __init__(
        self,
        base: str,
        steps: list[Step],
        reopen_first: int | None = None,
        meta: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.base, self.steps, self.reopen_first = base, steps, reopen_first
        self.meta = meta or {}
        self.reopened: bool | None = None
        self._decided: dict[str, asyncio.Event] = {}
        self._rules = asyncio.Event()

    async def start(self) -> AsyncIterator[Request]:
        def resolved(access: Access, **_: Any) -> None:
            if access.state is AccessState.RULES:
                self._rules.set()

        self.crawler.signals.connect(resolved, rep_signals.robotstxt_resolved, weak=False)
        for number, (before, paths) in enumerate(self.steps):
            if number == self.reopen_first:
                try:
                    await asyncio.wait_for(self._rules.wait(), REOPEN_WAIT)
                    self.reopened = True
                except asyncio.TimeoutError:
                    self.reopened = False
            before()
            events = []
            for path in paths:
                url = self.base + path
                events.append(self._decided.setdefault(url, asyncio.Event()))
                yield Request(url, self.parse, errback=self.errback, meta=dict(self.meta))
            for event in events:
                await asyncio.wait_for(event.wait(), 30)

    def parse(self, response: Response) -> None:
        super().parse(response)
        self._decided.setdefault(response.url, asyncio.Event()).set()

    def errback(self, failure: Failure) -> None:
        super().errback(failure)
        url = failure.request.url  # type: ignore[attr-defined]
        self._decided.setdefault(url, asyncio.Event()).set()


def _nothing() -> None:
    return None


def _storage(kind: str, tmp_path: Path) -> dict[str, Any]:
    if kind == "sqlite":
        return {"REP_STORAGE": "sqlite", "REP_STORAGE_PATH": str(tmp_path / "robots.sqlite")}
    return {"REP_STORAGE": "memory"}


async def _crawl(spider_kwargs: dict[str, Any], settings: dict[str, Any]) -> ArrivingSpider:
    crawler = get_crawler(ArrivingSpider, {**ADDON, **settings})
    await crawler.crawl_async(**spider_kwargs)
    spider = crawler.spider
    assert isinstance(spider, ArrivingSpider)
    return spider


@pytest.mark.parametrize("store", ["sqlite", "memory"])
@deferred_f_from_coro_f
async def test_rfc9309_an_origin_closed_by_a_503_reopens_when_its_retry_is_due(
    store: str, tmp_path: Path
) -> None:
    """robots.txt answers 503, then recovers. The next request after the
    retry is due is answered early (still closed) and starts the retry; once
    it lands, the rules apply: /private dropped, the rest fetched."""
    clock = Clock()
    with SiteServer({"/robots.txt": Reply(503, b"busy")}) as site:

        def recover() -> None:
            site.routes["/robots.txt"] = Reply(200, ROBOTS)
            clock.now += 60  # a 503's first retry is due after REP_RETRY_INITIAL (2 s)

        steps: list[Step] = [
            (_nothing, ("/a",)),
            (recover, ("/b",)),
            (_nothing, ("/private/c", "/d")),
        ]
        spider = await _crawl(
            {"base": site.url(""), "steps": steps, "reopen_first": 2},
            {**_storage(store, tmp_path), "REP_CLOCK": clock},
        )
        asked = site.paths()
    assert spider.reopened is True
    assert asked.count("/robots.txt") == 2  # the first fetch, then the retry /b started
    assert spider.got == [site.url("/d")]
    assert sorted(spider.dropped) == [site.url(p) for p in ("/a", "/b", "/private/c")]
    assert "/private/c" not in asked


@deferred_f_from_coro_f
async def test_rfc9309_the_unreachable_windows_end_asks_again_before_allowing(
    tmp_path: Path,
) -> None:
    """REP_UNREACHABLE_DISALLOW of 30 s and a Retry-After of an hour: at the
    window's end no retry is due, and no earlier copy exists. The request
    then waits for robots.txt to be asked again, which now forbids it."""
    clock = Clock()
    unreachable = Reply(503, b"busy", {"Retry-After": "3600"})
    with SiteServer({"/robots.txt": unreachable}) as site:

        def recover_after_the_window() -> None:
            site.routes["/robots.txt"] = Reply(200, ROBOTS)
            clock.now += 31

        steps: list[Step] = [
            (_nothing, ("/a",)),
            (recover_after_the_window, ("/private/late",)),
            (_nothing, ("/ok",)),
        ]
        spider = await _crawl(
            {"base": site.url(""), "steps": steps},
            {**_storage("sqlite", tmp_path), "REP_CLOCK": clock, "REP_UNREACHABLE_DISALLOW": 30},
        )
        asked = site.paths()
    assert "/private/late" not in asked
    assert asked.count("/robots.txt") == 2
    assert sorted(spider.dropped) == [site.url("/a"), site.url("/private/late")]
    assert spider.got == [site.url("/ok")]


@deferred_f_from_coro_f
async def test_rfc9309_the_window_ends_allow_all_once_asked_again_and_still_down(
    tmp_path: Path,
) -> None:
    """The same, but robots.txt still answers 503 when asked at the window's
    end: then, and only then, everything is allowed (no earlier copy)."""
    clock = Clock()
    unreachable = Reply(503, b"busy", {"Retry-After": "3600"})
    with SiteServer({"/robots.txt": unreachable}) as site:

        def after_the_window() -> None:
            clock.now += 31

        steps: list[Step] = [(_nothing, ("/a",)), (after_the_window, ("/private/late",))]
        spider = await _crawl(
            {"base": site.url(""), "steps": steps},
            {**_storage("memory", tmp_path), "REP_CLOCK": clock, "REP_UNREACHABLE_DISALLOW": 30},
        )
        asked = site.paths()
    assert asked.count("/robots.txt") == 2
    assert spider.got == [site.url("/private/late")]
    assert list(spider.dropped) == [site.url("/a")]


PROXY_ANSWERS = {
    "407": (407, {}),
    "502 Proxy-Status": (502, {"Proxy-Status": 'proxy; error="destination_unavailable"'}),
}


@pytest.mark.parametrize("answer", PROXY_ANSWERS)
@deferred_f_from_coro_f
async def test_scrapy_an_origin_closed_by_its_proxy_reopens_when_the_proxy_recovers(
    answer: str,
    proxy: Proxy,  # noqa: F811
) -> None:
    """A proxy's own answer for robots.txt closes the origin; once the proxy
    recovers, the retry that the next request starts reopens it."""
    clock = Clock()
    proxy.own_answer = PROXY_ANSWERS[answer]
    base = "http://site.test"

    def proxy_recovers() -> None:
        proxy.own_answer = None  # robots.txt (test_proxies.ROBOTS) from now on
        clock.now += 60

    steps: list[Step] = [
        (_nothing, ("/a",)),
        (proxy_recovers, ("/b",)),
        (_nothing, ("/private/secret", "/d")),
    ]
    spider = await _crawl(
        {"base": base, "steps": steps, "reopen_first": 2, "meta": {"proxy": proxy.url}},
        {"REP_STORAGE": "memory", "REP_CLOCK": clock},
    )
    assert spider.reopened is True
    assert [url for url, _ in proxy.robots_asks()] == [base + "/robots.txt"] * 2
    assert spider.got == [base + "/d"]
    assert sorted(spider.dropped) == [base + p for p in ("/a", "/b", "/private/secret")]
