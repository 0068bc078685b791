"""Sphinx extension: the settings reference, generated from the code's table.

``{rep-settings}`` (a directive without arguments) renders
``scrapy_rep.crawler.settings_table.SETTINGS`` as a table: name, default, accepted
values, what it does. Defaults come from ``Config``'s fields unless an entry
words its own, so the page cannot drift from what the crawler reads.

The extension also warns (an error under ``-W``) when a page names a
``REP_*`` setting the table does not hold: a renamed or removed setting
breaks the docs build instead of lingering in prose.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.util import logging

from scrapy_rep.crawler.settings import Config
from scrapy_rep.crawler.settings_table import SETTINGS, Setting

logger = logging.getLogger(__name__)

HOUR = 3600
DAY = 24 * HOUR
MIB = 1024 * 1024
#: REP_ names that are not settings: the testing hook, and environment
#: variables of the test suite.
NOT_SETTINGS = {"REP_CLOCK", "REP_TEST_REACTOR", "REP_FUZZ_SECONDS", "REP_TESTER_SCREENSHOTS"}
_CODE = re.compile(r"`([^`]+)`")
_REP_NAME = re.compile(r"\bREP_[A-Z][A-Z0-9_]*\b")


def shown_default(setting: Setting) -> str:
    """The default as the page shows it, `code` marked with backquotes."""
    if setting.default is not None:
        return setting.default
    value = getattr(Config(), str(setting.attribute))
    if isinstance(value, bool):
        return f"`{value}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (set, frozenset)):
        return "`" + ", ".join(sorted(value)) + "`"
    if isinstance(value, tuple):
        return "`[" + ", ".join(f'"{item}"' for item in value) + "]`"
    if isinstance(value, float) and value.is_integer():
        return f"`{int(value)}`" + _duration(int(value))
    if isinstance(value, int) and setting.name.endswith("_BYTES") and value % MIB == 0:
        return f"`{value}` ({value // MIB} MiB)"
    return f"`{value}`"


def _duration(seconds: int) -> str:
    if seconds >= 2 * DAY and seconds % DAY == 0:
        return f" ({seconds // DAY} d)"
    if seconds >= HOUR and seconds % HOUR == 0:
        return f" ({seconds // HOUR} h)"
    return ""


def _inline(text: str) -> nodes.paragraph:
    """A paragraph of plain text with `code` spans."""
    paragraph = nodes.paragraph()
    for index, piece in enumerate(_CODE.split(text)):
        if piece:
            paragraph += nodes.literal(piece, piece) if index % 2 else nodes.Text(piece)
    return paragraph


def _row(cells: list[nodes.Node]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += cell
        row += entry
    return row


class SettingsTable(Directive):
    """Render SETTINGS as a four-column table, one row and anchor per setting."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        table = nodes.table(classes=["rep-settings", "colwidths-given"])
        group = nodes.tgroup(cols=4)
        table += group
        for width in (22, 14, 20, 44):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        head += _row(
            [_inline(title) for title in ("setting", "default", "accepted", "what it does")]
        )
        group += head
        body = nodes.tbody()
        for setting in SETTINGS:
            name = nodes.paragraph()
            name += nodes.literal(setting.name, setting.name)
            row = _row(
                [
                    name,
                    _inline(shown_default(setting)),
                    _inline(setting.accepted),
                    _inline(setting.doc),
                ]
            )
            row["ids"].append(nodes.make_id(setting.name))
            body += row
        group += body
        return [table]


def _check_names(app: Sphinx, docname: str, source: list[str]) -> None:
    known = {setting.name for setting in SETTINGS} | NOT_SETTINGS
    for name in sorted(set(_REP_NAME.findall(source[0])) - known):
        logger.warning(
            "%s names %s, which is not in scrapy_rep.crawler.settings_table.SETTINGS",
            docname,
            name,
            location=docname,
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("rep-settings", SettingsTable)
    app.connect("source-read", _check_names)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
