"""What a webmaster should fix in a robots.txt (``scrapy-rep lint``).

``lint(body)`` reads a body the way ``RobotsTxt.parse`` does by default
(RFC 9309 and Google's documentation, SPEC §4-§7) and reports every line that
does not do what it seems to say. It is pure: bytes in, findings out.

Severities: ``error`` means a line is ignored or can never take effect (a
misspelt field, a rule outside any group, a path without ``/``, rules cut off
by the size limit, an HTML page); ``warning`` means the file works, but not
everywhere or not obviously as meant (a split group, a shadowed rule, an
unknown field, a user-agent value with more than a product token).

Codes (severity, what it means):

- ``body-too-large`` (error): over 512,000 bytes; the rest is not read.
- ``html-page`` (error): an HTML page was served as robots.txt.
- ``missing-colon`` (error): ``Disallow /x``; only Google's own library reads it.
- ``misspelt-field`` (error): ``useragent``, ``disalow``, ``disallowed``, ``user_agent``...
- ``rule-before-user-agent`` (error): an allow/disallow that belongs to no group.
- ``path-without-slash`` (error): a rule path not starting with ``/`` or ``*``: never matches.
- ``sitemap-not-absolute`` (error): a sitemap that is not an absolute URL: skipped.
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
- ``usage-*``: ``Content-Usage`` / ``Content-Signal`` lines, in ``scrapy_rep.tools.lint_usage``.

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
        "sitemaps": int            # absolute sitemap URLs
      }
    }
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple
from urllib.parse import urlsplit

from scrapy_rep.engine import lines as _lines
from scrapy_rep.engine.agents import GLOBAL, group_token
from scrapy_rep.engine.document import RobotsTxt
from scrapy_rep.engine.matching import normalise
from scrapy_rep.tools.finding import Finding
from scrapy_rep.tools.lint_usage import USAGE_SEVERITIES, usage_findings

__all__ = ["ERROR", "WARNING", "Finding", "format_text", "lint", "printable", "report"]

ERROR: Final = "error"
WARNING: Final = "warning"

#: Severity of each code; the module docstring says what each one means.
SEVERITIES: Final[dict[str, str]] = {
    "body-too-large": ERROR,
    "html-page": ERROR,
    "missing-colon": ERROR,
    "misspelt-field": ERROR,
    "rule-before-user-agent": ERROR,
    "path-without-slash": ERROR,
    "sitemap-not-absolute": ERROR,
    "user-agent-never-matches": ERROR,
    "group-never-applies": ERROR,
    "unknown-field": WARNING,
    "not-a-directive": WARNING,
    "invalid-utf8": WARNING,
    "line-too-long": WARNING,
    "user-agent-not-token": WARNING,
    "crawl-delay-not-number": WARNING,
    "group-split": WARNING,
    "duplicate-rule": WARNING,
    "rule-shadowed": WARNING,
    "star-rules-not-inherited": WARNING,
    "no-groups": WARNING,
    **USAGE_SEVERITIES,
}

_DISPLAY: Final = {
    _lines.USER_AGENT: "User-agent",
    _lines.ALLOW: "Allow",
    _lines.DISALLOW: "Disallow",
    _lines.SITEMAP: "Sitemap",
}
_RULE_FIELDS: Final = (_lines.ALLOW, _lines.DISALLOW)
_ALL_KNOWN: Final = (*_lines.KNOWN_FIELDS, *sorted(_lines.UNUSED_FIELDS))
_HTML_TAG: Final = re.compile(
    r"<\s*(?:!doctype|html|head|body|meta|title|script|div|link|style)\b", re.IGNORECASE
)
_INVALID_BYTE: Final = re.compile("[\udc80-\udcff]")
_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")
_SHOW_CHARS: Final = 60


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, SEVERITIES[code], message, hint)


def printable(text: str) -> str:
    """Text safe to print: invalid UTF-8 and control characters as ``\\xNN``."""
    raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group(0)):02x}", raw)


def _short(text: str) -> str:
    """A value from the file, printable and cut to a readable length."""
    raw = printable(text)
    return raw if len(raw) <= _SHOW_CHARS else raw[: _SHOW_CHARS - 3] + "..."


def _show(text: str) -> str:
    """A value from the file, quoted for a message."""
    return f"'{_short(text)}'"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


# --- the lines as the default parser reads them ------------------------------


class _Rule(NamedTuple):
    line: int
    kind: str  # ALLOW or DISALLOW
    pattern: str


@dataclass
class _Block:
    """A run of user-agent lines and the rules under them (SPEC §5.1)."""

    agents: list[tuple[int, str, str]] = field(default_factory=list)  # line, token, value
    rules: list[_Rule] = field(default_factory=list)
    first_line: dict[str, int] = field(default_factory=dict)  # token -> its first agent line


def _effective(report: _lines.LineReport) -> _lines.Directive | None:
    """The directive the default parser acts on: exact field name and a colon."""
    found = report.directive
    if found is None or found.typo or found.missing_colon:
        return None
    return found


def lint(body: bytes) -> list[Finding]:
    """Every finding for a body, sorted by line (errors first on a line)."""
    findings = list(_size(body))
    texts = _lines.split_lines(_lines.body_text(body))
    reports = [_lines.classify(line, number) for number, line in enumerate(texts, 1)]
    if _looks_like_html(texts):
        findings.append(_html(reports))
    else:
        cut_line = len(reports) if len(body) > _lines.MAX_BODY_BYTES else 0
        findings.extend(_per_line(reports, texts, cut_line))
        findings.extend(_groups(reports))
        findings.extend(usage_findings(reports))
    unique = dict.fromkeys(findings)  # a block shared by two agents reports once
    order = {ERROR: 0, WARNING: 1}
    return sorted(unique, key=lambda f: (f.line, order[f.severity], f.code))


# --- size and shape ------------------------------------------------------------


def _size(body: bytes) -> Iterator[Finding]:
    """SPEC §4.3: where the 512,000-byte cut falls, in lines."""
    limit = _lines.MAX_BODY_BYTES
    if len(body) <= limit:
        return
    kept = _lines.split_lines(_lines.body_text(body))
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
            f": line {number} is cut after its first {size} bytes (read as {_show(last)})"
            " and every line after it is ignored"
        )
    yield _finding(number, "body-too-large", message, hint)


def _looks_like_html(texts: list[str]) -> bool:
    first = next((line.strip() for line in texts if line.strip()), "")
    if not first.startswith("<"):
        return False
    head = "\n".join(texts[:2000])[:100_000]
    return _HTML_TAG.search(head) is not None


def _html(reports: list[_lines.LineReport]) -> Finding:
    first = next((r.line for r in reports if not r.is_empty), 1)
    valid = [r for r in reports if (found := _effective(r)) and found.field in _DISPLAY]
    if valid:
        lines = _count(len(valid), "directive line")
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


def _per_line(
    reports: list[_lines.LineReport], texts: list[str], cut_line: int
) -> Iterator[Finding]:
    for report, line in zip(reports, texts):
        number = report.line
        yield from _syntax(report)
        if report.is_line_too_long:
            size = len(line.encode("utf-8", "surrogateescape"))
            yield _finding(
                number,
                "line-too-long",
                f"the line has {size:,} bytes; Google reads only the first "
                f"{_lines.GOOGLE_MAX_LINE_BYTES:,}",
                "split the value into shorter rules, using wildcards",
            )
        if number != cut_line:
            yield from _utf8(number, line)
        found = _effective(report)
        if found is not None:
            yield from _value(number, found)


def _syntax(report: _lines.LineReport) -> Iterator[Finding]:
    """Lines the default parser skips though they look meant: SPEC §4.4, §4.5."""
    found = report.directive
    number = report.line
    if found is None:
        if not report.is_empty and not report.is_comment:
            yield _finding(
                number,
                "not-a-directive",
                "the line is neither 'field: value' nor a comment; it is ignored",
                "start comments with '#'",
            )
        return
    name = _DISPLAY.get(found.field)
    if found.missing_colon:
        if name is not None:
            yield _finding(
                number,
                "missing-colon",
                f"no ':' after {_show(found.key)}: crawlers ignore this line "
                "(only Google's open-source parser reads it)",
                f"write '{name}: {_short(found.value)}'",
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
            f"{_show(found.key)} is not a field: crawlers ignore this line "
            f"(only Google's open-source parser reads it as '{name}')",
            f"write '{name}: {_short(found.value)}'",
        )
    elif found.field == _lines.UNKNOWN:
        yield _unknown_field(number, found)


def _unknown_field(number: int, found: _lines.Directive) -> Finding:
    close = difflib.get_close_matches(found.key, _ALL_KNOWN, n=1, cutoff=0.8)
    if close and close[0] in _lines.KNOWN_FIELDS:
        name = _DISPLAY[close[0]]
        return _finding(
            number,
            "misspelt-field",
            f"{_show(found.key)} is not a field: crawlers ignore this line",
            f"did you mean '{name}'? write '{name}: {_short(found.value)}'",
        )
    if close:
        hint = f"did you mean '{close[0]}'?"
    elif found.key in ("http", "https"):
        hint = "a URL alone means nothing; for a sitemap write 'Sitemap: <URL>'"
    else:
        hint = "remove it, or start it with '#'"
    return _finding(
        number, "unknown-field", f"unknown field {_show(found.key)}: crawlers ignore it", hint
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


def _value(number: int, found: _lines.Directive) -> Iterator[Finding]:
    """Values the parser reads but cannot use: SPEC §5.6, §6.2, §7.1."""
    value = found.value
    if found.field in _RULE_FIELDS and value and value[0] not in "/*":
        yield _finding(
            number,
            "path-without-slash",
            f"the path {_show(value)} does not start with '/' or '*': this rule never matches",
            f"write '{_DISPLAY[found.field]}: {_path_of(value)}'",
        )
    elif found.field == _lines.SITEMAP and not _is_absolute(value):
        yield _finding(
            number,
            "sitemap-not-absolute",
            f"the sitemap {_show(value)} is not an absolute URL: crawlers skip it",
            "write the full URL, e.g. 'Sitemap: https://example.com/sitemap.xml'",
        )
    elif found.field == _lines.USER_AGENT:
        yield from _user_agent(number, value)
    elif found.key == "crawl-delay" and not _is_delay(value):
        yield _finding(
            number,
            "crawl-delay-not-number",
            f"the crawl-delay {_show(value)} is not a number of seconds: crawlers ignore it",
            "write a number, e.g. 'Crawl-delay: 10'",
        )


def _path_of(value: str) -> str:
    """What the webmaster probably meant: the URL's path, or the value after a slash."""
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and parts.netloc:
        path = parts.path or "/"
        return _short(path + (f"?{parts.query}" if parts.query else ""))
    return _short("/" + value)


