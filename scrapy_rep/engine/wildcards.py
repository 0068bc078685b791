"""Matching rules with ``*``: one rule greedily, a big group through an index (docs/spec.md §6.8).

A wildcard rule is its head (literal text before the first ``*``, a prefix
of the path), then pieces found in order, leftmost first; an anchored rule's
last piece ends the path. Each piece at its leftmost occurrence leaves the
most room for the rest, so a greedy scan is exact and never backtracks:
``matches`` is linear in the path per piece.

A group of many such rules cannot afford one search per rule on every
check. ``WildcardIndex`` files each rule under a *key*, a piece of at most
``MAX_KEY`` characters it cannot match without: its first piece, or the end
of the path for a one-piece anchored rule. One scan of the path
(``multi_match``) names the keys present and where each first and last
starts. A rule of several pieces is also filed under a *second* key, its
last piece, which must start after the first piece ends: a sweep over the
scan's positions keeps, for each key present, only the second keys that
occur late enough, with set intersections in C, so a family whose every
rule fails on its last piece (``/*t<i>x*t<j>y`` with every ``t<j>y`` before
every ``t<i>x``) is rejected without one Python step per rule. What is left
is tried from the highest priority down, within a budget of steps: a check
that would still exceed it gives up and fails closed (``GAVE_UP``).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Collection
from heapq import heapify, heappop
from typing import Final, NamedTuple, cast

from scrapy_rep.engine.multi_match import MAX_KEY, ShortStrings

#: A wildcard rule, as a plain tuple (built per rule, so built cheaply):
#: priority (2 * written length, + 1 for allow: higher wins, docs/spec.md §6.6),
#: allow, head (literal text before the first "*": must be a prefix), middle
#: (pieces found in order, leftmost first), tail (a suffix when anchored, else
#: found after the middle), anchored, pattern (normalised, as written), need
#: (the longest piece after the head: a path without it cannot match), sure
#: ("head*need": with the need in the path, the head alone decides).
Wildcard = tuple[int, bool, str, tuple[str, ...], str, bool, str, str, bool]
Best = tuple[int, bool, str]  # (priority, allow, normalised pattern as written)

#: What a check of a big group may spend before it gives up (docs/spec.md §6.8), in
#: steps: a head looked up or an anchored rule whose end the path lacks is a
#: step, any other rule tried ``TRY_STEPS``, and ``SCANNED_PER_STEP``
#: characters searched one more. So a check's time is bounded by the path's
#: length whatever the file (docs/engine.md#the-cost-bound gives the figures),
#: and far above what any real file needs.
STEPS_PER_CHECK: Final = 8000
STEPS_PER_CHARACTER: Final = 4
TRY_STEPS: Final = 10
SCANNED_PER_STEP: Final = 128
#: What a search answers when a check gave up: a disallow that outranks all.
GAVE_UP: Final[Best] = (sys.maxsize, False, "")

#: The key of a one-piece anchored rule: the end of its piece, marked so, for
#: a path that ends with it ("$" is never in a normalised piece: %24).
_END: Final = "$"

#: What one check of an indexed group knows of its path: where each key
#: first, and last, starts, the searches made so far ((piece, from) ->
#: found), which rules of a big group share (``/*b*a1``, ``/*b*a2``...), and
#: the steps it has left (``steps_for``).
Seen = tuple[dict[str, int], dict[str, int], dict[tuple[str, int], int], list[int]]


def wildcard(priority: int, pattern: str, anchored: bool, body: str) -> Wildcard:
    """A normalised pattern with a ``*`` in its ``body`` (the pattern without
    its final ``$``, or its trailing ``*``), as a ``Wildcard``."""
    pieces = body.split("*")
    head, tail = pieces[0], pieces[-1]
    middle: tuple[str, ...] = ()
    need = tail or head  # the head is a cheap test: a piece after it, if any
    if len(pieces) == 3 and pieces[1]:  # "/*a*b": the usual shape, cheaply
        middle = (pieces[1],)
        need = pieces[1] if len(pieces[1]) >= len(tail) else tail
    elif len(pieces) > 2:
        middle = tuple(filter(None, pieces[1:-1]))
        need = max((*middle, tail), key=len) or head
    # The need cannot overlap the head if it starts with a character the head
    # lacks: then any occurrence is after the head.
    sure = not middle and not anchored and tail[:1] not in head
    return priority, priority & 1 == 1, head, middle, tail, anchored, pattern, need, sure


def steps_for(path: str) -> int:
    return STEPS_PER_CHECK + STEPS_PER_CHARACTER * len(path)


def matches(
    path: str,
    position: int,
    middle: tuple[str, ...],
    tail: str,
    anchored: bool,
    seen: Seen | None,
) -> bool:
    """Whether the rest of a wildcard, after its head (``path`` up to
    ``position``), matches: greedy, leftmost occurrences, no backtracking."""
    if anchored and not path.endswith(tail):
        return False  # a cheap test first: the rules of a big group mostly fail it
    for piece in middle:  # a small group's check has no ``seen``: a plain find
        found = path.find(piece, position) if seen is None else _find(path, piece, position, seen)
        if found < 0:
            return False
        position = found + len(piece)
    if anchored:
        return len(path) - len(tail) >= position
    if seen is None:
        return path.find(tail, position) >= 0
    return not tail or _find(path, tail, position, seen) >= 0


def _find(path: str, piece: str, position: int, seen: Seen | None) -> int:
    """``path.find(piece, position)``; in an indexed group, answered without
    a search when the piece's first or last occurrence settles it, and each
    search made once per check."""
    if seen is None:
        return path.find(piece, position)
    last = seen[1].get(piece)  # a key the scan found: all its starts are known
    if last is not None:
        if last < position:
            return -1
        first = seen[0].get(piece)
        if first is not None and first >= position:
            return first
    found = seen[2].get((piece, position))
    if found is None:
        found = seen[2][piece, position] = path.find(piece, position)
        seen[3][0] -= ((found if found >= 0 else len(path)) - position) // SCANNED_PER_STEP
    return found


class CollectorPaused:
    """A big group is tens of thousands of small tuples, lists and trie nodes,
    none of them garbage: left on, the cyclic collector walks them again and
    again while they are made, a third of the time compiling takes. Paused
    for ``size`` (rules) past ``PAUSED_FROM``: below, not worth the toggle."""

    __slots__ = ("_paused",)

    def __init__(self, size: int) -> None:
        self._paused = size >= PAUSED_FROM and gc.isenabled()

    def __enter__(self) -> None:
        if self._paused:
            gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._paused:
            gc.enable()


PAUSED_FROM: Final = 1000


# --- the index of a big group ------------------------------------------------------------


class _GaveUp(Exception):
    """A check of a big group ran out of steps."""


class _ByHead(NamedTuple):
    """Many wildcards sharing their keys, filed by head: only the rules whose
    head starts the path are tried, found with one dictionary lookup per
    distinct head length, not one ``startswith`` per rule."""

    top: int  # the highest priority filed here
    heads: dict[str, list[Wildcard]]  # head -> its wildcards, highest first
    lengths: tuple[int, ...]  # the distinct lengths of those heads


#: The wildcards under one key (or pair of keys), highest first: a list when
#: there are a few (each head tested), else filed by head.
_Filed = list[Wildcard] | _ByHead
#: A list this long or longer is filed by head.
_BY_HEAD: Final = 8


def _by_head(wildcards: list[Wildcard]) -> _Filed:
    if len(wildcards) < _BY_HEAD:
        return wildcards
    heads: dict[str, list[Wildcard]] = {}
    for wildcard in wildcards:  # highest first, so is each head's list
        heads.setdefault(wildcard[2], []).append(wildcard)
    return _ByHead(wildcards[0][0], heads, tuple(sorted(set(map(len, heads)))))


#: Wildcards of several pieces under their first key, highest first: a few as
#: (second key, wildcard); many filed by head, then by second key, with the
#: distinct lengths of their heads (None: one head).
_ByHeadAndSecond = tuple[tuple[int, ...] | None, dict[str, dict[str, list[Wildcard]]]]
_Paired = list[tuple[str, Wildcard]] | _ByHeadAndSecond


def _keys_of(
    wildcard: Wildcard, key_of: _KeyChooser, end_of: dict[str, str]
) -> tuple[str, str] | None:
    """The key a wildcard is filed under and the second key it needs ("" for
    none); None for a rule with no piece after its head, tried on every path.
    ``end_of`` gathers the anchored tails' keys (the path's end)."""
    middle, tail = wildcard[3], wildcard[4]
    if middle:
        first = middle[0] if len(middle[0]) <= MAX_KEY else key_of(middle[0])
        if not tail:  # "/*a*b*$": the last piece of the middle ends it
            second = middle[-1] if len(middle) > 1 else ""
        elif wildcard[5]:  # anchored: the path must end with the tail
            second = end_of.get(tail) or end_of.setdefault(tail, _END + tail[-MAX_KEY:])
        else:
            second = tail
        if len(second) > MAX_KEY and second[0] != _END:
            second = key_of(second)
        return first, second
    if not tail:
        return None
    if wildcard[5]:
        return end_of.get(tail) or end_of.setdefault(tail, _END + tail[-MAX_KEY:]), ""
    return (tail if len(tail) <= MAX_KEY else key_of(tail)), ""


class WildcardIndex:
    """The wildcards of a big group, filed under keys one scan of a path finds."""

    __slots__ = (
        "_alone",
        "_always",
        "_end_lengths",
        "_ends",
        "_key_top",
        "_keys",
        "_pairs",
        "_seconds",
    )

    def __init__(self, wildcards: list[Wildcard]) -> None:
        """``wildcards``: highest priority first."""
        key_of = _KeyChooser()
        alone: dict[str, list[Wildcard]] = {}  # key -> rules needing it alone
        pairs: dict[str, list[tuple[str, Wildcard]]] = {}  # key -> (second key, rule)
        always: list[Wildcard] = []  # rules with no piece after the head
        key_top: dict[str, int] = {}  # key -> the highest priority filed under it
        seconds: set[str] = set()  # the second keys
        end_of: dict[str, str] = {}  # an anchored rule's tail -> its key: the path's end
        crowded: list[str] = []  # keys whose rules alone are many: filed by head
        crowded_pairs: list[str] = []  # keys with many pairs: filed by head and second
        for wildcard in wildcards:
            keys = _keys_of(wildcard, key_of, end_of)
            if keys is None:
                always.append(wildcard)
                continue
            first, second = keys
            if first not in key_top:
                key_top[first] = wildcard[0]
            if not second:
                filed = alone.get(first)
                if filed is None:
                    alone[first] = [wildcard]
                else:
                    filed.append(wildcard)
                    if len(filed) == _BY_HEAD:
                        crowded.append(first)
                continue
            filed_pairs = pairs.get(first)
            if filed_pairs is None:
                pairs[first] = [(second, wildcard)]
            else:
                filed_pairs.append((second, wildcard))
                if len(filed_pairs) == _BY_HEAD:
                    crowded_pairs.append(first)
            seconds.add(second)
        filed_alone = cast(dict[str, _Filed], alone)  # the long lists, filed by head
        for key in crowded:
            filed_alone[key] = _by_head(alone[key])
        filed_pairs_of = cast(dict[str, _Paired], pairs)
        for key in crowded_pairs:
            filed_pairs_of[key] = _by_head_and_second(pairs[key])
        self._alone = filed_alone
        self._pairs = filed_pairs_of
        self._always = _by_head(always) if always else None
        self._key_top = key_top
        self._seconds = seconds
        ends = set(end_of.values())
        self._keys = ShortStrings((key_top.keys() | seconds) - ends, pairs)
        self._ends = ends
        self._end_lengths = tuple(sorted({len(key) - 1 for key in ends}))

    def best(self, path: str, best: Best, ties: list[Best] | None = None) -> Best:
        """The best of ``best`` and the wildcards that match ``path``; ``GAVE_UP``
        (a disallow: fail closed) if the check runs out of steps. With
        ``ties``, the wildcards that equal the best so far are tried too, within
        the same steps, and each that matches is added to it."""
        first, last = self._keys.scan(path)
        for length in self._end_lengths:  # the keys of anchored rules: the path's end
            key = _END + path[-length:]
            if key in self._ends and length <= len(path):
                last[key] = len(path) - length
        seen: Seen = first, last, {}, [steps_for(path)]
        try:
            if self._always is not None:
                best = _best_filed(self._always, path, best, seen, ties)
            survivors = self._survivors(path, seen) if first else {}
            # The keys with rules to try: every key found, when all have rules alone.
            keys: Collection[str] = (
                last.keys() if not self._seconds else self._alone.keys() & last.keys()
            )
            if survivors:
                keys = keys | survivors.keys()
            if not keys:
                return best
            # Highest first: the highest key decides most checks; the rest by a heap.
            key_top = self._key_top
            tying = ties is not None  # a rule that equals the best is wanted too
            highest = max(keys, key=key_top.__getitem__)
            best = self._best_of_key(highest, survivors, path, best, seen, ties)
            if best[0] - tying >= key_top[highest]:
                return best  # none can outrank what it matched
            ranked = [(-key_top[key], key) for key in keys if key != highest]
            heapify(ranked)
            while ranked:
                top, key = heappop(ranked)
                if -top <= best[0] - tying:
                    break  # none after can win
                best = self._best_of_key(key, survivors, path, best, seen, ties)
        except _GaveUp:
            return GAVE_UP
        return best

    def _best_of_key(
        self,
        key: str,
        survivors: dict[str, list[list[Wildcard]]],
        path: str,
        best: Best,
        seen: Seen,
        ties: list[Best] | None,
    ) -> Best:
        """The best of ``best`` and the candidates filed under ``key``."""
        filed = self._alone.get(key)
        if filed is not None:
            best = _best_filed(filed, path, best, seen, ties)
        for wildcards in survivors.get(key, ()):
            best = _best_filed(wildcards, path, best, seen, ties)
        return best

    def _survivors(self, path: str, seen: Seen) -> dict[str, list[list[Wildcard]]]:
        """For each key present with pairs, the wildcards whose head starts the
        path and whose second key starts somewhere after the key's first
        occurrence ends, highest first. A sweep from the end of the path: the
        keys by where their first occurrence ends, the second keys by where
        their last starts; each key's candidates are a set intersection, in C."""
        first, last, _, steps = seen
        seconds = sorted(self._seconds & last.keys(), key=last.__getitem__, reverse=True)
        if not seconds:
            return {}
        keys = sorted(((start + len(key), key) for key, start in first.items()), reverse=True)
        pairs = self._pairs
        survivors: dict[str, list[list[Wildcard]]] = {}
        late: set[str] = set()
        added = 0
        for end, key in keys:
            while added < len(seconds) and last[seconds[added]] >= end:
                late.add(seconds[added])
                added += 1
            if not late:
                continue
            filed = pairs[key]
            candidates: list[list[Wildcard]] = []
            if isinstance(filed, list):  # a few: each tried on its head and second key
                steps[0] -= len(filed)
                for second, wildcard in filed:
                    if second in late and path.startswith(wildcard[2]):
                        candidates.append([wildcard])
            else:
                lengths, heads = filed
                if lengths is None:  # one head: the usual shape
                    ((head, by_second),) = heads.items()
                    steps[0] -= 1
                    starting = [by_second] if path.startswith(head) else []
                else:  # the rules of each head that starts the path
                    starting = []
                    for length in lengths:
                        of_head = heads.get(path[:length])
                        if of_head is not None:
                            starting.append(of_head)
                    steps[0] -= len(lengths)
                for by_second in starting:
                    found = by_second.keys() & late
                    if found:
                        candidates += [by_second[second] for second in found]
            if candidates:
                if len(candidates) > 1:
                    candidates.sort(key=_first_priority, reverse=True)
                survivors[key] = candidates
        if steps[0] < 0:
            raise _GaveUp
        return survivors


