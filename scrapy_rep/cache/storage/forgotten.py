"""The forget log: which origins people told the store to forget, and when.

``forget`` deletes an origin's record; a crawl already running still holds
its own copy in memory. So each store that forgets also appends the origin's
key to a short log, and every crawl sharing the store reads the log's new
entries once per ``REP_FORGET_POLL_INTERVAL``
(``crawler/access/forget_watch.py``) and drops those origins: one read per
interval, whatever the number of origins.
A reader keeps an opaque cursor (the store's own: a row id, a stream id) and
asks for what came after it; ``None`` asks where the log ends now.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Final

__all__ = ["FORGOTTEN_BATCH", "FORGOTTEN_KEEP", "FORGOTTEN_MAX", "ForgottenLog"]

#: How long an entry stays in the log: a day, the default life of a cached
#: copy, so a crawl that could not read the log for hours (its store was
#: down) still finds what it missed when it can again.
FORGOTTEN_KEEP: Final = 86_400.0
#: Entries kept at most: forgets are people's actions, few; this bounds a
#: script that forgets in a loop.
FORGOTTEN_MAX: Final = 10_000
#: Entries one read returns at most; the next read goes on from there.
FORGOTTEN_BATCH: Final = 1_000


class ForgottenLog:
    """The log in one process's memory (the memory store's): numbered entries."""

    def __init__(self) -> None:
        self._entries: deque[tuple[int, str, float]] = deque(maxlen=FORGOTTEN_MAX)
        self._numbers = itertools.count(1)
        self._last = 0

    def append(self, key: str, now: float) -> None:
        while self._entries and self._entries[0][2] < now - FORGOTTEN_KEEP:
            self._entries.popleft()
        self._last = next(self._numbers)
        self._entries.append((self._last, key, now))

    def since(self, cursor: str | None) -> tuple[str, list[str]]:
        """The keys logged after ``cursor``, and the cursor to ask with next."""
        if cursor is None:
            return str(self._last), []
        after = int(cursor)
        found: list[tuple[int, str]] = []
        for number, key, _ in reversed(self._entries):  # the newest first: few are new
            if number <= after:
                break
            found.append((number, key))
        found = found[::-1][:FORGOTTEN_BATCH]
        return (str(found[-1][0]) if found else cursor), [key for _, key in found]
