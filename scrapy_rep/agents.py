"""User-agent product tokens and group selection (SPEC §5.5-§5.8)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

GLOBAL: Final = "*"

_LEADING_TOKEN: Final = re.compile(r"[A-Za-z_-]*")
_VALID_TOKEN: Final = re.compile(r"[A-Za-z_-]+")

T = TypeVar("T")


def product_token(value: str) -> str:
    """The leading product token, lower-cased: ``Googlebot/2.1 (...)`` -> ``googlebot``.

    Empty when the value does not start with a token character.
    """
    match = _LEADING_TOKEN.match(value.strip())
    return match.group(0).lower() if match else ""


def is_valid_token(token: str) -> bool:
    """RFC 9309 §2.2.1: a product token is letters, ``-`` and ``_`` only."""
    return _VALID_TOKEN.fullmatch(token) is not None


def group_token(value: str, google_quirks: bool) -> str:
    """The agent a robots.txt ``user-agent`` value names: a token, ``*`` or ``""``."""
    value = value.strip()
    if value == GLOBAL:
        return GLOBAL
    if google_quirks and value[:1] == GLOBAL and value[1:2].isspace():
        return GLOBAL  # Google's library: "* FooBot" is still the global group
    return product_token(value)


def crawler_tokens(user_agent: str | Sequence[str], google_quirks: bool) -> tuple[str, ...]:
    """The crawler's tokens in preference order, lower-cased.

    A string is one token or a full User-Agent header; by default its leading
    product token is used (SPEC §5.7). Google's library compares the string
    verbatim instead, so ``FooBot/1.2`` names no group there.
    """
    memo = _TOKENS_OF[google_quirks]
    if isinstance(user_agent, str) and user_agent in memo:
        return memo[user_agent]  # a crawler asks with the same few strings
    names = (user_agent,) if isinstance(user_agent, str) else tuple(user_agent)
    if google_quirks:
        tokens = tuple(name.lower() for name in names)
    else:
        tokens = tuple(token for token in map(product_token, names) if token)
    if isinstance(user_agent, str) and len(memo) < _MEMO_SIZE:
        memo[user_agent] = tokens
    return tokens


_MEMO_SIZE: Final = 1024
#: User-Agent string -> tokens, without and with Google's quirks.
_TOKENS_OF: Final[tuple[dict[str, tuple[str, ...]], ...]] = ({}, {})


def select_group(
    groups: Mapping[str, T], tokens: Sequence[str], google_quirks: bool, use_global: bool = True
) -> tuple[str | None, list[T]]:
    """The group for these tokens, and the token that chose it.

    The first token with a group of its own wins, else ``*``, else nothing
    (everything allowed). A token never matches another by prefix. Google's
    library instead merges the groups of every token that has one.
    """
    if google_quirks:
        present = [token for token in dict.fromkeys(tokens) if token in groups]
        if present:
            return present[0], [groups[token] for token in present]
    else:
        for token in tokens:
            group = groups.get(token)
            if group is not None:
                return token, [group]
    if use_global and GLOBAL in groups:
        return GLOBAL, [groups[GLOBAL]]
    return None, []