def _by_head_and_second(pairs: list[tuple[str, Wildcard]]) -> _ByHeadAndSecond:
    heads: dict[str, dict[str, list[Wildcard]]] = {}
    for second, wildcard in pairs:  # highest first, so is each list
        by_second = heads.get(wildcard[2])
        if by_second is None:
            by_second = heads[wildcard[2]] = {}
        filed = by_second.get(second)
        if filed is None:
            by_second[second] = [wildcard]
        else:
            filed.append(wildcard)
    lengths = tuple(sorted(set(map(len, heads)))) if len(heads) > 1 else None
    return lengths, heads


def _first_priority(wildcards: list[Wildcard]) -> int:
    return wildcards[0][0]


class _KeyChooser:
    """A piece's key if longer than ``MAX_KEY``: its first or last ``MAX_KEY``
    characters, whichever fewer pieces filed so far share, so that many
    pieces sharing a start (``/*/product/1``, ``/*/product/2``...) are filed
    by their distinct ends, and the other way round."""

    __slots__ = ("_count",)

    def __init__(self) -> None:
        self._count: dict[str, int] = {}

    def __call__(self, piece: str) -> str:
        count = self._count
        start, end = piece[:MAX_KEY], piece[-MAX_KEY:]
        key = start if count.get(start, 0) <= count.get(end, 0) else end
        count[key] = count.get(key, 0) + 1
        return key


