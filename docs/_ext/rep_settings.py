"""Sphinx extension: the settings reference, generated from the code's table.

``{rep-settings}`` (a directive without arguments) renders
``scrapy_rep.crawler.config.table.SETTINGS`` by section (``GROUPS``: a
title, a sentence, an example, and the table's tuple of that section's
settings), each section a table: name, default, accepted values, what it
does. Defaults come from the fields the settings fill (``Config``'s or
``PolicyConfig``'s; an outage setting's with ``REP_OUTAGE_RULES =
"google-legacy"`` beside it) unless an entry words its own, so the page
cannot drift from what the crawler reads; a setting in no group, or in two,
is a build error.

The extension also warns (an error under ``-W``) when a page names a
``REP_*`` setting the table does not hold: a renamed or removed setting
breaks the docs build instead of lingering in prose.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.util import logging

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.crawler.config import table
from scrapy_rep.crawler.config.setting import Setting
from scrapy_rep.crawler.config.settings import field_default
from scrapy_rep.crawler.config.table import SETTINGS

logger = logging.getLogger(__name__)

HOUR = 3600
DAY = 24 * HOUR
MIB = 1024 * 1024
#: REP_ names that are not settings: the testing hook, and environment
#: variables of the test suite.
NOT_SETTINGS = {"REP_CLOCK", "REP_TEST_REACTOR", "REP_FUZZ_SECONDS", "REP_TESTER_SCREENSHOTS"}
_CODE = re.compile(r"`([^`]+)`")


class Group(NamedTuple):
    title: str
    about: str
    example: str
    settings: tuple[Setting, ...]


GROUPS: tuple[Group, ...] = (
    Group(
        "Enable",
        "Whether requests are checked, which, and how robots.txt is read.",
        'ADDONS = {"scrapy_rep.Addon": 0}\nROBOTSTXT_OBEY = True',
        table.ENABLE,
    ),
    Group(
        "Tokens",
        "Which robots.txt group applies: the crawler's tokens, most specific first.",
        'ROBOTSTXT_USER_AGENT = ["mybot-news", "mybot"]',
        table.TOKENS,
    ),
    Group(
        "Caching and outages",
        "How long a robots.txt holds, and what applies while it cannot be fetched.",
        "REP_CACHE_TTL = 6 * 3600          # refetch every 6 hours\n"
        "REP_UNREACHABLE_DISALLOW = 3600   # closed for 1 h, then the last good copy",
        table.CACHE_AND_OUTAGES,
    ),
    Group(
        "The decision log",
        "A record of why each request was let through or dropped (docs/versions.md).",
        'REP_DECISION_LOG = "decisions.jsonl"',
        table.DECISION_LOG,
    ),
    Group(
        "Storage",
        "Where records are kept, and shared between processes.",
        'REP_STORAGE = "redis"\nREP_REDIS_URL = "redis://localhost:6379/0"',
        table.STORAGE,
    ),
    Group(
        "Politeness",
        "Crawl-delay and Retry-After, per origin, for every process sharing the store.",
        'REP_CRAWL_DELAY = "obey"\nREP_CRAWL_DELAY_MAX = 10',
        table.POLITENESS,
    ),
    Group(
        "Usage preferences",
        "What the crawl's output is used for, checked against Content-Usage and Content-Signal.",
        'REP_PURPOSES = ["train-ai"]\nREP_USAGE_ACTION = "tag"',
        table.USAGE,
    ),
    Group(
        "Page rules",
        "X-Robots-Tag and robots meta tags.",
        "REP_PAGE_DIRECTIVES = True",
        table.PAGE_RULES,
    ),
    Group(
        "Sitemaps",
        "Following the sitemaps robots.txt lists.",
        'REP_FOLLOW_SITEMAPS = True\nREP_SITEMAP_CALLBACK = "parse_sitemap"',
        table.SITEMAPS,
    ),
)
_REP_NAME = re.compile(r"\bREP_[A-Z][A-Z0-9_]*\b")


def shown_default(setting: Setting) -> str:
    """The default as the page shows it, `code` marked with backquotes."""
    if setting.default is not None:
        return setting.default
    value = field_default(str(setting.attribute))
    legacy = getattr(PolicyConfig.older_google(), str(setting.attribute), value)
    if legacy != value:  # an outage setting the preset changes
        return f"{_shown(value)}; {_shown(legacy)} with `google-legacy`"
    if isinstance(value, int) and setting.name.endswith("_BYTES") and value % MIB == 0:
        return f"`{value}` ({value // MIB} MiB)"
    return _shown(value)


def _shown(value: object) -> str:
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
    """Render SETTINGS by group: a rubric, a sentence, an example, a four-column
    table with one row and anchor per setting."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        names = [setting.name for setting in SETTINGS]
        grouped = [setting.name for group in GROUPS for setting in group.settings]
        for name in sorted(set(names) ^ set(grouped)) + _twice(grouped):
            logger.warning("settings: %s is not in exactly one of GROUPS (docs/_ext)", name)
        out: list[nodes.Node] = []
        for group in GROUPS:
            rubric = nodes.rubric(group.title, group.title)
            rubric["ids"].append(nodes.make_id("settings " + group.title))
            example = nodes.literal_block(group.example, group.example, language="python")
            out += [rubric, _inline(group.about), example]
            out.append(_table(list(group.settings)))
        return out


def _twice(names: list[str]) -> list[str]:
    return sorted({name for name in names if names.count(name) > 1})


def _table(settings: list[Setting]) -> nodes.table:
    table = nodes.table(classes=["rep-settings", "colwidths-given"])
    group = nodes.tgroup(cols=4)
    table += group
    for width in (22, 14, 20, 44):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    head += _row([_inline(title) for title in ("setting", "default", "accepted", "what it does")])
    group += head
    body = nodes.tbody()
    for setting in settings:
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
    return table


def _check_names(app: Sphinx, docname: str, source: list[str]) -> None:
    known = {setting.name for setting in SETTINGS} | NOT_SETTINGS
    for name in sorted(set(_REP_NAME.findall(source[0])) - known):
        logger.warning(
            "%s names %s, which is not in scrapy_rep.crawler.config.table.SETTINGS",
            docname,
            name,
            location=docname,
        )


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("rep-settings", SettingsTable)
    app.connect("source-read", _check_names)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
