"""What a page may be used for: AI usage preferences from robots.txt and HTTP.

A site may say, beside what may be fetched, what fetched content may be used
for. Two syntaxes are in use, and this module reads both into one answer per
usage category, each with the line that decided it:

- ``Content-Usage``, the IETF aipref working group's: the vocabulary of
  draft-ietf-aipref-vocab-08 (14 September 2026: the labels ``train-ai``,
  ``ai-use`` and ``search``, values the tokens ``y`` and ``n``, written as an
  RFC 9651 Dictionary), attached by draft-ietf-aipref-attach-05 (August 2026)
  as an HTTP response header and as a path-scoped robots.txt rule;
- ``Content-Signal``, Cloudflare's Content Signals Policy (24 September 2025,
  contentsignals.org; the categories are also in the individual draft
  draft-romm-aipref-contentsignals-00): ``search``, ``ai-input`` and
  ``ai-train`` with ``yes``/``no`` on a robots.txt line.

Neither is an RFC; both vocabulary drafts say their text does not reflect
working-group consensus. docs/usage-preferences.md gives the sources, the
mapping table, the precedence rules and the proposed integration.

Pure, like the rest of the engine: strings in, answers out, nothing raises on
content. A statement that cannot be read states nothing, and says why in
``problems`` (for lint).
"""

from __future__ import annotations

import binascii
import re
from array import array
from base64 import b64decode
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Final, NamedTuple, TypeAlias

from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.rules import UNDECIDED, UNDECIDED_TEXT
from scrapy_rep.engine.url_path import (
    google_escape_pattern,
    match_path,
    normalise,
    path_params_query,
)

__all__ = [
    "ALLOWED",
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "DENIED",
    "HEADER",
    "LABELS",
    "SIGNAL_KEYS",
    "UNSTATED",
    "VOCABULARY",
    "Date",
    "Decision",
    "DisplayString",
    "HeaderUsage",
    "InnerList",
    "Item",
    "ParsedDictionary",
    "Preferences",
    "Problem",
    "Token",
    "UsageMatcher",
    "UsageRule",
    "combine",
    "compile_usage",
    "header_usage",
    "parse_dictionary",
    "read_rule",
    "signal_statement",
    "vocabulary_statement",
]

# --- the vocabulary -------------------------------------------------------------

#: draft-ietf-aipref-vocab-08 §6.1: the usage category labels. The draft
#: defines no hierarchy (earlier revisions nested categories under ``bots``
#: or ``all``); Search overrides the other two *as a category of use*
#: (§4.3), which is about how a use is classified, not how answers combine.
VOCABULARY: Final = ("train-ai", "ai-use", "search")
#: Content Signals' ``ai-input`` has no vocab-08 label of its own; it is kept
#: as an extension label so that a retrieval-augmented crawler can ask for it.
LABELS: Final = (*VOCABULARY, "ai-input")
#: Content Signals Policy keys.
SIGNAL_KEYS: Final = ("search", "ai-input", "ai-train")

ALLOWED: Final = "allowed"
DENIED: Final = "denied"
UNSTATED: Final = "unstated"

#: Where a statement was read.
CONTENT_USAGE: Final = "content-usage"  # a robots.txt Content-Usage rule
CONTENT_SIGNAL: Final = "content-signal"  # a robots.txt Content-Signal line
HEADER: Final = "header"  # the Content-Usage HTTP response header
USAGE_KEYS: Final = frozenset({CONTENT_USAGE, CONTENT_SIGNAL})

#: Which labels a statement about a key speaks for. A statement about a
#: category holds for every category inside it, never for one around it:
#: - Content-Signal ``ai-train`` (training or fine-tuning any AI model)
#:   contains vocab-08 ``train-ai`` (generative models only): it maps;
#: - Content-Signal ``search`` and vocab-08 ``search`` both mean an index
#:   with links and short excerpts, no AI summaries: they map;
#: - Content-Signal ``ai-input`` (retrieval-augmented generation, grounding)
#:   lies inside vocab-08 ``ai-use`` (input to a generative model that the
#:   user did not supply): it does not speak for ``ai-use``, and a statement
#:   about ``ai-use`` speaks for it.
_SPEAKS_FOR: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    (CONTENT_USAGE, "train-ai"): ("train-ai",),
    (CONTENT_USAGE, "ai-use"): ("ai-use", "ai-input"),
    (CONTENT_USAGE, "search"): ("search",),
    (HEADER, "train-ai"): ("train-ai",),
    (HEADER, "ai-use"): ("ai-use", "ai-input"),
    (HEADER, "search"): ("search",),
    (CONTENT_SIGNAL, "ai-train"): ("train-ai",),
    (CONTENT_SIGNAL, "ai-input"): ("ai-input",),
    (CONTENT_SIGNAL, "search"): ("search",),
}


