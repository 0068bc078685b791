"""``python -m scrapy_rep.tools.demo``: scrapy_rep at work on local sites, no internet needed.

Serves one origin per behaviour on 127.0.0.1 (rules for different agents, a
404, a 503, a redirect chain, a robots.txt over 500 KiB, sitemaps, usage
preferences that refuse AI training on part of a site), runs the example
project's spiders against all of them in one process, and prints
what each origin's robots.txt did to their requests. The numbers come from
the crawl itself, not from the servers: scrapy_rep's ``robotstxt_resolved``,
``request_dropped`` and ``sitemaps_found`` signals, Scrapy's
``request_reached_downloader`` (a request that passed) and
``response_received`` (how each robots.txt download went). Exit code 0 when
every origin showed its behaviour.

Scrapy is imported only when the crawl starts, so the ``scrapy-rep`` console
script stays light. The reactor cannot be restarted: ``main`` runs once per
process.
"""

from __future__ import annotations

import argparse
import configparser
import logging
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from scrapy.settings import Settings

    from scrapy_rep.cache.outcome import Access

__all__ = ["main"]

#: The example project's spiders, all run against every site.
SPIDERS: Final = ("catalog", "monitor", "news")
#: The spider that declares REP_PURPOSES = ["train-ai"], run against the usage site only.
TRAINER: Final = "trainer"
USAGE_SITE: Final = "usage"
#: The example project as the wheel ships it (pyproject.toml's force-include).
PACKAGED_PROJECT: Final = Path(__file__).resolve().parent / "demo_project"
#: The example project in a clone (the package is installed editable).
CLONE_PROJECT: Final = Path(__file__).resolve().parents[2] / "example_project"


def default_project() -> Path:
    """The shipped copy when installed from a wheel, else the clone's own."""
    return PACKAGED_PROJECT if (PACKAGED_PROJECT / "scrapy.cfg").is_file() else CLONE_PROJECT

# --- the local sites ------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    location: str | None = None


@dataclass(frozen=True)
class Big:
    """``size`` bytes: ``head``, comment lines, and ``tail`` at offset ``tail_at``.

    Generated while it is sent, so the server never holds it; the crawler is
    expected to hang up after 512,000 bytes.
    """

    size: int
    head: bytes
    tail_at: int
    tail: bytes


Answer = Reply | Big


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Answer]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a crawler hanging up on the big robots.txt is expected


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        answer = self.server.routes.get(path) or Reply(
            200, f"<html><body>{path}</body></html>".encode(), "text/html; charset=utf-8"
        )
        if isinstance(answer, Big):
            self._send_big(answer)
            return
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        if answer.location:
            self.send_header("Location", answer.location)
        self.end_headers()
        self.wfile.write(answer.body)

    def _send_big(self, big: Big) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(big.size))
        self.end_headers()
        filler = b"# filler: the rules that matter are at the top\n" * 1024
        with suppress(OSError):
            sent = self._write(big.head)
            while sent < big.size:
                if sent == big.tail_at:
                    sent += self._write(big.tail)
                    continue
                stop = big.tail_at if sent < big.tail_at else big.size
                sent += self._write(filler[: min(len(filler), stop - sent)])
        self.close_connection = True

    def _write(self, data: bytes) -> int:
        self.wfile.write(data)
        return len(data)

    def finish(self) -> None:
        with suppress(OSError):
            super().finish()


@dataclass
class Site:
    """One origin on 127.0.0.1 showing one behaviour."""

    name: str
    shows: str
    crawled: bool = True
    server: _Server = field(init=False)

    def __post_init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.routes = {}

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _sites() -> list[Site]:
    return [
        Site("agents", "rules for different agents"),
        Site("missing", "404: everything allowed"),
        Site("down", "503: unreachable, requests dropped"),
        Site("redirect", "redirect chain, 3 hops, across hosts"),
        Site("huge", "robots.txt over 500 KiB: the rest ignored"),
        Site("sitemaps", "sitemaps handed to the spider"),
        Site(USAGE_SITE, "crawling allowed, train-ai refused on part of the site"),
        Site("cdn", "where the redirect chain ends", crawled=False),
    ]


