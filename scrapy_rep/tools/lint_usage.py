"""Lint of the usage lines: ``Content-Usage`` and ``Content-Signal`` (issue 15).

A crawler reads these lines as the engine does (``engine.usage.read_rule``):
a statement it cannot read states nothing, silently. This says so, line by
line, with the engine's own reason, so a webmaster learns that
``Content-Usage: Train-AI=n`` (upper case: not a structured-field key) or
``Content-Signal: ai-train=false`` (only yes/no) refuses nothing.

Codes (severity, what it means):

- ``usage-not-read`` (error): the value states no preference at all (it does
  not parse, or names nothing usable); the line is ignored.
- ``usage-part-ignored`` (warning): part of the value is ignored (an unknown
  label, a value other than y/n or yes/no, a repeated key); the rest applies.
- ``usage-before-user-agent`` (error): a usage line that belongs to no group.

Kept apart from ``lint.py``: the syntax these lines follow comes from drafts
that move, and a new draft version should touch the engine and this module only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from scrapy_rep.engine.grammar import USAGE, Body, field_name
from scrapy_rep.engine.usage import read_rule
from scrapy_rep.tools.finding import Finding

__all__ = ["USAGE_SEVERITIES", "usage_findings"]

USAGE_SEVERITIES: Final[dict[str, str]] = {
    "usage-not-read": "error",
    "usage-part-ignored": "warning",
    "usage-before-user-agent": "error",
}

_EXAMPLE: Final = {
    "content-usage": "e.g. 'Content-Usage: /images/ train-ai=n, search=y': lower-case labels "
    "train-ai, ai-use, search with y or n (draft-ietf-aipref-attach-05)",
    "content-signal": "e.g. 'Content-Signal: search=yes, ai-train=no': search, ai-input, "
    "ai-train with yes or no (Content Signals Policy)",
}


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, USAGE_SEVERITIES[code], message, hint)


def usage_findings(read: Body) -> Iterator[Finding]:
    """Findings for every ``Content-Usage`` / ``Content-Signal`` line of a
    body read as the default parser reads it (``grammar.read_body``)."""
    for number, field, _ in read.orphans:
        if field in USAGE:
            yield _finding(
                number,
                "usage-before-user-agent",
                f"{field_name(field)} before any User-agent line belongs to no group: "
                "crawlers ignore it",
                "put it under the User-agent lines it is meant for (User-agent: * for all)",
            )
    for notes in read.notes:
        for note in notes:
            if note.field in USAGE:
                yield from _statement(note.line, note.field.value, note.value)


def _statement(number: int, key: str, value: str) -> Iterator[Finding]:
    rule, problems = read_rule(number, key, value)
    name = field_name(key)
    if rule is None or not rule.statement:
        why = "; ".join(problem.message for problem in problems) or "states no preference"
        yield _finding(
            number,
            "usage-not-read",
            f"{name} value {value!r} states nothing ({why}): crawlers ignore the line",
            _EXAMPLE[key],
        )
        return
    for problem in problems:
        yield _finding(
            number,
            "usage-part-ignored",
            f"{name}: {problem.message}; the rest of the line applies",
            _EXAMPLE[key],
        )