class Problem(NamedTuple):
    """Something a statement said that could not be used, for lint."""

    line: int | None  # the robots.txt line; None for an HTTP header
    message: str


# --- RFC 9651 structured fields: just enough to read a Dictionary ------------------
#
# The vocabulary's statements are Dictionaries (vocab-08 §6, RFC 9651 §3.2).
# Only token values matter, but a member of any other type that is malformed
# makes the whole field fail (RFC 9651 §4.2), so every bare item type is read.


class Token(str):
    """An RFC 9651 Token (§3.3.4), kept apart from a String with the same text."""

    __slots__ = ()


class DisplayString(str):
    """An RFC 9651 Display String (§3.3.8)."""

    __slots__ = ()


class Date(NamedTuple):
    """An RFC 9651 Date (§3.3.7): seconds since the epoch."""

    seconds: int


BareItem: TypeAlias = "int | Decimal | str | bytes | bool | Date"
Parameters: TypeAlias = "dict[str, BareItem]"


class Item(NamedTuple):
    value: BareItem
    params: Parameters


class InnerList(NamedTuple):
    items: tuple[Item, ...]
    params: Parameters


Member: TypeAlias = "Item | InnerList"


class _FieldError(Exception):
    """A structured field that does not parse; caught in ``parse_dictionary``."""


_LCALPHA: Final = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGITS: Final = frozenset("0123456789")
_ALPHA: Final = _LCALPHA | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_KEY_CHARS: Final = _LCALPHA | _DIGITS | frozenset("_-.*")
_TOKEN_CHARS: Final = _ALPHA | _DIGITS | frozenset("!#$%&'*+-.^_`|~:/")
_BASE64: Final = _ALPHA | _DIGITS | frozenset("+/=")
_LOWER_HEX: Final = frozenset("0123456789abcdef")


