"""The decision log: one JSON line per request let through or dropped (``REP_DECISION_LOG``).

The same fields as ``meta["rep_decision"]`` (``access/provenance.py``), and
the URL, the time (the crawl's clock) and the verdict: ``"allow"``, or
``"drop"`` with the drop's stat name (docs/versions.md, "The decision log").

Lines are kept in memory and written in one call every ``FLUSH_LINES`` lines
or ``FLUSH_SECONDS`` seconds, when the crawl is idle and when it closes, so
the reactor waits on the disk seldom. The file is bounded
(``REP_DECISION_LOG_MAX_BYTES``): before a write would take it past the
bound, it becomes ``path.1`` (``path.1`` becomes ``path.2``...), keeping
``KEPT`` such files. A failure to open, write or rotate warns once and the
log stops; the crawl goes on as if it were off.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from typing import IO, Any, Final

__all__ = ["FLUSH_LINES", "FLUSH_SECONDS", "KEPT", "PROVENANCE_META_KEY", "DecisionLog"]

logger = logging.getLogger(__name__)

#: The request (and response) meta key saying why it was fetched or dropped
#: (``access/provenance.py`` fills it; a drop's line reads it).
PROVENANCE_META_KEY: Final = "rep_decision"
#: Lines kept in memory before they are written.
FLUSH_LINES: Final = 1_000
#: Seconds a line may wait in memory (checked as lines come, and when idle).
FLUSH_SECONDS: Final = 1.0
#: Rotated files kept beside the current one: ``path.1`` (newest) to ``path.3``.
KEPT: Final = 3

_encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode


class DecisionLog:
    """An append-only JSON Lines file, buffered and rotated at a size."""

    def __init__(
        self,
        path: str,
        max_bytes: int,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._clock = clock
        self._monotonic = monotonic
        self._lines: list[str] = []
        self._file: IO[str] | None = None
        self._size = 0  # bytes in the current file
        self._since = monotonic()
        self.failed = False
        self.written = 0  # lines written to disk

    def allow(self, url: str, meta: dict[str, Any]) -> None:
        """A request let through, with its ``meta["rep_decision"]``."""
        self._add({"time": self._clock(), "verdict": "allow", "url": url, **meta})

    def drop(self, url: str, meta: dict[str, Any] | None, stat: str, early: bool) -> None:
        """A request dropped: ``stat`` its drop's name (``forbidden``, ``unreachable``...)."""
        line = {"time": self._clock(), "verdict": "drop", "url": url, **(meta or {})}
        line["drop"] = stat
        line["early"] = early
        self._add(line)

    def _add(self, line: dict[str, Any]) -> None:
        if self.failed:
            return
        text = _encode(line) + "\n"  # ASCII: its length is its size
        self._lines.append(text)
        if len(self._lines) >= FLUSH_LINES or self._monotonic() - self._since >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write the lines kept in memory (rotating first where the bound says)."""
        self._since = self._monotonic()
        if not self._lines or self.failed:
            return
        lines, self._lines = self._lines, []
        try:
            self._write(lines)
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        """Write what is left and close the file."""
        self.flush()
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                self._fail(exc)
            self._file = None

    def _write(self, lines: list[str]) -> None:
        chunk: list[str] = []
        size = self._opened()
        for line in lines:
            if size + len(line) > self.max_bytes and (size or chunk):
                self._put(chunk)
                chunk = []
                self._rotate()
                size = self._opened()
            chunk.append(line)
            size += len(line)
        self._put(chunk)

    def _put(self, chunk: list[str]) -> None:
        if not chunk or self._file is None:
            return
        text = "".join(chunk)
        self._file.write(text)
        self._file.flush()
        self._size += len(text)
        self.written += len(chunk)

    def _opened(self) -> int:
        """Open the file if it is not (appending); the bytes it holds."""
        if self._file is None:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self._file = open(self.path, "a", encoding="ascii", newline="\n")  # noqa: SIM115
            self._size = self._file.tell()
        return self._size

    def _rotate(self) -> None:
        """``path`` -> ``path.1`` -> ... -> ``path.KEPT`` (the oldest goes)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        for index in range(KEPT - 1, 0, -1):
            older = f"{self.path}.{index}"
            if os.path.exists(older):
                os.replace(older, f"{self.path}.{index + 1}")
        if KEPT and os.path.exists(self.path):
            os.replace(self.path, f"{self.path}.1")
        elif os.path.exists(self.path):
            os.remove(self.path)

    def _fail(self, exc: OSError) -> None:
        """Warn once; the log stops, the crawl goes on."""
        if not self.failed:
            logger.warning(
                "The decision log %s could not be written (%s); no more lines are written "
                "to it in this crawl, which goes on",
                self.path,
                exc,
            )
        self.failed = True
        self._lines = []
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()
