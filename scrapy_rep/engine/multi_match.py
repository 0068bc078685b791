"""Where many short strings occur in a text, in one pass (docs/spec.md §6.8).

A group with thousands of wildcard rules cannot afford one ``in`` per rule
on every check: that is (rules × path length). This index reads the path
once, whatever the number of strings: at each position it walks a trie of
the strings, at most ``MAX_KEY`` characters deep, so a scan costs at most
``MAX_KEY`` dictionary probes per character of the text (one or two in
practice: a walk stops at the first character no string continues with).
It reports where each string last starts, and for the strings asked for,
where each first starts: recording a position is most of what a scan of a
text dense in strings costs, so only what is needed is recorded.

A trie without failure links (not Aho–Corasick) on purpose: in Python the
links cost more to build than the rest of a 500 KiB group, and with strings
this short the walks are short too.
"""

from __future__ import annotations

from collections.abc import Collection, Container
from typing import Any, Final

#: The longest string the index holds: longer ones are indexed by a part.
MAX_KEY: Final = 6

#: A trie node: character -> [the node it leads to, the string ending there
#: or None, that string again if its first start is wanted, else None].
_Node = dict[str, list[Any]]


class ShortStrings:
    """A trie of strings of at most ``MAX_KEY`` characters."""

    __slots__ = ("_depth", "_root")

    def __init__(self, strings: Collection[str], first_wanted: Container[str] = ()) -> None:
        """``first_wanted``: the strings whose first start ``scan`` reports."""
        root: _Node = {}
        entry: list[Any] | None = None
        for string in strings:  # not empty: ``entry`` ends as its last character's
            children = root
            for char in string:
                entry = children.get(char)
                if entry is None:
                    entry = children[char] = [{}, None, None]
                children = entry[0]
            assert entry is not None
            entry[1] = string
            if string in first_wanted:
                entry[2] = string
        self._root = root
        self._depth = max(map(len, strings), default=0)  # how deep a walk can go

    def scan(self, text: str) -> tuple[dict[str, int], dict[str, int]]:
        """Where each string that occurs in ``text`` starts: first (for the
        strings whose first start is wanted), and last (for all)."""
        get, depth = self._root.get, self._depth
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for start, char in enumerate(text):
            entry = get(char)  # most walks end here: no slice made for them
            if entry is None:
                continue
            children, found, wanted = entry
            if found is not None:
                last[found] = start
                if wanted is not None and wanted not in first:
                    first[wanted] = start
            for char in text[start + 1 : start + depth]:
                entry = children.get(char)
                if entry is None:
                    break
                children, found, wanted = entry
                if found is not None:
                    last[found] = start
                    if wanted is not None and wanted not in first:
                        first[wanted] = start
        return first, last
