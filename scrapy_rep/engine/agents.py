"""User-agent product tokens and group selection (docs/spec.md §5.5-§5.8)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeVar

GLOBAL: Final = "*"

_LEADING_TOKEN: Final = re.compile(r"[A-Za-z_-]*")

T = TypeVar("T")


def product_token(value: str) -> str:
    """The leading product token, lower-cased: ``Googlebot/2.1 (...)`` -> ``googlebot``.

    Empty when the value does not start with a token character.
    """
    match = _LEADING_TOKEN.match(value.strip())
    return match.group(0).lower() if match else ""


#: A name in a User-Agent string, at the start or after a space, ``(``, ``;``
#: or ``,``: a product (``Name/version``) or a bare item of a comment
#: (``(compatible; Name; ...)``); a bare item with digits (``Win64``) is not one.
_UA_NAME: Final = re.compile(
    r"(?:^|(?<=[\s(;,]))(?:([A-Za-z_-][\w-]*)(?=/)|([A-Za-z_-]+)(?=\s*[;),]|\s*$))"
)
#: One word, no separators: a token as written (``bot2`` is cut to ``bot``).
_WORD: Final = re.compile(r"[^\s/();,]+")
#: Language tags in old browser strings (``en``, ``en-US``): never a crawler.
_LANGUAGE: Final = re.compile(r"[A-Za-z]{2}(?:-[A-Za-z]{2})?")

#: Browser, engine and platform names that crawlers put before their own in
#: the "compatible" form (``Mozilla/5.0 (compatible; Foobot/1.0; +url)``):
#: never the crawler's token while a crawler name is present.
GENERIC_NAMES: Final = frozenset(
    {
        "mozilla", "applewebkit", "khtml", "like", "gecko", "chrome", "chromium",
        "headlesschrome", "safari", "version", "mobile", "compatible", "firefox", "edge",
        "edg", "opr", "opera", "msie", "trident", "windows", "win", "linux", "android",
        "iphone", "ipad", "ipod", "macintosh", "intel", "mac", "cpu", "os", "x", "u", "wow",
        "ubuntu", "fedora", "build", "samsungbrowser", "crios", "fxios", "yabrowser",
        "vivaldi", "brave", "webview", "wv", "silk", "kaios", "cros", "tablet", "touch",
    }
)  # fmt: skip


def user_agent_token(value: str) -> str:
    """The crawler's own product token in a token or a User-Agent string, lower-cased.

    ``Mozilla/5.0 (compatible; Foobot/1.0; +https://example.com/bot)`` ->
    ``foobot``: the first name that is not a browser, engine or platform name
    (docs/spec.md §5.7). ``""`` when the string names no crawler, so that only the
    ``*`` group applies rather than a browser's.
    """
    value = value.strip()
    if _WORD.fullmatch(value):
        return product_token(value)  # a bare token, however generic it looks
    for product, item in _UA_NAME.findall(value):
        name = product or item
        token = product_token(name)
        if token and token not in GENERIC_NAMES and not _LANGUAGE.fullmatch(name):
            return token
    return ""


def configured_token(value: str) -> str:
    """The token a configured value (``ROBOTSTXT_USER_AGENT``, a spider attribute) stands for.

    A User-Agent string gives its crawler's token; anything else its leading
    token, as RFC 9309 reads a ``user-agent`` line (``bot2`` -> ``bot``).
    """
    return user_agent_token(value) if is_user_agent_string(value) else product_token(value)


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
    crawler's own token in it is used (``user_agent_token``, docs/spec.md §5.7).
    Google's library compares the string verbatim instead, so ``FooBot/1.2``
    names no group there.
    """
    memo = _TOKENS_OF[google_quirks]
    if isinstance(user_agent, str) and user_agent in memo:
        return memo[user_agent]  # a crawler asks with the same few strings
    names = (user_agent,) if isinstance(user_agent, str) else tuple(user_agent)
    if google_quirks:
        tokens = tuple(name.lower() for name in names)
    else:
        tokens = tuple(token for token in map(user_agent_token, names) if token)
    if isinstance(user_agent, str) and len(memo) < _MEMO_SIZE:
        memo[user_agent] = tokens
    return tokens


_MEMO_SIZE: Final = 1024
#: User-Agent string -> tokens, without and with Google's quirks.
_TOKENS_OF: Final[tuple[dict[str, tuple[str, ...]], ...]] = ({}, {})


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
