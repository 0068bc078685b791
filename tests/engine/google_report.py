"""Google's parsing reporter (``reporting_robots.cc``) as a per-line report,
built on the engine's line reader, for the conformance cases that check it.

Google's reporter reads each line as its library does: cut at 16,663 bytes,
misspelt keys and missing colons accepted (flagged as such).
"""

from __future__ import annotations

from typing import Final, NamedTuple

from scrapy_rep.engine.grammar import Directive, Field, read_line
from scrapy_rep.engine.lines import GOOGLE_MAX_LINE_BYTES, body_text, cut_line, split_lines


class LineReport(NamedTuple):
    """Per-line classification, the shape of Google's parsing reporter."""

    line: int
    tag: str  # "UserAgent", "Allow", "Disallow", "Sitemap", "Unused", "Unknown"
    is_typo: bool
    is_empty: bool
    has_comment: bool
    is_comment: bool
    has_directive: bool
    is_acceptable_typo: bool
    is_line_too_long: bool
    is_missing_colon_separator: bool
    directive: Directive | None


_TAGS: Final = {
    Field.USER_AGENT: "UserAgent",
    Field.ALLOW: "Allow",
    Field.DISALLOW: "Disallow",
    Field.SITEMAP: "Sitemap",
    Field.UNKNOWN: "Unknown",
}
_WS: Final = " \t\v\f"


def classify(line: str, number: int) -> LineReport:
    """Everything Google's reporter says about one line."""
    too_long = len(line.encode("utf-8", "surrogateescape")) > GOOGLE_MAX_LINE_BYTES
    stripped = line.strip(_WS)
    found = read_line(cut_line(line))
    typo = found is not None and found.typo
    return LineReport(
        line=number,
        tag=_TAGS.get(found.field, "Unused") if found is not None else "Unknown",
        is_typo=typo,
        is_empty=not stripped,
        has_comment="#" in line,
        is_comment=stripped.startswith("#"),
        has_directive=found is not None,
        is_acceptable_typo=typo,
        is_line_too_long=too_long,
        is_missing_colon_separator=found is not None and found.missing_colon,
        directive=found,
    )


def classify_body(body: bytes | str) -> list[LineReport]:
    """Classify every line of a body."""
    lines = split_lines(body_text(body))
    return [classify(line, number) for number, line in enumerate(lines, 1)]
