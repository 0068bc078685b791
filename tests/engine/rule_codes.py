"""A rule's code from its kind and line, as the grammar packs it: for tests
that build a ``CompiledGroup`` by hand."""

from __future__ import annotations

from scrapy_rep.engine.lines import ALLOW
from scrapy_rep.engine.rules import ALLOW_BIT


def rule_code(kind: str, line: int) -> int:
    return line | ALLOW_BIT if kind == ALLOW else line