def _is_absolute(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc)


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
            f"{_show(value)} does not start with a product token (letters, '-' and '_'): "
            "no crawler matches it",
            "write a token such as 'googlebot', or '*' alone for every crawler",
        )
    elif token != GLOBAL and value.lower() != token:
        yield _finding(
            number,
            "user-agent-not-token",
            f"only the product token {_show(token)} of {_show(value)} is matched",
            f"write 'User-agent: {token}'",
        )


# --- groups ----------------------------------------------------------------------


def _blocks(reports: Iterable[_lines.LineReport]) -> tuple[list[_Block], list[int]]:
    """The default parser's grouping (SPEC §5.1-§5.3), and the orphan rule lines."""
    blocks: list[_Block] = []
    orphans: list[int] = []
    reading_agents = False
    for report in reports:
        found = _effective(report)
        if found is None:
            continue
        if found.field == _lines.USER_AGENT:
            if not reading_agents:
                blocks.append(_Block())
                reading_agents = True
            token = group_token(found.value, False)
            blocks[-1].agents.append((report.line, token, found.value))
            blocks[-1].first_line.setdefault(token, report.line)
        elif found.field in _RULE_FIELDS:
            if not blocks:
                orphans.append(report.line)
                continue
            reading_agents = False
            if found.value:
                blocks[-1].rules.append(_Rule(report.line, found.field, found.value))
    return blocks, orphans


