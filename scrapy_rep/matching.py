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
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress
from operator import not_
from typing import Final, NamedTuple

ALLOW: Final = "allow"
DISALLOW: Final = "disallow"

_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
# Characters that RFC 3986 does not allow raw in a URL: outside US-ASCII,
# controls, space and " < > \ ^ ` { | }. They are percent-encoded before
# comparison on both sides (SPEC §6.5 names the non-ASCII ones; Scrapy's
# requests carry the others encoded too, so a rule's raw "|" must match them).
_URI_CHARS: Final = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;="
_NEEDS_ENCODING: Final = re.compile(f"[^{_URI_CHARS}%]+")
_NEEDS_ENCODING_KEEP_LINES: Final = re.compile(f"[^{_URI_CHARS}%\n]+")
_ASCII_TO_ENCODE: Final = " \"<>\\^`{|}"  # printable ASCII outside _URI_CHARS
#: Anything in a path that normalisation may change: escapes and the above.
NEEDS_NORMALISING: Final = re.compile(f"[^{_URI_CHARS}]")
#: An http(s) URL whose path needs no normalisation: the path in one match.
_PLAIN_WEB_URL: Final = re.compile(f"https?://[^/?;#]*(/[{_URI_CHARS.replace('#', '')}]*)(?:#|\\Z)")


def match_path(url: str) -> str:
    """``normalise(path_params_query(url))``, with one regex match for most URLs."""
    plain = _PLAIN_WEB_URL.match(url)
    if plain is not None:
        return plain[1]
    path = path_params_query(url)
    return normalise(path) if NEEDS_NORMALISING.search(path) else path


class Rule(NamedTuple):
    """An allow or disallow line, as written in the file."""

    kind: str  # ALLOW or DISALLOW
    pattern: str
    line: int  # 1-based


# --- the URL side ------------------------------------------------------------


_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?;#]*")
_WEB_SCHEMES: Final = ("https://", "http://")


def path_params_query(url: str) -> str:
    """The part of a URL that rules match: path, ``;params`` and ``?query``.

    Accepts absolute URLs and ``/path?query``; the fragment is dropped and an
    empty path is ``/`` (SPEC §6.1). Other input is read as Google's library
    reads it (``GetPathParamsQuery``): a leading token is the authority.
    """
    if url.startswith(_WEB_SCHEMES):  # the common case, without a regex
        start = url.find("//") + 2
        slash = url.find("/", start)
        if slash < 0 or "?" in url[start:slash] or ";" in url[start:slash]:
            rest = url[_ABSOLUTE.match(url).end() :]  # type: ignore[union-attr]
        else:
            rest = url[slash:]
    elif (absolute := _ABSOLUTE.match(url)) is not None:
        rest = url[absolute.end() :]
    elif url[:1] == "/" and url[1:2] != "/":
        rest = url
    else:
        return _google_path_params_query(url)
    hash_at = rest.find("#")
    if hash_at >= 0:
        rest = rest[:hash_at]
    if not rest:
        return "/"
    return rest if rest[0] == "/" else "/" + rest


def _google_path_params_query(url: str) -> str:
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
    return "%" + raw.hex("%").upper()


def _escape_forms() -> dict[str, str]:
    """Every two-hex-digit escape body, in any case, -> its RFC 9309 form."""
    digits = "0123456789abcdefABCDEF"
    forms = {}
    for high in digits:
        for low in digits:
            byte = int(high + low, 16)
            forms[high + low] = chr(byte) if byte in _UNRESERVED else f"%{byte:02X}"
    return forms


_ESCAPE_FORMS: Final = _escape_forms()


def _normalise_escape(match: re.Match[str]) -> str:
    return _ESCAPE_FORMS[match.group(1)]


def normalise(text: str) -> str:
    """RFC 9309 §2.2.2 form of a path or pattern, used on both sides.

    Characters not allowed raw in a URI (non-ASCII, space, controls, ``|``...)
    become upper-case %XX of their UTF-8 bytes; escapes of unreserved
    characters are decoded (``%7E`` is ``~``); other escapes keep their
    encoding with upper-case hex. ``*`` and ``$`` are never touched: their
    escaped forms stay escaped, so they never become wildcards.
    """
    if "%" in text:
        text = _ESCAPE.sub(_normalise_escape, text)
    return _NEEDS_ENCODING.sub(_encode_raw, text)


def normalise_lines(text: str) -> str:
    """``normalise`` applied to each line of ``text`` in one pass."""
    if "%" in text:
        text = _ESCAPE.sub(_normalise_escape, text)
    plain = text.isascii() and text.replace("\n", "").isprintable()
    if plain and not any(char in text for char in _ASCII_TO_ENCODE):
        return text  # the common case, found by fast scans instead of a regex
    return _NEEDS_ENCODING_KEEP_LINES.sub(_encode_raw, text)


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

