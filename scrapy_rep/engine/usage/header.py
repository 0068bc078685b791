"""The ``Content-Usage`` HTTP response header (draft-ietf-aipref-attach-05 §2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from scrapy_rep.engine.usage.preferences import Preferences
from scrapy_rep.engine.usage.vocabulary import HEADER, UsageRule, vocabulary_statement

__all__ = ["HeaderUsage", "header_usage"]


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
