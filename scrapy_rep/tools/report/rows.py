"""Every origin a crawl's store keeps, with its state now: ``scrapy-rep report``
and the Tester's report page (docs/cli.md, "scrapy-rep report"; docs/tester.md).

A row per record, its state from ``cache.standing`` (the one classification
the crawl's gauges use too), filtered (states, flags, a host pattern, the
state's age), counted, and sorted within bounded memory: rows stream from
the store (``store.scan``) to the output; a sort without ``limit`` is an
external merge of sorted runs in temporary files, one with ``limit`` a heap
of that many rows. ``deep`` reads each stored file too: lint's errors and
warnings, and whether it forbids the crawler's tokens everything, once per
distinct file. No Scrapy here.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import heapq
import itertools
import pickle
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any, Final

from scrapy_rep.cache.policy import OriginRecord, PolicyConfig
from scrapy_rep.cache.standing import (
    OUTAGE,
    RULED,
    State,
    forbids_everything,
    pace_of,
    standing,
)
from scrapy_rep.cache.storage.scanned import Scanned
from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.tools.lint.finding import ERROR
from scrapy_rep.tools.lint.lines import lint

__all__ = [
    "FLAGS",
    "SORTS",
    "STATES",
    "Filters",
    "Summary",
    "deep_reader",
    "host_matches",
    "report_rows",
    "row_of",
    "sorted_rows",
]

#: ``--state`` values: a state, or ``outage`` for the three of an outage.
STATES: Final = (*(state.value for state in State), "outage")
#: ``--flag`` values, each a column of the row that must be true.
FLAGS: Final = {
    "expired": "expired",
    "cut": "cut",
    "redirected": "redirected",
    "forbids-all": "forbids_all",
    "lint-errors": "lint_errors",
}
#: Flags read from the stored file itself (``deep``).
DEEP_FLAGS: Final = frozenset({"forbids-all", "lint-errors"})
#: ``--sort`` keys: row columns (None sorts first).
SORTS: Final = ("origin", "state", "status", "checked", "since", "until", "age", "size", "failures")
#: Rows sorted in memory at once before they go to a run file (``sorted_rows``).
RUN_ROWS: Final = 50_000
#: Unreadable records named (the summary counts them all).
NAMED: Final = 10
#: Distinct files whose deep reading is remembered (a crawl's many origins
#: often serve one file: a host's default).
_DEEP_MEMO: Final = 10_000


@dataclass(frozen=True)
class Filters:
    """Which rows a report keeps (docs/cli.md): all of these must hold."""

    states: frozenset[str] = frozenset()  # any of them (empty: any state)
    flags: frozenset[str] = frozenset()  # every one of them
    host: str | None = None  # a glob on the host, host:port, or the origin (``host_matches``)
    older_than: float | None = None  # the state has held at least this long (seconds)
    newer_than: float | None = None  # ... less than this long

    @property
    def deep(self) -> bool:
        return bool(self.flags & DEEP_FLAGS)

    def keeps(self, row: dict[str, Any]) -> bool:
        return self.keeps_before_deep(row) and self.keeps_deep(row)

    def keeps_deep(self, row: dict[str, Any]) -> bool:
        """The flags read from the file itself (``deep``)."""
        return all(row.get(FLAGS[name]) for name in self.flags & DEEP_FLAGS)

    def keeps_before_deep(self, row: dict[str, Any]) -> bool:
        """Every filter but the flags read from the file: a file is read
        only for the rows these keep."""
        if self.states and not (
            row["state"] in self.states or ("outage" in self.states and row["outage"])
        ):
            return False
        if any(not row.get(FLAGS[name]) for name in self.flags - DEEP_FLAGS):
            return False
        if self.host is not None and not host_matches(self.host, row["origin"]):
            return False
        age = row["age"]
        if self.older_than is not None and age < self.older_than:
            return False
        return self.newer_than is None or age < self.newer_than


def host_matches(pattern: str, origin: str) -> bool:
    """``--host``: a glob on the host (``*.example.com``), on ``host:port``
    when it names a port (``127.0.0.1:8804``), or on the origin when it has
    ``://`` (``https://*``, ``http://127.0.0.1:8804/``: a path is left out)."""
    pattern = pattern.strip().lower()
    netloc = origin.partition("://")[2]
    if "://" in pattern:
        scheme, _, rest = pattern.partition("://")
        rest = rest.split("/", 1)[0] or "*"
        return fnmatch.fnmatchcase(origin, _glob(f"{scheme}://{rest}"))
    pattern = pattern.split("/", 1)[0]
    if _names_port(pattern):
        return fnmatch.fnmatchcase(netloc, _glob(pattern))
    return fnmatch.fnmatchcase(_host(netloc), _glob(pattern))


