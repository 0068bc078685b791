"""``scrapy-rep report --changed [--since AGE]``: the origins whose rules for
the crawler's tokens changed (docs/versions.md, "What changed, for this
crawler"; docs/cli.md).

The store, policy and tokens are the report's (``cli.report``): inside a
Scrapy project its crawl's, so the report answers as the crawl would. The
store is streamed with its bodies (the earlier versions are read with
them) to the output (``report.changed``, ``report.changed_output``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, Final

from scrapy_rep.cache.storage import StorageError
from scrapy_rep.tools.fetch.source import SourceError
from scrapy_rep.tools.report.changed import ChangeReader, changed_rows
from scrapy_rep.tools.report.changed_output import (
    write_changed_csv,
    write_changed_json,
    write_changed_text,
)
from scrapy_rep.tools.report.rows import host_matches
from scrapy_rep.tools.store.scan import scan_store

if TYPE_CHECKING:  # cli.report imports this module when asked
    from scrapy_rep.tools.cli.report import ReportContext

__all__ = ["check_changed", "run_changed"]

EXIT_OK: Final = 0
EXIT_NONE: Final = 1
#: The report's options that say nothing of a change: refused with ``--changed``.
_NOT_WITH_CHANGED: Final = {
    "summary": "--summary",
    "state": "--state",
    "flag": "--flag",
    "older_than": "--older-than",
    "newer_than": "--newer-than",
    "sort": "--sort",
    "deep": "--deep",
}


def check_changed(args: argparse.Namespace) -> None:
    """``--since`` without ``--changed``, or an option of the report of states with it."""
    if not args.changed:
        raise SourceError("--since goes with --changed (the changes AGE old at most)")
    given = [flag for name, flag in _NOT_WITH_CHANGED.items() if getattr(args, name)]
    if given:
        raise SourceError(
            f"--changed lists changes, a line per origin; {', '.join(given)} "
            "belong to the report of states (--host, --limit, --agent, --json and --csv apply)"
        )


def run_changed(args: argparse.Namespace, context: ReportContext) -> int:
    """The changed origins, in text, CSV or JSON Lines; 0 if any, 1 if none."""
    from scrapy_rep.tools.cli.report import said_tokens

    check_changed(args)
    print(
        f"scrapy-rep: note: --changed reads each file as {said_tokens(args, context)}",
        file=sys.stderr,
    )
    now = time.time()
    reader = ChangeReader(context.tokens, context.google_quirks)
    host = None if args.host is None else partial(host_matches, args.host)
    try:
        scanned = scan_store(context.store, now, bodies=True)
        rows: Iterator[dict[str, Any]] = changed_rows(
            scanned, now, reader, since=args.since, host=host
        )
        if args.limit:
            rows = _first(rows, args.limit)
        if args.json:
            count = write_changed_json(rows, sys.stdout)
        elif args.csv:
            count = write_changed_csv(rows, sys.stdout)
        else:
            count = write_changed_text(rows, sys.stdout)
    except (ValueError, StorageError) as error:
        raise SourceError(str(error)) from None
    if not count:
        within = "" if args.since is None else " within --since"
        print(
            f"scrapy-rep: note: no origin of {context.store.shown()} changed its rules for "
            f"these tokens{within} (of the versions kept: REP_VERSIONS_KEPT)",
            file=sys.stderr,
        )
    return EXIT_OK if count else EXIT_NONE


def _first(rows: Iterator[dict[str, Any]], limit: int) -> Iterator[dict[str, Any]]:
    for count, row in enumerate(rows, start=1):
        yield row
        if count >= limit:
            return
