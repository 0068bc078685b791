"""``scrapy-rep report``'s outputs: a line per origin, CSV, JSON Lines, the summary.

Values come from the store, which a hostile site partly wrote (its
redirect's URL, its reason phrase) or anyone who can write the store:
text escapes controls and bidi characters (``lint.finding.printable``), CSV
neutralises formula cells as OWASP advises, JSON writes those characters as
``\\u`` escapes (the same values, valid JSON).

Each writer takes the rows as they come (``rows.report_rows``) and writes
each at once: nothing is held but the row being written. Times are UTC:
ISO 8601 in text and CSV, seconds since the epoch in JSON (as ``cache show
--json``). No Scrapy here.
"""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterable
from typing import IO, Any, Final

from scrapy_rep.tools.lint.finding import json_safe, printable
from scrapy_rep.tools.report.rows import FLAGS, STATES, Summary

__all__ = [
    "COLUMNS",
    "DEEP_COLUMNS",
    "csv_cell",
    "stamp",
    "unreadable_note",
    "write_csv",
    "write_json",
    "write_summary",
    "write_text",
]

#: CSV's columns and JSON's keys, in order (``DEEP_COLUMNS`` with ``--deep``).
COLUMNS: Final = (
    "origin",
    "robots_url",
    "state",
    "outage",
    "cause",
    "status",
    "reason",
    "access_reason",
    "checked",
    "since",
    "until",
    "age",
    "expires",
    "expired",
    "size",
    "good_at",
    "failures",
    "next_retry",
    "redirected",
    "redirected_to",
    "cut",
)
#: ``pace``: the seconds between requests the file's group for the crawler's
#: tokens asks (crawl-delay or request-rate), null when none (docs/crawl-delay.md).
DEEP_COLUMNS: Final = ("errors", "warnings", "lint_errors", "forbids_all", "pace")
_TIMES: Final = frozenset({"checked", "since", "until", "expires", "good_at", "next_retry"})
#: What each state means, for the summary (docs/cli.md).
MEANING: Final = {
    "rules": "a 2xx answer: its rules decide",
    "allow-all": "a 4xx answer (or too many redirects): everything allowed",
    "closed": "an outage (429, 5xx, no answer): every request dropped",
    "last-copy": "an outage: the last good copy's rules decide",
    "outage-allow": "an outage: everything allowed (no 2xx copy, or the site answers)",
}
_FLAG_MEANING: Final = {
    "expired": "past its life: the next request fetches again",
    "cut": "cut at the size cap: the rest of the file is not read",
    "redirected": "redirected elsewhere: the rules found apply here too",
    "forbids-all": "rules that forbid the crawler's tokens everything",
    "lint-errors": "files with lint errors",
}


def _stamp(moment: float | None, sep: str = "T") -> str:
    if moment is None:
        return ""
    return time.strftime(f"%Y-%m-%d{sep}%H:%M:%SZ", time.gmtime(moment))


def _short(moment: float | None) -> str:
    return "-" if moment is None else time.strftime("%Y-%m-%d %H:%M", time.gmtime(moment))


def _notes(row: dict[str, Any]) -> str:
    notes = []
    if row["cause"] is not None:
        failures = row["failures"]
        notes.append(f"{row['cause']}, {failures} failed fetch{'' if failures == 1 else 'es'}")
    if row["expired"]:
        notes.append("expired")
    if row["cut"]:
        notes.append("cut at the size cap")
    if row["redirected_to"] is not None:
        notes.append(f"redirected to {row['redirected_to']}")
    if "errors" in row and (row["errors"] or row["warnings"]):
        errors, warnings = row["errors"], row["warnings"]
        notes.append(
            f"lint {errors} error{'' if errors == 1 else 's'}, "
            f"{warnings} warning{'' if warnings == 1 else 's'}"
        )
    if row.get("forbids_all"):
        notes.append("forbids everything")
    if row.get("pace") is not None:
        notes.append(f"asks {row['pace']:g} s between requests (crawl-delay)")
    notes.append(row["reason"] or str(row["status"]))
    return "; ".join(notes)


_LINE: Final = "{:<40} {:<12} {:>6}  {:<16}  {:<16}  {:<16}  {:>7}  {}"