class _Reader:
    """RFC 9651 §4.2 parsing, one method per algorithm, over ASCII text."""

    __slots__ = ("at", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> _FieldError:
        return _FieldError(f"{what} at character {self.at + 1}")

    def peek(self) -> str:
        return self.text[self.at : self.at + 1]

    def skip(self, chars: str) -> None:
        while self.at < len(self.text) and self.text[self.at] in chars:
            self.at += 1

    def dictionary(self) -> tuple[dict[str, Member], list[str]]:
        """§4.2.2; also reports repeated keys (the last one applies)."""
        members: dict[str, Member] = {}
        repeated: list[str] = []
        while self.at < len(self.text):
            key = self.key()
            if self.peek() == "=":
                self.at += 1
                member: Member = self.inner_list() if self.peek() == "(" else self.item()
            else:
                member = Item(True, self.parameters())
            if key in members:
                repeated.append(key)
                del members[key]  # §4.2.2: the value is overwritten
            members[key] = member
            self.skip(" \t")
            if self.at >= len(self.text):
                break
            if self.peek() != ",":
                raise self.fail("expected ','")
            self.at += 1
            self.skip(" \t")
            if self.at >= len(self.text):
                raise self.fail("a trailing ','")
        return members, repeated

    def inner_list(self) -> InnerList:
        """§4.2.1.2."""
        self.at += 1  # "("
        items: list[Item] = []
        while self.at < len(self.text):
            self.skip(" ")
            if self.peek() == ")":
                self.at += 1
                return InnerList(tuple(items), self.parameters())
            items.append(self.item())
            if self.peek() not in (" ", ")"):
                raise self.fail("expected ' ' or ')' in an inner list")
        raise self.fail("an inner list without ')'")

    def item(self) -> Item:
        """§4.2.3."""
        return Item(self.bare_item(), self.parameters())

    def bare_item(self) -> BareItem:
        """§4.2.3.1."""
        char = self.peek()
        if char == "-" or char in _DIGITS:
            return self.number()
        if char == '"':
            return self.string()
        if char in _ALPHA or char == "*":
            return self.token()
        if char == ":":
            return self.byte_sequence()
        if char == "?":
            return self.boolean()
        if char == "@":
            self.at += 1
            number = self.number()
            if not isinstance(number, int):
                raise self.fail("a date that is not an integer")
            return Date(number)
        if char == "%":
            return self.display_string()
        raise self.fail(f"no item starts with {char!r}" if char else "a missing item")

    def parameters(self) -> Parameters:
        """§4.2.3.2."""
        params: Parameters = {}
        while self.peek() == ";":
            self.at += 1
            self.skip(" ")
            key = self.key()
            value: BareItem = True
            if self.peek() == "=":
                self.at += 1
                value = self.bare_item()
            params.pop(key, None)
            params[key] = value
        return params

    def key(self) -> str:
        """§4.2.3.3: lower-case only, so ``Train-AI`` fails (vocab-08 §6.5.1)."""
        char = self.peek()
        if not char or (char not in _LCALPHA and char != "*"):
            raise self.fail(f"a key cannot start with {char!r}" if char else "a missing key")
        start = self.at
        while self.at < len(self.text) and self.text[self.at] in _KEY_CHARS:
            self.at += 1
        return self.text[start : self.at]

    def number(self) -> int | Decimal:
        """§4.2.4."""
        start = self.at
        if self.peek() == "-":
            self.at += 1
        if not self.peek() or self.peek() not in _DIGITS:
            raise self.fail("a number without digits")
        digits, decimal = 0, False
        while self.at < len(self.text):
            char = self.text[self.at]
            if char in _DIGITS:
                digits += 1
            elif char == "." and not decimal:
                if digits > 12:
                    raise self.fail("a decimal with more than 12 integer digits")
                decimal = True
            else:
                break
            self.at += 1
            if digits + decimal > (16 if decimal else 15):
                raise self.fail("a number too long")
        text = self.text[start : self.at]
        if not decimal:
            return int(text)
        fraction = text.partition(".")[2]
        if not fraction or len(fraction) > 3:
            raise self.fail("a decimal needs one to three fractional digits")
        return Decimal(text)

    def string(self) -> str:
        """§4.2.5."""
        self.at += 1  # '"'
        out: list[str] = []
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if char == "\\":
                escaped = self.peek()
                if escaped not in ('"', "\\") or not escaped:
                    raise self.fail("a bad escape in a string")
                out.append(escaped)
                self.at += 1
            elif char == '"':
                return "".join(out)
            elif not " " <= char <= "~":
                raise self.fail("a control character in a string")
            else:
                out.append(char)
        raise self.fail("a string without its closing quote")

    def token(self) -> Token:
        """§4.2.6."""
        start = self.at
        self.at += 1
        while self.at < len(self.text) and self.text[self.at] in _TOKEN_CHARS:
            self.at += 1
        return Token(self.text[start : self.at])

    def byte_sequence(self) -> bytes:
        """§4.2.7."""
        end = self.text.find(":", self.at + 1)
        if end < 0:
            raise self.fail("a byte sequence without its closing ':'")
        content = self.text[self.at + 1 : end]
        if not set(content) <= _BASE64:
            raise self.fail("a byte sequence that is not base64")
        self.at = end + 1
        try:
            return b64decode(content + "=" * (-len(content) % 4))
        except (binascii.Error, ValueError):
            raise self.fail("a byte sequence that does not decode") from None

    def boolean(self) -> bool:
        """§4.2.8."""
        value = self.text[self.at + 1 : self.at + 2]
        if value not in ("0", "1"):
            raise self.fail("a boolean is ?0 or ?1")
        self.at += 2
        return value == "1"

    def display_string(self) -> DisplayString:
        """§4.2.10."""
        if self.text[self.at + 1 : self.at + 2] != '"':
            raise self.fail('a display string starts with %"')
        self.at += 2
        out = bytearray()
        while self.at < len(self.text):
            char = self.text[self.at]
            self.at += 1
            if not " " <= char <= "~":
                raise self.fail("a control character in a display string")
            if char == "%":
                octet = self.text[self.at : self.at + 2]
                if len(octet) != 2 or not set(octet) <= _LOWER_HEX:
                    raise self.fail("a display string escape is %xx in lower-case hex")
                out.append(int(octet, 16))
                self.at += 2
            elif char == '"':
                try:
                    return DisplayString(out.decode("utf-8"))
                except UnicodeDecodeError:
                    raise self.fail("a display string that is not UTF-8") from None
            else:
                out.append(ord(char))
        raise self.fail("a display string without its closing quote")


class ParsedDictionary(NamedTuple):
    """A Dictionary's members, or None when it does not parse, and why."""

    members: dict[str, Member] | None
    problems: tuple[str, ...]


def parse_dictionary(field: str | bytes) -> ParsedDictionary:
    """RFC 9651 §4.2 parsing of a Dictionary field value; never raises.

    The value is bytes on the wire (vocab-08 §6.3): anything outside ASCII
    fails, as does any syntax error anywhere (the whole field, not one member).
    """
    if isinstance(field, bytes):
        if not field.isascii():
            return ParsedDictionary(None, ("not a structured field: bytes outside ASCII",))
        field = field.decode("ascii")
    elif not field.isascii():
        return ParsedDictionary(None, ("not a structured field: characters outside ASCII",))
    reader = _Reader(field)
    reader.skip(" ")
    try:
        members, repeated = reader.dictionary()
    except _FieldError as error:
        return ParsedDictionary(None, (f"not a structured-field dictionary: {error}",))
    except (ValueError, ArithmeticError) as error:  # defensive: int()/Decimal()
        return ParsedDictionary(None, (f"not a structured-field dictionary: {error}",))
    problems = tuple(f"{key!r} is repeated; the last value applies" for key in repeated)
    return ParsedDictionary(members, problems)


# --- statements: what one line or header says --------------------------------------


def _describe(value: object) -> str:
    kinds = ((bool, "a Boolean"), (Token, "the token"), (DisplayString, "a Display String"),
             (str, "a String"), (bytes, "a Byte Sequence"), (Date, "a Date"),
             (InnerList, "an Inner List"), (int, "an Integer"), (Decimal, "a Decimal"))  # fmt: skip
    for kind, name in kinds:
        if isinstance(value, kind):
            return f"{name} {value!s}" if kind is Token else name
    return "a value"


def vocabulary_statement(field: str | bytes) -> tuple[dict[str, bool], tuple[str, ...]]:
    """vocab-08 §6.5: the allowed (True) and disallowed (False) labels of a field.

    Only the tokens ``y`` and ``n`` state a preference, parameters are
    disregarded (§6.5.2), unknown labels are ignored (§6.4); a field that does
    not parse states nothing at all (§6.5.1).
    """
    parsed = parse_dictionary(field)
    if parsed.members is None:
        return {}, parsed.problems
    stated: dict[str, bool] = {}
    problems = list(parsed.problems)
    for key, member in parsed.members.items():
        if key not in VOCABULARY:
            problems.append(f"unknown label {key!r} ignored")
            continue
        value: object = member.value if isinstance(member, Item) else member
        if isinstance(value, Token) and value in ("y", "n"):
            stated[key] = value == "y"
        else:
            problems.append(f"{key}: {_describe(value)} states nothing; only y or n do")
    return stated, tuple(problems)


_SIGNAL_VALUES: Final = {"yes": True, "no": False}


def signal_statement(text: str) -> tuple[dict[str, bool], tuple[str, ...]]:
    """A Content-Signal value: ``key=yes|no`` pairs separated by commas.

    Not a structured field: Cloudflare's policy gives the form by example
    (``search=yes, ai-train=no``), so spaces around items are tolerated and
    keys and values are read case-insensitively. A missing key states
    nothing (the policy's rule (c)); a repeated key: the last one applies.
    """
    stated: dict[str, bool] = {}
    problems: list[str] = []
    for part in text.split(","):
        item = part.strip(" \t")
        if not item:
            continue
        key, equals, raw_value = item.partition("=")
        key, value = key.strip(" \t").lower(), raw_value.strip(" \t").lower()
        if not equals or value not in _SIGNAL_VALUES:
            problems.append(f"{item!r} is not key=yes or key=no")
        elif key not in SIGNAL_KEYS:
            problems.append(f"unknown signal {key!r} ignored")
        else:
            if key in stated:
                problems.append(f"{key!r} is repeated; the last value applies")
                del stated[key]
            stated[key] = _SIGNAL_VALUES[value]
    return stated, tuple(problems)


class UsageRule(NamedTuple):
    """One statement of preference, as written, with where it was read."""

    line: int | None  # the robots.txt line; None for the HTTP header
    path: str | None  # the path pattern as written; None when absent (all paths)
    statement: tuple[tuple[str, bool], ...]  # (key as its source names it, allowed)
    source: str  # CONTENT_USAGE, CONTENT_SIGNAL or HEADER
    text: str  # the value as written

    @property
    def preferences(self) -> dict[str, bool]:
        """The statement in labels (``LABELS``): Content-Signal keys mapped."""
        out: dict[str, bool] = {}
        for key, allowed in self.statement:
            for label in _SPEAKS_FOR.get((self.source, key), ()):
                # Two keys never speak for one label today; if they did,
                # the more restrictive would do (vocab-08 §5.1).
                out[label] = out.get(label, True) and allowed
        return out


_VALUE_END: Final = re.compile(r"[\r\n#]")


def read_rule(line: int, key: str, value: str) -> tuple[UsageRule | None, tuple[Problem, ...]]:
    """A robots.txt ``Content-Usage`` or ``Content-Signal`` line as a rule.

    attach-05 §3.2: the value ends at ``#``; when it starts with ``/`` the
    path runs to the first SP or HTAB and the rest is the statement, else the
    whole value is the statement. Content-Signal lines are read the same way:
    several implementations accept a path there, and reading one as part of
    a key would state nothing anyway.
    """
    source = key.strip(" \t").lower()
    if source not in USAGE_KEYS:
        return None, (Problem(line, f"{key!r} is not a usage line"),)
    text = _VALUE_END.split(value, 1)[0].strip(" \t\v\f")
    path: str | None = None
    statement = text
    if text.startswith("/"):
        end = len(text)
        for separator in (" ", "\t"):
            found = text.find(separator)
            if 0 <= found < end:
                end = found
        path, statement = text[:end], text[end:].strip(" \t")
    if source == CONTENT_USAGE:
        stated, messages = vocabulary_statement(statement)
    else:
        stated, messages = signal_statement(statement)
    problems = [Problem(line, message) for message in messages]
    if not statement:
        problems.append(Problem(line, "states no preference"))
    return UsageRule(line, path, tuple(stated.items()), source, text), tuple(problems)


# --- answers -----------------------------------------------------------------------


class Decision(NamedTuple):
    """The preference for one label, and the statements that gave it."""

    state: str  # ALLOWED, DENIED or UNSTATED
    rules: tuple[UsageRule, ...] = ()

    @property
    def line(self) -> int | None:
        """The first deciding line (None: unstated, or the HTTP header)."""
        return self.rules[0].line if self.rules else None


_UNSTATED: Final = Decision(UNSTATED)


def _decide(found: Iterable[tuple[bool, UsageRule]]) -> Decision:
    """vocab-08 §5.1: any disallow wins, then any allow, else unknown."""
    denied: list[UsageRule] = []
    allowed: list[UsageRule] = []
    for is_allowed, rule in found:
        (allowed if is_allowed else denied).append(rule)
    if denied:
        return Decision(DENIED, tuple(denied))
    if allowed:
        return Decision(ALLOWED, tuple(allowed))
    return _UNSTATED


class Preferences(Mapping[str, Decision]):
    """label -> Decision for every label in ``LABELS``; immutable.

    ``crawlable`` is False when robots.txt disallows the path: then nothing
    is stated, whatever the usage lines say (attach-05 §3.1).
    """

    __slots__ = ("_decisions", "crawlable")

    def __init__(
        self, decisions: Mapping[str, Decision] | None = None, *, crawlable: bool = True
    ) -> None:
        given = decisions or {}
        self._decisions = {label: given.get(label, _UNSTATED) for label in LABELS}
        self.crawlable = crawlable

    @classmethod
    def of_rules(cls, rules: Iterable[UsageRule], *, crawlable: bool = True) -> Preferences:
        """What these statements say together (most restrictive per label)."""
        found: dict[str, list[tuple[bool, UsageRule]]] = {}
        for rule in rules:
            for label, allowed in rule.preferences.items():
                found.setdefault(label, []).append((allowed, rule))
        return cls({label: _decide(pairs) for label, pairs in found.items()}, crawlable=crawlable)

    def __getitem__(self, label: str) -> Decision:
        return self._decisions[label]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decisions)

    def __len__(self) -> int:
        return len(self._decisions)

    def state(self, label: str) -> str:
        """The state of any label: one outside ``LABELS`` is unstated."""
        return self._decisions.get(label, _UNSTATED).state

    def denied(self, labels: Iterable[str] | None = None) -> tuple[str, ...]:
        """The labels (of these, or all) whose use the site disallows."""
        wanted = LABELS if labels is None else labels
        return tuple(label for label in wanted if self.state(label) == DENIED)

    def to_meta(self) -> dict[str, object]:
        """Plain data for ``response.meta["rep_usage"]`` and logs."""
        return {
            "crawlable": self.crawlable,
            "labels": {
                label: {
                    "state": decision.state,
                    "by": [
                        {"source": rule.source, "line": rule.line, "text": rule.text}
                        for rule in decision.rules
                    ],
                }
                for label, decision in self._decisions.items()
            },
        }

    def __repr__(self) -> str:
        states = ", ".join(f"{label}={d.state}" for label, d in self._decisions.items())
        return f"<Preferences {states}{'' if self.crawlable else ' not crawlable'}>"


