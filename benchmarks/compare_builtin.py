"""Scrapy's built-in RobotsTxtMiddleware beside scrapy_rep's, scenario by scenario.

Each scenario is a real crawl against real servers on 127.0.0.1 (the ones the
tests use), run once with the built-in middleware and once with
``scrapy_rep.Addon``, under the default asyncio reactor. The table shows which
requested pages reached the server (``+``) and which did not (``-``), how many
robots.txt requests were made, and whether that matches docs/spec.md.

    PYTHONPATH=. .venv/bin/python benchmarks/compare_builtin.py
"""

from __future__ import annotations

import logging
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from scrapy.utils.reactor import install_reactor  # noqa: E402

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from crawler.servers import (  # noqa: E402
    Hang,
    Huge,
    Redirect,
    Reply,
    Reset,
    SiteServer,
    ftp_server,
)
from scrapy import Request, Spider  # noqa: E402
from scrapy.crawler import CrawlerRunner  # noqa: E402
from scrapy.http import Response  # noqa: E402
from scrapy.utils.defer import deferred_from_coro  # noqa: E402
from twisted.internet import task  # noqa: E402
from twisted.python.failure import Failure  # noqa: E402

BUILTIN: dict[str, Any] = {"ROBOTSTXT_OBEY": True}
# A fresh in-memory cache per run: ports are reused, so a persistent store
# could answer a scenario from an earlier one; and no quick retries, so that
# unreachable scenarios are judged on their first answer, like the built-in's.
OURS: dict[str, Any] = {
    "ROBOTSTXT_OBEY": True,
    "ADDONS": {"scrapy_rep.Addon": 0},
    "REP_STORAGE": "memory",
    "REP_UNREACHABLE_WAIT": 0,
}
COMMON: dict[str, Any] = {
    "LOG_LEVEL": "ERROR",
    "TELNETCONSOLE_ENABLED": False,
    "DOWNLOAD_TIMEOUT": 1,
    "CONCURRENT_REQUESTS": 32,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
    "USER_AGENT": "CompareBot/1.0",
}

DISALLOW_PRIVATE = b"User-agent: *\nDisallow: /private\n"
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


class CompareSpider(Spider):
    name = "compare"
    allowed_domains = ["127.0.0.1"]  # noqa: RUF012 (Scrapy API)

    def __init__(self, urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)

    def parse(self, response: Response) -> None:
        pass

    def errback(self, failure: Failure) -> None:
        pass


# --- scenarios ---------------------------------------------------------------


@dataclass
class Run:
    """What one crawl did: requested page paths that reached a server."""

    reached: set[str]
    robots_requests: int
    note: str = ""


@dataclass
class Scenario:
    name: str
    expected: str  # the spec's verdict (docs/spec.md), for people
    pages: list[str]  # labels of the requested pages, in order
    allowed: set[str]  # the pages the spec lets through
    setup: Callable[[], Any]  # a context manager yielding (urls, observe)
    settings: dict[str, Any] = field(default_factory=dict)


def site_scenario(routes: dict[str, Any], pages: list[str]) -> Callable[[], Any]:
    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with SiteServer(routes) as site:

            def observe() -> Run:
                paths = site.paths()
                return Run({p for p in pages if p in paths}, paths.count("/robots.txt"))

            yield [site.url(p) for p in pages], observe

    return setup


def redirect_chain() -> Any:
    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with SiteServer() as other, SiteServer() as site:
            site.routes.update(
                {
                    "/robots.txt": Redirect(other.url("/hop1")),
                    "/hop2": Redirect(other.url("/hop3")),
                    "/hop4": Redirect(other.url("/final")),
                }
            )
            other.routes.update(
                {
                    "/hop1": Redirect(site.url("/hop2")),
                    "/hop3": Redirect(site.url("/hop4")),
                    "/final": Reply(200, DISALLOW_PRIVATE),
                }
            )

            def observe() -> Run:
                paths = site.paths()
                reached: set[str] = {p for p in ("/public", "/private") if p in paths}
                return Run(reached, paths.count("/robots.txt"))

            yield [site.url("/public"), site.url("/private")], observe

    return setup


def offsite_redirect() -> Any:
    """robots.txt redirects to a host outside allowed_domains (localhost)."""

    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with SiteServer() as site:
            site.routes["/robots.txt"] = lambda host: (
                Redirect(site.url("/moved-robots.txt", "localhost"))
                if host == "127.0.0.1"
                else Reply(200, DISALLOW_PRIVATE)
            )
            site.routes["/moved-robots.txt"] = Reply(200, DISALLOW_PRIVATE)

            def observe() -> Run:
                paths = site.paths()
                reached: set[str] = {p for p in ("/public", "/private") if p in paths}
                return Run(reached, paths.count("/robots.txt"))

            yield [site.url("/public"), site.url("/private")], observe

    return setup


def huge_robots() -> Any:
    size = 50_000_000
    huge = Huge(
        size,
        inserts=((0, b"User-agent: *\nDisallow: /early\n"), (600_000, b"\nDisallow: /late\n")),
    )

    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with SiteServer({"/robots.txt": huge}) as site:

            def observe() -> Run:
                paths = site.paths()
                reached: set[str] = {p for p in ("/early", "/late") if p in paths}
                note = f"{site.huge_bytes_sent / 1e6:.1f} MB sent"
                return Run(reached, paths.count("/robots.txt"), note)

            yield [site.url("/early"), site.url("/late")], observe

    return setup


