"""The usage lines of the group an agent selects, read from the grammar's
blocks without ``RobotsTxt``: what ``RobotsTxt.usage`` must find.

test_usage.py pins this reading with tables (which lines belong to whom);
test_usage_document.py checks that the parser keeps the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from scrapy_rep.engine.agents import crawler_tokens, select_group
from scrapy_rep.engine.grammar import USAGE, Field, read_body


def usage_lines(
    body: bytes | str,
    user_agent: str | Sequence[str],
    *,
    google_quirks: bool = False,
    use_global: bool = True,
) -> list[tuple[int, str, str]]:
    """(line, key, value) of each usage line of the selected group, in line order.

    A usage line belongs to the agent lines just before it (``grammar.Note``),
    so ``User-agent: a / Content-Usage: x / User-agent: b / Disallow: /``
    gives x to a only; with Google's quirks every present token's groups merge.
    """
    read = read_body(body, google_quirks=google_quirks)
    tokens = crawler_tokens(user_agent, google_quirks)
    chosen = select_group(read.groups, tokens, google_quirks, use_global)[1]
    found = {
        (note.line, note.field.value, note.value)
        for token, ids in chosen
        for index in ids
        for note in read.notes[index]
        if note.field in USAGE and token in note.agents
    }
    return sorted(found)


def global_signal_lines(
    body: bytes | str,
    user_agent: str | Sequence[str],
    *,
    google_quirks: bool = False,
    use_global: bool = True,
) -> list[tuple[int, str, str]]:
    """(line, key, value) of the Content-Signal lines before any user-agent
    line, when the selected group writes no Content-Signal line of its own
    (docs/usage-preferences.md, "Global lines"); Content-Usage is never global."""
    own = usage_lines(body, user_agent, google_quirks=google_quirks, use_global=use_global)
    if any(key == Field.CONTENT_SIGNAL.value for _, key, _ in own):
        return []
    read = read_body(body, google_quirks=google_quirks)
    return [
        (line, field.value, value)
        for line, field, value in read.orphans
        if field is Field.CONTENT_SIGNAL
    ]
