"""Fault crawls: one hostile origin beside a healthy one, and what each of them got.

``run_fault`` serves the scenario under test as the bad origin's robots.txt,
crawls pages of both origins (the bad origin's first, so its robots.txt fetch
starts first), and records the server hits, each page's outcome and when it
came, and the crawl's peak memory. The ``assert_*`` helpers then state what
docs/spec.md §2 prescribes and check the same invariants every time: the crawl
finished, every requested page is accounted for, only allowed pages reached
the bad server, the healthy origin was crawled, and memory stayed bounded.

Peak memory is the process's RSS high-water mark (VmHWM) above its RSS at
the start of the crawl; Linux resets the mark when "5" is written to
/proc/self/clear_refs, so each crawl is measured on its own, in-process.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.conftest import RecordingSpider, crawl
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUnreachable

from .fault_server import FaultServer, Route, reply

MIB = 1 << 20
#: The stated memory bound of one fault crawl: server, crawler and parsed rules together.
MEMORY_BOUND = 64 * MIB

FAULT_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_TIMEOUT": 2,
    "REP_STORAGE": "memory",
    "LOG_LEVEL": "INFO",
}

GOOD_ROBOTS = b"User-agent: *\nDisallow: /never\n"
GOOD_PATHS = ("/g0", "/g1", "/g2", "/g3")


class TimedSpider(RecordingSpider):
    """RecordingSpider that also notes when each URL's outcome arrived."""

    name = "timed"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at: dict[str, float] = {}

    def parse(self, response: Response) -> None:
        self.at[response.url] = time.monotonic()
        super().parse(response)

    def errback(self, failure: Failure) -> None:
        self.at[failure.request.url] = time.monotonic()  # type: ignore[attr-defined]
        super().errback(failure)


@dataclass
class FaultRun:
    bad: FaultServer
    good: FaultServer
    crawler: Crawler
    paths: tuple[str, ...]  # the bad origin's pages that were requested
    robots_paths: frozenset[str]  # paths the robots.txt fetch may use (redirect hops)
    started: float
    finished: float
    peak_growth: int  # bytes

    @property
    def spider(self) -> TimedSpider:
        assert isinstance(self.crawler.spider, TimedSpider)
        return self.crawler.spider

    def bad_page_hits(self) -> list[str]:
        """Pages (not robots.txt or its redirect hops) that reached the bad server."""
        return [path for path in self.bad.paths() if path not in self.robots_paths]

    def bad_dropped(self) -> dict[str, Exception]:
        """The bad origin's dropped pages, by URL, with the exception each got."""
        origin = self.bad.origin + "/"
        return {url: e for url, e in self.spider.dropped.items() if url.startswith(origin)}

    def decided_at(self) -> float:
        """When the first of the bad origin's pages got its outcome."""
        return min(self.spider.at[self.bad.url(p)] for p in self.paths)

    def stat(self, name: str) -> Any:
        assert self.crawler.stats is not None
        return self.crawler.stats.get_value(name)


async def run_fault(
    robots: Route | None,
    paths: Sequence[str] = ("/page", "/private"),
    *,
    routes: Mapping[str, Route] | None = None,
    settings: Mapping[str, Any] | None = None,
    bad: FaultServer | None = None,
) -> FaultRun:
    """Crawl ``paths`` on an origin whose robots.txt is ``robots``, beside a healthy origin.

    ``bad`` is a server made beforehand (not started), for scenarios that need
    its URL, such as redirects back to it; ``robots`` None keeps its routes.
    """
    bad = bad or FaultServer()
    if robots is not None:
        bad.routes["/robots.txt"] = robots
    bad.routes.update(routes or {})
    with (
        bad,
        FaultServer({"/robots.txt": reply(200, GOOD_ROBOTS)}) as good,
    ):
        urls = [bad.url(p) for p in paths] + [good.url(p) for p in (*GOOD_PATHS, "/never")]
        gc.collect()
        rss = _reset_peak()
        started = time.monotonic()
        crawler = await crawl(urls, {**FAULT_SETTINGS, **(settings or {})}, spidercls=TimedSpider)
        finished = time.monotonic()
        growth = _peak() - rss
    return FaultRun(
        bad, good, crawler, tuple(paths), frozenset(bad.routes), started, finished, growth
    )


# --- what docs/spec.md §2 prescribes ----------------------------------------------------------


def assert_closed(run: FaultRun, reason: str | Collection[str] | None = None) -> None:
    """Unreachable: every page of the bad origin dropped unsent (full disallow)."""
    _assert_common(run)
    assert run.bad_page_hits() == [], "a page passed while robots.txt was unreachable"
    dropped = run.bad_dropped()
    assert set(dropped) == {run.bad.url(p) for p in run.paths}
    for error in dropped.values():
        assert isinstance(error, RobotsTxtUnreachable), error
        if reason is not None:
            reasons = {reason} if isinstance(reason, str) else set(reason)
            prefixes = tuple(f"robots.txt unreachable ({r})" for r in reasons)
            assert str(error).startswith(prefixes), str(error)
    assert run.stat("robotstxt/unreachable") == len(run.paths)


def assert_rules(run: FaultRun, allowed: Collection[str], forbidden: Collection[str]) -> None:
    """Success: the parsed rules decide each page; ``allowed`` reach the server once each."""
    _assert_common(run)
    assert set(allowed) | set(forbidden) == set(run.paths)
    spider = run.spider
    assert sorted(run.bad_page_hits()) == sorted(allowed), "pages at the bad server"
    assert set(spider.got) >= {run.bad.url(p) for p in allowed}
    dropped = run.bad_dropped()
    assert set(dropped) == {run.bad.url(p) for p in forbidden}
    for error in dropped.values():
        assert isinstance(error, ForbiddenByRobotsTxt), error


def assert_allow_all(run: FaultRun) -> None:
    """Unavailable (or no valid rule): every page is fetched."""
    assert_rules(run, allowed=run.paths, forbidden=())


def assert_not_delayed(run: FaultRun) -> None:
    """The healthy origin was crawled while the bad one was still undecided."""
    decided = run.decided_at()
    last_good = max(hit.at for hit in run.good.hits if hit.path in GOOD_PATHS)
    assert last_good < decided, (
        f"the healthy origin's last page came {last_good - run.started:.2f}s into the crawl, "
        f"after the bad origin's verdict at {decided - run.started:.2f}s"
    )


def _assert_common(run: FaultRun) -> None:
    spider = run.spider
    assert not spider.failed, f"requests failed outside robots.txt handling: {spider.failed}"
    requested = {run.bad.url(p) for p in run.paths}
    assert requested <= set(spider.got) | set(spider.dropped), "a request was never answered"
    # the healthy origin: its rules applied, all its pages fetched, once each
    assert sorted(run.good.paths()) == sorted(["/robots.txt", *GOOD_PATHS])
    assert run.good.url("/never") in spider.dropped
    assert run.peak_growth < MEMORY_BOUND, (
        f"peak RSS grew by {run.peak_growth / MIB:.0f} MiB during the crawl "
        f"(bound: {MEMORY_BOUND / MIB:.0f} MiB)"
    )


# --- peak memory --------------------------------------------------------------------------

_STATUS = Path("/proc/self/status")


def _reset_peak() -> int:
    """Reset the RSS high-water mark; return the current RSS in bytes."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kib("VmRSS") * 1024


def _peak() -> int:
    return _status_kib("VmHWM") * 1024


def _status_kib(field: str) -> int:
    match = re.search(rf"^{field}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    assert match is not None, f"{field} missing from {_STATUS}"
    return int(match.group(1))