def _groups(reports: list[_lines.LineReport]) -> Iterator[Finding]:
    blocks, orphans = _blocks(reports)
    for number in orphans:
        yield _finding(
            number,
            "rule-before-user-agent",
            "this rule comes before any user-agent line: it belongs to no group and is ignored",
            "put a 'User-agent: *' line (or the right agent) above it",
        )
    if not blocks:
        yield _finding(
            1,
            "no-groups",
            "there is no user-agent line: every crawler may fetch everything",
            "start a group with 'User-agent: *' if some paths should be disallowed",
        )
        return
    groups: dict[str, list[_Block]] = {}
    for block in blocks:
        for _, token, _ in block.agents:
            if token and (token not in groups or groups[token][-1] is not block):
                groups.setdefault(token, []).append(block)
    yield from _dead_blocks(blocks)
    yield from _split(groups)
    for who, members in _sharing(groups):
        yield from _shadowed(who, [rule for block in members for rule in block.rules])
    yield from _not_inherited(groups)


def _sharing(groups: dict[str, list[_Block]]) -> Iterator[tuple[str, list[_Block]]]:
    """Each distinct set of blocks once, with the agents it is the group of
    (shown): 10,000 agents over one block of rules are checked once, not
    10,000 times, and a shadowed rule is reported once, not once per agent."""
    tokens: dict[tuple[int, ...], list[str]] = {}
    members_of: dict[tuple[int, ...], list[_Block]] = {}
    for token, members in groups.items():
        key = tuple(map(id, members))
        tokens.setdefault(key, []).append(token)
        members_of[key] = members
    for key, names in tokens.items():
        who = _show(names[0])
        if len(names) > 1:
            who += f" (and {_count(len(names) - 1, 'other agent')} of the same group)"
        yield who, members_of[key]


