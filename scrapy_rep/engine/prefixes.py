"""Which strings of a sorted list are prefixes of a text (docs/spec.md §6.3).

``bisect`` finds the largest string not above the text. If it is not a
prefix, every string that is one is also a prefix of it (a string sorting
between a prefix of the text and the text starts with that prefix), so the
answer is up its chain of "parents": the longest other string that is a
prefix of it. Following the chain from there names every prefix of the text,
longest first. Links are found when first needed, so a table costs a sort
to build, and a lookup a binary search and a link or two.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Final

UNKNOWN: Final = -2  # a parent link not looked up yet


class Prefixes:
    """Sorted strings, for longest-prefix lookups."""

    __slots__ = ("keys", "parents")

    def __init__(self, keys: list[str]) -> None:
        """``keys``: sorted, without repeats."""
        self.keys = keys
        #: index -> the longest other key that is a prefix of it (-1: none);
        #: ``UNKNOWN`` until first needed.
        self.parents = array("i", [UNKNOWN]) * len(keys)

    def longest(self, text: str) -> int:
        """The index of the longest key that is a prefix of ``text``, or -1."""
        keys = self.keys
        index = bisect_right(keys, text) - 1
        if index >= 0 and not text.startswith(keys[index]):
            index = self.walk_up(text, index)
        return index

    def walk_up(self, text: str, index: int) -> int:
        """From the key at ``index`` up its links to the first that is a prefix of ``text``."""
        keys, parents = self.keys, self.parents
        while index >= 0 and not text.startswith(keys[index]):
            parent = parents[index]
            index = parent if parent != UNKNOWN else self.parent(index)
        return index

    def parent(self, index: int) -> int:
        """The longest other key that is a prefix of ``keys[index]``, or -1."""
        keys, parents = self.keys, self.parents
        found = parents[index]
        if found != UNKNOWN:
            return found
        text = keys[index][:-1]
        found = bisect_right(keys, text, 0, index) - 1
        while found >= 0:
            key = keys[found]
            if text.startswith(key):
                break
            # The answer is a prefix of this key: up its link if known, else
            # the largest key not above the text the two share.
            up = parents[found]
            if up == UNKNOWN:
                text = text[: common_length(text, key)]
                up = bisect_right(keys, text, 0, found) - 1
            found = up
        parents[index] = found
        return found


def common_length(one: str, other: str) -> int:
    """How many leading characters two strings share."""
    limit = len(one) if len(one) < len(other) else len(other)
    length = 0
    while length < limit and one[length] == other[length]:
        length += 1
    return length


#: A normalised path is ASCII below DEL (``normalise_path`` encodes the
#: rest), so a key's end, for such paths, is the key and a DEL.
_DEL: Final = "\x7f"


def end_of(key: str, as_written: bool) -> str:
    """The least string above every string that starts with ``key``: a text
    not above it starts with ``key`` exactly when it is not below ``key``.

    For normalised paths that is ``key`` and a DEL; for paths as written
    (Google's quirks), which may hold any character, ``key`` with its last
    character's successor (keys are ASCII), and for the empty key, which
    starts every path, the last code point.
    """
    if not as_written:
        return key + _DEL
    return key[:-1] + chr(ord(key[-1]) + 1) if key else "\U0010ffff"
