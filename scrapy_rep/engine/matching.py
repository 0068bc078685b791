"""Matching a URL path against a group's rules (docs/spec.md §6).

A group is compiled once into three structures, so that a check costs a
binary search and a few string comparisons however many rules the group has:

- literal prefix rules in a sorted list, each with a link to the longest other
  rule that is its prefix (``prefixes.Prefixes``: longest-prefix lookup
  without a trie of objects);
- literal ``$``-anchored rules in a dict (exact equality);
- wildcard rules, matched greedily piece by piece with ``str.find``: linear
  in path length per piece, never backtracking (§6.8, ``wildcards``). In a
  small group, those whose head is more than "/" are found by their head as
  the literals are, the others by one ``in`` per piece they need (behind a
  gate per shared start when they need many different pieces); a group of
  many is indexed (``wildcards.WildcardIndex``), so a check costs about the
  path's length, not (rules × path length).
"""

from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Final, NamedTuple

from scrapy_rep.engine.lines import ALLOW, DISALLOW  # a rule's kind is its field's name
from scrapy_rep.engine.prefixes import UNKNOWN, Prefixes, common_length
from scrapy_rep.engine.wildcards import (
    GAVE_UP,
    Best,
    CollectorPaused,
    Wildcard,
    WildcardIndex,
    matches,
    wildcard,
)

_UNRESERVED: Final = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
#: RFC 3986's reserved characters but ``*`` and ``$``: RFC 9309 §2.2.2's
#: table makes ``https://foo.bar`` and ``https%3A%2F%2Ffoo.bar`` equal, so
#: their escapes are decoded on both sides. ``*`` and ``$`` stay apart: in a
#: rule they are special raw and literal escaped (§2.2.3), so their literal
#: form is the escape, in rules and URLs alike.
_DECODED_RESERVED: Final = frozenset(b":/?#[]@!&'()+,;=")
_ESCAPE: Final = re.compile(r"%([0-9A-Fa-f]{2})")
# Characters that RFC 3986 does not allow raw in a URL: outside US-ASCII,
# controls, space and " < > \ ^ ` { | }. They are percent-encoded before
# comparison on both sides (docs/spec.md §6.5 names the non-ASCII ones; Scrapy's
# requests carry the others encoded too, so a rule's raw "|" must match them).
_URI_CHARS: Final = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;="
#: The same characters as bytes, for ``bytes.translate``: on a long text, a
#: check in C that nothing needs encoding, several times faster than a regex.
_URI_BYTES: Final = (
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;="
)
_PLAIN_LINES: Final = _URI_BYTES + b"%\n"
_NEEDS_ENCODING: Final = re.compile(f"[^{_URI_CHARS}%]+")
_NEEDS_ENCODING_KEEP_LINES: Final = re.compile(f"[^{_URI_CHARS}%\n]+")
#: In a URL, a ``*`` or ``$`` is a literal character: encoded, as in rules.
_URL_CHARS: Final = _URI_CHARS.replace("$", "").replace("*", "")
_URL_NEEDS_ENCODING: Final = re.compile(f"[^{_URL_CHARS}%]+")
#: Anything in a path that normalisation may change: escapes and the above.
NEEDS_NORMALISING: Final = re.compile(f"[^{_URL_CHARS}]")
#: An http(s) URL whose path needs no normalisation: the path in one match.
#: Plain repeats, not possessive ones (Python 3.10's ``re`` has none): giving
#: back a character never lets the rest match (the host's are not "/", the
#: path's not "#"), so the answer is the same and the cost linear.
PLAIN_WEB_URL: Final = re.compile(f"https?://[^/?;#]*(/[{_URL_CHARS.replace('#', '')}]*)(?:#|\\Z)")
#: The characters of such a path, as bytes.
PLAIN_PATH_BYTES: Final = frozenset(_URI_BYTES) - frozenset(b"#$*")
#: A ``$`` that is not a rule's last character: a literal, so encoded.
_INNER_DOLLAR: Final = re.compile(r"\$(?!\n|\Z)")


