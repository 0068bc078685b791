"""What a webmaster should fix in a robots.txt (``scrapy-rep lint``).

``lint(body)`` reads a body the way ``RobotsTxt.parse`` does by default
(RFC 9309 and Google's documentation, docs/spec.md §4-§7) and reports every line that
does not do what it seems to say. It is pure: bytes in, findings out.

Severities (``finding.MEANING``, the words the Tester's legend uses too):
``error`` means the line is ignored or can never take effect (a misspelt
field, a rule outside any group, a path without ``/``, rules cut off by the
size limit, an HTML page); ``warning`` means the file works, but not
everywhere or not obviously as meant (a split group, a shadowed rule, an
unknown field, a user-agent value with more than a product token). The
Tester classes each line by the worst of its findings, so the page and
``scrapy-rep lint`` never disagree about a line.

Codes (severity, what it means):

- ``body-too-large`` (error): over 512,000 bytes; the rest is not read.
- ``html-page`` (error): an HTML page was served as robots.txt.
- ``missing-colon`` (error): ``Disallow /x``; only Google's own library reads it.
- ``misspelt-field`` (error): ``useragent``, ``disalow``, ``disallowed``, ``user_agent``...
- ``rule-before-user-agent`` (error): an allow/disallow that belongs to no group.
- ``path-without-slash`` (error): a rule path not starting with ``/`` or ``*``: never matches.
- ``sitemap-not-absolute`` (error): a sitemap that is not an absolute URL: skipped.
- ``license-not-absolute`` (error): an RSL ``License`` that is not an absolute URL: skipped.
  (A line outside any group whose value is skipped: each kind's code is its
  ``lint`` in ``engine/site_wide.py``.)
- ``user-agent-never-matches`` (error): a user-agent value with no product token.
- ``group-never-applies`` (error): no user-agent line of a group names a crawler.
- ``unknown-field`` (warning): a field no parser knows; ignored.
- ``not-a-directive`` (warning): a line that is neither ``field: value`` nor a comment.
- ``invalid-utf8`` (warning): bytes that are not UTF-8; rules with them match raw bytes.
- ``line-too-long`` (warning): over 16,663 bytes; Google reads only the start.
- ``user-agent-not-token`` (warning): ``Googlebot/2.1``: only ``googlebot`` is matched.
- ``crawl-delay-not-number`` (warning): a crawl-delay that is not a number.
- ``group-split`` (warning): one agent named in several groups; they are merged.
- ``duplicate-rule`` (warning): a rule with the same effect as another in its group.
- ``rule-shadowed`` (warning): an opposite rule matches the same URLs and always wins.
- ``star-rules-not-inherited`` (warning): a named group lacks ``*`` disallow rules.
- ``no-groups`` (warning): no user-agent line at all: everything is allowed.
- ``usage-*``: ``Content-Usage`` / ``Content-Signal`` lines, in ``scrapy_rep.tools.lint.usage``.

JSON output of ``scrapy-rep lint --json`` (one object)::

    {
      "source": str,               # the path, URL or "<stdin>" given
      "status": int | null,        # HTTP status of the final response; null for files
      "findings": [                # sorted by line, errors first on a line
        {
          "line": int,             # 1-based line number (>= 1)
          "code": str,             # one of the codes above
          "severity": str,         # "error" or "warning"
          "message": str,          # what is wrong, naming the value
          "hint": str              # how to fix it (may be "")
        }
      ],
      "summary": {
        "errors": int,             # findings with severity "error"
        "warnings": int,           # findings with severity "warning"
        "lines": int,              # lines read (after the 512,000-byte cut)
        "bytes": int,              # bytes read (at most 512,001 from a file or URL)
        "truncated": bool,         # more than 512,000 bytes: the rest is ignored
        "agents": [str],           # tokens with a group of their own, "*" included
        "rules": int,              # allow/disallow rules that take effect
        "sitemaps": int,           # absolute sitemap URLs
        "licenses": int            # absolute License URLs (RSL 1.0, docs/spec.md §7.3)
                                   # (one count per kind of line outside any group:
                                   # its ``values`` in engine/site_wide.py)
      }
    }
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import urlsplit

from scrapy_rep.engine.agents import GLOBAL, group_token
from scrapy_rep.engine.grammar import (
    KEYS,
    RULES,
    Directive,
    Field,
    field_name,
    read_line,
)
from scrapy_rep.engine.lines import (
    GOOGLE_MAX_LINE_BYTES,
    MAX_BODY_BYTES,
    body_text,
    split_lines,
)
from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.engine.site_wide import SITE_WIDE, SiteWide
from scrapy_rep.tools.lint.finding import (
    ERROR,
    WARNING,
    Finding,
    counted,
    plural,
    printable,
    quoted,
    short,
)
from scrapy_rep.tools.lint.groups import GROUP_SEVERITIES, GroupView, group_findings
from scrapy_rep.tools.lint.usage import USAGE_SEVERITIES, usage_findings

__all__ = ["ERROR", "WARNING", "Finding", "format_text", "lint", "printable", "report"]

#: Severity of each code; the module docstring says what each one means.
SEVERITIES: Final[dict[str, str]] = {
    "body-too-large": ERROR,
    "html-page": ERROR,
    "missing-colon": ERROR,
    "misspelt-field": ERROR,
    "path-without-slash": ERROR,
    **{kind.lint: ERROR for kind in SITE_WIDE.values()},
    "user-agent-never-matches": ERROR,
    "unknown-field": WARNING,
    "not-a-directive": WARNING,
    "invalid-utf8": WARNING,
    "line-too-long": WARNING,
    "user-agent-not-token": WARNING,
    "crawl-delay-not-number": WARNING,
    **GROUP_SEVERITIES,
    **USAGE_SEVERITIES,
}

#: The fields that decide access (docs/spec.md §4.5): a misspelt or colon-less one is an error.
_ACCESS_FIELDS: Final = (Field.USER_AGENT, Field.ALLOW, Field.DISALLOW, Field.SITEMAP)
_ALL_KNOWN: Final = tuple(key for key, entry in KEYS.items() if not entry.typo)
_WS: Final = " \t\v\f"
_HTML_TAG: Final = re.compile(
    r"<\s*(?:!doctype|html|head|body|meta|title|script|div|link|style)\b", re.IGNORECASE
)
_INVALID_BYTE: Final = re.compile("[\udc80-\udcff]")


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, SEVERITIES[code], message, hint)


# --- the lines as the default parser reads them ------------------------------


def _effective(found: Directive | None) -> Directive | None:
    """The directive the default parser acts on: exact field name and a colon."""
    if found is None or found.typo or found.missing_colon:
        return None
    return found


def lint(body: bytes) -> list[Finding]:
    """Every finding for a body, sorted by line (errors first on a line).

    Lines are read by the engine's grammar as ``RobotsTxt.parse`` reads them
    by default (whole lines: no cut at Google's 16,663 bytes), so what lint
    says of a group is what the parser made of it.
    """
    findings = list(_size(body))
    texts = split_lines(body_text(body))
    found = [read_line(text) for text in texts]
    if _looks_like_html(texts):
        findings.append(_html(texts, found))
    else:
        cut_line = len(texts) if len(body) > MAX_BODY_BYTES else 0
        findings.extend(_per_line(texts, found, cut_line))
        view = GroupView.of(body)
        findings.extend(group_findings(view))
        findings.extend(usage_findings(view.read))
    unique = dict.fromkeys(findings)  # a block shared by two agents reports once
    order = {ERROR: 0, WARNING: 1}
    return sorted(unique, key=lambda f: (f.line, order[f.severity], f.code))


# --- size and shape ------------------------------------------------------------


def _size(body: bytes) -> Iterator[Finding]:
    """docs/spec.md §4.3: where the 512,000-byte cut falls, in lines."""
    limit = MAX_BODY_BYTES
    if len(body) <= limit:
        return
    kept = split_lines(body_text(body))
    number, last = len(kept), kept[-1]
    message = f"the body has more than {limit:,} bytes; crawlers read only the first {limit:,}"
    hint = "move the rules that matter to the top, or shorten the file (use wildcards)"
    if not last:
        message += f": line {number} and every line after it are ignored"
    elif body[limit : limit + 1] in (b"\n", b"\r"):
        message += f": line {number + 1} and every line after it are ignored"
    else:
        size = len(last.encode("utf-8", "surrogateescape"))
        message += (
            f": line {number} is cut after its first {size} bytes (read as {quoted(last)})"
            " and every line after it is ignored"
        )
    yield _finding(number, "body-too-large", message, hint)


def _looks_like_html(texts: list[str]) -> bool:
    first = next((line.strip() for line in texts if line.strip()), "")
    if not first.startswith("<"):
        return False
    head = "\n".join(texts[:2000])[:100_000]
    return _HTML_TAG.search(head) is not None


def _html(texts: list[str], found: list[Directive | None]) -> Finding:
    first = next((number for number, text in enumerate(texts, 1) if text.strip(_WS)), 1)
    valid = [line for line in map(_effective, found) if line and line.field in _ACCESS_FIELDS]
    if valid:
        lines = plural(len(valid), "directive line")
        effect = f"crawlers still obey the {lines} it happens to contain"
    else:
        effect = "it has no directive, so crawlers allow everything"
    return _finding(
        first,
        "html-page",
        f"this is an HTML page, not a robots.txt: {effect}",
        "serve a plain-text robots.txt, or answer 404 if the site has none",
    )


# --- one line at a time ----------------------------------------------------------


def _per_line(texts: list[str], found: list[Directive | None], cut_line: int) -> Iterator[Finding]:
    for number, (line, directive) in enumerate(zip(texts, found), 1):
        yield from _syntax(number, line, directive)
        size = len(line.encode("utf-8", "surrogateescape"))
        if size > GOOGLE_MAX_LINE_BYTES:
            yield _finding(
                number,
                "line-too-long",
                f"the line has {size:,} bytes; Google reads only the first "
                f"{GOOGLE_MAX_LINE_BYTES:,}",
                "split the value into shorter rules, using wildcards",
            )
        if number != cut_line:
            yield from _utf8(number, line)
        effective = _effective(directive)
        if effective is not None:
            yield from _value(number, effective)


def _syntax(number: int, line: str, found: Directive | None) -> Iterator[Finding]:
    """Lines the default parser skips though they look meant: docs/spec.md §4.4, §4.5."""
    if found is None:
        stripped = line.strip(_WS)
        if stripped and not stripped.startswith("#"):
            yield _finding(
                number,
                "not-a-directive",
                "the line is neither 'field: value' nor a comment; it is ignored",
                "start comments with '#'",
            )
        return
    name = field_name(found.field) if found.field in _ACCESS_FIELDS else None
    if found.missing_colon:
        if name is not None:
            yield _finding(
                number,
                "missing-colon",
                f"no ':' after {quoted(found.key)}: crawlers ignore this line "
                "(only Google's open-source parser reads it)",
                f"write '{name}: {short(found.value)}'",
            )
        else:
            yield _finding(
                number,
                "not-a-directive",
                "the line is neither 'field: value' nor a comment; it is ignored",
                "write 'field: value', or start comments with '#'",
            )
        return
    if name is not None and found.typo:
        yield _finding(
            number,
            "misspelt-field",
            f"{quoted(found.key)} is not a field: crawlers ignore this line "
            f"(only Google's open-source parser reads it as '{name}')",
            f"write '{name}: {short(found.value)}'",
        )
    elif found.field is Field.UNKNOWN:
        yield _unknown_field(number, found)


def _unknown_field(number: int, found: Directive) -> Finding:
    close = difflib.get_close_matches(found.key, _ALL_KNOWN, n=1, cutoff=0.8)
    if close and close[0] in _ACCESS_FIELDS:
        name = field_name(close[0])
        return _finding(
            number,
            "misspelt-field",
            f"{quoted(found.key)} is not a field: crawlers ignore this line",
            f"did you mean '{name}'? write '{name}: {short(found.value)}'",
        )
    if close:
        hint = f"did you mean '{close[0]}'?"
    elif found.key in ("http", "https"):
        hint = "a URL alone means nothing; for a sitemap write 'Sitemap: <URL>'"
    else:
        hint = "remove it, or start it with '#'"
    return _finding(
        number, "unknown-field", f"unknown field {quoted(found.key)}: crawlers ignore it", hint
    )


def _utf8(number: int, line: str) -> Iterator[Finding]:
    bad = _INVALID_BYTE.search(line)
    if bad is None:
        return
    offset = len(line[: bad.start()].encode("utf-8", "surrogateescape"))
    yield _finding(
        number,
        "invalid-utf8",
        f"byte 0x{ord(bad.group(0)) - 0xDC00:02X} at offset {offset} of the line is not "
        "UTF-8: crawlers keep it as a raw byte, which no UTF-8 URL or token matches",
        "save the file as UTF-8",
    )


def _value(number: int, found: Directive) -> Iterator[Finding]:
    """Values the parser reads but cannot use: docs/spec.md §5.6, §6.2, §7.1, §7.3."""
    value = found.value
    if found.field in RULES and value and value[0] not in "/*":
        yield _finding(
            number,
            "path-without-slash",
            f"the path {quoted(value)} does not start with '/' or '*': this rule never matches",
            f"write '{field_name(found.field)}: {_path_of(value)}'",
        )
    elif found.key in SITE_WIDE:
        yield from _outside(number, SITE_WIDE[found.key], value)
    elif found.field is Field.USER_AGENT:
        yield from _user_agent(number, value)
    elif found.field is Field.CRAWL_DELAY and not _is_delay(value):
        yield _finding(
            number,
            "crawl-delay-not-number",
            f"the crawl-delay {quoted(value)} is not a number of seconds: crawlers ignore it",
            "write a number, e.g. 'Crawl-delay: 10'",
        )


def _outside(number: int, kind: SiteWide, value: str) -> Iterator[Finding]:
    """A line outside any group whose value the parser skips (docs/spec.md §7)."""
    if kind.value(value) is None:
        message = f"the {kind.key} {quoted(value)} is not {kind.wants}: crawlers skip it"
        yield Finding(number, kind.lint, ERROR, message, kind.hint)


def _path_of(value: str) -> str:
    """What the webmaster probably meant: the URL's path, or the value after a slash."""
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and parts.netloc:
        path = parts.path or "/"
        return short(path + (f"?{parts.query}" if parts.query else ""))
    return short("/" + value)


def _is_delay(value: str) -> bool:
    try:
        return float(value) >= 0  # NaN compares false
    except ValueError:
        return False


def _user_agent(number: int, value: str) -> Iterator[Finding]:
    token = group_token(value, google_quirks=False)
    if not token:
        yield _finding(
            number,
            "user-agent-never-matches",
            f"{quoted(value)} does not start with a product token (letters, '-' and '_'): "
            "no crawler matches it",
            "write a token such as 'googlebot', or '*' alone for every crawler",
        )
    elif token != GLOBAL and value.lower() != token:
        yield _finding(
            number,
            "user-agent-not-token",
            f"only the product token {quoted(token)} of {quoted(value)} is matched",
            f"write 'User-agent: {token}'",
        )


# --- output ------------------------------------------------------------------------


def report(source: str, body: bytes, findings: list[Finding], status: int | None) -> dict[str, Any]:
    """The ``--json`` object (schema in the module docstring)."""
    robots = RobotsTxt.parse(body)
    outside = robots.site_wide
    return {
        "source": source,
        "status": status,
        "findings": [finding._asdict() for finding in findings],
        "summary": {
            "errors": sum(f.severity == ERROR for f in findings),
            "warnings": sum(f.severity == WARNING for f in findings),
            "lines": len(split_lines(body_text(body))),
            "bytes": len(body),
            "truncated": len(body) > MAX_BODY_BYTES,
            "agents": list(robots.agents),
            "rules": robots.rule_count,
            **{kind.values: len(outside.get(key, ())) for key, kind in SITE_WIDE.items()},
        },
    }


def format_text(result: dict[str, Any]) -> str:
    """One line per finding, ``LINE: SEVERITY CODE message (hint)``, then a summary."""
    out = []
    for item in result["findings"]:
        hint = f" ({item['hint']})" if item["hint"] else ""
        out.append(f"{item['line']}: {item['severity']} {item['code']} {item['message']}{hint}")
    summary = result["summary"]
    size = f"over {MAX_BODY_BYTES:,}" if summary["truncated"] else f"{summary['bytes']:,}"
    counts = ", ".join(
        (
            plural(summary["lines"], "line"),
            f"{size} bytes",
            plural(len(summary["agents"]), "agent"),
            plural(summary["rules"], "rule"),
            *(
                kind.counted(summary.get(kind.values, 0))
                for kind in SITE_WIDE.values()
                if kind.said_when_none or summary.get(kind.values)
            ),
        )
    )
    found = counted(summary["errors"], summary["warnings"])
    out.append(f"{result['source']}: {found} ({counts})")
    return "\n".join(out)