#: A rule's code packs its kind and line into one int: allow rules sort after
#: disallow rules of the same pattern, so the allow wins a tie (SPEC §6.6).
ALLOW_BIT: Final = 1 << 31


def rule_code(kind: str, line: int) -> int:
    return line | ALLOW_BIT if kind == ALLOW else line


def rule_of(pattern: str, code: int) -> Rule:
    return Rule(ALLOW if code & ALLOW_BIT else DISALLOW, pattern, code & (ALLOW_BIT - 1))


class _PrefixTable:
    """Literal prefix rules: longest-prefix lookup by binary search.

    The largest key not above a path is either a prefix of it, or its
    longest key-prefix is also the path's candidate; so a lookup is one
    bisection and a short walk up "parent" links (the longest other key that
    is a key's prefix). Links are found on first use with a few dict probes,
    so building a table is a sort and nothing per key in Python.
    ``extra`` holds the trailing ``*`` a key was written with: they count in
    its length (SPEC §6.6), not in what it matches.
    """

    __slots__ = ("codes", "extra", "index_of", "keys", "lengths", "parents")

    def __init__(
        self, keys: Sequence[str], codes: Sequence[int], extra: dict[str, int] | None
    ) -> None:
        table = dict(zip(keys, codes))
        if len(table) < len(keys):  # a pattern written twice: an allow wins
            for key, code in zip(keys, codes):
                if code & ALLOW_BIT:
                    table[key] = code
        self.keys = sorted(table)
        self.codes = array("I", list(map(table.__getitem__, self.keys)))
        self.parents = array("i", [-2]) * len(self.keys)  # -2: not looked up yet
        self.extra = extra
        self.index_of: dict[str, int] | None = None  # made with the first link
        self.lengths: list[int] = []

    def deepest(self, path: str) -> int:
        """Index of the longest key that is a prefix of ``path``, or -1."""
        keys, parents = self.keys, self.parents
        index = bisect_right(keys, path) - 1
        while index >= 0 and not path.startswith(keys[index]):
            parent = parents[index]
            if parent == -2:
                parent = parents[index] = self._longest_proper_prefix(keys[index])
            index = parent
        return index

    def _parent(self, index: int) -> int:
        parent = self.parents[index]
        if parent == -2:
            parent = self.parents[index] = self._longest_proper_prefix(self.keys[index])
        return parent

    def _longest_proper_prefix(self, key: str) -> int:
        index_of = self.index_of
        if index_of is None:
            index_of = self.index_of = dict(zip(self.keys, range(len(self.keys))))
            self.lengths = sorted(set(map(len, self.keys)), reverse=True)
        for length in self.lengths:
            if length < len(key):
                found = index_of.get(key[:length])
                if found is not None:
                    return found
        return -1

    def best(self, path: str) -> tuple[int, int, str] | None:
        """(priority, code, key) of the best rule matching ``path``."""
        index = self.deepest(path)
        if index < 0:
            return None
        keys, codes, extra = self.keys, self.codes, self.extra
        if extra is None:  # the longest key is the best rule
            key, code = keys[index], codes[index]
            return 2 * len(key) + (code >= ALLOW_BIT), code, key
        best: tuple[int, int, str] | None = None
        while index >= 0:  # every key up the links matches: take the best
            key, code = keys[index], codes[index]
            stars = extra.get(key, 0)
            priority = 2 * (len(key) + stars) + (code >= ALLOW_BIT)
            if best is None or priority > best[0]:
                best = (priority, code, key + "*" * stars)  # the pattern as written
            index = self._parent(index)
        return best


def _priority_of(wildcard: _Wildcard) -> int:
    return wildcard.priority


class _Wildcard(NamedTuple):
    priority: int
    head: str  # literal text before the first "*": must be a prefix
    middle: tuple[str, ...]  # literal pieces found in order, leftmost first
    tail: str  # last piece: a suffix when anchored, else found after the middle
    anchored: bool
    code: int
    pattern: str  # as written


