"""Settings of our prefixes that nothing reads: a misspelt ``REP_`` name
would otherwise do nothing, silently (docs/settings.md). Checked against
the table (``table.SETTINGS``) at start-up by ``Config.from_settings``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

from scrapy_rep.crawler.config.table import SETTINGS

__all__ = ["unknown_setting_notes"]


#: Names of our prefix that are read though not in the table: a testing
#: hook, and Scrapy's own robots.txt settings.
_READ_ELSEWHERE: Final = frozenset({"REP_CLOCK", "ROBOTSTXT_PARSER"})
_PREFIXES: Final = ("REP_", "ROBOTSTXT_")


def unknown_setting_notes(names: Iterable[str]) -> list[str]:
    """A warning for each ``REP_``/``ROBOTSTXT_`` name nothing reads, with the
    closest known one: a misspelt name would otherwise do nothing, silently."""
    documented = [setting.name for setting in SETTINGS]
    notes = []
    for name in sorted(set(names)):
        if not name.startswith(_PREFIXES) or name in _READ_ELSEWHERE or name in documented:
            continue
        close = difflib.get_close_matches(name, documented, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else "the settings are in docs/settings.md"
        notes.append(f"{name} is not a setting scrapy_rep reads, so it does nothing; {hint}")
    return notes
