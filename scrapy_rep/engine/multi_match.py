"""Where many short strings occur in a text, in one pass (SPEC §6.8).

A group with thousands of wildcard rules cannot afford one ``in`` per rule
on every check: that is (rules × path length). This index reads the path
once, whatever the number of strings: at each position it walks a trie of
the strings, at most ``MAX_KEY`` characters deep, so a scan costs at most
``MAX_KEY`` dictionary probes per character of the text (one or two in
practice: a walk stops at the first character no string continues with).
It reports where each string first and last starts, which settles most of
the greedy searches of ``matching._matches`` without reading the path again.

A trie without failure links (not Aho–Corasick) on purpose: in Python the
links cost more to build than the rest of a 500 KiB group, and with strings
this short the walks are short too.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

#: The longest string the index holds: longer ones are indexed by a prefix.
MAX_KEY: Final = 6

_END: Final = ""  # the trie key under which a node stores the string ending there

_Node = dict[str, Any]  # char -> child node; _END -> the string ending here


class ShortStrings:
    """A trie of strings of at most ``MAX_KEY`` characters."""

    __slots__ = ("_depth", "_root")

    def __init__(self, strings: Collection[str]) -> None:
        root: _Node = {}
        for string in strings:
            node = root
            for char in string:
                child = node.get(char)
                if child is None:
                    child = node[char] = {}
                node = child
            node[_END] = string
        self._root = root
        self._depth = max(map(len, strings), default=0)  # how deep a walk can go

    def scan(self, text: str) -> tuple[dict[str, int], dict[str, int]]:
        """Where each string that occurs in ``text`` starts: first, and last."""
        root, depth = self._root, self._depth
        first: dict[str, int] = {}
        last: dict[str, int] = {}
        for start, char in enumerate(text):
            node = root.get(char)  # most walks end here: no slice made for them
            if node is None:
                continue
            found = node.get(_END)
            if found is not None:
                if found not in last:
                    first[found] = start
                last[found] = start
            for char in text[start + 1 : start + depth]:
                node = node.get(char)
                if node is None:
                    break
                found = node.get(_END)
                if found is not None:
                    if found not in last:
                        first[found] = start
                    last[found] = start
        return first, last