def combine(*preferences: Preferences) -> Preferences:
    """Several statements about one asset (robots.txt and the header, say).

    vocab-08 §5.1: per label, a disallow anywhere wins, else an allow, else
    unknown; every statement that gave the result is kept.
    """
    decisions = {
        label: _decide(
            (decision.state == ALLOWED, rule)
            for prefs in preferences
            for decision in (prefs[label],)
            if decision.state != UNSTATED
            for rule in decision.rules
        )
        for label in LABELS
    }
    return Preferences(decisions, crawlable=all(prefs.crawlable for prefs in preferences))


# --- robots.txt: rules matched by path ---------------------------------------------


_ONE_RULE: Final = array("I", [1])


def _pattern_matches(pattern: str, path: str) -> bool:
    """Whether one normalised pattern matches ``path`` (normalised): the
    engine's matcher (``CompiledGroup``) asked about that pattern alone."""
    return CompiledGroup(pattern, _ONE_RULE, False).decide(path) is not None


class _PathIndex:
    """The rules of one source in a group, matched like allow and disallow.

    attach-05 §3.1: the longest matching path decides, counted in octets of
    the encoded path; rules with identical paths all apply (combined by
    vocab-08 §5.1, where allow/disallow would let the allow win). A rule
    without a path matches every path, more weakly than any rule with one.
    Different patterns of one length that match tie, and all apply too: the
    engine's ``CompiledGroup`` finds them all in one search, within the step
    budget of an allow/disallow check (docs/spec.md §6.8); past it, every key is
    refused (fail closed).
    """

    __slots__ = ("_group", "_pathless", "_refused", "_rules")

    def __init__(self, rules: Sequence[UsageRule], google: bool) -> None:
        escape = google_escape_pattern if google else normalise
        by_pattern: dict[str, list[UsageRule]] = {}
        self._pathless = tuple(rule for rule in rules if not rule.path)
        for rule in rules:
            if rule.path:
                by_pattern.setdefault(escape(rule.path), []).append(rule)
        patterns = list(by_pattern)
        self._rules = [tuple(by_pattern[pattern]) for pattern in patterns]
        # Every pattern as a "disallow" whose line is its index + 1.
        codes = array("I", range(1, len(patterns) + 1))
        self._group = CompiledGroup("\n".join(patterns), codes, google) if patterns else None
        # What a check that gave up (docs/spec.md §6.8) answers: every key refused.
        source = rules[0].source if rules else CONTENT_USAGE
        statement = tuple((key, False) for src, key in _SPEAKS_FOR if src == source)
        self._refused = (UsageRule(0, "*", statement, source, UNDECIDED_TEXT),)

    def winners(self, path: str) -> tuple[UsageRule, ...]:
        """The rules that decide ``path`` (normalised): the longest matches'."""
        found = self._group.deciding(path) if self._group is not None else ()
        if not found:
            return self._pathless
        if found[0] == UNDECIDED:
            return self._refused
        return tuple(rule for pattern in found for rule in self._rules[pattern.line - 1])