def match_path(url: str) -> str:
    """``normalise(path_params_query(url))`` without dot segments, with one
    regex match for most URLs."""
    return path_of(PLAIN_WEB_URL.match(url), url)


def path_of(plain: re.Match[str] | None, url: str) -> str:
    """``match_path(url)``, given ``PLAIN_WEB_URL``'s match of it (a caller
    that wants the match too need not make it twice)."""
    path = plain[1] if plain is not None else path_params_query(url)
    if plain is None and NEEDS_NORMALISING.search(path):
        path = normalise_path(path)
    return without_dot_segments(path) if "/." in path else path


def without_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 on the path before ``?`` (docs/spec.md §6.5.1): servers serve
    ``/private/x`` for ``/a/../private/x``, so the rules must see it so too.
    Run after escapes are decoded, so ``%2E%2E`` counts as ``..``."""
    query_at = path.find("?")
    head, tail = (path, "") if query_at < 0 else (path[:query_at], path[query_at:])
    if "/." not in head:
        return path
    kept: list[str] = []
    segments = head.split("/")[1:]
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")  # "/a/.." is the directory "/"
        elif segment == ".":
            if last:
                kept.append("")  # "/a/." is "/a/"
        else:
            kept.append(segment)
    return "/" + "/".join(kept) + tail


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


# --- the URL side ------------------------------------------------------------


_ABSOLUTE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?;#]*")
_WEB_SCHEMES: Final = ("https://", "http://")


def path_params_query(url: str) -> str:
    """The part of a URL that rules match: path, ``;params`` and ``?query``.

    Accepts absolute URLs and ``/path?query``; the fragment is dropped and an
    empty path is ``/`` (docs/spec.md §6.1). Other input is read as Google's library
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
            decoded = byte in _UNRESERVED or byte in _DECODED_RESERVED
            forms[high + low] = chr(byte) if decoded else f"%{byte:02X}"
    return forms


_ESCAPE_FORMS: Final = _escape_forms()


#: Escapes whose RFC 9309 form differs from how they are written: lower-case
#: hex, or an unreserved or reserved character (decoded; not ``*``, ``$``).
#: Most escapes in the wild are in form (%20, %C3), so such a file costs one scan.
_CHANGING_ESCAPE: Final = re.compile(
    "%(?:[0-9A-Fa-f][a-f]|[a-f][0-9A-F]|2[136-9B-F]|3[0-9ABDF]|4[0-9A-F]|5[0-9ABDF]"
    "|6[1-9A-F]|7[0-9AE])"
)


def _normalise_escape(match: re.Match[str]) -> str:
    return _ESCAPE_FORMS[match.group()[1:]]


def normalise(text: str) -> str:
    """RFC 9309 §2.2.2 form of a rule's pattern.

    Characters not allowed raw in a URI (non-ASCII, space, controls, ``|``...)
    become upper-case %XX of their UTF-8 bytes; escapes of unreserved and
    reserved characters are decoded (``%7E`` is ``~``, ``%2F`` is ``/``);
    other escapes keep their encoding with upper-case hex. A raw ``*`` and a
    final ``$`` keep their meaning; ``%2A``, ``%24`` and an inner ``$`` are
    literals, written ``%2A`` and ``%24`` as in a URL (``normalise_path``).
    """
    if "%" in text:
        text = _CHANGING_ESCAPE.sub(_normalise_escape, text)
    if "$" in text:
        text = _INNER_DOLLAR.sub("%24", text)
    return _NEEDS_ENCODING.sub(_encode_raw, text)


def normalise_path(path: str) -> str:
    """RFC 9309 §2.2.2 form of a URL's path and query: as ``normalise``, and a
    ``*`` or ``$`` in a URL is the character itself (``%2A``, ``%24``)."""
    if "%" in path:
        path = _CHANGING_ESCAPE.sub(_normalise_escape, path)
    return _URL_NEEDS_ENCODING.sub(_encode_raw, path)


