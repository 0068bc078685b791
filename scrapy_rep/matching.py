"""Matching a URL path against a group's rules (SPEC §6).

A group is compiled once into three structures, so that a check costs a
binary search and a few string comparisons however many rules the group has:

- literal prefix rules in a sorted list, each with a link to the longest other
  rule that is its prefix (longest-prefix lookup without a trie of objects);
- literal ``$``-anchored rules in a dict (exact equality);
- wildcard rules, longest first, matched greedily segment by segment with
  ``str.find``: linear in path length per segment, never backtracking (§6.8).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from typing import Final, NamedTuple

ALLOW: Final = "allow"
DISALLOW: Final = "disallow"

_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
# Characters that cannot appear raw in a URL Scrapy sends: outside US-ASCII,
# controls and space. They are percent-encoded before comparison (SPEC §6.5).
_NEEDS_ENCODING: Final = re.compile(r"[^\x21-\x7e]")


class Rule(NamedTuple):
    """An allow or disallow line, as written in the file."""

    kind: str  # ALLOW or DISALLOW
    pattern: str
    line: int  # 1-based


# --- the URL side ------------------------------------------------------------


def path_params_query(url: str) -> str:
    """The part of a URL that rules match: path, ``;params`` and ``?query``.

    Accepts absolute URLs and ``/path?query``; the fragment is dropped and an
    empty path is ``/`` (SPEC §6.1). Scheme-less input is read as Google's
    library reads it: the first token is the authority.
    """
    start = 2 if url.startswith("//") else 0
    early_path = _find_first(url, "/?;", start)
    scheme_end = url.find("://", start)
    if scheme_end < 0 or (0 <= early_path < scheme_end):
        authority = start
    else:
        authority = scheme_end + 3
    path_start = _find_first(url, "/?;", authority)
    if path_start < 0:
        return "/"
    hash_at = url.find("#", start)
    if 0 <= hash_at < path_start:
        return "/"
    path = url[path_start:] if hash_at < 0 else url[path_start:hash_at]
    return path if path[0] == "/" else "/" + path


def _find_first(text: str, chars: str, start: int) -> int:
    best = -1
    for char in chars:
        found = text.find(char, start)
        if found >= 0 and (best < 0 or found < best):
            best = found
    return best


# --- percent-encoding ----------------------------------------------------------


def _encode_raw(match: re.Match[str]) -> str:
    raw = match.group(0).encode("utf-8", "surrogateescape")
    return "".join(f"%{byte:02X}" for byte in raw)


def _normalise_escape(match: re.Match[str]) -> str:
    byte = int(match.group(1), 16)
    if byte in _UNRESERVED:
        return chr(byte)
    return "%" + match.group(1).upper()


def normalise(text: str) -> str:
    """RFC 9309 §2.2.2 form of a path or pattern, used on both sides.

    Non-ASCII (and space, controls) becomes upper-case %XX of its UTF-8 bytes;
    escapes of unreserved characters are decoded (``%7E`` is ``~``); other
    escapes keep their encoding with upper-case hex. ``*`` and ``$`` are never
    touched: their escaped forms stay escaped, so they never become wildcards.
    """
    if "%" in text:
        text = _ESCAPE.sub(_normalise_escape, text)
    if not text.isascii() or _NEEDS_ENCODING.search(text):
        text = _NEEDS_ENCODING.sub(_encode_raw, text)
    return text


def _upper_escape(match: re.Match[str]) -> str:
    return "%" + match.group(1).upper()


def google_escape_pattern(pattern: str) -> str:
    """Google's MaybeEscapePattern: encode bytes >= 0x80, upper-case escapes."""
    if "%" in pattern:
        pattern = _ESCAPE.sub(_upper_escape, pattern)
    if not pattern.isascii():
        pattern = re.sub(r"[^\x00-\x7f]+", _encode_raw, pattern)
    return pattern


# --- the compiled group ----------------------------------------------------------

# A rule's priority: the longer pattern wins, allow wins a tie (SPEC §6.6).
def _priority(rule: Rule) -> int:
    return 2 * len(rule.pattern) + (rule.kind == ALLOW)


class _Wildcard(NamedTuple):
    priority: int
    head: str  # literal text before the first "*": must be a prefix
    middle: tuple[str, ...]  # literal pieces found in order, leftmost first
    tail: str  # last piece: a suffix when anchored, else found after the middle
    anchored: bool
    rule: Rule


class CompiledGroup:
    """The rules of one group, compiled for fast longest-match lookup."""

    __slots__ = ("_anchored", "_keys", "_parents", "_prefix_rules", "_wildcards")

    def __init__(self, rules: Iterable[tuple[Rule, str]]) -> None:
        """``rules``: each rule with its normalised pattern."""
        prefixes: dict[str, Rule] = {}
        anchored: dict[str, Rule] = {}
        wildcards: list[_Wildcard] = []
        for rule, pattern in rules:
            priority = _priority(rule)
            is_anchored = pattern.endswith("$")
            if is_anchored:
                pattern = pattern[:-1]
            if "*" not in pattern:
                table = anchored if is_anchored else prefixes
                known = table.get(pattern)
                if known is None or _priority(known) < priority:
                    table[pattern] = rule
                continue
            pieces = pattern.split("*")
            wildcards.append(
                _Wildcard(
                    priority,
                    pieces[0],
                    tuple(piece for piece in pieces[1:-1] if piece),
                    pieces[-1],
                    is_anchored,
                    rule,
                )
            )
        self._keys = sorted(prefixes)
        self._prefix_rules = [prefixes[key] for key in self._keys]
        self._parents = _prefix_parents(self._keys)
        self._anchored = anchored
        wildcards.sort(key=lambda wildcard: wildcard.priority, reverse=True)
        self._wildcards = tuple(wildcards)

    def decide(self, path: str) -> Rule | None:
        """The rule that decides ``path`` (normalised), or None if none matches."""
        best = self._anchored.get(path)
        best_priority = -1 if best is None else _priority(best)
        keys = self._keys
        index = bisect_right(keys, path) - 1
        parents = self._parents
        while index >= 0:
            if path.startswith(keys[index]):
                rule = self._prefix_rules[index]
                priority = _priority(rule)
                if priority > best_priority:
                    best, best_priority = rule, priority
                break
            index = parents[index]
        for wildcard in self._wildcards:
            if wildcard.priority <= best_priority:
                break
            if _wildcard_matches(wildcard, path):
                return wildcard.rule
        return best


def _prefix_parents(keys: list[str]) -> list[int]:
    """For each sorted key, the index of its longest proper prefix among keys."""
    parents: list[int] = []
    chain: list[int] = []
    for index, key in enumerate(keys):
        while chain and not key.startswith(keys[chain[-1]]):
            chain.pop()
        parents.append(chain[-1] if chain else -1)
        chain.append(index)
    return parents


def _wildcard_matches(wildcard: _Wildcard, path: str) -> bool:
    # Placing each piece at its leftmost occurrence leaves the most room for
    # the rest, so a greedy scan is exact and needs no backtracking.
    if not path.startswith(wildcard.head):
        return False
    position = len(wildcard.head)
    for piece in wildcard.middle:
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    tail = wildcard.tail
    if wildcard.anchored:
        return path.endswith(tail) and len(path) - len(tail) >= position
    return not tail or path.find(tail, position) >= 0
