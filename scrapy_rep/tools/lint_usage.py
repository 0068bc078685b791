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

from collections.abc import Iterable, Iterator
from typing import Final

from scrapy_rep.engine import lines as _lines
from scrapy_rep.engine.usage import USAGE_KEYS, read_rule
from scrapy_rep.tools.finding import Finding

__all__ = ["USAGE_SEVERITIES", "usage_findings"]

USAGE_SEVERITIES: Final[dict[str, str]] = {
    "usage-not-read": "error",
    "usage-part-ignored": "warning",
    "usage-before-user-agent": "error",
}

_NAMES: Final = {"content-usage": "Content-Usage", "content-signal": "Content-Signal"}
_EXAMPLE: Final = {
    "content-usage": "e.g. 'Content-Usage: /images/ train-ai=n, search=y': lower-case labels "
    "train-ai, ai-use, search with y or n (draft-ietf-aipref-attach-05)",
    "content-signal": "e.g. 'Content-Signal: search=yes, ai-train=no': search, ai-input, "
    "ai-train with yes or no (Content Signals Policy)",
}


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, USAGE_SEVERITIES[code], message, hint)


def usage_findings(reports: Iterable[_lines.LineReport]) -> Iterator[Finding]:
    """Findings for every ``Content-Usage`` / ``Content-Signal`` line read as the
    default parser reads lines (exact key and a colon)."""
    in_group = False
    for report in reports:
        found = report.directive
        if found is None or found.typo or found.missing_colon:
            continue
        if found.field == _lines.USER_AGENT:
            in_group = True
            continue
        if found.key not in USAGE_KEYS:
            continue
        name = _NAMES[found.key]
        if not in_group:
            yield _finding(
                report.line,
                "usage-before-user-agent",
                f"{name} before any User-agent line belongs to no group: crawlers ignore it",
                "put it under the User-agent lines it is meant for (User-agent: * for all)",
            )
            continue
        yield from _statement(report.line, found.key, found.value)


def _statement(number: int, key: str, value: str) -> Iterator[Finding]:
    rule, problems = read_rule(number, key, value)
    name = _NAMES[key]
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