def write_text(rows: Iterable[dict[str, Any]], out: IO[str]) -> int:
    """A header, then a line per origin (times UTC, to the minute); the count."""
    heads = ("ORIGIN", "STATE", "STATUS", "CHECKED (UTC)", "SINCE", "UNTIL", "SIZE", "NOTES")
    out.write(_LINE.format(*heads) + "\n")
    count = 0
    for row in rows:
        size = "-" if row["size"] is None else row["size"]
        status = "-" if row["status"] is None else row["status"]
        line = _LINE.format(
            row["origin"],
            row["state"],
            status,
            _short(row["checked"]),
            _short(row["since"]),
            _short(row["until"]),
            size,
            _notes(row),
        )
        out.write(printable(line) + "\n")
        count += 1
    return count


def write_csv(rows: Iterable[dict[str, Any]], out: IO[str], deep: bool = False) -> int:
    """RFC 4180 CSV with a header row; times ISO 8601 UTC, empty when none."""
    columns = COLUMNS + DEEP_COLUMNS if deep else COLUMNS
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow(
            [_stamp(row[c]) if c in _TIMES else _csv_value(row.get(c)) for c in columns]
        )
        count += 1
    return count


#: A cell a spreadsheet reads as a formula (OWASP, "CSV Injection").
_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r")


def _csv_value(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.0f}"
    if isinstance(value, str):
        return _cell(value)
    return value


def _cell(text: str) -> str:
    """A text cell as OWASP advises: one that starts like a formula gets a
    single quote before it (shown, never run); controls are escaped as in
    text (``printable``: no raw ESC or CR reaches a terminal or a reader)."""
    return "'" + printable(text) if text.startswith(_FORMULA) else printable(text)


def write_json(rows: Iterable[dict[str, Any]], out: IO[str], deep: bool = False) -> int:
    """JSON Lines: one object per origin, its keys ``COLUMNS`` (and ``DEEP_COLUMNS``),
    the row's own (``rows.row_of`` makes them in that order)."""
    columns = list(COLUMNS + DEEP_COLUMNS if deep else COLUMNS)
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    count = 0
    for row in rows:
        if count == 0 and list(row) != columns:  # not a row of ``row_of``: its columns only
            raise ValueError(f"a report row has the keys {list(row)}, not {columns}")
        out.write(json_safe(encode(row)) + "\n")
        count += 1
    return count


def write_summary(
    summary: Summary, out: IO[str], *, where: str, now: float, deep: bool, as_json: bool
) -> None:
    """The counts by state, cause and flag, as text or one JSON object."""
    if as_json:
        data = {"store": where, "at": now, **summary.as_data()}
        if not deep:
            for name in ("forbids-all", "lint-errors"):
                data["flags"].pop(name)
        out.write(json_safe(json.dumps(data, ensure_ascii=False)) + "\n")
        return
    lines = [f"{summary.total:,} origins in {where} at {_stamp(now, ' ')}"]
    for state in STATES[:-1]:
        lines.append(f"  {state:<14}{summary.states[state]:>12,}  {MEANING[state]}")
    if summary.causes:
        causes = ", ".join(f"{cause} {n:,}" for cause, n in sorted(summary.causes.items()))
        lines.append(f"  {'':<14}{'':>12}  outages by cause: {causes}")
    for name in FLAGS:
        if name in ("forbids-all", "lint-errors") and not deep:
            continue
        lines.append(f"  {name:<14}{summary.flags[name]:>12,}  {_FLAG_MEANING[name]}")
    if summary.unreadable:
        lines.append(
            f"  {'unreadable':<14}{summary.unreadable:>12,}  records a crawl cannot read "
            "(or ignores): fetched again at the origin's next request"
        )
        lines.append(f"  {'':<14}{'':>12}  {_named(summary)}")
    out.write("\n".join(printable(line) for line in lines) + "\n")


def _named(summary: Summary) -> str:
    more = summary.unreadable - len(summary.unreadable_keys)
    return ", ".join(summary.unreadable_keys) + (f" and {more:,} more" if more > 0 else "")


#: The report's time and cell forms, for its other outputs (``report.changed_output``).
stamp = _stamp
csv_cell = _csv_value


def unreadable_note(summary: Summary) -> str:
    """What the rows leave out, for standard error: "" when nothing."""
    if not summary.unreadable:
        return ""
    count = summary.unreadable
    records = "1 record" if count == 1 else f"{count:,} records"
    it = "it" if count == 1 else "them"
    return (
        f"{records} could not be read (a crawl treats {it} as absent and fetches "
        f"robots.txt again): {_named(summary)}"
    )
