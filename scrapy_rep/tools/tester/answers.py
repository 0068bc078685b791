"""The tester's answers, as plain data for the page: verdicts, lines, diff.

Every verdict comes from the engine (``check_urls``, the function behind
``scrapy-rep check``) and every finding from ``lint``: the page's JavaScript
only shows them, it has no matcher of its own. Pure: text in, data out.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.engine.agents import crawler_tokens
from scrapy_rep.engine.grammar import Field, read_line
from scrapy_rep.engine.lines import body_text, split_lines
from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.engine.site_wide import beside_verdicts
from scrapy_rep.engine.url_path import match_path
from scrapy_rep.tools.check import check_urls
from scrapy_rep.tools.fetch.source import Source
from scrapy_rep.tools.lint.finding import ERROR, counted, line_severities
from scrapy_rep.tools.lint.lines import lint, printable

__all__ = ["as_tested", "diff_lines", "line_note", "line_report", "verdicts"]

#: What the crawl does when robots.txt gave no rules (docs/spec.md §2).
ALLOW_ALL: Final = AccessState.ALLOW_ALL.value
CLOSED: Final = AccessState.CLOSED.value


def _row(url: str, agent: str, tokens: Sequence[str]) -> dict[str, Any]:
    path, note = as_tested(url)
    return {"url": url, "agent": agent, "tokens": list(tokens), "path": path, "note": note}


def as_tested(url: str) -> tuple[str, str]:
    """The path and query the rules are matched with, and a note when that
    is not what the URL seems to say: ``//tmp/x`` and ``tmp/x`` name the host
    ``tmp`` (another site, whose own robots.txt applies), and dot segments or
    escapes make another path (docs/spec.md §6.5)."""
    path = match_path(url)
    parts = urlsplit(url)
    if not parts.scheme and parts.netloc:
        return path, (
            f"{url} names the host {parts.netloc!r}, not a path of this site: it is tested "
            f"as {path}, but that site's own robots.txt decides it. Write a path with one "
            "leading /"
        )
    if not parts.scheme and not url.startswith("/"):
        return path, f"{url} is not a path (no leading /): it is tested as {path}"
    written = parts.path or "/"
    if parts.query:
        written += "?" + parts.query
    if written != path:
        return path, f"tested as {path}: the crawl reads {written} so (dot segments, escapes)"
    return path, ""


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
    tokens are a then b, in order of preference. ``access`` is ``"allow-all"`` or
    ``"closed"`` when the fetch gave no rules (a 4xx, an outage)."""
    rows = []
    body = text.encode("utf-8", "surrogateescape")
    for agent in agents:
        tokens = [part.strip() for part in agent.split(",") if part.strip()] or ["*"]
        if access == CLOSED:
            for url in urls:
                rows.append(_closed(url, agent, tokens, access_reason))
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


def _closed(url: str, agent: str, tokens: list[str], reason: str) -> dict[str, Any]:
    row = _row(url, agent, tokens)
    row.update(verdict="disallowed", reason=reason, group=None, line=None, rule=None, usage={})
    return row


def _usage(usage: Any, purposes: Sequence[str]) -> dict[str, Any]:
    if usage is None:
        return {}
    labels = usage.to_meta()["labels"]
    return {label: labels[label] for label in purposes}


def line_report(text: str) -> dict[str, Any]:
    """Each line with lint's findings on it and its severity, the worst of
    them (``lint.finding.line_severities``: the Tester has no classes of its own),
    lint's counts, and the site's licence URLs (RSL 1.0, docs/spec.md §7.3),
    as the crawl reads them. An empty text is not linted: nothing typed yet is not
    a file without groups."""
    body = text.encode("utf-8", "surrogateescape")
    found = lint(body) if text.strip() else []
    severities = line_severities(found)
    findings: dict[int, list[dict[str, str]]] = {}
    for finding in found:
        findings.setdefault(finding.line, []).append(
            {
                "severity": finding.severity,
                "code": finding.code,
                "message": printable(finding.message),
                "hint": printable(finding.hint),
            }
        )
    lines = []
    for number, line in enumerate(split_lines(body_text(body)), start=1):
        lines.append(
            {
                "n": number,
                "text": line.encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
                "severity": severities.get(number),
                "findings": findings.get(number, []),
                "note": printable(line_note(line)),
            }
        )
    errors = sum(finding.severity == ERROR for finding in found)
    warnings = len(found) - errors
    return {
        "lines": lines,
        "errors": errors,
        "warnings": warnings,
        "summary": counted(errors, warnings),
        "linted": bool(text.strip()),
        # Each kind of line outside any group shown beside the verdicts (licences).
        "site_wide": [
            {"key": kind.key, "about": kind.about, "values": list(values)}
            for kind, values in beside_verdicts(RobotsTxt.parse(body).site_wide)
        ],
    }


def line_note(line: str) -> str:
    """What a line that is not a rule does for the crawl, for the page to say
    beside it (docs/crawl-delay.md, docs/spec.md §7.2); "" for other lines."""
    found = read_line(line)
    if found is None or found.typo or found.missing_colon:
        return ""
    if found.field is Field.CRAWL_DELAY:
        return (
            f"Crawl-delay: this group asks {found.value} s between two requests to the site. "
            'The crawl waits so only with REP_CRAWL_DELAY = "obey" (Google ignores it); '
            "it never allows or forbids a URL."
        )
    if found.field is Field.REQUEST_RATE:
        return (
            f"Request-rate: this group asks at most {found.value} (requests/seconds). The crawl "
            'spaces its requests so only with REP_CRAWL_DELAY = "obey"; it never allows or '
            "forbids a URL."
        )
    if found.field is Field.SITEMAP:
        return (
            "Sitemap: a list of the site's URLs, for every crawler whatever the group. The "
            "crawl hands it to the spider (signal sitemaps_found); it requests it only with "
            "REP_FOLLOW_SITEMAPS = True."
        )
    return ""


def _span(start: int, stop: int) -> str:
    """A hunk's range in a unified diff, its count always written (``4,2``);
    an empty range names the line before it (``3,0``), as ``diff -u`` does."""
    count = stop - start
    return f"{start + 1 if count else start},{count}"


def diff_lines(before: str, after: str) -> list[dict[str, Any]]:
    """A unified diff, line by line: op " ", "-" or "+", and the text; each
    hunk starts with its header, op "@" (``@@ -4,2 +4,3 @@``)."""
    out = []
    old, new = split_lines(before), split_lines(after)
    for group in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(3):
        (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
        out.append({"op": "@", "text": f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@"})
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend({"op": " ", "text": line} for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend({"op": "-", "text": line} for line in old[i1:i2])
            if tag in ("replace", "insert"):
                out.extend({"op": "+", "text": line} for line in new[j1:j2])
    return out
