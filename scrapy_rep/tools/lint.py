"""What a webmaster should fix in a robots.txt (``scrapy-rep lint``).

``lint(body)`` reads a body the way ``RobotsTxt.parse`` does by default
(RFC 9309 and Google's documentation, docs/spec.md §4-§7) and reports every line that
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
from collections.abc import Iterator
from typing import Any, Final, NamedTuple
from urllib.parse import urlsplit

from scrapy_rep.engine.agents import GLOBAL, group_token
from scrapy_rep.engine.grammar import (
    KEYS,
    RULES,
    Block,
    Body,
    Directive,
    Field,
    field_name,
    read_body,
    read_line,
    rule_text,
)
from scrapy_rep.engine.lines import (
    ALLOW,
    DISALLOW,
    GOOGLE_MAX_LINE_BYTES,
    MAX_BODY_BYTES,
    body_text,
    split_lines,
)
from scrapy_rep.engine.robotstxt import RobotsTxt
from scrapy_rep.engine.rules import Rule
from scrapy_rep.engine.url_path import normalise
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

#: The fields that decide access (docs/spec.md §4.5): a misspelt or colon-less one is an error.
_ACCESS_FIELDS: Final = (Field.USER_AGENT, Field.ALLOW, Field.DISALLOW, Field.SITEMAP)
_ALL_KNOWN: Final = tuple(key for key, entry in KEYS.items() if not entry.typo)
_WS: Final = " \t\v\f"
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
        view = _View.of(body)
        findings.extend(_groups(view))
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


def _html(texts: list[str], found: list[Directive | None]) -> Finding:
    first = next((number for number, text in enumerate(texts, 1) if text.strip(_WS)), 1)
    valid = [line for line in map(_effective, found) if line and line.field in _ACCESS_FIELDS]
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
    texts: list[str], found: list[Directive | None], cut_line: int
) -> Iterator[Finding]:
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
    elif found.field is Field.UNKNOWN:
        yield _unknown_field(number, found)


def _unknown_field(number: int, found: Directive) -> Finding:
    close = difflib.get_close_matches(found.key, _ALL_KNOWN, n=1, cutoff=0.8)
    if close and close[0] in _ACCESS_FIELDS:
        name = field_name(close[0])
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


def _value(number: int, found: Directive) -> Iterator[Finding]:
    """Values the parser reads but cannot use: docs/spec.md §5.6, §6.2, §7.1."""
    value = found.value
    if found.field in RULES and value and value[0] not in "/*":
        yield _finding(
            number,
            "path-without-slash",
            f"the path {_show(value)} does not start with '/' or '*': this rule never matches",
            f"write '{field_name(found.field)}: {_path_of(value)}'",
        )
    elif found.field is Field.SITEMAP and not _is_absolute(value):
        yield _finding(
            number,
            "sitemap-not-absolute",
            f"the sitemap {_show(value)} is not an absolute URL: crawlers skip it",
            "write the full URL, e.g. 'Sitemap: https://example.com/sitemap.xml'",
        )
    elif found.field is Field.USER_AGENT:
        yield from _user_agent(number, value)
    elif found.field is Field.CRAWL_DELAY and not _is_delay(value):
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


class _View(NamedTuple):
    """The default parser's blocks as lint checks them (docs/spec.md §5.1-§5.4)."""

    read: Body
    blocks: list[Block]
    rules: list[list[Rule]]  # each block's rules, in file order
    groups: dict[str, list[int]]  # token -> its blocks
    orphans: list[int]  # lines of the rules before any user-agent line

    @classmethod
    def of(cls, body: bytes) -> _View:
        read = read_body(body)
        blocks = read.blocks()
        orphans = [line for line, field, _ in read.orphans if field in RULES]
        rules = [block.rules() for block in blocks]
        return cls(read, blocks, rules, read.groups, orphans)

    def agent_line(self, block: int, token: str) -> int:
        """The first user-agent line of a block that names ``token``."""
        return next(agent.line for agent in self.blocks[block].agents if agent.token == token)

    def rules_of(self, members: list[int]) -> list[Rule]:
        return [rule for block in members for rule in self.rules[block]]


def _groups(view: _View) -> Iterator[Finding]:
    for number in view.orphans:
        yield _finding(
            number,
            "rule-before-user-agent",
            "this rule comes before any user-agent line: it belongs to no group and is ignored",
            "put a 'User-agent: *' line (or the right agent) above it",
        )
    if not view.blocks:
        yield _finding(
            1,
            "no-groups",
            "there is no user-agent line: every crawler may fetch everything",
            "start a group with 'User-agent: *' if some paths should be disallowed",
        )
        return
    yield from _dead_blocks(view)
    yield from _split(view)
    for who, members in _sharing(view.groups):
        yield from _shadowed(who, view.rules_of(members))
    yield from _not_inherited(view)