class UsageMatcher:
    """The usage rules of one selected group: ask it about a URL."""

    __slots__ = ("_indexes", "_quirks", "problems", "rules")

    def __init__(
        self,
        rules: Sequence[UsageRule],
        problems: Sequence[Problem] = (),
        *,
        google_quirks: bool = False,
    ) -> None:
        self.rules = tuple(rules)
        self.problems = tuple(problems)
        self._quirks = google_quirks
        self._indexes = {
            source: _PathIndex([r for r in self.rules if r.source == source], google_quirks)
            for source in (CONTENT_USAGE, CONTENT_SIGNAL)
        }

    def _path(self, url: str) -> str:
        return path_params_query(url) if self._quirks else match_path(url)

    def deciding(self, url: str) -> dict[str, tuple[UsageRule, ...]]:
        """Per source, the rules that decide ``url`` (a URL or a path)."""
        path = self._path(url)
        return {source: index.winners(path) for source, index in self._indexes.items()}

    def usage(self, url: str, *, crawlable: bool = True) -> Preferences:
        """The preferences for ``url``.

        Within a source the longest matching rule decides, its statement
        whole: a label it leaves out is unknown there, whatever a shorter rule
        says. Content-Usage and Content-Signal are two statements, combined
        most restrictively (vocab-08 §5.1). Pass ``crawlable=False`` when the group disallows
        the URL: no preference then applies (attach-05 §3.1).
        """
        if not crawlable:
            return Preferences(crawlable=False)
        winners = self.deciding(url)
        return Preferences.of_rules(rule for rules in winners.values() for rule in rules)

    def signals(self, url: str) -> dict[str, Decision]:
        """The Content-Signal keys as written (``search``, ``ai-input``,
        ``ai-train``) for ``url``, before any mapping: for lint, and for
        comparison with other readers of the policy."""
        found: dict[str, list[tuple[bool, UsageRule]]] = {}
        for rule in self._indexes[CONTENT_SIGNAL].winners(self._path(url)):
            for key, allowed in rule.statement:
                found.setdefault(key, []).append((allowed, rule))
        return {key: _decide(found.get(key, ())) for key in SIGNAL_KEYS}

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __repr__(self) -> str:
        return f"<UsageMatcher rules={len(self.rules)} problems={len(self.problems)}>"