def _dead_blocks(blocks: list[_Block]) -> Iterator[Finding]:
    for block in blocks:
        if block.rules and not any(token for _, token, _ in block.agents):
            first, last = block.rules[0].line, block.rules[-1].line
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            yield _finding(
                block.agents[0][0],
                "group-never-applies",
                "no user-agent line of this group names a crawler: no crawler obeys its "
                f"{_count(len(block.rules), 'rule')} ({where})",
                "write a token such as 'googlebot', or '*' alone for every crawler",
            )


def _split(groups: dict[str, list[_Block]]) -> Iterator[Finding]:
    for token, members in groups.items():
        first = _agent_line(members[0], token)
        for block in members[1:]:
            yield _finding(
                _agent_line(block, token),
                "group-split",
                f"{_show(token)} already has a group at line {first}: the groups are merged "
                "(RFC 9309), but some crawlers read only the first",
                f"put every rule for {_show(token)} in one group",
            )


def _agent_line(block: _Block, token: str) -> int:
    return block.first_line[token]


def _same_urls_key(pattern: str) -> str:
    """Patterns with equal keys match exactly the same URLs (SPEC §6.4, §6.5)."""
    normal = normalise(pattern)
    if normal.endswith("$"):
        return normal
    return normal.rstrip("*") or "/"


def _shadowed(who: str, rules: list[_Rule]) -> Iterator[Finding]:
    """SPEC §6.6: among rules matching the same URLs, one always decides.
    Linear in the rules: each is filed under its set of URLs once."""
    alike: dict[str, list[_Rule]] = {}
    for rule in rules:
        alike.setdefault(_same_urls_key(rule.pattern), []).append(rule)
    for same in alike.values():
        if len(same) < 2:
            continue
        winner = max(same, key=lambda r: (len(normalise(r.pattern)), r.kind == _lines.ALLOW))
        for rule in same:
            if rule is winner:
                continue
            written = f"{_DISPLAY[winner.kind]}: {winner.pattern}"
            if rule.kind == winner.kind:
                yield _finding(
                    rule.line,
                    "duplicate-rule",
                    f"for {who}, this rule has the same effect as "
                    f"{_show(written)} at line {winner.line}",
                    "remove one of them",
                )
            else:
                why = (
                    "allow wins a tie"
                    if len(normalise(rule.pattern)) == len(normalise(winner.pattern))
                    else "the longer pattern wins"
                )
                yield _finding(
                    rule.line,
                    "rule-shadowed",
                    f"for {who}, this rule never decides: {_show(written)} at line "
                    f"{winner.line} matches the same URLs and {why}",
                    "keep only the rule you mean",
                )


