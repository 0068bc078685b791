"""The ``scrapy-rep`` command line's options: one builder per command.

Only what ``argparse`` is told (names, types, defaults, help); what each
command does is ``cli.run_*``. No Scrapy, as ``cli``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Final

from scrapy_rep.engine.agents import product_token
from scrapy_rep.engine.usage import LABELS

__all__ = ["DEFAULT_AGENT", "DEFAULT_TIMEOUT", "DEFAULT_WAIT", "parsers"]

if TYPE_CHECKING:  # what add_subparsers returns
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]

#: The token of Scrapy's default USER_AGENT ("Scrapy/2.x (+https://scrapy.org)").
DEFAULT_AGENT: Final = "scrapy"
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_WAIT: Final = 10.0  # cache --wait; sqlite/once.py DEFAULT_WAIT too (not imported: sqlite3)

_ROBOTS_HELP: Final = "a robots.txt file, '-' for standard input, or an http(s) URL to fetch"
_CHECK_EXIT: Final = "exit codes: 0 every URL allowed, 1 some URL disallowed, 2 usage/fetch error"
_LINT_EXIT: Final = "exit codes: 0 no error (warnings allowed), 1 errors, 2 usage/fetch error"


def parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top parser, and each command's own (``main`` parses a command's
    arguments with it directly, so options may come between URLs)."""
    parser = argparse.ArgumentParser(
        prog="scrapy-rep",
        description="Read a robots.txt as RFC 9309 and Google do: check URLs, lint the file, "
        "show or forget what a crawl's store keeps, serve the robots.txt Tester, "
        "or run the local demo.",
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    built = {
        "check": _check(commands),
        "lint": _lint(commands),
        "cache": _cache(commands),
        "report": _report(commands),
        "tester": _tester(commands),
    }
    commands.add_parser(
        "demo",
        help="crawl local demo sites with the example project and tabulate what happened",
        add_help=False,  # its options belong to scrapy_rep.tools.demo.run
    )
    return parser, built


def _version() -> str:
    from importlib.metadata import version

    # The installed distribution's (tests/test_version.py holds it to
    # scrapy_rep.__version__); a layer below the package never imports it.
    return f"scrapy-rep {version('scrapy-rep')} (Scrapy {version('scrapy')})"


def _check(commands: _Commands) -> argparse.ArgumentParser:
    check = commands.add_parser(
        "check",
        help="say whether URLs may be fetched, and which rule decides",
        description="Say whether each URL may be fetched, with the deciding rule and group.",
        epilog=_CHECK_EXIT,
    )
    check.add_argument("robots", metavar="ROBOTS_FILE_OR_URL", help=_ROBOTS_HELP)
    check.add_argument("urls", metavar="URL", nargs="+", help="absolute URL or /path?query")
    check.add_argument(
        "--agent",
        "-a",
        action="append",
        type=_agent,
        metavar="TOKEN",
        help="the crawler's product token (or its full User-Agent); repeat it for several "
        "tokens in order of preference, e.g. --agent mybot-news --agent mybot "
        f"(default: {DEFAULT_AGENT}, the token of Scrapy's default USER_AGENT)",
    )
    check.add_argument(
        "--purpose",
        "-p",
        action="append",
        choices=LABELS,
        metavar="LABEL",
        help="a use of the content to check (repeatable): "
        f"{', '.join(LABELS)}; says what robots.txt's Content-Usage and Content-Signal "
        "lines state, with the deciding line, and a refused purpose counts as disallowed",
    )
    _quirks_option(
        check, "read and match as Google's open-source library does (misspelt fields, ...)"
    )
    _output_options(check)
    return check


def _lint(commands: _Commands) -> argparse.ArgumentParser:
    lint = commands.add_parser(
        "lint",
        help="report what a webmaster should fix in a robots.txt",
        description="Report what a webmaster should fix: one line per finding, then a summary.",
        epilog=_LINT_EXIT,
    )
    lint.add_argument("robots", metavar="ROBOTS_FILE_OR_URL", help=_ROBOTS_HELP)
    _output_options(lint)
    return lint


def _cache(commands: _Commands) -> argparse.ArgumentParser:
    cache = commands.add_parser(
        "cache",
        help="show or forget what a crawl's store keeps for a URL's origin",
        description="show: what the store keeps for URL's origin (outcome, fetched at, "
        "expiry, the last good copy, closed or not). forget: delete that record, so every "
        "worker sharing the store fetches robots.txt again when it next loads the origin.",
        epilog="exit codes: 0 a record was kept (and, with forget, deleted), 1 none was kept, "
        "2 usage or store error",
    )
    cache.add_argument("action", choices=("show", "forget"))
    cache.add_argument("url", metavar="URL", help="any absolute URL of the origin")
    _store_options(cache)
    cache.add_argument("--json", action="store_true", help="print JSON instead of text")
    _wait_option(cache)
    return cache


def _wait_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        type=_positive,
        default=DEFAULT_WAIT,
        metavar="SECONDS",
        help="how long to wait for another process holding the SQLite file's lock, then "
        f"give up with exit code 2 (default: {DEFAULT_WAIT:g})",
    )