AGENTS_ROBOTS: Final = b"""\
# Each crawler obeys the one group that names it (RFC 9309 2.2.1).
User-agent: examplebot-news
Disallow: /private/

User-agent: examplebot
Disallow: /private/
Disallow: /articles/

User-agent: catalogbot
Allow: /$
Disallow: /

User-agent: *
Disallow: /
"""

#: draft-ietf-aipref-attach-05 and Cloudflare's Content Signals: every path may
#: be crawled; what may be used to train generative AI differs by path.
USAGE_ROBOTS: Final = b"""\
User-agent: *
Allow: /
Content-Usage: train-ai=y
Content-Usage: /articles/ train-ai=n, search=y
Content-Signal: /private/ search=yes, ai-train=no
"""

REDIRECTED_ROBOTS: Final = b"User-agent: *\nDisallow: /private/\n"
HUGE_SIZE: Final = 2_000_000
HUGE_TAIL_AT: Final = 520_000  # beyond 512,000 bytes: never parsed


def _urlset(base: str, paths: Sequence[str]) -> bytes:
    urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    ).encode()


def _route(sites: dict[str, Site]) -> None:
    """What each site answers; some answers name another site's port."""
    sites["agents"].server.routes = {"/robots.txt": Reply(200, AGENTS_ROBOTS)}
    sites["missing"].server.routes = {
        "/robots.txt": Reply(404, b"<html>Not found</html>", "text/html")
    }
    sites["down"].server.routes = {"/robots.txt": Reply(503, b"Down for maintenance")}
    cdn = sites["cdn"].url
    sites["redirect"].server.routes = {
        "/robots.txt": Reply(301, location="/robots-2024.txt"),
        "/robots-2024.txt": Reply(302, location=f"{cdn}/redirect/robots.txt"),
    }
    sites["cdn"].server.routes = {
        "/redirect/robots.txt": Reply(307, location="/rules/redirect.txt"),
        "/rules/redirect.txt": Reply(200, REDIRECTED_ROBOTS),
        "/robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n"),
    }
    sites["huge"].server.routes = {
        "/robots.txt": Big(
            HUGE_SIZE,
            b"User-agent: *\nDisallow: /early/\n",
            HUGE_TAIL_AT,
            b"\nDisallow: /late/\n",
        )
    }
    sites[USAGE_SITE].server.routes = {"/robots.txt": Reply(200, USAGE_ROBOTS)}
    base = sites["sitemaps"].url
    sites["sitemaps"].server.routes = {
        "/robots.txt": Reply(200, _sitemaps_robots(base)),
        "/sitemaps/pages.xml": Reply(
            200, _urlset(base, ["/catalog/1", "/catalog/2", "/private/listed"]), "text/xml"
        ),
        "/sitemaps/news.xml": Reply(200, _urlset(base, ["/news/today"]), "text/xml"),
    }


def _sitemaps_robots(base: str) -> bytes:
    return (
        f"Sitemap: {base}/sitemaps/pages.xml\n"
        f"Sitemap: {base}/sitemaps/news.xml\n\n"
        "User-agent: *\nDisallow: /private/\n"
    ).encode()


