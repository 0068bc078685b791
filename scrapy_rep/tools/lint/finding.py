"""One lint finding, and how findings quote the file: shared by ``lines``,
``groups`` and ``usage``, which cannot import each other
(``lines`` calls the other two), and by the Tester, whose classes of a line
are these severities (``line_severities``): one vocabulary, from the one
grammar, for ``scrapy-rep lint`` and the page."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, NamedTuple

__all__ = [
    "ERROR",
    "MEANING",
    "WARNING",
    "Finding",
    "counted",
    "json_safe",
    "line_severities",
    "plural",
    "printable",
    "quoted",
    "short",
]

ERROR: Final = "error"
WARNING: Final = "warning"
#: What each severity says of a line: lint's documentation and the Tester's legend.
MEANING: Final[dict[str, str]] = {
    ERROR: "the line is ignored or can never take effect",
    WARNING: "the file works, but not everywhere or not obviously as meant",
}

#: Characters a terminal or an editor acts on instead of showing: C0 and C1
#: controls (ESC starts a sequence, U+009B is a one-byte CSI), and the bidi
#: and line controls that reorder or break the text around them (U+202E
#: writes what follows backwards: Trojan Source, CVE-2021-42574).
_CONTROL: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_SHOW_CHARS: Final = 60


class Finding(NamedTuple):
    """One thing to fix, on one line."""

    line: int
    code: str
    severity: str
    message: str
    hint: str


def printable(text: str) -> str:
    """Text safe to print: invalid UTF-8 and control characters as ``\\xNN``,
    bidi controls as ``\\uNNNN``."""
    raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _CONTROL.sub(_escaped, raw)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def json_safe(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with the characters ``printable``
    escapes written as ``\\uNNNN`` escapes: the same JSON value, nothing a
    terminal acts on. JSON writes the rest of C0 as escapes already, and
    outside its strings only ASCII."""
    return _CONTROL.sub(lambda match: f"\\u{ord(match.group(0)):04x}", text)


def short(text: str) -> str:
    """A value from the file, printable and cut to a readable length."""
    raw = printable(text)
    return raw if len(raw) <= _SHOW_CHARS else raw[: _SHOW_CHARS - 3] + "..."


def quoted(text: str) -> str:
    """A value from the file, quoted for a message."""
    return f"'{short(text)}'"


def plural(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def counted(errors: int, warnings: int) -> str:
    """``2 errors, 1 warning``: lint's summary and the Tester's, in one wording."""
    return f"{plural(errors, ERROR)}, {plural(warnings, WARNING)}"


def line_severities(findings: Iterable[Finding]) -> dict[int, str]:
    """The worst severity on each line that has a finding (error over
    warning); a line without one is absent."""
    worst: dict[int, str] = {}
    for finding in findings:
        if worst.get(finding.line) != ERROR:
            worst[finding.line] = finding.severity
    return worst