def _sharing(groups: dict[str, list[int]]) -> Iterator[tuple[str, list[int]]]:
    """Each distinct set of blocks once, with the agents it is the group of
    (shown): 10,000 agents over one block of rules are checked once, not
    10,000 times, and a shadowed rule is reported once, not once per agent."""
    tokens: dict[tuple[int, ...], list[str]] = {}
    for token, members in groups.items():
        tokens.setdefault(tuple(members), []).append(token)
    for key, names in tokens.items():
        who = _show(names[0])
        if len(names) > 1:
            who += f" (and {_count(len(names) - 1, 'other agent')} of the same group)"
        yield who, list(key)


def _dead_blocks(view: _View) -> Iterator[Finding]:
    for block, rules in zip(view.blocks, view.rules):
        if rules and not any(agent.token for agent in block.agents):
            first, last = rules[0].line, rules[-1].line
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            yield _finding(
                block.agents[0].line,
                "group-never-applies",
                "no user-agent line of this group names a crawler: no crawler obeys its "
                f"{_count(len(rules), 'rule')} ({where})",
                "write a token such as 'googlebot', or '*' alone for every crawler",
            )


def _split(view: _View) -> Iterator[Finding]:
    for token, members in view.groups.items():
        first = view.agent_line(members[0], token)
        for block in members[1:]:
            yield _finding(
                view.agent_line(block, token),
                "group-split",
                f"{_show(token)} already has a group at line {first}: the groups are merged "
                "(RFC 9309), but some crawlers read only the first",
                f"put every rule for {_show(token)} in one group",
            )


def _same_urls_key(pattern: str) -> str:
    """Patterns with equal keys match exactly the same URLs (docs/spec.md §6.4, §6.5)."""
    normal = normalise(pattern)
    if normal.endswith("$"):
        return normal
    return normal.rstrip("*") or "/"


def _shadowed(who: str, rules: list[Rule]) -> Iterator[Finding]:
    """docs/spec.md §6.6: among rules matching the same URLs, one always decides.
    Linear in the rules: each is filed under its set of URLs once."""
    alike: dict[str, list[Rule]] = {}
    for rule in rules:
        alike.setdefault(_same_urls_key(rule.pattern), []).append(rule)
    for same in alike.values():
        if len(same) < 2:
            continue
        winner = max(same, key=lambda r: (len(normalise(r.pattern)), r.kind == ALLOW))
        for rule in same:
            if rule is winner:
                continue
            written = rule_text(winner)
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


def _not_inherited(view: _View) -> Iterator[Finding]:
    """docs/spec.md §5.5: a crawler with its own group ignores every ``*`` rule."""
    star = view.rules_of(view.groups.get(GLOBAL, []))
    star_disallows: dict[str, Rule] = {}  # set of URLs -> the first rule naming it
    for rule in star:  # in file order
        if rule.kind == DISALLOW:
            key = _same_urls_key(rule.pattern)
            if key != "/":
                star_disallows.setdefault(key, rule)
    if not star_disallows:
        return
    # Per distinct set of blocks, once: (how many '*' sets of URLs it lacks, the first).
    lacking: dict[tuple[int, ...], tuple[int, Rule | None]] = {}
    for token, members in view.groups.items():
        if token == GLOBAL:
            continue
        ids = tuple(members)
        if ids not in lacking:
            lacking[ids] = _lacking(view.rules_of(members), star_disallows)
        count, first = lacking[ids]
        if first is not None:
            yield _finding(
                view.agent_line(members[0], token),
                "star-rules-not-inherited",
                f"the group for {_show(token)} lacks {_count(count, 'Disallow rule')} "
                f"of the '*' group (first: {_show(first.pattern)} at line {first.line}); "
                f"{_show(token)} obeys only its own group",
                f"copy the '*' rules that {_show(token)} must obey into its group",
            )


def _lacking(own: list[Rule], star_disallows: dict[str, Rule]) -> tuple[int, Rule | None]:
    """How many of the '*' group's disallowed sets of URLs a group does not
    name, and the first of them (None: nothing to report). Linear in the
    group's own rules: the '*' ones are walked only past those it names."""
    disallowed = {_same_urls_key(r.pattern) for r in own if r.kind == DISALLOW}
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
            "lines": len(split_lines(body_text(body))),
            "bytes": len(body),
            "truncated": len(body) > MAX_BODY_BYTES,
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
    size = f"over {MAX_BODY_BYTES:,}" if summary["truncated"] else f"{summary['bytes']:,}"
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
