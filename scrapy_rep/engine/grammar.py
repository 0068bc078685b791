"""What each line of a robots.txt says, and the blocks the lines make (docs/spec.md §4, §5).

Every reader of a body reads it here: the parser (``robotstxt.py``) turns the
blocks into a ``RobotsTxt``, lint (``tools/lint/lines.py``, ``tools/lint/usage.py``)
checks the same blocks, so a line cannot mean one thing to a crawler and
another to the webmaster's check. As in Google's library, the fields are one
enum and the keys one table; unlike it, the blocks are data rather than
callbacks, because the parser's hot loop (rule lines, most of a file) stays
inline and cheap that way. Both readings of a body (documented, and
Google's: ``google_quirks``) go through one loop with one branch per kind of
line: a rule, a user-agent line, a pacing or usage line (by field), a line
outside any group (by key, from ``site_wide.SITE_WIDE``).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from enum import Enum
from types import MappingProxyType
from typing import Final, NamedTuple

from scrapy_rep.engine.agents import group_token
from scrapy_rep.engine.lines import ALLOW, DISALLOW, body_text, cut_line, split_lines
from scrapy_rep.engine.rules import ALLOW_BIT, Rule, rule_of
from scrapy_rep.engine.site_wide import SITE_WIDE

__all__ = [
    "KEYS",
    "PACING",
    "RULES",
    "USAGE",
    "Agent",
    "Block",
    "Body",
    "Directive",
    "Field",
    "Key",
    "Note",
    "field_name",
    "field_of_key",
    "line_text",
    "read_body",
    "read_line",
    "rule_text",
]


class Field(str, Enum):
    """What a line is about. A field's value is its key as the standards
    write it, so a rule's kind (``rules.Rule.kind``) is its field's value.
    Format ``field.value``, never the member itself."""

    USER_AGENT = "user-agent"
    ALLOW = ALLOW
    DISALLOW = DISALLOW
    SITEMAP = "sitemap"
    CRAWL_DELAY = "crawl-delay"
    REQUEST_RATE = "request-rate"
    CONTENT_USAGE = "content-usage"
    CONTENT_SIGNAL = "content-signal"
    LICENSE = "license"  # RSL 1.0: the site's licence terms (docs/spec.md §7.3)
    #: A line outside any group of a kind only ``site_wide.SITE_WIDE`` names
    #: (its key says which); sitemap and license lines have fields of their own.
    SITE_WIDE = "site-wide"
    OTHER = "other"  # a field some crawlers know, with no effect here (docs/spec.md §4.5)
    UNKNOWN = "unknown"


class Key(NamedTuple):
    """What a key (lower-case, as written) stands for."""

    field: Field
    typo: bool = False  # a misspelling only Google's library reads (google_quirks)
    prefix: bool = False  # Google's library reads any key starting with it, as a typo


_F = Field
# Members bound once: ``Field.ALLOW`` costs a lookup through the enum's
# metaclass each time, far more than a global, on every line.
_USER_AGENT, _ALLOW, _DISALLOW = _F.USER_AGENT, _F.ALLOW, _F.DISALLOW
_OUTSIDE = _F.SITE_WIDE
#: Every key a line may start with. Google's library matches the ``prefix``
#: keys by prefix and accepts the misspellings marked ``typo`` (none for
#: allow); the documented rule (docs/spec.md §4.5) accepts neither.
KEYS: Final[dict[str, Key]] = {
    "user-agent": Key(_F.USER_AGENT, prefix=True),
    "useragent": Key(_F.USER_AGENT, typo=True, prefix=True),
    "user agent": Key(_F.USER_AGENT, typo=True, prefix=True),
    "allow": Key(_F.ALLOW, prefix=True),
    "disallow": Key(_F.DISALLOW, prefix=True),
    "dissallow": Key(_F.DISALLOW, typo=True, prefix=True),
    "dissalow": Key(_F.DISALLOW, typo=True, prefix=True),
    "disalow": Key(_F.DISALLOW, typo=True, prefix=True),
    "diasllow": Key(_F.DISALLOW, typo=True, prefix=True),
    "disallaw": Key(_F.DISALLOW, typo=True, prefix=True),
    "sitemap": Key(_F.SITEMAP, prefix=True),
    "site-map": Key(_F.SITEMAP, typo=True, prefix=True),
    "crawl-delay": Key(_F.CRAWL_DELAY),
    "request-rate": Key(_F.REQUEST_RATE),
    "content-usage": Key(_F.CONTENT_USAGE),
    "content-signal": Key(_F.CONTENT_SIGNAL),
    "license": Key(_F.LICENSE),
    **{
        key: Key(_F.OTHER)
        for key in (
            "clean-param", "domain", "host", "noarchive", "nofollow", "noindex",
            "revisit-after", "visit-time",
        )
    },
}  # fmt: skip
_PREFIXES: Final = tuple((key, entry.field) for key, entry in KEYS.items() if entry.prefix)

#: How examples and messages write each field's name.
_NAMES: Final[dict[str, str]] = {
    _F.USER_AGENT: "User-agent",
    _F.ALLOW: "Allow",
    _F.DISALLOW: "Disallow",
    _F.SITEMAP: "Sitemap",
    _F.CRAWL_DELAY: "Crawl-delay",
    _F.REQUEST_RATE: "Request-rate",
    _F.CONTENT_USAGE: "Content-Usage",
    _F.CONTENT_SIGNAL: "Content-Signal",
    _F.LICENSE: "License",
}
#: The rule lines: their field is the rule's kind (``rules.Rule.kind``).
RULES: Final = frozenset({_F.ALLOW, _F.DISALLOW})
#: Lines that apply to the agent lines just before them and do not end a block.
PACING: Final = frozenset({_F.CRAWL_DELAY, _F.REQUEST_RATE})
USAGE: Final = frozenset({_F.CONTENT_USAGE, _F.CONTENT_SIGNAL})
_NOTES: Final = PACING | USAGE
#: The lines of a group: each is read by its field, any other line by its key.
_GROUP_FIELDS: Final = RULES | _NOTES | {_F.USER_AGENT}
_NOTE_FIELDS: Final[dict[str, Field]] = {field: field for field in _NOTES}
#: What Google's reading of a line leaves for no reader: written back as nothing.
_IGNORED: Final = frozenset({_F.OTHER, _F.UNKNOWN})


def field_name(key: str) -> str:
    """``content-usage`` -> ``Content-Usage``; a key of no field as given."""
    return _NAMES.get(key, key)


def line_text(key: str, value: str) -> str:
    """A line as written from its key and value: ``Content-Usage: train-ai=n``."""
    return f"{field_name(key)}: {value}"


def rule_text(rule: Rule) -> str:
    """A rule as the line that wrote it: ``Disallow: /private``."""
    return line_text(rule.kind, rule.pattern)


# --- one line --------------------------------------------------------------------

_WS: Final = " \t\v\f"


class Directive(NamedTuple):
    """What a line says: its field, its value, and how leniently it was read."""

    field: Field
    key: str  # the key as written, lower-cased
    value: str
    typo: bool  # a key only Google's library reads (``Key.typo``, or a prefix)
    missing_colon: bool  # "disallow /x": whitespace instead of the colon


def field_of_key(key: str) -> Key:
    """The field of a lower-case key, and whether only Google's library reads it."""
    found = KEYS.get(key)
    if found is not None:
        return found
    if key in SITE_WIDE:  # asked each time: a kind may be added to the table at any time
        return _SITE_WIDE
    for prefix, field in _PREFIXES:
        if key.startswith(prefix):
            return Key(field, typo=True, prefix=True)
    return _UNKNOWN