def normalise_lines(text: str) -> str:
    """``normalise`` applied to each line of ``text`` in one pass."""
    if "%" in text:
        text = _CHANGING_ESCAPE.sub(_normalise_escape, text)
    if "$" in text:
        text = _INNER_DOLLAR.sub("%24", text)
    if not text.isascii():
        return _NEEDS_ENCODING_KEEP_LINES.sub(_encode_raw, text)
    # Two passes in C instead of a regex: what is left once the allowed bytes
    # are deleted is the few characters to encode, each replaced in one pass.
    for char in set(text.encode("ascii").translate(None, _PLAIN_LINES).decode("ascii")):
        text = text.replace(char, f"%{ord(char):02X}")
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

#: A rule's code packs its kind and line into one int (``rule_code``). Lines
#: stay below 2**24 (a body is cut at 512,000 bytes), so the top byte of a
#: code is the kind alone.
ALLOW_BIT: Final = 1 << 31
_TOP_BYTE: Final = 3 if sys.byteorder == "little" else 0


def rule_code(kind: str, line: int) -> int:
    return line | ALLOW_BIT if kind == ALLOW else line


def rule_of(pattern: str, code: int) -> Rule:
    return Rule(ALLOW if code & ALLOW_BIT else DISALLOW, pattern, code & (ALLOW_BIT - 1))


def _allow_flags(codes: array[int]) -> bytes:
    """One byte per rule, non-zero for an allow: each code's top byte, in C."""
    return codes.tobytes()[_TOP_BYTE :: codes.itemsize]


#: Above this many wildcard rules, a group is indexed: one scan of the path,
#: instead of one ``in`` per need and one search per rule whose need is in it.
#: Below, those cost at most ~1 ms with a 2 KiB path (no real file in the
#: corpus has more than 506), and the index is not worth its memory.
INDEXED_WILDCARDS: Final = 512
#: From this many needs, a small group files them under gates (``_gates``).
#: Below, a gate rules out too few needs to pay for itself (corpus, callgrind:
#: from 8 needs the warm pass costs 1% more, from 64 or 150 2.3% less).
GATED_NEEDS: Final = 64


