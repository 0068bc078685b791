"""What changed in one group's usage preferences between two versions of a file.

The answer is per label (``LABELS``: ``train-ai``, ...), as the crawl asks:
the effective preference, after the group's own lines, the global
Content-Signal lines and the mapping of Content-Signal keys
(docs/usage-preferences.md), not the lines as written. So ``Content-Usage:
train-ai=n`` and ``Content-Signal: ai-train=no`` say the same change.

Preferences are path-scoped (attach-05 §3.1): they are asked at ``/`` (what
every path no rule of its own covers: a change said once, for the whole
site) and at each path a usage rule of either version writes; a path's
change is said only when it differs from the one at ``/``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from scrapy_rep.engine.usage.matcher import UsageMatcher
from scrapy_rep.engine.usage.vocabulary import ALLOWED, DENIED, LABELS

__all__ = ["UsageChange", "usage_changes", "usage_said"]

#: A label's effective preference as a change writes it: the vocabulary's tokens.
_WRITTEN: Final = {ALLOWED: "y", DENIED: "n"}
#: What the crawl is now told, by the new preference.
_NOW: Final = {"y": "now allowed", "n": "now refused", None: "no longer stated"}
_ROOT: Final = "/"

States = dict[str, str | None]


@dataclass(frozen=True, slots=True)
class UsageChange:
    """One label's effective preference before and after: "y", "n" or None (unstated)."""

    key: str  # a label of ``LABELS``: ``train-ai``
    before: str | None
    after: str | None
    #: The path pattern of the usage rule the change is about, as written;
    #: None: the whole site (asked at ``/``).
    path: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {"key": self.key, "before": self.before, "after": self.after, "path": self.path}

    def __str__(self) -> str:
        """``train-ai now refused``, ``search now allowed for /news/``."""
        where = "" if self.path is None else f" for {self.path}"
        return f"{self.key} {_NOW[self.after]}{where}"


def usage_changes(
    before: UsageMatcher | None, after: UsageMatcher | None
) -> tuple[UsageChange, ...]:
    """The labels whose preference changed from ``before`` to ``after`` (the
    matchers of the group the crawl's tokens select; None: no rules), the
    site-wide ones first, then per path in file order (the new version's
    paths, then the old one's), each label in ``LABELS`` order."""
    if _written(before) == _written(after):  # none in either (the usual case), or the same
        return ()
    root = _pairs(before, after, _ROOT)
    found = [UsageChange(label, old, new) for label, (old, new) in root.items() if old != new]
    for path in _paths(before, after):
        for label, (old, new) in _pairs(before, after, _probe(path)).items():
            if old != new and (old, new) != root[label]:
                found.append(UsageChange(label, old, new, path))
    return tuple(found)


def usage_said(changes: Sequence[UsageChange], shown: int) -> str:
    """The changes in a few words: ``train-ai now refused``, and those of
    paths gathered by what they say, ``shown`` paths named: ``search now
    refused for /a/, /b/ and 12 more paths``."""
    by_news: dict[tuple[str, str | None, bool], list[UsageChange]] = {}
    for change in changes:
        by_news.setdefault((change.key, change.after, change.path is None), []).append(change)
    said: list[str] = []
    for alike in by_news.values():
        if alike[0].path is None:
            said += map(str, alike)
            continue
        paths = ", ".join(str(change.path) for change in alike[:shown])
        more = len(alike) - shown
        tail = f" and {more} more path{'' if more == 1 else 's'}" if more > 0 else ""
        said.append(f"{alike[0].key} {_NOW[alike[0].after]} for {paths}{tail}")
    return ", ".join(said)


def _written(matcher: UsageMatcher | None) -> Counter[tuple[object, ...]]:
    """The matcher's rules as they state, wherever they stand."""
    rules = matcher.rules if matcher else ()
    return Counter((rule.source, rule.path, rule.statement, rule.is_global) for rule in rules)


def _pairs(
    before: UsageMatcher | None, after: UsageMatcher | None, path: str
) -> dict[str, tuple[str | None, str | None]]:
    old, new = _states(before, path), _states(after, path)
    return {label: (old[label], new[label]) for label in LABELS}


def _states(matcher: UsageMatcher | None, path: str) -> States:
    """Each label's effective preference at ``path``: "y", "n" or None."""
    if not matcher:
        return dict.fromkeys(LABELS)
    preferences = matcher.usage(path)
    return {label: _WRITTEN.get(preferences.state(label)) for label in LABELS}


def _paths(before: UsageMatcher | None, after: UsageMatcher | None) -> Iterator[str]:
    """The path patterns the usage rules write, each once, ``/`` left out."""
    seen = {_ROOT}
    for matcher in (after, before):
        for rule in matcher.rules if matcher else ():
            if rule.path is not None and _probe(rule.path) not in seen:
                seen.add(_probe(rule.path))
                yield rule.path


def _probe(pattern: str) -> str:
    """A path the pattern matches: itself, its end anchor dropped (a ``*``
    matches itself)."""
    return pattern.removesuffix("$") or _ROOT