def _report(commands: _Commands) -> argparse.ArgumentParser:
    from scrapy_rep.tools.report.rows import STATES

    report = commands.add_parser(
        "report",
        help="every origin a crawl's store keeps, with its robots.txt state now",
        description="A line per origin the store keeps (or, with --summary, the counts): "
        f"its state now ({', '.join(STATES[:-1])}), since and until "
        "when, its status, size and what else its record says. Streams the store: SQLite "
        "read-only, Redis with SCAN.",
        epilog="exit codes: 0 some origin is reported, 1 none is, 2 usage or store error",
    )
    _store_options(report)
    shown = report.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="JSON Lines: an object per origin")
    shown.add_argument("--csv", action="store_true", help="CSV with a header row")
    report.add_argument("--summary", action="store_true", help="the counts only")
    _report_filters(report)
    _report_reading(report)
    _wait_option(report)
    return report


def _report_filters(report: argparse.ArgumentParser) -> None:
    """Which origins ``report`` lists, and in what order."""
    from scrapy_rep.tools.report.rows import FLAGS, SORTS, STATES

    report.add_argument(
        "--state",
        action="append",
        type=_choices(STATES),
        metavar="STATE",
        help=f"keep origins in this state (repeatable, or comma-separated): {', '.join(STATES)}",
    )
    report.add_argument(
        "--flag",
        action="append",
        type=_choices(tuple(FLAGS)),
        metavar="FLAG",
        help=f"keep origins with every flag given: {', '.join(FLAGS)} "
        "(the last two read each file: --deep)",
    )
    report.add_argument(
        "--host",
        metavar="GLOB",
        help="keep hosts matching it (*.example.com), or origins, if it has :// (https://*)",
    )
    report.add_argument(
        "--older-than",
        type=_duration,
        metavar="AGE",
        help="keep origins in their state for at least AGE (90s, 15m, 12h, 7d)",
    )
    report.add_argument(
        "--newer-than",
        type=_duration,
        metavar="AGE",
        help="keep origins in their state for less than AGE",
    )
    report.add_argument("--sort", choices=SORTS, help="sort by this column (default: as stored)")
    report.add_argument("--reverse", action="store_true", help="sort the other way")
    report.add_argument("--limit", type=_count, metavar="N", help="the first N origins only")


def _report_reading(report: argparse.ArgumentParser) -> None:
    """What ``report`` reads beyond the records: the files, their versions, the tokens."""
    report.add_argument(
        "--deep",
        action="store_true",
        help="also read each stored file: lint's errors and warnings, and whether it forbids "
        "the crawler's tokens everything (slower: a parse and a lint per distinct file)",
    )
    report.add_argument(
        "--changed",
        action="store_true",
        help="instead: the origins whose rules for the crawler's tokens changed, and what "
        "changed (the current robots.txt version against the one before; docs/versions.md)",
    )
    report.add_argument(
        "--since",
        type=_duration,
        metavar="AGE",
        help="with --changed: the changes AGE old at most (90s, 15m, 12h, 7d), "
        "against the version current AGE ago",
    )
    report.add_argument(
        "--agent",
        "-a",
        action="append",
        type=_agent,
        metavar="TOKEN",
        help="the crawler's token for --deep and --changed (repeatable, in order of "
        f"preference; default: the project's, else {DEFAULT_AGENT})",
    )