class CompiledGroup:
    """The rules of one group, compiled for longest-match lookup (docs/spec.md §6).

    Building one is a split and a sort in C; Python touches only the rules
    with ``*`` or ``$``, a minority. What ``decide`` needs beyond the verdict
    (the line, the pattern as written) is looked up when first asked for.
    """

    __slots__ = (
        "_allow",
        "_anchored",
        "_by_need",
        "_codes",
        "_google",
        "_heads",
        "_index",
        "_keys",
        "_last",
        "_literals",
        "_need_floors",
        "_need_gates",
        "_need_tops",
        "_needs",
        "_patterns",
        "_plain",
        "_slots",
        "_stars",
        "_where",
        "_wild_top",
        "_wild_top_of",
    )

    def __init__(self, joined: str, codes: Sequence[int], google: bool) -> None:
        """``joined``: the patterns as written, one per line; ``codes``: from ``rule_code``."""
        self._patterns = joined
        self._codes = codes if isinstance(codes, array) else array("I", codes)
        self._google = google
        self._where: tuple[dict[tuple[str, bool], int], list[str]] | None = None
        self._anchored: dict[str, Best] = {}
        self._stars: dict[str, int] = {}  # literal -> trailing "*" its winner was written with
        #: Wildcards by the piece they need, highest first.
        self._by_need: dict[str, list[Wildcard]] = {}
        self._needs: tuple[str, ...] = ()  # highest first
        self._need_tops: tuple[tuple[str, int], ...] = ()  # each with its highest priority
        self._need_floors = array("i")  # minus each need's highest priority, ascending
        self._need_gates: tuple[tuple[str, tuple[int, ...]], ...] | None = None  # many needs
        self._index: WildcardIndex | None = None  # over the wildcards, when there are many
        #: Wildcards whose head is more than "/": the heads, each one's rules,
        #: and each one's end (as a literal's: ``_slot``).
        self._heads: tuple[Prefixes, list[list[Wildcard]], list[str]] | None = None
        #: The last path found disallowed, and by what: ``explain`` after
        #: ``allowed`` (a drop, logged with its rule) does not pay twice.
        self._last: tuple[str, Best | None] | None = None
        self._wild_top = -1
        self._wild_top_of = (-1, -1)  # the highest disallow, allow wildcard
        normalised = self._normalise(joined)
        keys = normalised.split("\n")
        flags = _allow_flags(self._codes)
        # The allow rules, an allow winning a tie (docs/spec.md §6.6). Rules with "*" or a
        # final "$" are in it too, harmlessly: no literal is spelt like them (a
        # "/a$*" rule's literal "/a$" is, and _add_starred sets its kind itself).
        self._allow = set(compress(keys, flags))
        if "*" in normalised or "$" in normalised:
            with CollectorPaused(len(keys)):
                keys, starred = self._file_special(keys, flags, "$" in normalised)
            if starred:
                keys += self._add_starred(keys, starred)
        keys.sort()
        self._keys = keys
        self._literals = Prefixes(keys)
        #: What a path that sorts just after ``keys[at - 1]`` is matched by
        #: (``_slot``), made when first asked: slot ``at`` -> a comparison in
        #: place of a prefix test, and the best literal rule on either side.
        self._slots: list[Slot | None] = [None] * (len(keys) + 1)
        self._plain = not (self._anchored or self._stars or self._wild_top >= 0)

    def _normalise(self, text: str) -> str:
        return google_escape_pattern(text) if self._google else normalise_lines(text)

    def _file_special(
        self, keys: list[str], flags: bytes, has_dollar: bool
    ) -> tuple[list[str], list[tuple[str, int, bool]]]:
        """Take out rules with ``*`` or a final ``$``; return the literal ones
        and the ``/a*`` kind, which match as literals but count their stars."""
        if has_dollar:
            special = [i for i, key in enumerate(keys) if "*" in key or key[-1] == "$"]
        else:
            special = [i for i, key in enumerate(keys) if "*" in key]
        literal = bytearray(b"\x01") * len(keys)
        starred: list[tuple[str, int, bool]] = []
        found: list[Wildcard] = []
        for index in special:
            literal[index] = 0
            key, allow = keys[index], flags[index] != 0
            priority = 2 * len(key) + allow
            anchored = key[-1] == "$"
            body = key[:-1] if anchored else key.rstrip("*")
            if "*" in body:
                found.append(wildcard(priority, key, anchored, body))
            elif anchored:
                known = self._anchored.get(body)
                if known is None or known[0] < priority:
                    self._anchored[body] = (priority, allow, key)
            else:
                starred.append((body, len(key) - len(body), allow))
        if found:
            found.sort(key=itemgetter(0), reverse=True)  # highest priority first
            if len(found) > INDEXED_WILDCARDS:
                self._index = WildcardIndex(found)
            else:
                self._file_wildcards(found)
            self._wild_top = found[0][0]
            # The highest disallow and allow: most groups have both near the top.
            self._wild_top_of = (
                next((rule[0] for rule in found if not rule[1]), -1),
                next((rule[0] for rule in found if rule[1]), -1),
            )
        return list(compress(keys, literal)), starred

    def _file_wildcards(self, wildcards: list[Wildcard]) -> None:
        """A small group's wildcards (highest first): those whose head is more
        than "/" under their head, found as literals are (``_heads``); the
        others under the piece they need, one ``in`` each (``_needs``)."""
        by_need: dict[str, list[Wildcard]] = {}
        by_head: dict[str, list[Wildcard]] = {}
        for rule in wildcards:
            head = rule[2]
            if len(head) > 1:
                by_head.setdefault(head, []).append(rule)
            else:
                by_need.setdefault(rule[7], []).append(rule)
        # The needs in the order their highest rules come, highest first.
        self._by_need = by_need
        self._needs = tuple(by_need)
        self._need_tops = tuple((need, group[0][0]) for need, group in by_need.items())
        self._need_floors = array("i", [-group[0][0] for group in by_need.values()])
        if len(self._needs) >= GATED_NEEDS:
            self._need_gates = _gates(self._needs)
        if by_head:
            heads = sorted(by_head)
            ends = [_end_as_written(head) if self._google else head + _DEL for head in heads]
            self._heads = Prefixes(heads), [by_head[head] for head in heads], ends

    def _add_starred(self, keys: list[str], starred: list[tuple[str, int, bool]]) -> list[str]:
        """``/a*`` matches what ``/a`` matches, but counts its stars in its
        length: per literal, the highest priority of all its rules decides."""
        best: dict[str, tuple[int, int, bool]] = {}  # literal -> (priority, stars, allow)
        for body, stars, allow in starred:
            priority = 2 * (len(body) + stars) + allow
            if body not in best or best[body][0] < priority:
                best[body] = (priority, stars, allow)
        for key in best.keys() & keys:  # also written without stars
            allow = key in self._allow
            if best[key][0] < 2 * len(key) + allow:
                best[key] = (2 * len(key) + allow, 0, allow)
        for body, (_, stars, allow) in best.items():
            if allow:
                self._allow.add(body)
            else:
                self._allow.discard(body)
            if stars:
                self._stars[body] = stars
        return list(best)  # a literal listed twice is harmless

    # --- lookups -------------------------------------------------------------------

    def allows(self, path: str) -> bool:
        """Whether ``path`` (normalised) may be fetched: no rule, or an allow, decides."""
        at = bisect_right(self._keys, path)
        slot = self._slots[at]
        if slot is None:
            slot = self._slot(at)
        if path < slot[0]:  # starts with the greatest literal not above it
            found = slot[1]
        else:
            found = slot[2] or self._outside(path, at)
        if self._plain:  # literal prefixes only: the longest one decides
            return found[1]
        # The literal that matched, an anchored rule, then the wildcards, if
        # one of the kind that would change the verdict can outrank those.
        floor, allow, pattern = found
        if self._anchored:
            anchored = self._anchored.get(path)
            if anchored is not None and anchored[0] > floor:
                floor, allow, pattern = anchored
        if self._wild_top_of[not allow] <= floor:
            return allow  # maybe not the deciding rule: ``decide`` looks further
        floor, allow, pattern = self._wildcards_over(path, (floor, allow, pattern))
        if not allow:  # a drop: ``explain`` follows, to log the rule
            self._last = path, (floor, allow, pattern)
        return allow

    def decide(self, path: str) -> Rule | None:
        """The rule that decides ``path`` (normalised), or None if none matches."""
        last = self._last
        if last is not None and last[0] == path:
            best = last[1]
        else:
            best = self._best(path, self._literals.longest(path))
        if best is None:
            return None
        if best == GAVE_UP:  # a new tuple, made by _best
            return UNDECIDED
        return self._rule(best)

    def deciding(self, path: str) -> tuple[Rule, ...]:
        """Every rule that decides ``path`` (normalised), in file order: the
        deciding rule and those that tie with it (other patterns of its length
        and kind that match too), found by ``decide``'s search within its step
        budget (docs/spec.md §6.8). ``(UNDECIDED,)`` past the budget, () if no rule
        matches. Any one of a tie decides an allow or disallow; a usage rule's
        ties all apply (``usage._PathIndex``)."""
        ties: list[Best] = []
        best = self._best(path, self._literals.longest(path), ties)
        if best is None:
            return ()
        if best == GAVE_UP:
            return (UNDECIDED,)
        patterns = dict.fromkeys(tie for tie in ties if tie[0] == best[0])
        return tuple(sorted(map(self._rule, patterns), key=attrgetter("line")))

    def _rule(self, best: Best) -> Rule:
        """The rule as written of a search's answer."""
        if self._where is None:  # first asked: where each normalised pattern was written
            where: dict[tuple[str, bool], int] = {}
            normalised = self._normalise(self._patterns).split("\n")
            for index, (key, code) in enumerate(zip(normalised, self._codes)):
                where.setdefault((key, code >= ALLOW_BIT), index)
            self._where = where, self._patterns.split("\n")
        where, written = self._where
        index = where[best[2], best[1]]
        return rule_of(written[index], self._codes[index])

    def _best(self, path: str, index: int, ties: list[Best] | None = None) -> Best | None:
        """(priority, allow, normalised pattern) of the deciding rule, given the
        longest literal prefix of ``path`` (``index``, -1 for none). With
        ``ties``, every rule found matching at the best priority so far is
        added to it (the caller keeps those of the final one)."""
        floor, allow, pattern = self._literal(index)
        if ties is not None and floor >= 0:
            ties += self._literal_ties(index, floor)
        tying = ties is not None  # a rule of equal priority is wanted too
        if self._anchored:
            anchored = self._anchored.get(path)
            if anchored is not None and anchored[0] > floor - tying:
                floor, allow, pattern = anchored
                if ties is not None:
                    ties.append(anchored)
        if self._wild_top > floor - tying:
            floor, allow, pattern = self._wildcards_over(path, (floor, allow, pattern), ties)
        return (floor, allow, pattern) if floor >= 0 else None

    def _slot(self, at: int) -> Slot:
        """Slot ``at``: the paths that sort between ``keys[at - 1]`` and
        ``keys[at]``. They start with the first exactly when they sort below
        its end, the least string above all that do (``_DEL``,
        ``_end_as_written``); if it has no parent, those that do not start
        with it start with no literal at all (``_outside``)."""
        if at == 0:  # below every literal
            slot: Slot = _BELOW
        else:
            key = self._keys[at - 1]
            end = key + _DEL if not self._google else _end_as_written(key)
            outside = _NOTHING if self._literals.parents[at - 1] == -1 else None
            slot = (end, self._literal(at - 1), outside)
        self._slots[at] = slot
        return slot

    def _outside(self, path: str, at: int) -> Best:
        """The best literal rule of a path of slot ``at`` that does not start
        with ``keys[at - 1]``: up that literal's links. Once it is known to
        have none, the slot says so."""
        literals = self._literals
        index = literals.walk_up(path, at - 1)
        if literals.parents[at - 1] == -1:
            slot = self._slots[at]
            assert slot is not None
            self._slots[at] = (slot[0], slot[1], _NOTHING)
        return self._literal(index)

    def _literal(self, index: int) -> Best:
        """The best literal rule for a path whose longest literal prefix is
        ``keys[index]`` (-1: none; a ``/a*`` rule counts its stars)."""
        if index < 0:
            return _NOTHING
        if self._stars:
            return self._best_literal(index)
        pattern = self._keys[index]
        allow = pattern in self._allow
        return (2 * len(pattern) + allow, allow, pattern)

    def _wildcards_over(self, path: str, best: Best, ties: list[Best] | None = None) -> Best:
        """The best of ``best`` and the wildcards that match ``path``: in a big
        group through its index, in a small one those of the heads that start
        the path, then one ``in`` per need that can outrank what matched.
        With ``ties``, those that equal it are tried and added too."""
        if self._index is not None:
            return self._index.best(path, best, ties)
        floor, allow, pattern = best
        bar = floor if ties is None else floor - 1  # what a rule must outrank
        if self._heads is not None:
            heads, by_head, ends = self._heads
            keys = heads.keys
            index = bisect_right(keys, path) - 1
            while index >= 0:  # up the links: each head that starts it, longest first
                head = keys[index]
                if path < ends[index]:  # not above it: starts with it (``_slot``)
                    for rule in by_head[index]:
                        priority, kind, _, middle, tail, end, written, need, sure = rule
                        if priority <= bar:
                            break
                        if need in path and (
                            sure or matches(path, len(head), middle, tail, end, None)
                        ):
                            floor, allow, pattern = priority, kind, written
                            if ties is None:
                                bar = priority
                                break
                            ties.append((priority, kind, written))
                            bar = priority - 1
                up = heads.parents[index]  # ``heads.parent``, inlined when known
                index = up if up != UNKNOWN else heads.parent(index)
        needs: Sequence[tuple[str, int]] = self._need_tops
        if self._need_gates is not None:  # many: those behind a gate the path passes
            needs = self._gated_needs(path, bisect_left(self._need_floors, -bar))
        for need, top in needs:
            if top <= bar:
                break  # the needs come highest first: none after can win
            if need not in path:
                continue
            for priority, kind, head, middle, tail, end, written, _, sure in self._by_need[need]:
                if priority <= bar:
                    break
                if not path.startswith(head):
                    continue
                if sure or matches(path, len(head), middle, tail, end, None):
                    floor, allow, pattern = priority, kind, written
                    if ties is None:
                        bar = priority
                        break
                    ties.append((priority, kind, written))
                    bar = priority - 1
        return floor, allow, pattern

    def _gated_needs(self, path: str, end: int) -> list[tuple[str, int]]:
        """The needs before ``end`` (those that can outrank what matched) that
        ``path`` holds, highest first, testing each only if its gate is in it."""
        needs = self._needs
        assert self._need_gates is not None
        present = [
            position
            for gate, positions in self._need_gates
            if gate in path
            for position in positions
            if position < end and needs[position] in path
        ]
        present.sort()  # the needs' order: highest first, ties as written
        return [self._need_tops[position] for position in present]

    def _best_literal(self, index: int) -> Best:
        """The best literal rule up the links from ``index``: stars count in its length."""
        keys, stars = self._keys, self._stars
        best: Best | None = None
        while index >= 0:  # every literal up the links matches too
            key = keys[index]
            extra = stars.get(key, 0)
            allow = key in self._allow
            priority = 2 * (len(key) + extra) + allow
            if best is None or priority > best[0]:
                best = (priority, allow, key + "*" * extra)  # the pattern as written
            index = self._literals.parent(index)
        assert best is not None
        return best

    def _literal_ties(self, index: int, priority: int) -> list[Best]:
        """The literal rules of ``priority`` up the links from ``index``: with
        stars counted in their length, ``/ab*`` and ``/abc`` tie."""
        if not self._stars:  # two literals of one length that start a path are one
            return [self._literal(index)]
        keys, stars, found = self._keys, self._stars, []
        while index >= 0:
            key = keys[index]
            extra = stars.get(key, 0)
            allow = key in self._allow
            if 2 * (len(key) + extra) + allow == priority:
                found.append((priority, allow, key + "*" * extra))
            index = self._literals.parent(index)
        return found