@contextmanager
def serving() -> Iterator[list[Site]]:
    """Every site, listening, each in its own thread; stopped on exit."""
    sites = _sites()
    _route({site.name: site for site in sites})
    with ExitStack() as stack:
        for site in sites:
            thread = threading.Thread(
                target=site.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            thread.start()
            stack.callback(site.server.server_close)
            stack.callback(site.server.shutdown)
        yield sites


# --- what the crawl did -----------------------------------------------------------

ALLOWED: Final = "allowed"
FORBIDDEN: Final = "forbidden"
REFUSED: Final = "refused"  # a declared purpose refused (usage preferences)
UNREACHABLE: Final = "unreachable"
OPTED_OUT: Final = "opted out"
NO_ANSWER: Final = "(never applied)"  # no robots.txt outcome seen for a site
#: Access states (scrapy_rep.cache.outcome.AccessState values) as the table shows them.
_STATES: Final = {"rules": "rules", "allow": "allow all", "disallow": "closed (unreachable)"}


@dataclass(frozen=True)
class Event:
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
        self.events: list[Event] = []
        self.fetches: dict[str, str] = {}  # site -> how its robots.txt download went
        self.states: dict[str, str] = {}  # site -> what applied to its requests
        self.sitemaps: dict[str, set[str]] = defaultdict(set)
        self.refusals: list[tuple[str, str]] = []  # (spider, the drop's reason)

    def connect(self, crawler: Crawler) -> None:
        from scrapy import signals as scrapy_signals

        from scrapy_rep import signals

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
        from scrapy_rep.crawler.fetcher import ROBOTSTXT_FETCH_META_KEY as META_KEY

        if request.meta.get(META_KEY):
            return  # robots.txt itself
        verdict = OPTED_OUT if request.meta.get("dont_obey_robotstxt") else ALLOWED
        self._record(spider, request.url, verdict)

    def _response(self, response: Response, request: Request, spider: Spider) -> None:
        """robots.txt downloads: follow each spider's redirect chains to the site they began on."""
        from scrapy_rep.crawler.fetcher import ROBOTSTXT_FETCH_META_KEY as META_KEY

        if not request.meta.get(META_KEY):
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
            fetch += f", stopped at {len(response.body)} of {declared} bytes"
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
        self._say(f"  {spider.name:<8} finished{how}: {_counts(counts)}")

    # ---

    def _record(self, spider: Spider, url: str, verdict: str) -> None:
        site = self._site(url)
        if site is None:
            return
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.events.append(Event(spider.name, site.name, path, verdict))
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


def _counts(counts: Counter[str]) -> str:
    return ", ".join(
        f"{counts[verdict]} {verdict}"
        for verdict in (ALLOWED, FORBIDDEN, REFUSED, UNREACHABLE, OPTED_OUT)
    )


class _ErrorLog(logging.Handler):
    """Errors logged during the crawl: shown at the end, they fail the demo."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name}: {record.getMessage()}")


# --- running the example project -----------------------------------------------------


def project_settings(project: Path, log_level: str) -> Settings:
    """The example project's settings module, as ``scrapy crawl`` inside it would load it."""
    from scrapy.settings import Settings

    config = configparser.ConfigParser()
    config.read(project / "scrapy.cfg")
    module = config.get("settings", "default")
    if str(project) not in sys.path:
        sys.path.insert(0, str(project))
    settings = Settings()
    settings.setmodule(module, priority="project")
    settings.setdict(
        {
            "LOG_LEVEL": log_level,
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,  # Scrapy 2.19's listener: not needed here
            "DOWNLOAD_TIMEOUT": 10,
            "RETRY_ENABLED": False,
        },
        priority="cmdline",
    )
    return settings


def crawl(project: Path, sites: Sequence[Site], log_level: str, out: TextIO) -> Recorder:
    """Run every spider of ``SPIDERS`` against every crawled site, all at once."""
    from scrapy.crawler import AsyncCrawlerProcess

    process = AsyncCrawlerProcess(project_settings(project, log_level))
    recorder = Recorder(sites, out)
    bases = ",".join(site.url for site in sites if site.crawled)
    usage = ",".join(site.url for site in sites if site.name == USAGE_SITE)
    for name in (*SPIDERS, TRAINER):
        crawler = process.create_crawler(name)
        recorder.connect(crawler)
        process.crawl(crawler, base=usage if name == TRAINER else bases)
    process.start()
    return recorder


# --- the report -----------------------------------------------------------------------


@dataclass
class SiteReport:
    site: Site
    outcome: str
    counts: Counter[str]
    paths: dict[tuple[str, str], set[str]]  # (spider, verdict) -> paths
    sitemaps: set[str]

    def forbidden(self, spider: str) -> set[str]:
        return self.paths.get((spider, FORBIDDEN), set())

    def allowed(self, spider: str) -> set[str]:
        return self.paths.get((spider, ALLOWED), set())


def reports(sites: Sequence[Site], recorder: Recorder) -> list[SiteReport]:
    result = []
    for site in sites:
        if not site.crawled:
            continue
        events = [event for event in recorder.events if event.site == site.name]
        paths: dict[tuple[str, str], set[str]] = defaultdict(set)
        for event in events:
            paths[event.spider, event.verdict].add(event.path)
        result.append(
            SiteReport(
                site,
                recorder.outcome(site),
                Counter(event.verdict for event in events),
                dict(paths),
                set(recorder.sitemaps.get(site.name, ())),
            )
        )
    return result


Check = Callable[[SiteReport], str | None]  # None when the behaviour showed, else what failed


def check(report: SiteReport) -> str | None:
    """What went wrong on this site, or None when it showed its behaviour."""
    if report.outcome == NO_ANSWER:
        return "no robots.txt verdict was seen for this site"
    return CHECKS[report.site.name](report)


def _check_agents(report: SiteReport) -> str | None:
    expected = {
        "news": {"/private/report"},  # group examplebot-news
        "monitor": {"/private/report", "/articles/1"},  # group examplebot
        "catalog": {"/articles/1", "/private/report", "/early/page", "/late/page"},  # catalogbot
    }
    wrong = [
        f"{spider} forbidden {sorted(report.forbidden(spider))}, expected {sorted(paths)}"
        for spider, paths in expected.items()
        if report.forbidden(spider) != paths
    ]
    return "; ".join(wrong) or None


def _check_missing(report: SiteReport) -> str | None:
    if "404" not in report.outcome:
        return f"expected robots.txt to answer 404, got {report.outcome}"
    if report.counts[FORBIDDEN] or report.counts[UNREACHABLE] or not report.counts[ALLOWED]:
        return f"expected every request allowed, got {_counts(report.counts)}"
    return None


def _check_down(report: SiteReport) -> str | None:
    if report.counts[ALLOWED] or not report.counts[UNREACHABLE]:
        return f"expected every checked request dropped, got {_counts(report.counts)}"
    if report.counts[OPTED_OUT] != 1:
        return f"expected monitor's opted-out request to go through, got {report.counts[OPTED_OUT]}"
    return None


def _check_same_forbidden(expected: set[str]) -> Check:
    def same(report: SiteReport) -> str | None:
        wrong = [
            f"{spider} forbidden {sorted(report.forbidden(spider))}, expected {sorted(expected)}"
            for spider in SPIDERS
            if report.forbidden(spider) != expected
        ]
        return "; ".join(wrong) or None

    return same


def _check_huge(report: SiteReport) -> str | None:
    cut = _check_same_forbidden({"/early/page"})(report)
    if cut:
        return cut
    if any("/late/page" not in report.allowed(spider) for spider in SPIDERS):
        return "/late/page (ruled after the cut) was not allowed for every spider"
    return None


def _check_sitemaps(report: SiteReport) -> str | None:
    base = report.site.url
    expected = {f"{base}/sitemaps/pages.xml", f"{base}/sitemaps/news.xml"}
    if report.sitemaps != expected:
        return f"sitemaps surfaced {sorted(report.sitemaps)}, expected {sorted(expected)}"
    followed = {"/sitemaps/pages.xml", "/sitemaps/news.xml", "/catalog/1", "/news/today"}
    missing = followed - report.allowed("catalog")
    if missing:
        return f"catalog did not fetch {sorted(missing)} from the sitemaps"
    if "/private/listed" not in report.forbidden("catalog"):
        return "/private/listed (in a sitemap, disallowed) was not forbidden"
    return None


def _check_usage(report: SiteReport) -> str | None:
    """trainer (train-ai) is refused /articles/ and /private/; nobody else loses a page."""
    refused = report.paths.get((TRAINER, REFUSED), set())
    expected = {"/articles/1", "/private/report"}
    if refused != expected:
        return f"trainer refused {sorted(refused)}, expected {sorted(expected)}"
    if report.allowed(TRAINER) != {"/", "/early/page", "/late/page"}:
        return f"trainer fetched {sorted(report.allowed(TRAINER))}, expected /, /early/, /late/"
    lost = [s for s in SPIDERS if report.forbidden(s) or report.paths.get((s, REFUSED))]
    if lost:
        return f"spiders without purposes lost pages: {lost}"
    return None


CHECKS: Final[dict[str, Check]] = {
    "agents": _check_agents,
    "missing": _check_missing,
    "down": _check_down,
    "redirect": _check_same_forbidden({"/private/report"}),
    "huge": _check_huge,
    "sitemaps": _check_sitemaps,
    USAGE_SITE: _check_usage,
}

_HEADER: Final = (
    "site",
    "origin",
    "robots.txt",
    ALLOWED,
    FORBIDDEN,
    REFUSED,
    UNREACHABLE,
    OPTED_OUT,
    "sitemaps",
    "check",
)


def table(rows: Sequence[SiteReport], failures: dict[str, str | None]) -> str:
    cells = [_HEADER] + [
        (
            row.site.name,
            row.site.url,
            row.outcome,
            str(row.counts[ALLOWED]),
            str(row.counts[FORBIDDEN]),
            str(row.counts[REFUSED]),
            str(row.counts[UNREACHABLE]),
            str(row.counts[OPTED_OUT]),
            str(len(row.sitemaps)),
            "FAIL" if failures.get(row.site.name) else "ok",
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_HEADER))]
    numeric = range(3, 9)  # right-aligned
    lines = [
        "  ".join(
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths))
        ).rstrip()
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