def _tester(commands: _Commands) -> argparse.ArgumentParser:
    tester = commands.add_parser(
        "tester",
        help="serve the robots.txt Tester, a local page to edit and test robots.txt",
        description="Serve a local page to edit a robots.txt, test URLs against it with "
        "scrapy_rep's engine, lint it, compare it with the live or stored file, and make "
        "the crawl refetch it. Prints the page's address.",
    )
    tester.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1; anything else is reachable by others)",
    )
    tester.add_argument("--port", type=int, default=8765, help="port (default: 8765; 0: any)")
    # docs/tester.md, "Safety": the Host check holds on every address.
    tester.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a Host name to answer besides 127.0.0.1, localhost and the --host address "
        "(repeatable): the name others use to reach a tester listening beyond loopback",
    )
    tester.add_argument(
        "--agent",
        "-a",
        action="append",
        metavar="TOKENS",
        help="a crawler's tokens, comma-separated in order of preference "
        f"(repeatable; default: {DEFAULT_AGENT})",
    )
    tester.add_argument(
        "--purpose",
        "-p",
        action="append",
        choices=LABELS,
        metavar="LABEL",
        help=f"a purpose checked by default: {', '.join(LABELS)}",
    )
    _quirks_option(tester, "read and match as Google's open-source library does")
    tester.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"bound of a live fetch (default: {DEFAULT_TIMEOUT:g})",
    )
    _store_options(tester)
    return tester


def _quirks_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--google-quirks", action="store_true", help=help_text)


def _output_options(parser: argparse.ArgumentParser) -> None:
    """``check`` and ``lint``: JSON, and the bound of fetching a robots.txt URL."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"network timeout when fetching a URL (default: {DEFAULT_TIMEOUT:g})",
    )


def _store_options(parser: argparse.ArgumentParser) -> None:
    from scrapy_rep.cache.storage.defaults import REDIS_PREFIX

    parser.add_argument(
        "--store",
        metavar="FILE_OR_REDIS_URL",
        help="the crawl's store: its SQLite file (REP_STORAGE_PATH, by default "
        ".scrapy/robotstxt.sqlite3 in the project) or its Redis URL (REP_REDIS_URL: "
        "redis://, rediss://, unix://, redis+sentinel://, redis+cluster://); "
        "cache and report: inside a Scrapy project, the project's own by default",
    )
    parser.add_argument(
        "--redis-prefix",
        default=REDIS_PREFIX,
        metavar="PREFIX",
        help=f"REP_REDIS_PREFIX of the crawl (default: {REDIS_PREFIX})",
    )


def _agent(value: str) -> str:
    if not product_token(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} names no crawler: a token starts with letters, '-' or '_' (e.g. mybot)"
        )
    return value


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number of seconds")
    return number


def _choices(allowed: tuple[str, ...]) -> Any:
    """A comma-separated list of ``allowed`` values."""

    def parse(value: str) -> list[str]:
        chosen = [part.strip().lower() for part in value.split(",") if part.strip()]
        wrong = [part for part in chosen if part not in allowed]
        if wrong or not chosen:
            raise argparse.ArgumentTypeError(f"{value!r}: choose from {', '.join(allowed)}")
        return chosen

    return parse


_UNITS: Final = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(value: str) -> float:
    """``90``, ``90s``, ``15m``, ``12h``, ``7d``: seconds."""
    text = value.strip().lower()
    unit = text[-1:] if text[-1:] in _UNITS and not text[-1:].isdigit() else ""
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        number = -1.0
    if not (number >= 0 and number != float("inf")):
        raise argparse.ArgumentTypeError(f"{value!r} is not an age such as 90s, 15m, 12h or 7d")
    return number * _UNITS[unit]


def _count(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return int(value)