#: What decides a path that no rule matches: allowed.
_NOTHING: Final[Best] = (-1, True, "")
#: A slot of paths (``CompiledGroup._slot``): the end of the literal before
#: them, the best rule of those that start with it, and of those that do not
#: (None: it depends on the path).
Slot = tuple[str, Best, Best | None]
#: A normalised path is ASCII below DEL (``normalise_path`` encodes the
#: rest), so a literal's end, for such paths, is the literal and a DEL.
_DEL: Final = "\x7f"


#: The slot of the paths below every literal: none starts them.
_BELOW: Final[Slot] = ("", _NOTHING, _NOTHING)


def _end_as_written(key: str) -> str:
    """The end of ``key`` for paths as written (Google's quirks), which may
    hold any character: ``key`` with its last character's successor (keys
    are ASCII), and for the empty key, which starts every path ("/..."),
    the last code point."""
    return key[:-1] + chr(ord(key[-1]) + 1) if key else "\U0010ffff"


def _gates(needs: Sequence[str]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The positions of ``needs`` filed by their first two characters, each lot
    under the longest start its needs share (its gate): a path without the
    gate holds none of them. A group of hundreds of needs (``?utm_source``,
    ``&utm_source``..., or page paths under a few directories) has a few
    dozen gates."""
    lots: dict[str, list[int]] = {}
    for position, need in enumerate(needs):
        lots.setdefault(need[:2], []).append(position)
    gates = []
    for positions in lots.values():
        lot = [needs[position] for position in positions]
        low, high = min(lot), max(lot)  # what all share, the first and last share
        gates.append((low[: common_length(low, high)], tuple(positions)))
    return tuple(gates)
