"""The lines a site writes for itself, outside any group: Sitemap, License (docs/spec.md §7).

Such a line belongs to no group and never changes who may fetch what: it is
gathered from the whole file, wherever it stands, in file order, each value
once, and handed to the spider once per origin per crawl. Each kind is one
entry of ``SITE_WIDE``, and every reader takes it from there alone: the
grammar files its lines (``grammar.Body.site_wide``), ``RobotsTxt.site_wide``
keeps the values it can use (``kept_values``), the crawl hands them over (``crawler/reporting.py``:
a signal from ``scrapy_rep.signals.found`` and the spider's optional method)
and counts them in its log line, lint reports the values it skips and counts
the others (``tools/lint/lines.py``), a version's change lists those added
and removed (``engine/changes.py``), and ``scrapy-rep check`` and the Tester
show those of a kind with ``about`` beside the verdicts (``beside_verdicts``).

A ``Content-Signal`` line before the first user-agent line speaks for the
whole site too, but it is a group's kind of line standing before any group:
it is kept with the other lines there (``grammar.Body.orphans``), and what it
means is the usage rules' business (docs/usage-preferences.md, "Global lines").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple

__all__ = ["SITE_WIDE", "SiteWide", "absolute_url", "beside_verdicts", "kept_values"]

logger = logging.getLogger(__name__)

_ABSOLUTE_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s]")  # scheme and host


def absolute_url(value: str) -> str | None:
    """The value when it is an absolute URL (a scheme and a host), kept as
    written (docs/spec.md §7.1); None otherwise."""
    return value if _ABSOLUTE_URL.match(value) else None


class SiteWide(NamedTuple):
    """One kind of line outside any group."""

    key: str  # the line's key, lower-case: ``sitemap``
    #: The name of its values (a Python name): the signal's keyword argument
    #: and name (``sitemaps_found``), the spider's optional method
    #: (``robotstxt_sitemaps``), the key of lint's JSON summary, of
    #: ``scrapy-rep check --json`` and of a version's change (``sitemaps_added``).
    #: The values themselves are ``RobotsTxt.site_wide[key]``.
    values: str
    noun: str  # one value, where values are counted (log, lint, changes): ``licence``
    plural: str  # ... and more than one: ``licences``
    value: Callable[[str], str | None]  # the value kept, or None: skipped
    wants: str  # what ``value`` keeps, for the debug line and lint: ``an absolute URL``
    lint: str  # lint's code for a value skipped (an error: the line has no effect)
    hint: str  # ... and how to write it
    handed: bool = True  # given to the spider (a signal and its method) once per origin
    said_when_none: bool = False  # counted in log and lint lines even when there is none
    #: What the values are, said beside every URL's verdict by ``scrapy-rep
    #: check`` and the Tester (they cover every URL of the origin, as licence
    #: terms do); None: not shown there.
    about: str | None = None

    def counted(self, count: int) -> str:
        """``1 sitemap``, ``2 licences``."""
        return f"{count} {self.noun if count == 1 else self.plural}"


_URL: Final = "an absolute URL"

#: Every kind of line outside any group, by key, in the order their counts are said.
SITE_WIDE: Final[dict[str, SiteWide]] = {
    "sitemap": SiteWide(
        "sitemap", "sitemaps", "sitemap", "sitemaps", absolute_url, _URL,
        "sitemap-not-absolute",
        "write the full URL, e.g. 'Sitemap: https://example.com/sitemap.xml'",
        said_when_none=True,
    ),
    # RSL 1.0: the site's licence terms, "not tied to any specific user agent"
    "license": SiteWide(
        "license", "licenses", "licence", "licences", absolute_url, _URL,
        "license-not-absolute",
        "write the full URL (RSL 1.0), e.g. 'License: https://example.com/license.xml'",
        about="the site's licence terms, RSL 1.0",
    ),
}  # fmt: skip


def kept_values(
    lines: Mapping[str, Sequence[tuple[int, str]]],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(key, values) of each kind of the (line, value) pairs read
    (``grammar.Body.site_wide``) that keeps some: the values its ``value``
    keeps, in file order, each once (docs/spec.md §7.1, §7.3); the others are
    skipped with a debug line."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for key, written in lines.items():
        kind = SITE_WIDE.get(key)
        if kind is None:  # taken out of the table since the body was read
            continue
        kept: dict[str, None] = {}
        for _, value in written:
            usable = kind.value(value)
            if usable is not None:
                kept[usable] = None
            else:
                logger.debug("Skipping %s %r: not %s", key, value, kind.wants)
        if kept:
            found.append((key, tuple(kept)))
    return tuple(found)


def beside_verdicts(
    found: Mapping[str, tuple[str, ...]],
) -> tuple[tuple[SiteWide, tuple[str, ...]], ...]:
    """Each kind shown beside the verdicts (one with ``about``) and its values
    in ``found`` (``RobotsTxt.site_wide``), in the table's order, each listed
    even when it has none."""
    return tuple((kind, found.get(key, ())) for key, kind in SITE_WIDE.items() if kind.about)