class CompiledGroup:
    """The rules of one group, compiled for longest-match lookup (SPEC §6)."""

    __slots__ = ("_anchored", "_by_need", "_inflated", "_needs", "_plain", "_prefixes", "_raw")

    def __init__(self, joined: str, codes: Sequence[int], google: bool) -> None:
        """``joined``: the patterns as written, one per line; ``codes``: from ``rule_code``."""
        patterns = joined.split("\n")
        normalised = google_escape_pattern(joined) if google else normalise_lines(joined)
        if normalised == joined:
            keys, self._raw = patterns, {}
        else:
            keys = normalised.split("\n")
            self._raw = {key: raw for key, raw in zip(keys, patterns) if key != raw}
        self._anchored: dict[str, tuple[int, int, str]] = {}
        self._inflated: _PrefixTable | None = None
        wildcards: list[_Wildcard] = []
        if "*" in joined or "$" in joined:
            literal = ["*" not in key and key[-1] != "$" for key in keys]
            special = list(compress(zip(keys, codes), map(not_, literal)))
            inflated = self._sort_special(special, wildcards)
            self._prefixes = _PrefixTable(
                list(compress(keys, literal)), list(compress(codes, literal)), None
            )
            if inflated:
                # One entry per literal: "/a*" and "/a**" match alike, the longer wins.
                best: dict[str, tuple[int, int, int]] = {}
                for key, code, stars in inflated:
                    priority = 2 * (len(key) + stars) + (code >= ALLOW_BIT)
                    if key not in best or best[key][0] < priority:
                        best[key] = (priority, code, stars)
                extra = {key: stars for key, (_, _, stars) in best.items()}
                codes_of = [code for _, code, _ in best.values()]
                self._inflated = _PrefixTable(list(best), codes_of, extra)
        else:
            self._prefixes = _PrefixTable(keys, codes, None)
        self._by_need: dict[str, list[_Wildcard]] = {}
        wildcards.sort(key=_priority_of, reverse=True)
        for wildcard in wildcards:
            need = max(wildcard.middle, key=len, default="")
            need = max(wildcard.head, need, wildcard.tail, key=len)
            self._by_need.setdefault(need, []).append(wildcard)
        self._needs = tuple(self._by_need)
        self._plain = not self._needs and self._inflated is None and not self._anchored

    def _sort_special(
        self, special: list[tuple[str, int]], wildcards: list[_Wildcard]
    ) -> list[tuple[str, int, int]]:
        """File rules with ``*`` or a final ``$``; return the inflated literals."""
        inflated: list[tuple[str, int, int]] = []
        new = tuple.__new__  # _Wildcard's own constructor is several times slower
        for key, code in special:
            priority = 2 * len(key) + (code >= ALLOW_BIT)
            anchored = key.endswith("$")
            body = key[:-1] if anchored else key.rstrip("*")
            if "*" in body:
                pieces = body.split("*")
                middle = tuple(filter(None, pieces[1:-1]))
                fields = (priority, pieces[0], middle, pieces[-1], anchored, code, key)
                wildcards.append(new(_Wildcard, fields))
            elif anchored:
                known = self._anchored.get(body)
                if known is None or known[0] < priority:
                    self._anchored[body] = (priority, code, key)
            else:
                inflated.append((body, code, len(key) - len(body)))
        return inflated

    def decide(self, path: str) -> Rule | None:
        """The rule that decides ``path`` (normalised), or None if none matches."""
        best = self._best(path)
        if best is None:
            return None
        key = best[2]
        return rule_of(self._raw.get(key, key), best[1])

    def allows(self, path: str) -> bool:
        """Like ``decide``, for the common question."""
        if self._plain:  # literal prefixes only: the longest one decides
            table = self._prefixes
            keys = table.keys
            index = bisect_right(keys, path) - 1
            if index >= 0 and not path.startswith(keys[index]):
                index = table.deepest(path)
            return index < 0 or table.codes[index] >= ALLOW_BIT
        best = self._best(path)
        return best is None or best[1] >= ALLOW_BIT

    def _best(self, path: str) -> tuple[int, int, str] | None:
        """(priority, code, key) of the deciding rule."""
        best = self._prefixes.best(path)
        if self._inflated is not None:
            other = self._inflated.best(path)
            if other is not None and (best is None or other[0] > best[0]):
                best = other
        if self._anchored:
            anchored = self._anchored.get(path)
            if anchored is not None and (best is None or anchored[0] > best[0]):
                best = anchored
        if self._needs:
            best = self._best_wildcard(path, best)
        return best

    def _best_wildcard(
        self, path: str, best: tuple[int, int, str] | None
    ) -> tuple[int, int, str] | None:
        floor = -1 if best is None else best[0]
        for need in filter(path.__contains__, self._needs):
            for wildcard in self._by_need[need]:
                if wildcard.priority <= floor:
                    break
                if _wildcard_matches(wildcard, path):
                    best = (wildcard.priority, wildcard.code, wildcard.pattern)
                    floor = wildcard.priority
                    break
        return best


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
