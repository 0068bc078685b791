"""User-agent product tokens and group selection (docs/spec.md §5.5-§5.8)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

from scrapy_rep.engine.user_agent import user_agent_names

GLOBAL: Final = "*"

_LEADING_TOKEN: Final = re.compile(r"[A-Za-z_-]*")

T = TypeVar("T")


def product_token(value: str) -> str:
    """The leading product token, lower-cased: ``Googlebot/2.1 (...)`` -> ``googlebot``.

    Empty when the value does not start with a token character.
    """
    match = _LEADING_TOKEN.match(value.strip())
    return match.group(0).lower() if match else ""


def agent_tokens(value: str) -> tuple[str, ...]:
    """The tokens a token or a User-Agent string stands for, lower-cased, in order.

    A full User-Agent string gives the crawler's names in it
    (``user_agent_names``: ``shop (+http://example.com)`` -> ``("shop",)``,
    a browser's string -> ``()``, docs/spec.md §5.7); anything else is read as
    RFC 9309 reads a ``user-agent`` line, by its leading token (``bot2`` ->
    ``bot``, ``my bot`` -> ``my``).
    """
    if is_user_agent_string(value):
        return user_agent_names(value)
    token = product_token(value)
    return (token,) if token else ()


def is_user_agent_string(value: str) -> bool:
    """A full User-Agent string (``Name/1.0``, a comment) rather than one token."""
    return _UA_STRING.search(value) is not None


_UA_STRING: Final = re.compile(r"[/(;]")


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

    A string is one token or a full User-Agent header; by default the
    crawler's own names in it are used (``agent_tokens``, docs/spec.md §5.7).
    Google's library compares the string verbatim instead, so ``FooBot/1.2``
    names no group there.
    """
    memo = _TOKENS_OF[google_quirks]
    key = user_agent if isinstance(user_agent, str) else tuple(user_agent)
    found = memo.get(key)
    if found is not None:
        return found  # a crawler asks with the same few strings (or lists of them)
    names = (key,) if isinstance(key, str) else key
    if google_quirks:
        tokens = tuple(name.lower() for name in names)
    else:
        tokens = tuple(dict.fromkeys(t for name in names for t in agent_tokens(name)))
    if len(memo) < _MEMO_SIZE:
        memo[key] = tokens
    return tokens


_MEMO_SIZE: Final = 1024
#: User-Agent string, or list of them, -> tokens, without and with Google's quirks.
_TOKENS_OF: Final[tuple[dict[str | tuple[str, ...], tuple[str, ...]], ...]] = ({}, {})


def select_group(
    groups: Mapping[str, T], tokens: Sequence[str], google_quirks: bool, use_global: bool = True
) -> tuple[str | None, list[tuple[str, T]]]:
    """The group for these tokens: the token that chose it, and each token
    whose group applies with that group.

    The first token with a group of its own wins, else ``*``, else nothing
    (everything allowed). A token never matches another by prefix. Google's
    library instead merges the groups of every token that has one.
    """
    if google_quirks:
        present = [token for token in dict.fromkeys(tokens) if token in groups]
        if present:
            return present[0], [(token, groups[token]) for token in present]
    else:
        for token in tokens:
            group = groups.get(token)
            if group is not None:
                return token, [(token, group)]
    if use_global and GLOBAL in groups:
        return GLOBAL, [(GLOBAL, groups[GLOBAL])]
    return None, []
