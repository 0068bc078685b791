"""The usage vocabulary, and what one robots.txt line or header states in it.

The words are draft-ietf-aipref-vocab-08's labels and Cloudflare's Content
Signals keys; a statement is read from a ``Content-Usage`` value (an RFC
9651 Dictionary) or a ``Content-Signal`` value (``key=yes|no`` pairs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Final, NamedTuple

from scrapy_rep.engine.grammar import Field, line_text
from scrapy_rep.engine.usage.structured_fields import (
    Date,
    DisplayString,
    InnerList,
    Item,
    Token,
    parse_dictionary,
)

__all__ = [
    "ALLOWED",
    "CONTENT_SIGNAL",
    "CONTENT_USAGE",
    "DENIED",
    "HEADER",
    "LABELS",
    "SIGNAL_KEYS",
    "SPEAKS_FOR",
    "UNSTATED",
    "USAGE_KEYS",
    "VOCABULARY",
    "WORDS",
    "Problem",
    "UsageRule",
    "Word",
    "read_rule",
    "signal_statement",
    "vocabulary_statement",
]

ALLOWED: Final = "allowed"
DENIED: Final = "denied"
UNSTATED: Final = "unstated"

#: Where a statement was read.
CONTENT_USAGE: Final = Field.CONTENT_USAGE.value  # a robots.txt Content-Usage rule
CONTENT_SIGNAL: Final = Field.CONTENT_SIGNAL.value  # a robots.txt Content-Signal line
HEADER: Final = "header"  # the Content-Usage HTTP response header
USAGE_KEYS: Final = frozenset({CONTENT_USAGE, CONTENT_SIGNAL})


class Word(NamedTuple):
    """A key one source family may write, and the labels a statement about it speaks for."""

    sources: tuple[str, ...]
    key: str
    speaks_for: tuple[str, ...]


_VOCAB: Final = (CONTENT_USAGE, HEADER)  # draft-ietf-aipref-vocab-08 labels
_SIGNAL: Final = (CONTENT_SIGNAL,)  # Cloudflare's Content Signals Policy keys

#: The one table of the usage vocabulary: every other name below is read
#: from it, so a key is never accepted without the labels it speaks for.
#: A statement about a category holds for every category inside it, never
#: for one around it:
#: - vocab-08 §6.1 defines three labels and no hierarchy (earlier revisions
#:   nested them under ``bots`` or ``all``); Search overrides the other two
#:   *as a category of use* (§4.3), not in how answers combine;
#: - Content-Signal ``ai-input`` (retrieval-augmented generation, grounding)
#:   lies inside vocab-08 ``ai-use`` (input to a generative model that the
#:   user did not supply): a statement about ``ai-use`` speaks for it, not
#:   the other way round. It has no vocab-08 label, so it is kept as an
#:   extension label a retrieval-augmented crawler can ask for;
#: - Content-Signal ``ai-train`` (training or fine-tuning any AI model)
#:   contains vocab-08 ``train-ai`` (generative models only);
#: - Content-Signal ``search`` and vocab-08 ``search`` both mean an index
#:   with links and short excerpts, no AI summaries.
WORDS: Final = (
    Word(_VOCAB, "train-ai", ("train-ai",)),
    Word(_VOCAB, "ai-use", ("ai-use", "ai-input")),
    Word(_VOCAB, "search", ("search",)),
    Word(_SIGNAL, "search", ("search",)),
    Word(_SIGNAL, "ai-input", ("ai-input",)),
    Word(_SIGNAL, "ai-train", ("train-ai",)),
)

#: vocab-08 §6.1: the labels Content-Usage (line or header) may state.
VOCABULARY: Final = tuple(word.key for word in WORDS if word.sources == _VOCAB)
#: Content Signals Policy keys.
SIGNAL_KEYS: Final = tuple(word.key for word in WORDS if word.sources == _SIGNAL)
#: Every label a crawler can ask about: vocab-08's, then the extensions.
LABELS: Final = tuple(
    dict.fromkeys((*VOCABULARY, *(label for word in WORDS for label in word.speaks_for)))
)
#: (source, key) -> the labels a statement about that key speaks for.
SPEAKS_FOR: Final[Mapping[tuple[str, str], tuple[str, ...]]] = {
    (source, word.key): word.speaks_for for word in WORDS for source in word.sources
}


class Problem(NamedTuple):
    """Something a statement said that could not be used, for lint."""

    line: int | None  # the robots.txt line; None for an HTTP header
    message: str


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
    #: Written before any user-agent line, for every group that states none
    #: of its own (docs/usage-preferences.md, "Global lines").
    is_global: bool = False

    @property
    def written(self) -> str:
        """The statement as its line writes it: ``Content-Usage: train-ai=n``."""
        return line_text(self.source, self.text)

    @property
    def preferences(self) -> dict[str, bool]:
        """The statement in labels (``LABELS``): Content-Signal keys mapped."""
        out: dict[str, bool] = {}
        for key, allowed in self.statement:
            for label in SPEAKS_FOR[self.source, key]:
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
