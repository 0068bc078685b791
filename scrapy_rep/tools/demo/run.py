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
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from scrapy_rep.tools.demo.record import (
    ALLOWED,
    FORBIDDEN,
    NO_ANSWER,
    OPTED_OUT,
    REFUSED,
    UNREACHABLE,
    ErrorLog,
    Recorder,
    counts_text,
)
from scrapy_rep.tools.demo.sites import USAGE_SITE, Site, serving

if TYPE_CHECKING:
    from scrapy.settings import Settings


__all__ = ["main"]

#: The example project's spiders, all run against every site.
SPIDERS: Final = ("catalog", "monitor", "news")
#: The spider that declares REP_PURPOSES = ["train-ai"], run against the usage site only.
TRAINER: Final = "trainer"
#: The example project as the wheel ships it (pyproject.toml's force-include).
PACKAGED_PROJECT: Final = Path(__file__).resolve().parent / "demo_project"
#: The example project in a clone (the package is installed editable).
CLONE_PROJECT: Final = Path(__file__).resolve().parents[3] / "example_project"


def default_project() -> Path:
    """The shipped copy when installed from a wheel, else the clone's own."""
    return PACKAGED_PROJECT if (PACKAGED_PROJECT / "scrapy.cfg").is_file() else CLONE_PROJECT


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


SiteCheck = Callable[[SiteReport], str | None]  # None when the behaviour showed, else what failed


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
        return f"expected every request allowed, got {counts_text(report.counts)}"
    return None


def _check_down(report: SiteReport) -> str | None:
    if report.counts[ALLOWED] or not report.counts[UNREACHABLE]:
        return f"expected every checked request dropped, got {counts_text(report.counts)}"
    if report.counts[OPTED_OUT] != 1:
        return f"expected monitor's opted-out request to go through, got {report.counts[OPTED_OUT]}"
    return None


def _check_same_forbidden(expected: set[str]) -> SiteCheck:
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


CHECKS: Final[dict[str, SiteCheck]] = {
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


#: What each column counts, printed under the table (docs/demo.md).
LEGEND: Final = (
    f"  {ALLOWED}: passed the check and reached the downloader",
    f"  {FORBIDDEN}: dropped by a rule of the group for the spider's token",
    f"  {REFUSED}: crawlable, but robots.txt refuses the spider's declared purpose (REP_PURPOSES)",
    f"  {UNREACHABLE}: dropped because robots.txt could not be fetched (5xx, 429, "
    "network): the origin is closed",
    f"  {OPTED_OUT}: sent with meta['dont_obey_robotstxt'] = True, so not checked",
    "  sitemaps: Sitemap: lines handed to the spider",
    "  check: ok when the site showed the behaviour it is there for",
)
NEXT_STEPS: Final = (
    "Next:",
    "  in your project:      ADDONS = {'scrapy_rep.Addon': 0} and ROBOTSTXT_OBEY = True "
    "(docs/getting-started.md)",
    "  ask about one URL:    scrapy robots URL   (in a project) or scrapy-rep check ROBOTS_URL URL",
    "  edit and test a file: scrapy-rep tester   (a local page in your browser)",
    "  a request dropped?    docs/troubleshooting.md",
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
    errors = ErrorLog()
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
    print("Columns:\n" + "\n".join(LEGEND) + "\n")
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
    print(f"All {len(rows)} behaviours shown in {took:.1f} s.\n")
    print("\n".join(NEXT_STEPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
