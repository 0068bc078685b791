"""The keys a store's file may hold, in about two bytes each: a Bloom filter.

A process alone with its file (``presence``) knows every key in it: the
ones there when it opened the file and the ones it wrote since. A key it
never saw is not in the file, and loading it needs no statement; a key it
may have seen (every key it did, and 0.4% to 2% of the others) is read as
before. So a broad crawl's new origins cost no read, and a wrong answer
is impossible: a filter only ever says "no" for a key never added.

Keys are added, never removed (a forgotten record is a "maybe"). The filter
grows by layers, each twice the last, so it never needs its keys again.
"""

from __future__ import annotations

__all__ = ["KeyFilter"]

_BITS_PER_KEY = 14
_PROBES = 4  # with 14 bits a key: 0.4% "maybe" for a key never added, per layer
_FIRST_LAYER = 1 << 16  # keys


class KeyFilter:
    """``add(key)``, then ``key in filter``: False only for keys never added."""

    def __init__(self, capacity: int = _FIRST_LAYER) -> None:
        self._layers: list[bytearray] = []
        self._room = 0  # keys the newest layer takes before the next one starts
        self._grow(max(capacity, 1))

    def add(self, key: str) -> None:
        if self._room == 0:
            self._grow(2 * len(self._layers[-1]) * 8 // _BITS_PER_KEY)
        self._room -= 1
        bits = self._layers[-1]
        size = len(bits) << 3
        first, step = _hashes(key)
        for probe in range(_PROBES):
            at = (first + probe * step) % size
            bits[at >> 3] |= 1 << (at & 7)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        first, step = _hashes(key)
        for bits in self._layers:
            size = len(bits) << 3
            for probe in range(_PROBES):
                at = (first + probe * step) % size
                if not bits[at >> 3] >> (at & 7) & 1:
                    break
            else:
                return True
        return False

    def merge(self, other: KeyFilter) -> None:
        """Answer "maybe" for ``other``'s keys too (it is not changed afterwards)."""
        self._layers[:0] = other._layers

    def _grow(self, capacity: int) -> None:
        self._layers.append(bytearray(-(-capacity * _BITS_PER_KEY // 8)))
        self._room = capacity


def _hashes(key: str) -> tuple[int, int]:
    """Two numbers from the key's own hash (this process's): where the probes start and step."""
    hashed = hash(key)
    return hashed & 0xFFFFFFFF, (hashed >> 32) | 1