def _glob(pattern: str) -> str:
    """An IPv6 host's brackets are text, not one of fnmatch's sets."""
    return pattern.replace("[", "[[]")


def _names_port(pattern: str) -> bool:
    """``host:port`` or ``[v6]:port``, not a bare IPv6 address."""
    if pattern.startswith("["):
        return "]:" in pattern
    return pattern.count(":") == 1


def _host(netloc: str) -> str:
    """``host[:port]`` -> host (an IPv6 host keeps its brackets)."""
    if netloc.startswith("["):
        return netloc.partition("]")[0] + "]"
    return netloc.rpartition(":")[0] if netloc.count(":") == 1 else netloc


def row_of(
    key: str, record: OriginRecord, size: int, now: float, policy: PolicyConfig
) -> dict[str, Any] | None:
    """One origin's row (docs/cli.md gives its columns); None for a record a
    crawl ignores (one fetched in the future)."""
    found = standing(record, now, policy)
    if found is None:
        return None
    kept = record.good_body is not None
    return {
        "origin": key,
        "robots_url": f"{key}/robots.txt",
        "state": found.state.value,
        "outage": found.state in OUTAGE,
        "cause": found.cause,
        "status": record.status,
        "reason": record.reason,
        "access_reason": found.reason,
        "checked": record.fetched_at,
        "since": found.since,
        "until": found.until,
        "age": now - found.since,
        "expires": record.expires_at,
        "expired": found.expired,
        "size": size if kept else None,
        "good_at": record.good_at,
        "failures": record.failures,
        "next_retry": record.next_retry_at,
        "redirected": record.final_url is not None,
        "redirected_to": record.final_url,
        "cut": record.truncated,
    }


@dataclass
class Summary:
    """Counts of the rows kept, by state, outage cause and flag."""

    total: int = 0
    unreadable: int = 0  # records a crawl cannot read (or ignores): fetched again
    unreadable_keys: list[str] = field(default_factory=list)  # the first ``NAMED``
    states: Counter[str] = field(default_factory=Counter)
    causes: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)

    def add(self, row: dict[str, Any]) -> None:
        self.total += 1
        self.states[row["state"]] += 1
        if row["cause"] is not None:
            self.causes[row["cause"]] += 1
        for name, column in FLAGS.items():
            if row.get(column):
                self.flags[name] += 1

    def as_data(self) -> dict[str, Any]:
        return {
            "origins": self.total,
            "unreadable": self.unreadable,
            "unreadable_keys": list(self.unreadable_keys),
            "states": {state: self.states[state] for state in STATES[:-1]},
            "causes": dict(sorted(self.causes.items())),
            "flags": {name: self.flags[name] for name in FLAGS},
        }