_UNKNOWN: Final = Key(_F.UNKNOWN)
_SITE_WIDE: Final = Key(_F.SITE_WIDE)


def read_line(line: str) -> Directive | None:
    """The field and value of one line; None for a line with no key.

    ``field: value`` up to a ``#``; Google's library also reads ``key value``
    when the line has exactly two tokens (``missing_colon``).
    """
    hash_at = line.find("#")
    content = line if hash_at < 0 else line[:hash_at]
    colon = content.find(":")
    if colon >= 0:
        key, value = content[:colon].strip(_WS), content[colon + 1 :].strip(_WS)
        missing_colon = False
    else:
        parts = content.split(None, 2)
        if len(parts) != 2:
            return None
        (key, value), missing_colon = parts, True
    if not key:
        return None
    key = key.lower()
    found = field_of_key(key)
    return Directive(found.field, key, value, found.typo, missing_colon)


# The documented reading of a line (docs/spec.md §4.4) is ``read_line`` without typos
# or missing colons; the parser's hot loop takes it as a regex and a memo.
_LINE: Final = re.compile(r"([^:#]*):([^#]*)")  # key, colon, value, up to a comment
#: Raw key -> what the one loop dispatches on (``_strict_kind``), memoised (bounded).
_KINDS: dict[str, str] = {}


def _strict_field(raw_key: str) -> Field:
    """The field of a raw key as the documented syntax reads it: no typos."""
    found = field_of_key(raw_key.strip(_WS).lower())
    return _UNKNOWN.field if found.typo else found.field


