"""The tester's answers, as plain data for the page: verdicts, lines, diff.

Every verdict comes from the engine (``check_urls``, the function behind
``scrapy-rep check``) and every finding from ``lint``: the page's JavaScript
only shows them, it has no matcher of its own. Pure: text in, data out.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, Final

from scrapy_rep.engine.agents import crawler_tokens
from scrapy_rep.engine.grammar import Field, read_line
from scrapy_rep.engine.lines import GOOGLE_MAX_LINE_BYTES, body_text, cut_line, split_lines
from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.tools.check import check_urls
from scrapy_rep.tools.lint import lint, printable
from scrapy_rep.tools.robots_source import Source

__all__ = ["diff_lines", "line_report", "verdicts"]

#: Search Console's robots.txt report's classes of a line, plus ours for blanks.
VALID: Final = "valid"
UNUSED: Final = "unused"  # known but takes no part: crawl-delay, content-signal...
UNKNOWN: Final = "unknown"
TYPO: Final = "typo"  # an accepted typo: only Google's library reads it
TOO_LONG: Final = "too-long"
BLANK: Final = "blank"  # empty or only a comment
#: What the crawl does when robots.txt gave no rules (docs/spec.md §2).
ALLOW_ALL: Final = "allow"
DISALLOW_ALL: Final = "disallow"


def _row(url: str, agent: str, tokens: Sequence[str]) -> dict[str, Any]:
    return {"url": url, "agent": agent, "tokens": list(tokens)}


def verdicts(
    text: str,
    urls: Sequence[str],
    agents: Sequence[str],
    purposes: Sequence[str] = (),
    google_quirks: bool = False,
    access: str = "",
    access_reason: str = "",
) -> list[dict[str, Any]]:
    """One row per URL per agent; an agent ``"a,b"`` is one crawler whose
    tokens are a then b, in order of preference. ``access`` is ``"allow"`` or
    ``"disallow"`` when the fetch gave no rules (a 4xx, an outage)."""
    rows = []
    body = text.encode("utf-8", "surrogateescape")
    for agent in agents:
        tokens = [part.strip() for part in agent.split(",") if part.strip()] or ["*"]
        if access == DISALLOW_ALL:
            for url in urls:
                rows.append(_disallow_all(url, agent, tokens, access_reason))
            continue
        source = Source("<tester>", body, None, access_reason or "no robots.txt")
        if access != ALLOW_ALL:
            source = source._replace(allow_all="")
        for checked in check_urls(source, urls, tokens, google_quirks, purposes):
            row = _row(checked.url, agent, crawler_tokens(tokens, google_quirks))
            rule = checked.rule
            row.update(
                verdict="allowed" if checked.allowed else "disallowed",
                reason=checked.reason if access != ALLOW_ALL else access_reason,
                group=checked.group,
                line=rule.line if rule is not None and rule.line else None,
                rule=None if rule is None else {"kind": rule.kind, "pattern": rule.pattern},
                usage=_usage(checked.usage, purposes),
            )
            rows.append(row)
    return rows


def _disallow_all(url: str, agent: str, tokens: list[str], reason: str) -> dict[str, Any]:
    row = _row(url, agent, tokens)
    row.update(verdict="disallowed", reason=reason, group=None, line=None, rule=None, usage={})
    return row


def _usage(usage: Any, purposes: Sequence[str]) -> dict[str, Any]:
    if usage is None:
        return {}
    labels = usage.to_meta()["labels"]
    return {label: labels[label] for label in purposes}


#: The fields that take part in the decision or the crawl (the rest are "unused"):
#: a License line is handed to the spider as a sitemap is (docs/spec.md §7.3).
_VALID_FIELDS: Final = frozenset(
    {Field.USER_AGENT, Field.ALLOW, Field.DISALLOW, Field.SITEMAP, Field.LICENSE}
)


def _line_class(line: str) -> str:
    """The line's class, as ``grammar.read_line`` reads it (Google's way, so
    that a typo shows as one)."""
    if len(line.encode("utf-8", "surrogateescape")) > GOOGLE_MAX_LINE_BYTES:
        return TOO_LONG
    found = read_line(cut_line(line))
    if found is None:
        stripped = line.strip(" \t\v\f")
        return BLANK if not stripped or stripped.startswith("#") else UNKNOWN
    if found.field is Field.UNKNOWN:
        return UNKNOWN
    if found.typo or found.missing_colon:
        return TYPO
    return VALID if found.field in _VALID_FIELDS else UNUSED


def line_report(text: str) -> dict[str, Any]:
    """Each line with its class and lint's findings on it, lint's counts, and
    the site's licence URLs (RSL 1.0, docs/spec.md §7.3), as the crawl reads them."""
    body = text.encode("utf-8", "surrogateescape")
    findings: dict[int, list[dict[str, str]]] = {}
    for found in lint(body):
        findings.setdefault(found.line, []).append(
            {
                "severity": found.severity,
                "code": found.code,
                "message": printable(found.message),
                "hint": printable(found.hint),
            }
        )
    lines = []
    for number, line in enumerate(split_lines(body_text(body)), start=1):
        lines.append(
            {
                "n": number,
                "text": line.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                "class": _line_class(line),
                "findings": findings.get(number, []),
            }
        )
    errors = sum(f["severity"] == "error" for items in findings.values() for f in items)
    warnings = sum(len(items) for items in findings.values()) - errors
    licenses = list(RobotsTxt.parse(body).licenses)
    return {"lines": lines, "errors": errors, "warnings": warnings, "licenses": licenses}


def diff_lines(before: str, after: str) -> list[dict[str, Any]]:
    """A unified diff, line by line: op " ", "-" or "+", and the text."""
    out = []
    old, new = split_lines(before), split_lines(after)
    for group in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(3):
        first = group[0]
        out.append({"op": "@", "text": f"@@ -{first[1] + 1} +{first[3] + 1} @@"})
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend({"op": " ", "text": line} for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend({"op": "-", "text": line} for line in old[i1:i2])
            if tag in ("replace", "insert"):
                out.extend({"op": "+", "text": line} for line in new[j1:j2])
    return out
