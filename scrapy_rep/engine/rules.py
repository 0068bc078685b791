"""A rule as written (kind, pattern, line) and its packed form (docs/spec.md §6).

A parsed file keeps each rule as its pattern and one int, the *code*, that
packs its kind and line: a file's rules cost two arrays, not an object each.
``Rule`` objects are made only for the rules a caller asks about.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from scrapy_rep.engine.lines import ALLOW, DISALLOW  # a rule's kind is its field's name

__all__ = ["ALLOW_BIT", "UNDECIDED", "UNDECIDED_TEXT", "Rule", "rule_of"]


class Rule(NamedTuple):
    """An allow or disallow line, as written in the file."""

    kind: str  # ALLOW or DISALLOW
    pattern: str
    line: int  # 1-based; 0 for ``UNDECIDED``


#: What decides a URL when its check gave up (docs/spec.md §6.8): a big group of
#: wildcard rules made so that this URL would cost more steps than a check
#: may make. Fail closed: a disallow that no line of the file wrote.
UNDECIDED: Final = Rule(DISALLOW, "*", 0)
#: What to say of it.
UNDECIDED_TEXT: Final = (
    "too many wildcard rules to try for this URL within a check's cost bound"
    " (docs/spec.md §6.8): refused, failing closed"
)

#: The kind's bit in a rule's code; the line is the rest. Lines stay below
#: 2**24 (a body is cut at 512,000 bytes), so the top byte of a code is the
#: kind alone (``compiled_group`` reads the kinds of a group that way, in C).
ALLOW_BIT: Final = 1 << 31


def rule_of(pattern: str, code: int) -> Rule:
    """The rule a pattern and its code stand for."""
    return Rule(ALLOW if code & ALLOW_BIT else DISALLOW, pattern, code & (ALLOW_BIT - 1))