def _best_filed(filed: _Filed, path: str, best: Best, seen: Seen, ties: list[Best] | None) -> Best:
    """The best of ``best`` and the wildcards of ``filed`` that match ``path``,
    whose keys the scan found: a one-piece rule whose key is its piece, and
    whose head starts the path, matches. With ``ties``, as ``WildcardIndex.best``."""
    floor, allow, pattern = best
    bar = floor if ties is None else floor - 1  # what a rule must outrank
    steps = seen[3]
    if isinstance(filed, list):
        candidates: list[list[Wildcard]] = [filed]
    else:
        heads = filed.heads
        candidates = []
        for length in filed.lengths:
            found = heads.get(path[:length])
            if found is not None:
                candidates.append(found)
        steps[0] -= len(filed.lengths)
    for wildcards in candidates:
        for priority, kind, head, middle, tail, end, written, need, sure in wildcards:
            if priority <= bar:
                break
            if end and not path.endswith(tail):
                steps[0] -= 1  # the usual way a rule of a big group fails: cheap
                if steps[0] < 0:
                    raise _GaveUp
                continue
            steps[0] -= TRY_STEPS
            if steps[0] < 0:
                raise _GaveUp
            if not path.startswith(head):
                continue
            # A one-piece rule whose key is its piece, found: its head decides.
            if (sure and len(need) <= MAX_KEY) or matches(path, len(head), middle, tail, end, seen):
                floor, allow, pattern = priority, kind, written
                if ties is None:
                    bar = priority
                    break
                ties.append((priority, kind, written))
                bar = priority - 1
    if steps[0] < 0:
        raise _GaveUp
    return floor, allow, pattern