def _strict_kind(raw_key: str) -> str:
    """The field of a rule or a group's line; for any other line its key,
    lower-case, which ``site_wide.SITE_WIDE`` is asked for as the line is
    read (a kind may be added to the table at any time: not memoised)."""
    kind: str | None = _KINDS.get(raw_key)
    if kind is None:
        field = _strict_field(raw_key)
        kind = field if field in _GROUP_FIELDS else raw_key.strip(_WS).lower()
        if len(_KINDS) < 4096:
            _KINDS[raw_key] = kind
    return kind


# --- the blocks ------------------------------------------------------------------


class Agent(NamedTuple):
    """A user-agent line."""

    line: int
    token: str  # ``agents.group_token``: a product token, ``*``, or "" (names no crawler)


class Note(NamedTuple):
    """A pacing or usage line. It belongs to the agent lines just before it
    (``agents``: their tokens), as crawler-commons, Protego and Google's forks
    read crawl-delay, and it does not end the block: adding one never changes
    whom an allow or disallow applies to."""

    line: int
    field: Field
    value: str
    agents: tuple[str, ...]


class Block(NamedTuple):
    """A run of user-agent lines and the lines under them (docs/spec.md §5.1, §5.2)."""

    agents: list[Agent]
    patterns: list[str]  # the rules' values as written; empty ones dropped (docs/spec.md §6.2)
    codes: array[int]  # each pattern's code: its kind and line (``rules.rule_of``)
    notes: Sequence[Note]  # pacing and usage lines, in line order

    def rules(self) -> list[Rule]:
        return [rule_of(pattern, code) for pattern, code in zip(self.patterns, self.codes)]


#: A rule's kind as its code packs it beside the line (``rules.ALLOW_BIT``).
_ALLOW_CODE: Final = ALLOW_BIT
_DISALLOW_CODE: Final = 0


class Body(NamedTuple):
    """A body read into blocks, kept by column: the parser files each
    block's patterns and codes as they are, and a parse makes no object per
    agent line or per block beyond the patterns' list (every object made is
    one the cyclic collector walks later, and a crawl parses many files).
    ``blocks()`` puts the columns together for lint and tests."""

    patterns: list[list[str]]  # per block: ``Block.patterns``
    codes: list[array[int]]  # per block: ``Block.codes``
    notes: list[Sequence[Note]]  # per block: ``Block.notes`` (most share one empty tuple)
    agent_blocks: array[int]  # per user-agent line, in file order: its block
    agent_lines: array[int]  # ... its line
    agent_tokens: list[str]  # ... its token (``Agent.token``)
    groups: dict[str, list[int]]  # token -> its blocks, in file order (docs/spec.md §5.4)
    #: The lines outside any group (``site_wide.SITE_WIDE``): key -> (line,
    #: value) of each, in file order; a kind with no line has no entry, and
    #: a file with none shares one empty mapping.
    site_wide: Mapping[str, Sequence[tuple[int, str]]]
    #: (line, field, value) of the rule, pacing and usage lines before any
    #: user-agent line: they belong to no group (docs/spec.md §5.3). A
    #: Content-Signal line among them speaks for the whole site
    #: (docs/usage-preferences.md, "Global lines").
    orphans: list[tuple[int, Field, str]]

    @property
    def sitemaps(self) -> Sequence[tuple[int, str]]:
        """(line, value) of every sitemap line."""
        return self.site_wide.get("sitemap", ())

    @property
    def licenses(self) -> Sequence[tuple[int, str]]:
        """(line, value) of every license line (docs/spec.md §7.3)."""
        return self.site_wide.get("license", ())

    def blocks(self) -> list[Block]:
        agents: list[list[Agent]] = [[] for _ in self.patterns]
        for block, line, token in zip(self.agent_blocks, self.agent_lines, self.agent_tokens):
            agents[block].append(Agent(line, token))
        return [Block(*block) for block in zip(agents, self.patterns, self.codes, self.notes)]


_NO_LINES: Final[Mapping[str, Sequence[tuple[int, str]]]] = MappingProxyType({})


def read_body(body: bytes | str, *, google_quirks: bool = False) -> Body:
    """The blocks of a body. By default lines are read as documented (exact
    keys and a colon, whole lines); ``google_quirks`` reads them as Google's
    library does (misspelt and prefixed keys, a missing colon, lines cut at
    16,663 bytes, ``* foo`` as ``*``). Never raises on content."""
    reader = _Reader(google_quirks)
    lines = split_lines(body_text(body))
    reader.read(_google_reading(lines) if google_quirks else map(_LINE.match, lines))
    reader.close_block()
    return Body(
        patterns=reader.block_patterns,
        codes=reader.block_codes,
        notes=reader.block_notes,
        agent_blocks=reader.agent_blocks,
        agent_lines=reader.agent_lines,
        agent_tokens=reader.agent_tokens,
        groups=reader.groups,
        site_wide=reader.site_wide or _NO_LINES,
        orphans=reader.orphans,
    )


