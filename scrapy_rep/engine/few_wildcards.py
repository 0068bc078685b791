"""The wildcard rules of a small group, found without an index (docs/spec.md §6.8).

A group of a few hundred wildcard rules at most (``compiled_group``'s
``INDEXED_WILDCARDS``) is cheaper to search rule by rule than to index: the
rules whose head is more than "/" are filed under their head and found as
literals are (``prefixes.Prefixes``); the others under the piece they need,
one ``in`` per piece, behind a gate per shared start when there are many.
``best`` answers as ``wildcards.WildcardIndex.best`` does for a big group.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Final

from scrapy_rep.engine.prefixes import UNKNOWN, Prefixes, common_length, end_of
from scrapy_rep.engine.wildcards import Best, Wildcard, matches

__all__ = ["GATED_NEEDS", "FewWildcards"]

#: From this many needs, they are filed under gates (``_gates``): below, a
#: gate rules out too few needs to pay for itself (measured on the corpus).
GATED_NEEDS: Final = 64


class FewWildcards:
    """A small group's wildcards, highest priority first."""

    __slots__ = ("_by_need", "_heads", "_need_floors", "_need_gates", "_need_tops", "_needs")

    def __init__(self, wildcards: list[Wildcard], as_written: bool) -> None:
        """``wildcards``: highest priority first; ``as_written``: the paths
        asked about are as written (Google's quirks), not normalised."""
        by_need: dict[str, list[Wildcard]] = {}
        by_head: dict[str, list[Wildcard]] = {}
        for rule in wildcards:
            head = rule[2]
            if len(head) > 1:
                by_head.setdefault(head, []).append(rule)
            else:
                by_need.setdefault(rule[7], []).append(rule)
        #: The needs in the order their highest rules come, highest first.
        self._by_need = by_need
        self._needs = tuple(by_need)
        #: Each need with its highest priority.
        self._need_tops = tuple((need, group[0][0]) for need, group in by_need.items())
        #: Minus each need's highest priority, ascending.
        self._need_floors = array("i", [-group[0][0] for group in by_need.values()])
        self._need_gates = _gates(self._needs) if len(self._needs) >= GATED_NEEDS else None
        #: The heads, each one's rules, and each one's end (``prefixes.end_of``).
        self._heads: tuple[Prefixes, list[list[Wildcard]], list[str]] | None = None
        if by_head:
            heads = sorted(by_head)
            ends = [end_of(head, as_written) for head in heads]
            self._heads = Prefixes(heads), [by_head[head] for head in heads], ends

    def best(self, path: str, best: Best, ties: list[Best] | None = None) -> Best:
        """The best of ``best`` and the wildcards that match ``path``: those of
        the heads that start the path, then one ``in`` per need that can
        outrank what matched. With ``ties``, those that equal it are tried
        and added too."""
        floor, allow, pattern = best
        bar = floor if ties is None else floor - 1  # what a rule must outrank
        if self._heads is not None:
            heads, by_head, ends = self._heads
            keys = heads.keys
            index = bisect_right(keys, path) - 1
            while index >= 0:  # up the links: each head that starts it, longest first
                head = keys[index]
                if path < ends[index]:  # not above it: starts with it (``end_of``)
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