def ftp_scenario() -> Any:
    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "robots.txt").write_bytes(b"User-agent: *\nDisallow: /private.txt\n")
            (root / "public.txt").write_bytes(b"x")
            (root / "private.txt").write_bytes(b"x")
            with ftp_server(root) as (port, retrieved):

                def observe() -> Run:
                    names = {f"/{name}" for name in retrieved}
                    reached: set[str] = {p for p in ("/public.txt", "/private.txt") if p in names}
                    return Run(reached, retrieved.count("robots.txt"))

                base = f"ftp://127.0.0.1:{port}"
                yield [f"{base}/public.txt", f"{base}/private.txt"], observe

    return setup


def burst() -> Any:
    def slow(host: str) -> Reply:
        time.sleep(0.2)
        return Reply(200, DISALLOW_ALL)

    pages = [f"/page{i}" for i in range(20)]

    @contextmanager
    def setup() -> Iterator[tuple[list[str], Callable[[], Run]]]:
        with SiteServer({"/robots.txt": slow}) as site:

            def observe() -> Run:
                paths = site.paths()
                reached = {p for p in pages if p in paths}
                return Run(reached, paths.count("/robots.txt"), f"{len(reached)}/20 passed")

            yield [site.url(p) for p in pages], observe

    return setup


PP = ["/public", "/private"]


def scenarios() -> list[Scenario]:
    def status(code: int, body: bytes = DISALLOW_ALL) -> Callable[[], Any]:
        return site_scenario({"/robots.txt": Reply(code, body)}, PP)

    rows = [
        Scenario("200 Disallow: /private", "rules", PP, {"/public"}, status(200, DISALLOW_PRIVATE)),
        Scenario("301 x5 across 2 origins", "final rules", PP, {"/public"}, redirect_chain()),
        Scenario("redirect to offsite host", "final rules", PP, {"/public"}, offsite_redirect()),
        Scenario(
            "redirect loop",
            "allow all",
            PP,
            set(PP),
            site_scenario({"/robots.txt": Redirect("/a"), "/a": Redirect("/robots.txt")}, PP),
        ),
    ]
    for code in (404, 401, 403, 410):
        rows.append(Scenario(f"{code}, body 'Disallow: /'", "allow all", PP, set(PP), status(code)))
    for code in (429, 500, 503):
        rows.append(
            Scenario(
                f"{code}", "disallow all", PP, set(), status(code, b"User-agent: *\nAllow: /\n")
            )
        )
    rows += [
        Scenario(
            "connection reset",
            "disallow all",
            PP,
            set(),
            site_scenario({"/robots.txt": Reset()}, PP),
        ),
        Scenario(
            "hang (timeout 1 s)",
            "disallow all",
            PP,
            set(),
            site_scenario({"/robots.txt": Hang()}, PP),
        ),
        Scenario(
            "50 MB robots.txt", "first 500 KiB", ["/early", "/late"], {"/late"}, huge_robots()
        ),
        Scenario(
            "HTML page as robots.txt",
            "valid lines",
            PP,
            {"/public"},
            status(200, b"<html><body>\nUser-agent: *\nDisallow: /private\n</body></html>"),
        ),
        Scenario(
            "BOM + CR line ends",
            "rules",
            PP,
            {"/public"},
            status(200, b"\xef\xbb\xbfUser-agent: *\rDisallow: /private\r"),
        ),
        Scenario("ftp", "rules", ["/public.txt", "/private.txt"], {"/public.txt"}, ftp_scenario()),
        Scenario(
            "burst of 20, Disallow: /",
            "none passes",
            [f"/page{i}" for i in range(20)],
            set(),
            burst(),
        ),
    ]
    return rows


# --- running -----------------------------------------------------------------


async def run_one(scenario: Scenario, middleware: dict[str, Any]) -> Run:
    with ExitStack() as stack:
        urls, observe = stack.enter_context(scenario.setup())
        runner = CrawlerRunner({**COMMON, **middleware, **scenario.settings})
        crawler = runner.create_crawler(CompareSpider)
        await crawler.crawl_async(urls=urls)
        run: Run = observe()
        return run


def cell(scenario: Scenario, run: Run) -> str:
    ok = "ok " if run.reached == scenario.allowed else "BAD"
    if len(scenario.pages) > 4:
        marks = run.note
    else:
        marks = " ".join(("+" if p in run.reached else "-") + p.strip("/") for p in scenario.pages)
        if run.note:
            marks += f", {run.note}"
    return f"{ok} {marks} (robots x{run.robots_requests})"


async def main() -> None:
    logging.getLogger("scrapy").setLevel(logging.ERROR)
    rows = []
    for scenario in scenarios():
        builtin = await run_one(scenario, BUILTIN)
        ours = await run_one(scenario, OURS)
        rows.append(
            (scenario.name, scenario.expected, cell(scenario, builtin), cell(scenario, ours))
        )
    header = ("scenario", "spec", "Scrapy built-in", "scrapy_rep")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(4)]
    line = " | ".join(f"{{:<{w}}}" for w in widths)
    print(line.format(*header))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(line.format(*row))
    wrong = [sum(r[i].startswith("BAD") for r in rows) for i in (2, 3)]
    print(
        f"\nscenarios against docs/spec.md: built-in wrong in {wrong[0]}/{len(rows)}, "
        f"scrapy_rep wrong in {wrong[1]}/{len(rows)}"
    )


if __name__ == "__main__":
    task.react(lambda _reactor: deferred_from_coro(main()))