#: A line as the one loop takes it: ``[1]`` its key, ``[2]`` its value; a
#: regex match of the documented syntax (``_LINE``), or Google's reading.
_Read = re.Match[str] | tuple[str, str, str] | None
_KEY_OF: Final[dict[Field, str]] = {field: field.value for field in Field}


def _google_reading(lines: list[str]) -> Iterator[_Read]:
    """Google's reading of each line (``read_line`` of the line cut at 16,663
    bytes) in the shape of a match of the documented syntax: the key of its
    field (or its own, outside any group) and its value; None for a line no
    reader takes. The one loop then reads both ways alike. One at a time: a
    list of them all would keep every tuple alive for the collector to walk."""
    for line in lines:
        found = read_line(cut_line(line)) if line else None
        if found is None or found.field in _IGNORED:
            yield None
        elif found.field is _OUTSIDE:
            yield ("", found.key, found.value)
        else:
            yield ("", _KEY_OF[found.field], found.value)


class _Reader:
    """One pass over the lines; the open block's parts are kept apart until it closes."""

    def __init__(self, google_quirks: bool) -> None:
        self.quirks = google_quirks
        self.block_patterns: list[list[str]] = []
        self.block_codes: list[array[int]] = []
        self.block_notes: list[Sequence[Note]] = []
        self.agent_blocks = array("I")
        self.agent_lines = array("I")
        self.agent_tokens: list[str] = []
        self.groups: dict[str, list[int]] = {}
        self.site_wide: dict[str, list[tuple[int, str]]] | None = None  # made by the first one
        self.orphans: list[tuple[int, Field, str]] = []
        self.patterns: list[str] | None = None  # None: no user-agent line yet
        self.codes = array("I")
        self.notes: list[Note] | None = None  # made by the block's first note
        self.run: list[str] = []  # the tokens of the agent lines a note applies to
        self.noted = False  # a note came after them: the next agent line starts a run
        self.reading_agents = False

    def read(self, lines: Iterable[_Read]) -> None:
        """Each line's key and value (``_Read``), one branch per kind of line.
        Rule lines are most of a file, so they are handled inline."""
        kind_of = _KINDS.get
        allow, disallow = _ALLOW, _DISALLOW
        user_agent, notes, site_wide = _USER_AGENT, _NOTE_FIELDS, SITE_WIDE
        for number, match in enumerate(lines, 1):
            if match is None:
                continue
            raw_key = match[1]
            kind = kind_of(raw_key) or _strict_kind(raw_key)
            if kind is disallow or kind is allow:
                if self.patterns is None:  # docs/spec.md §5.3: a rule of no group
                    field = allow if kind is allow else disallow
                    self.orphans.append((number, field, match[2].strip(_WS)))
                    continue
                self.reading_agents = False
                value = match[2].strip(_WS)
                if value:  # docs/spec.md §6.2: an empty value is ignored
                    self.patterns.append(value)
                    self.codes.append(number | (_ALLOW_CODE if kind is allow else _DISALLOW_CODE))
                continue
            if kind is user_agent:
                self.agent(match[2].strip(_WS), number)
            elif (note := notes.get(kind)) is not None:
                self.note(note, match[2].strip(_WS), number)
            elif kind in site_wide:
                self.outside(kind, match[2].strip(_WS), number)

    def agent(self, value: str, number: int) -> None:
        if not self.reading_agents:
            self.close_block()
            self.patterns = []
            self.reading_agents = True
        token = group_token(value, self.quirks)
        block_id = len(self.block_patterns)
        self.agent_blocks.append(block_id)
        self.agent_lines.append(number)
        self.agent_tokens.append(token)
        if self.noted:
            self.run = []
            self.noted = False
        if token:
            self.run.append(token)
            ids = self.groups.setdefault(token, [])
            if not ids or ids[-1] != block_id:
                ids.append(block_id)

    def note(self, field: Field, value: str, number: int) -> None:
        if self.patterns is None:
            self.orphans.append((number, field, value))
            return
        self.noted = True
        if self.notes is None:
            self.notes = []
        self.notes.append(Note(number, field, value, tuple(self.run)))

    def outside(self, key: str, value: str, number: int) -> None:
        """A line outside any group: read wherever it stands (docs/spec.md §7)."""
        found = self.site_wide
        if found is None:
            found = self.site_wide = {}
        lines = found.get(key)
        if lines is None:
            found[key] = [(number, value)]
        else:
            lines.append((number, value))

    def close_block(self) -> None:
        if self.patterns is not None:
            self.block_patterns.append(self.patterns)
            self.block_codes.append(self.codes)
            self.block_notes.append(self.notes if self.notes is not None else ())
        self.patterns = None
        self.codes = array("I")
        self.notes = None
        self.run = []
        self.noted = False
