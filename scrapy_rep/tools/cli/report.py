"""``scrapy-rep report``: every origin a crawl's store keeps, with its state now
(docs/cli.md, "scrapy-rep report").

Inside a Scrapy project, without ``--store``, the project's store, with its
outage rules (what is closed, until when) and its crawler's tokens (what
forbids it everything); otherwise the store given, with the default rules.
The store is streamed to the output (``report.rows``, ``report.output``). No
Scrapy imported unless a project is asked about.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Iterator
from typing import Any, Final

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import StorageError
from scrapy_rep.tools.cli.options import DEFAULT_AGENT
from scrapy_rep.tools.fetch.source import SourceError
from scrapy_rep.tools.lint.finding import printable
from scrapy_rep.tools.report.output import (
    unreadable_note,
    write_csv,
    write_json,
    write_summary,
    write_text,
)
from scrapy_rep.tools.report.rows import Filters, Summary, deep_reader, report_rows, sorted_rows
from scrapy_rep.tools.store.scan import scan_store
from scrapy_rep.tools.store.view import StoreName

__all__ = ["ReportContext", "run_report", "said_tokens"]

EXIT_OK: Final = 0
EXIT_NONE: Final = 1


class ReportContext:
    """The store to read, and what to read it with: the policy and the tokens."""

    def __init__(
        self,
        store: StoreName,
        policy: PolicyConfig | None = None,
        tokens: tuple[str, ...] = (DEFAULT_AGENT,),
        google_quirks: bool = False,
    ) -> None:
        self.store = store
        self.policy = policy or PolicyConfig()
        self.tokens = tokens
        self.google_quirks = google_quirks


def _context(args: argparse.Namespace) -> ReportContext:
    """The store, policy and tokens: a project's (its crawl's) inside one,
    unless ``--store`` names another store; ``--agent`` wins over both."""
    from scrapy_rep.tools.store.project import ProjectStoreError, in_a_project, project_view

    tokens = tuple(args.agent or ())
    if args.store:
        store = StoreName(args.store, args.redis_prefix, args.wait)
        if not in_a_project():
            return ReportContext(store, tokens=tokens or (DEFAULT_AGENT,))
        view = project_view(store=store)
        return ReportContext(store, view.policy, tokens or view.tokens, view.google_quirks)
    try:
        view = project_view()
    except ProjectStoreError as error:
        raise SourceError(str(error)) from None
    return ReportContext(view.store, view.policy, tokens or view.tokens, view.google_quirks)


def said_tokens(args: argparse.Namespace, context: ReportContext) -> str:
    """Whose tokens ``--deep`` and ``--changed`` read the files with, for the note."""
    from scrapy_rep.tools.store.project import in_a_project

    shown = " or ".join(context.tokens) or "* (they name no crawler)"
    if args.agent:
        return shown
    if in_a_project():
        return f"{shown} (this project's tokens, as its crawl)"
    return f"{shown} (Scrapy's default USER_AGENT: not inside a Scrapy project; --agent NAME)"


def _flat(values: list[list[str]] | None) -> frozenset[str]:
    return frozenset(value for group in values or () for value in group)


def filters_of(args: argparse.Namespace) -> Filters:
    return Filters(
        states=_flat(args.state),
        flags=_flat(args.flag),
        host=args.host,
        older_than=args.older_than,
        newer_than=args.newer_than,
    )


def run_report(args: argparse.Namespace) -> int:
    if args.changed or args.since is not None:
        from scrapy_rep.tools.cli.report_changed import check_changed, run_changed

        check_changed(args)  # a usage error before the project is read
        return run_changed(args, _context(args))
    context = _context(args)
    filters = filters_of(args)
    deep = args.deep or filters.deep
    now = time.time()
    summary = Summary()
    reader = deep_reader(context.tokens, context.google_quirks) if deep else None
    if deep:
        said = said_tokens(args, context)
        print(f"scrapy-rep: note: --deep reads each file as {said}", file=sys.stderr)
    try:
        scanned = scan_store(context.store, now, bodies=deep)
        rows: Iterator[dict[str, Any]] = report_rows(
            scanned, now, context.policy, filters, summary, reader
        )
        if args.summary:
            for _ in rows:
                pass
            where = context.store.shown()
            write_summary(summary, sys.stdout, where=where, now=now, deep=deep, as_json=args.json)
            return EXIT_OK if summary.total else EXIT_NONE
        rows = _primed(rows)  # a store that cannot be read fails before any output
        if args.sort:
            rows = sorted_rows(rows, args.sort, reverse=args.reverse, limit=args.limit)
        elif args.limit:
            rows = _first(rows, args.limit)
        if args.json:
            count = write_json(rows, sys.stdout, deep)
        elif args.csv:
            count = write_csv(rows, sys.stdout, deep)
        else:
            count = write_text(rows, sys.stdout)
    except (ValueError, StorageError) as error:
        raise SourceError(str(error)) from None
    note = unreadable_note(summary)
    if note:
        sys.stdout.flush()
        print(f"scrapy-rep: {printable(note)}", file=sys.stderr)
    if not count and filters.host is not None:
        print(
            f"scrapy-rep: note: no origin of {context.store.shown()} matches --host "
            f"{filters.host!r} (with the other filters): it is matched with the host "
            "(*.example.com), host:port (127.0.0.1:8804) or the origin (https://example.com)",
            file=sys.stderr,
        )
    return EXIT_OK if count else EXIT_NONE


def _primed(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``rows``, the first one already read."""
    first = next(rows, None)
    return rows if first is None else itertools.chain((first,), rows)


def _first(rows: Iterator[dict[str, Any]], limit: int) -> Iterator[dict[str, Any]]:
    for count, row in enumerate(rows, start=1):
        yield row
        if count >= limit:
            return