class DeepReader:
    """Lint's counts and the forbid-everything test of a stored file, once
    per distinct file (docs/cli.md, ``--deep``)."""

    def __init__(self, tokens: tuple[str, ...], google_quirks: bool = False) -> None:
        self.tokens = tokens
        self.google_quirks = google_quirks
        self._seen: dict[bytes, tuple[int, int, bool, float | None]] = {}

    def read(self, body: bytes) -> tuple[int, int, bool, float | None]:
        """Lint's errors and warnings, forbids-all, and the pace the group asks."""
        digest = hashlib.blake2b(body, digest_size=16).digest()
        known = self._seen.get(digest)
        if known is None:
            findings = lint(body)
            errors = sum(finding.severity == ERROR for finding in findings)
            robots = RobotsTxt.parse(body, google_quirks=self.google_quirks)
            forbids = forbids_everything(robots, self.tokens)
            known = (errors, len(findings) - errors, forbids, pace_of(robots, self.tokens))
            if len(self._seen) >= _DEEP_MEMO:
                self._seen.clear()
            self._seen[digest] = known
        return known

    def add_to(self, row: dict[str, Any], record: OriginRecord) -> None:
        body = record.good_body
        errors, warnings, forbids, pace = self.read(body) if body else (0, 0, False, None)
        ruled = row["state"] in {state.value for state in RULED}
        row.update(
            errors=errors,
            warnings=warnings,
            lint_errors=errors > 0,
            forbids_all=forbids and ruled,
            pace=pace if ruled else None,
        )


def deep_reader(tokens: Iterable[str], google_quirks: bool = False) -> DeepReader:
    return DeepReader(tuple(tokens), google_quirks)


def report_rows(
    scanned: Iterable[Scanned],
    now: float,
    policy: PolicyConfig,
    filters: Filters,
    summary: Summary,
    deep: DeepReader | None = None,
) -> Iterator[dict[str, Any]]:
    """The rows ``filters`` keeps, in the store's order, counted in ``summary``."""
    for key, record, size in scanned:
        row = None if record is None else row_of(key, record, size, now, policy)
        if row is None:
            summary.unreadable += 1
            if len(summary.unreadable_keys) < NAMED:
                summary.unreadable_keys.append(key)
            continue
        if not filters.keeps_before_deep(row):
            continue
        if deep is not None and record is not None:
            deep.add_to(row, record)
        if filters.keeps_deep(row):
            summary.add(row)
            yield row


def _sort_key(column: str) -> Any:
    """None first, then values: rows with no such value lead (or trail, reversed)."""

    def key(row: dict[str, Any]) -> tuple[bool, Any, str]:
        value = row[column]
        return (value is not None, value if value is not None else 0, row["origin"])

    return key


def sorted_rows(
    rows: Iterable[dict[str, Any]],
    column: str,
    *,
    reverse: bool = False,
    limit: int | None = None,
    run_rows: int = RUN_ROWS,
) -> Iterator[dict[str, Any]]:
    """``rows`` by ``column`` (ties by origin): the first ``limit`` from a heap,
    or all of them merged from sorted runs of ``run_rows`` in temporary files."""
    key = _sort_key(column)
    if limit is not None:
        pick = heapq.nlargest if reverse else heapq.nsmallest
        yield from pick(limit, rows, key=key)
        return
    with contextlib.ExitStack() as files:
        runs: list[IO[bytes]] = []
        iterator = iter(rows)
        while chunk := list(itertools.islice(iterator, run_rows)):
            chunk.sort(key=key, reverse=reverse)
            run = files.enter_context(tempfile.TemporaryFile(prefix="scrapy-rep-report-"))
            for row in chunk:  # a pickle per row: no memo keeps the rows once read
                pickle.dump(row, run, protocol=pickle.HIGHEST_PROTOCOL)
            run.seek(0)
            runs.append(run)
            del chunk
        if len(runs) == 1:
            yield from _read_run(runs[0])
            return
        yield from heapq.merge(*(_read_run(run) for run in runs), key=key, reverse=reverse)


def _read_run(run: IO[bytes]) -> Iterator[dict[str, Any]]:
    """A run's rows, one at a time. One ``Unpickler`` for the whole run would
    keep every row it read in its memo, whatever the writer cleared: the
    whole store in memory by the end of the merge."""
    while True:
        try:
            yield pickle.load(run)
        except EOFError:
            return