# --- the command ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scrapy-rep demo",
        description="Serve local sites that each show one robots.txt behaviour, crawl them "
        "with the example project's spiders, and print what happened.",
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=None,
        help="the example Scrapy project (default: the one installed with scrapy_rep, "
        "or example_project/ of this clone)",
    )
    parser.add_argument(
        "--log-level", default="WARNING", help="Scrapy's LOG_LEVEL for the crawl (on stderr)"
    )
    args = parser.parse_args(argv)
    out = sys.stdout
    project: Path = (args.project or default_project()).resolve()
    if not (project / "scrapy.cfg").is_file():
        print(
            f"scrapy-rep demo: no Scrapy project at {project}; pass --project DIR "
            "(a folder with scrapy.cfg)",
            file=sys.stderr,
        )
        return 2
    errors = _ErrorLog()
    logging.getLogger().addHandler(errors)
    started = time.monotonic()
    with serving() as sites:
        print(
            f"scrapy_rep demo: {len(sites) - 1} local sites, spiders {', '.join(SPIDERS)}; "
            f"{TRAINER} (REP_PURPOSES=['train-ai']) on the {USAGE_SITE} site"
        )
        for site in sites:
            print(f"  {site.name:<9} {site.url:<23} {site.shows}")
        print(f"\nCrawling (project {project}):", flush=True)
        recorder = crawl(project, sites, args.log_level, out)
    rows = reports(sites, recorder)
    failures = {row.site.name: check(row) for row in rows}
    print(f"\n{table(rows, failures)}\n")
    if recorder.refusals:
        print("Refused for a declared purpose (robots.txt usage preferences):")
        for spider, why in recorder.refusals:
            print(f"  {spider:<8} {why}")
        print()
    failed = {name: why for name, why in failures.items() if why}
    for name, why in failed.items():
        print(f"FAIL {name}: {why}")
    for message in errors.messages[:10]:
        print(f"ERROR logged: {message}")
    took = time.monotonic() - started
    if failed or errors.messages:
        print(f"Demo FAILED in {took:.1f} s: {len(failed)} of {len(rows)} behaviours not shown.")
        return 1
    print(f"All {len(rows)} behaviours shown in {took:.1f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
