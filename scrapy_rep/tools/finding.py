"""One lint finding, and how findings quote the file: shared by ``lint``,
``lint_groups`` and ``lint_usage``, which cannot import each other
(``lint`` calls the other two)."""

from __future__ import annotations

import re
from typing import Final, NamedTuple

__all__ = ["ERROR", "WARNING", "Finding", "plural", "printable", "quoted", "short"]

ERROR: Final = "error"
WARNING: Final = "warning"

_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")
_SHOW_CHARS: Final = 60


class Finding(NamedTuple):
    """One thing to fix, on one line."""

    line: int
    code: str
    severity: str
    message: str
    hint: str


def printable(text: str) -> str:
    """Text safe to print: invalid UTF-8 and control characters as ``\\xNN``."""
    raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group(0)):02x}", raw)


def short(text: str) -> str:
    """A value from the file, printable and cut to a readable length."""
    raw = printable(text)
    return raw if len(raw) <= _SHOW_CHARS else raw[: _SHOW_CHARS - 3] + "..."


def quoted(text: str) -> str:
    """A value from the file, quoted for a message."""
    return f"'{short(text)}'"


def plural(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
