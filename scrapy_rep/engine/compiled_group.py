"""A group's rules compiled for longest-match lookup (docs/spec.md §6).

A group is compiled once into three structures, so that a check costs a
binary search and a few string comparisons however many rules the group has:

- literal prefix rules in a sorted list, each with a link to the longest other
  rule that is its prefix (``prefixes.Prefixes``: longest-prefix lookup
  without a trie of objects);
- literal ``$``-anchored rules in a dict (exact equality);
- wildcard rules, matched greedily piece by piece with ``str.find``: linear
  in path length per piece, never backtracking (§6.8, ``wildcards``). A small
  group's are filed by head and by the piece they need
  (``few_wildcards.FewWildcards``); a group of many is indexed
  (``wildcards.WildcardIndex``), so a check costs about the path's length,
  not (rules × path length).
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from itertools import compress
from operator import attrgetter, itemgetter
from typing import Final

from scrapy_rep.engine.few_wildcards import FewWildcards
from scrapy_rep.engine.prefixes import Prefixes, end_of
from scrapy_rep.engine.rules import ALLOW_BIT, UNDECIDED, Rule, rule_of
from scrapy_rep.engine.url_path import google_escape_pattern, normalise_lines
from scrapy_rep.engine.wildcards import (
    GAVE_UP,
    Best,
    CollectorPaused,
    Wildcard,
    WildcardIndex,
    wildcard,
)

__all__ = ["INDEXED_WILDCARDS", "CompiledGroup"]

_TOP_BYTE: Final = 3 if sys.byteorder == "little" else 0


def _allow_flags(codes: array[int]) -> bytes:
    """One byte per rule, non-zero for an allow: each code's top byte, in C."""
    return codes.tobytes()[_TOP_BYTE :: codes.itemsize]


#: Above this many wildcard rules, a group is indexed: one scan of the path,
#: instead of one ``in`` per need and one search per rule whose need is in it.
#: Below, that search stays cheap (docs/benchmarks.md gives the figures) and
#: the index is not worth its memory.
INDEXED_WILDCARDS: Final = 512


# One class past 250 lines: building and lookups share the slots the hot path reads inline.
class CompiledGroup:
    """The rules of one group, compiled for longest-match lookup (docs/spec.md §6).

    Building one is a split and a sort in C; Python touches only the rules
    with ``*`` or ``$``, a minority. What ``decide`` needs beyond the verdict
    (the line, the pattern as written) is looked up when first asked for.
    """

    __slots__ = (
        "_allow",
        "_anchored",
        "_codes",
        "_google",
        "_keys",
        "_last",
        "_literals",
        "_patterns",
        "_plain",
        "_slots",
        "_stars",
        "_where",
        "_wild",
        "_wild_top",
        "_wild_top_of",
    )

    def __init__(self, joined: str, codes: Sequence[int], google: bool) -> None:
        """``joined``: the patterns as written, one per line; ``codes``: each one's
        kind and line (``rules.ALLOW_BIT``, ``rules.rule_of``)."""
        self._patterns = joined
        self._codes = codes if isinstance(codes, array) else array("I", codes)
        self._google = google
        self._where: tuple[dict[tuple[str, bool], int], list[str]] | None = None
        self._anchored: dict[str, Best] = {}
        self._stars: dict[str, int] = {}  # literal -> trailing "*" its winner was written with
        #: The wildcard rules: indexed when there are many.
        self._wild: WildcardIndex | FewWildcards = _NO_WILDCARDS
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
                self._wild = WildcardIndex(found)
            else:
                self._wild = FewWildcards(found, self._google)
            self._wild_top = found[0][0]
            # The highest disallow and allow: most groups have both near the top.
            self._wild_top_of = (
                next((rule[0] for rule in found if not rule[1]), -1),
                next((rule[0] for rule in found if rule[1]), -1),
            )
        return list(compress(keys, literal)), starred

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
        floor, allow, pattern = self._wild.best(path, (floor, allow, pattern))
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
        ties all apply (``usage.matcher``)."""
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
            floor, allow, pattern = self._wild.best(path, (floor, allow, pattern), ties)
        return (floor, allow, pattern) if floor >= 0 else None

    def _slot(self, at: int) -> Slot:
        """Slot ``at``: the paths that sort between ``keys[at - 1]`` and
        ``keys[at]``. They start with the first exactly when they sort below
        its end, the least string above all that do (``prefixes.end_of``);
        if it has no parent, those that do not start with it start with no
        literal at all (``_outside``)."""
        if at == 0:  # below every literal
            slot: Slot = _BELOW
        else:
            key = self._keys[at - 1]
            end = end_of(key, self._google)
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


#: The slot of the paths below every literal: none starts them.
_BELOW: Final[Slot] = ("", _NOTHING, _NOTHING)


#: The wildcards of a group that has none.
_NO_WILDCARDS: Final = FewWildcards([], False)