def _not_inherited(groups: dict[str, list[_Block]]) -> Iterator[Finding]:
    """SPEC §5.5: a crawler with its own group ignores every ``*`` rule."""
    star = [rule for block in groups.get(GLOBAL, []) for rule in block.rules]
    star_disallows: dict[str, _Rule] = {}  # set of URLs -> the first rule naming it
    for rule in star:  # in file order
        if rule.kind == _lines.DISALLOW:
            key = _same_urls_key(rule.pattern)
            if key != "/":
                star_disallows.setdefault(key, rule)
    if not star_disallows:
        return
    # Per distinct set of blocks, once: (how many '*' sets of URLs it lacks, the first).
    lacking: dict[tuple[int, ...], tuple[int, _Rule | None]] = {}
    for token, members in groups.items():
        if token == GLOBAL:
            continue
        ids = tuple(map(id, members))
        if ids not in lacking:
            lacking[ids] = _lacking(members, star_disallows)
        count, first = lacking[ids]
        if first is not None:
            yield _finding(
                _agent_line(members[0], token),
                "star-rules-not-inherited",
                f"the group for {_show(token)} lacks {_count(count, 'Disallow rule')} "
                f"of the '*' group (first: {_show(first.pattern)} at line {first.line}); "
                f"{_show(token)} obeys only its own group",
                f"copy the '*' rules that {_show(token)} must obey into its group",
            )


def _lacking(members: list[_Block], star_disallows: dict[str, _Rule]) -> tuple[int, _Rule | None]:
    """How many of the '*' group's disallowed sets of URLs a group does not
    name, and the first of them (None: nothing to report). Linear in the
    group's own rules: the '*' ones are walked only past those it names."""
    own = [rule for block in members for rule in block.rules]
    disallowed = {_same_urls_key(r.pattern) for r in own if r.kind == _lines.DISALLOW}
    if not disallowed or "/" in disallowed:
        return 0, None  # a group that allows or disallows everything says what it means
    patterns = {_same_urls_key(rule.pattern) for rule in own}
    named = sum(key in star_disallows for key in patterns)
    if named == len(star_disallows):
        return 0, None
    first = next(rule for key, rule in star_disallows.items() if key not in patterns)
    return len(star_disallows) - named, first


# --- output ------------------------------------------------------------------------


def report(source: str, body: bytes, findings: list[Finding], status: int | None) -> dict[str, Any]:
    """The ``--json`` object (schema in the module docstring)."""
    robots = RobotsTxt.parse(body)
    return {
        "source": source,
        "status": status,
        "findings": [finding._asdict() for finding in findings],
        "summary": {
            "errors": sum(f.severity == ERROR for f in findings),
            "warnings": sum(f.severity == WARNING for f in findings),
            "lines": len(_lines.split_lines(_lines.body_text(body))),
            "bytes": len(body),
            "truncated": len(body) > _lines.MAX_BODY_BYTES,
            "agents": list(robots.agents),
            "rules": robots.rule_count,
            "sitemaps": len(robots.sitemaps),
        },
    }


def format_text(result: dict[str, Any]) -> str:
    """One line per finding, ``LINE: SEVERITY CODE message (hint)``, then a summary."""
    out = []
    for item in result["findings"]:
        hint = f" ({item['hint']})" if item["hint"] else ""
        out.append(f"{item['line']}: {item['severity']} {item['code']} {item['message']}{hint}")
    summary = result["summary"]
    size = f"over {_lines.MAX_BODY_BYTES:,}" if summary["truncated"] else f"{summary['bytes']:,}"
    counts = ", ".join(
        (
            _count(summary["lines"], "line"),
            f"{size} bytes",
            _count(len(summary["agents"]), "agent"),
            _count(summary["rules"], "rule"),
            _count(summary["sitemaps"], "sitemap"),
        )
    )
    found = f"{_count(summary['errors'], 'error')}, {_count(summary['warnings'], 'warning')}"
    out.append(f"{result['source']}: {found} ({counts})")
    return "\n".join(out)
