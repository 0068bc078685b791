"""One lint finding: shared by ``lint`` and ``lint_usage``, which cannot
import each other (``lint`` calls ``lint_usage``)."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Finding"]


class Finding(NamedTuple):
    """One thing to fix, on one line."""

    line: int
    code: str
    severity: str
    message: str
    hint: str