def compile_usage(
    lines: Iterable[tuple[int, str, str]], *, google_quirks: bool = False
) -> UsageMatcher:
    """A matcher for the usage lines of one selected group.

    ``lines``: (line number, key, value) for each ``Content-Usage`` or
    ``Content-Signal`` line of the group's blocks, in any order (the order of
    rules carries no meaning, attach-05 §3.1).
    """
    rules: list[UsageRule] = []
    problems: list[Problem] = []
    for number, key, value in lines:
        rule, found = read_rule(number, key, value)
        problems += found
        if rule is not None:
            rules.append(rule)
    return UsageMatcher(rules, problems, google_quirks=google_quirks)


# --- the HTTP header -----------------------------------------------------------------


class HeaderUsage(NamedTuple):
    """The ``Content-Usage`` response header of one response."""

    preferences: Preferences
    rule: UsageRule | None  # None when there was no header
    problems: tuple[str, ...]


def header_usage(values: Iterable[str | bytes]) -> HeaderUsage:
    """attach-05 §2: the header is a Dictionary with the vocabulary's rules.

    Several field lines are one field (RFC 9651 §4.2): they are joined with
    commas and parsed once, so a key repeated across lines takes its last
    value, and one malformed line makes the whole field state nothing.
    Empty lines are skipped (they would only add a stray comma).
    """
    texts: list[str] = []
    for value in values:
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        if text.strip(" \t"):
            texts.append(text.strip(" \t"))
    if not texts:
        return HeaderUsage(Preferences(), None, ())
    joined = ", ".join(texts)
    stated, problems = vocabulary_statement(joined)
    rule = UsageRule(None, None, tuple(stated.items()), HEADER, joined)
    return HeaderUsage(Preferences.of_rules([rule]), rule, problems)

