"""What the demo's crawl did, per site, from its signals (``demo``).

``Recorder`` listens to scrapy_rep's ``robotstxt_resolved``,
``request_dropped`` and ``sitemaps_found`` signals and Scrapy's
``request_reached_downloader`` and ``response_received``: the figures the
demo prints come from the crawl itself, not from the servers.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import urljoin, urlsplit

from scrapy_rep.tools.demo.sites import Site

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_rep.cache.outcome import Access


__all__ = [
    "ALLOWED",
    "FORBIDDEN",
    "NO_ANSWER",
    "OPTED_OUT",
    "REFUSED",
    "UNREACHABLE",
    "ErrorLog",
    "Recorder",
    "SeenRequest",
    "counts_text",
]


ALLOWED: Final = "allowed"
FORBIDDEN: Final = "forbidden"
REFUSED: Final = "refused"  # a declared purpose refused (usage preferences)
UNREACHABLE: Final = "unreachable"
OPTED_OUT: Final = "opted out"
NO_ANSWER: Final = "(never applied)"  # no robots.txt outcome seen for a site
#: Access states (scrapy_rep.cache.outcome.AccessState values) the table adds to.
_STATES: Final = {"closed": "closed (unreachable)"}


@dataclass(frozen=True)
class SeenRequest:
    spider: str
    site: str
    path: str
    verdict: str


class Recorder:
    """Collects the crawl's signals per site, and prints progress as they come."""

    def __init__(self, sites: Sequence[Site], out: TextIO) -> None:
        self._by_port = {site.port: site for site in sites}
        self._out = out
        self._announced: set[tuple[str, str]] = set()
        self._hops: dict[tuple[str, str], tuple[Site, int]] = {}  # (spider, next URL) -> chain
        self.events: list[SeenRequest] = []
        self.fetches: dict[str, str] = {}  # site -> how its robots.txt download went
        self.states: dict[str, str] = {}  # site -> what applied to its requests
        self.sitemaps: dict[str, set[str]] = defaultdict(set)
        self.refusals: list[tuple[str, str]] = []  # (spider, the drop's reason)
        self.max_body_bytes = 0  # the crawl's REP_MAX_BODY_BYTES, once connected

    def connect(self, crawler: Crawler) -> None:
        from scrapy import signals as scrapy_signals

        from scrapy_rep import signals
        from scrapy_rep.crawler.config.settings import Config

        self.max_body_bytes = Config.from_settings(crawler.settings).max_body_bytes

        connect = crawler.signals.connect
        connect(self._reached, signal=scrapy_signals.request_reached_downloader)
        connect(self._response, signal=scrapy_signals.response_received)
        connect(self._resolved, signal=signals.robotstxt_resolved)
        connect(self._dropped, signal=signals.request_dropped)
        connect(self._sitemaps, signal=signals.sitemaps_found)
        connect(self._closed, signal=scrapy_signals.spider_closed)

    def outcome(self, site: Site) -> str:
        """``HTTP 200 after 3 redirects -> rules``: the download, then its effect."""
        state = self.states.get(site.name)
        if state is None:
            return NO_ANSWER
        return f"{self.fetches.get(site.name, 'from the cache')} -> {state}"

    # --- signal handlers

    def _reached(self, request: Request, spider: Spider) -> None:
        from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY

        if request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return  # robots.txt itself
        verdict = OPTED_OUT if request.meta.get("dont_obey_robotstxt") else ALLOWED
        self._record(spider, request.url, verdict)

    def _response(self, response: Response, request: Request, spider: Spider) -> None:
        """robots.txt downloads: follow each spider's redirect chains to the site they began on."""
        from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY

        if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return
        site, hops = self._hops.pop((spider.name, request.url), (self._site(request.url), 0))
        if site is None:
            return
        location = response.headers.get(b"Location")
        if 300 <= response.status < 400 and location:
            target = urljoin(request.url, location.decode("latin-1"))
            self._hops[spider.name, target] = (site, hops + 1)
            return
        fetch = f"HTTP {response.status}"
        if hops:
            fetch += f" after {hops} redirect{'s' if hops > 1 else ''}"
        if "download_stopped" in response.flags:
            declared = (response.headers.get(b"Content-Length") or b"?").decode("latin-1")
            fetch += f", first {self.max_body_bytes} of {declared} bytes read"
        self.fetches.setdefault(site.name, fetch)

    def _resolved(self, robotstxt_url: str, access: Access, **_: Any) -> None:
        site = self._site(robotstxt_url)
        if site is not None:
            self.states.setdefault(site.name, _STATES.get(access.state.value, access.state.value))

    def _dropped(self, request: Request, spider: Spider, exception: Exception, **_: Any) -> None:
        from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUsageDenied

        verdict = FORBIDDEN if isinstance(exception, ForbiddenByRobotsTxt) else UNREACHABLE
        if isinstance(exception, RobotsTxtUsageDenied):
            verdict = REFUSED
            self.refusals.append((spider.name, f"{request.url}: {exception.reason}"))
        self._record(spider, request.url, verdict)

    def _sitemaps(
        self, sitemaps: Sequence[str], robotstxt_url: str, spider: Spider, **_: Any
    ) -> None:
        site = self._site(robotstxt_url)
        if site is not None:
            self.sitemaps[site.name].update(sitemaps)
            self._announce(spider, site)
            taker = "scheduled by its robotstxt_sitemaps()"
            if not callable(getattr(spider, "robotstxt_sitemaps", None)):
                taker = "signal only"
            self._say(f"  {spider.name:<8} {site.name:<9} {len(sitemaps)} sitemaps found: {taker}")

    def _closed(self, spider: Spider, reason: str) -> None:
        counts = Counter(event.verdict for event in self.events if event.spider == spider.name)
        how = "" if reason == "finished" else f" ({reason})"
        self._say(f"  {spider.name:<8} finished{how}: {counts_text(counts)}")

    # ---

    def _record(self, spider: Spider, url: str, verdict: str) -> None:
        site = self._site(url)
        if site is None:
            return
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.events.append(SeenRequest(spider.name, site.name, path, verdict))
        # Opted-out requests pass before robots.txt is known: announce on a checked one.
        if verdict != OPTED_OUT:
            self._announce(spider, site)

    def _announce(self, spider: Spider, site: Site) -> None:
        """One line per spider and site, when its robots.txt is first applied."""
        if (spider.name, site.name) not in self._announced:
            self._announced.add((spider.name, site.name))
            outcome = self.outcome(site)
            self._say(f"  {spider.name:<8} {site.name:<9} {site.url}/robots.txt: {outcome}")

    def _site(self, url: str) -> Site | None:
        try:
            return self._by_port.get(urlsplit(url).port or 0)
        except ValueError:
            return None

    def _say(self, line: str) -> None:
        print(line, file=self._out, flush=True)


def counts_text(counts: Counter[str]) -> str:
    return ", ".join(
        f"{counts[verdict]} {verdict}"
        for verdict in (ALLOWED, FORBIDDEN, REFUSED, UNREACHABLE, OPTED_OUT)
    )


class ErrorLog(logging.Handler):
    """Errors logged during the crawl: shown at the end, they fail the demo."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")
