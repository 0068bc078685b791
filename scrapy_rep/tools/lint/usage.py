"""Lint of the usage lines: ``Content-Usage`` and ``Content-Signal`` (docs/usage-preferences.md).

A crawler reads these lines as the engine does (``engine.usage.read_rule``):
a statement it cannot read states nothing, silently. This says so, line by
line, with the engine's own reason, so a webmaster learns that
``Content-Usage: Train-AI=n`` (upper case: not a structured-field key) or
``Content-Signal: ai-train=false`` (only yes/no) refuses nothing.

Codes (severity, what it means):

- ``usage-not-read`` (error): the value states no preference at all (it does
  not parse, or names nothing usable); the line is ignored.
- ``usage-part-ignored`` (warning): part of the value is ignored (an unknown
  label, a value other than y/n or yes/no, a repeated key); the rest applies.
- ``usage-before-user-agent`` (error): a Content-Usage line before any
  User-agent line: it belongs to no group (draft-ietf-aipref-attach-05 §3
  makes it a rule of a group). A Content-Signal line there is read for the
  whole site instead (docs/usage-preferences.md, "Global lines").
- ``usage-global-replaced`` (warning): a group writes Content-Signal lines of
  its own, which replace the global ones, and leaves out a key the global
  lines state: that key's global statement does not reach the group.

Kept apart from ``lines.py``: the syntax these lines follow comes from drafts
that move, and a new draft version should touch the engine and this module only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from scrapy_rep.engine.grammar import USAGE, Body, Field, Note, field_name
from scrapy_rep.engine.usage import SIGNAL_KEYS, VOCABULARY, read_rule
from scrapy_rep.tools.lint.finding import Finding, plural, quoted

__all__ = ["USAGE_SEVERITIES", "usage_findings"]

USAGE_SEVERITIES: Final[dict[str, str]] = {
    "usage-not-read": "error",
    "usage-part-ignored": "warning",
    "usage-before-user-agent": "error",
    "usage-global-replaced": "warning",
}
_SIGNAL: Final = Field.CONTENT_SIGNAL

#: The hint of a line not read: an example, and the keys the engine knows
#: (``engine/usage/vocabulary.py``, whose table a new key is added to).
_EXAMPLE: Final = {
    "content-usage": "e.g. 'Content-Usage: /images/ train-ai=n, search=y': lower-case labels "
    f"{', '.join(VOCABULARY)} with y or n (draft-ietf-aipref-attach-05)",
    "content-signal": "e.g. 'Content-Signal: search=yes, ai-train=no': "
    f"{', '.join(SIGNAL_KEYS)} with yes or no (Content Signals Policy)",
}


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, USAGE_SEVERITIES[code], message, hint)


def usage_findings(read: Body) -> Iterator[Finding]:
    """Findings for every ``Content-Usage`` / ``Content-Signal`` line of a
    body read as the default parser reads it (``grammar.read_body``)."""
    for number, field, value in read.orphans:
        if field is _SIGNAL:  # read for the whole site: its syntax matters
            yield from _statement(number, field.value, value)
        elif field in USAGE:
            yield _finding(
                number,
                "usage-before-user-agent",
                f"{field_name(field)} before any User-agent line belongs to no group: "
                "crawlers ignore it (only Content-Signal is read there, for the whole site)",
                "put it under the User-agent lines it is meant for (User-agent: * for all)",
            )
    for notes in read.notes:
        for note in notes:
            if note.field in USAGE:
                yield from _statement(note.line, note.field.value, note.value)
    yield from _replaced(read)


def _keys(number: int, value: str) -> dict[str, bool]:
    """The Content-Signal keys a line states, as written (``ai-train``...)."""
    rule, _ = read_rule(number, _SIGNAL.value, value)
    return dict(rule.statement) if rule is not None else {}


def _replaced(read: Body) -> Iterator[Finding]:
    """docs/usage-preferences.md, "Global lines": a group's own Content-Signal
    lines replace the global ones whole. Reported once per set of own lines,
    on its first line, when it leaves out a key the global lines state."""
    stated: dict[str, tuple[int, bool]] = {}  # key -> its first global line, value
    for number, field, value in read.orphans:
        if field is _SIGNAL:
            for key, allowed in _keys(number, value).items():
                stated.setdefault(key, (number, allowed))
    if not stated:
        return
    owners: dict[tuple[Note, ...], list[str]] = {}  # a group's own lines -> its tokens
    for token, ids in read.groups.items():
        own = tuple(
            note
            for index in ids
            for note in read.notes[index]
            if note.field is _SIGNAL and token in note.agents
        )
        if own:
            owners.setdefault(own, []).append(token)
    for own, tokens in owners.items():
        kept = {key for note in own for key in _keys(note.line, note.value)}
        lost = [key for key in stated if key not in kept]
        if not lost:
            continue
        who = quoted(tokens[0])
        if len(tokens) > 1:
            who += f" (and {plural(len(tokens) - 1, 'other agent')})"
        said = ", ".join(
            f"{key}={'yes' if stated[key][1] else 'no'} (line {stated[key][0]})" for key in lost
        )
        yield _finding(
            own[0].line,
            "usage-global-replaced",
            f"for {who}, this group's Content-Signal lines replace the global ones: "
            f"{said} does not apply to {'them' if len(tokens) > 1 else 'it'}",
            f"add {', '.join(lost)} to this group's Content-Signal line if it should still apply",
        )


def _statement(number: int, key: str, value: str) -> Iterator[Finding]:
    rule, problems = read_rule(number, key, value)
    name = field_name(key)
    if rule is None or not rule.statement:
        why = "; ".join(problem.message for problem in problems) or "states no preference"
        yield _finding(
            number,
            "usage-not-read",
            f"{name} value {value!r} states nothing ({why}): crawlers ignore the line",
            _EXAMPLE[key],
        )
        return
    for problem in problems:
        yield _finding(
            number,
            "usage-part-ignored",
            f"{name}: {problem.message}; the rest of the line applies",
            _EXAMPLE[key],
        )
