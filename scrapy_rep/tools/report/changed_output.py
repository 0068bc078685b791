"""``scrapy-rep report --changed``'s outputs: a line per origin, CSV, JSON Lines
(docs/versions.md, "What changed, for this crawler").

The same care as the report's (``report.output``): what a site wrote (its
rules' patterns, its sitemap URLs) is escaped in text, neutralised in CSV
cells, ``\\u``-escaped in JSON. Times: ISO 8601 UTC in text and CSV,
seconds since the epoch in JSON. Each row is written as it comes.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import IO, Any, Final

from scrapy_rep.engine.changes import Change
from scrapy_rep.tools.lint.finding import json_safe, printable
from scrapy_rep.tools.report.output import csv_cell, stamp

__all__ = ["CHANGED_COLUMNS", "write_changed_csv", "write_changed_json", "write_changed_text"]

#: CSV's columns, and the first keys of each JSON object (``Change.as_dict``'s follow).
CHANGED_COLUMNS: Final = (
    "origin",
    "changed_at",
    "before_digest",
    "before_status",
    "before_first_seen",
    "before_last_seen",
    "after_digest",
    "after_status",
    "after_first_seen",
    "after_last_seen",
    "summary",
)
_TIMES: Final = frozenset(
    {"changed_at", "before_first_seen", "before_last_seen", "after_first_seen", "after_last_seen"}
)
_LINE: Final = "{:<40} {:<17} {:<35} {}"


def _short_version(digest: str | None, status: int) -> str:
    """``sha256:`` and the first 8 hex digits, or the status of a 4xx (no rules)."""
    return f"{status} (no rules)" if digest is None else digest[:15]


def write_changed_text(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """A header, then a line per origin: when, which versions, what changed; the count."""
    out.write(_LINE.format("ORIGIN", "CHANGED (UTC)", "VERSIONS", "WHAT CHANGED") + "\n")
    count = 0
    for row in rows:
        change: Change = row["change"]
        versions = (
            f"{_short_version(row['before_digest'], row['before_status'])} -> "
            f"{_short_version(row['after_digest'], row['after_status'])}"
        )
        when = stamp(row["changed_at"], " ")[:16]
        out.write(printable(_LINE.format(row["origin"], when, versions, change.summary())) + "\n")
        count += 1
    return count


def write_changed_csv(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """RFC 4180 CSV with a header row, ``summary`` the change in a few words."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CHANGED_COLUMNS)
    count = 0
    for row in rows:
        values = {**row, "summary": row["change"].summary()}
        writer.writerow(
            [stamp(values[c]) if c in _TIMES else csv_cell(values[c]) for c in CHANGED_COLUMNS]
        )
        count += 1
    return count


def changed_object(row: dict[str, Any]) -> dict[str, Any]:
    """One JSON object: the columns but ``summary``, then ``Change.as_dict()``."""
    change: Change = row["change"]
    return {**{c: row[c] for c in CHANGED_COLUMNS[:-1]}, **change.as_dict()}


def write_changed_json(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """JSON Lines: an object per origin (``changed_object``)."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    count = 0
    for row in rows:
        out.write(json_safe(encode(changed_object(row))) + "\n")
        count += 1
    return count
