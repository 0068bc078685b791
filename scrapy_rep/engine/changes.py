"""What changed for a crawler between two versions of one origin's robots.txt (docs/spec.md §8.5).

Not a text diff: only what the crawler's tokens are told. The rules of the
group that applies to them are compared as written, by (kind, pattern) as a
multiset, so a rule that merely moved is no change and a group that moved
from ``*`` to the crawler's own is judged by the rules it brings. Beside the
rules: the group's token, the pacing lines, the usage preferences, and the
values of every kind of line outside any group (``site_wide.SITE_WIDE``). A
version that is None had no rules (a 4xx answer: everything allowed), and so
has a version whose group has no Disallow: its Allow lines, and the other
version's, change nothing then.

Pure: two parsed files and the tokens in, a ``Change`` out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from scrapy_rep.engine.grammar import rule_text
from scrapy_rep.engine.lines import ALLOW, DISALLOW
from scrapy_rep.engine.robotstxt import RobotsTxt, UserAgent, group_rules
from scrapy_rep.engine.rules import Rule
from scrapy_rep.engine.site_wide import SITE_WIDE
from scrapy_rep.engine.usage import UsageChange, UsageMatcher, usage_changes, usage_said

__all__ = ["Change", "RuleChange", "SiteWideChange", "UsageChange", "change_for"]

Pair = tuple[float | None, float | None]

#: How many rules (and paths of a usage change) ``Change.summary`` names: one log line.
SUMMARY_RULES: Final = 3
#: The kinds of line outside any group whose changes have fields of their own
#: (``Change.licenses_added``...), in the order a summary says them.
_NAMED_KINDS: Final = ("license", "sitemap")


@dataclass(frozen=True, slots=True)
class RuleChange:
    """A rule of the applying group added or removed."""

    rule: Rule  # as written; its line in the version it is from
    added: bool  # True: in the new version; False: removed (line in the old one)

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.rule.kind,
            "pattern": self.rule.pattern,
            "line": self.rule.line,
            "added": self.added,
        }

    def __str__(self) -> str:
        text = f"{rule_text(self.rule)} line {self.rule.line}"
        return text if self.added else f"removed {text}"


@dataclass(frozen=True, slots=True)
class SiteWideChange:
    """The values of one kind of line outside any group added and removed."""

    key: str  # the kind's key in ``SITE_WIDE``: ``sitemap``
    added: tuple[str, ...]  # in the new version's file order
    removed: tuple[str, ...]  # in the old version's file order

    def said(self) -> str:
        """``1 sitemap added, 2 sitemaps removed``; "" when neither."""
        kind = SITE_WIDE[self.key]
        said = [
            f"{kind.counted(len(values))} {verb}"
            for values, verb in ((self.added, "added"), (self.removed, "removed"))
            if values
        ]
        return ", ".join(said)


@dataclass(frozen=True, slots=True)
class Change:
    """What changed for the crawl's tokens between two versions of one origin's robots.txt."""

    newly_disallowed: tuple[RuleChange, ...]  # a Disallow added, an Allow removed
    newly_allowed: tuple[RuleChange, ...]  # a Disallow removed, an Allow added
    group_before: str | None  # the applying group's token, "*", or None (no group / no rules)
    group_after: str | None
    crawl_delay: Pair | None  # (before, after) when it changed, else None
    request_rate: Pair | None  # seconds per request, the same
    usage: tuple[UsageChange, ...]  # per label (``train-ai``): "y", "n" or None
    licenses_added: tuple[str, ...]
    licenses_removed: tuple[str, ...]
    sitemaps_added: tuple[str, ...]
    sitemaps_removed: tuple[str, ...]
    #: Every other kind of ``SITE_WIDE`` whose values changed, in the table's order.
    site_wide: tuple[SiteWideChange, ...] = ()

    def __bool__(self) -> bool:
        """Anything changed."""
        return bool(
            self.newly_disallowed
            or self.newly_allowed
            or self.group_before != self.group_after
            or self.crawl_delay
            or self.request_rate
            or self.usage
            or self.licenses_added
            or self.licenses_removed
            or self.sitemaps_added
            or self.sitemaps_removed
            or self.site_wide
        )

    def summary(self) -> str:
        """A few words for one log line; "" when nothing changed."""
        parts = [
            _rules_said(self.newly_disallowed, "disallowed"),
            _rules_said(self.newly_allowed, "allowed"),
        ]
        if self.group_before != self.group_after:
            parts.append(f"group {_token(self.group_before)} -> {_token(self.group_after)}")
        parts.append(_pair_said("crawl-delay", self.crawl_delay, ""))
        parts.append(_pair_said("request-rate", self.request_rate, " s per request"))
        parts.append(usage_said(self.usage, SUMMARY_RULES))
        parts.append(SiteWideChange("license", self.licenses_added, self.licenses_removed).said())
        parts.append(SiteWideChange("sitemap", self.sitemaps_added, self.sitemaps_removed).said())
        parts.extend(change.said() for change in self.site_wide)
        return ", ".join(part for part in parts if part)

    def as_dict(self) -> dict[str, object]:
        """Plain data, JSON-ready: the fields by name, and ``summary``."""
        return {
            "newly_disallowed": [rule.as_dict() for rule in self.newly_disallowed],
            "newly_allowed": [rule.as_dict() for rule in self.newly_allowed],
            "group_before": self.group_before,
            "group_after": self.group_after,
            "crawl_delay": list(self.crawl_delay) if self.crawl_delay else None,
            "request_rate": list(self.request_rate) if self.request_rate else None,
            "usage": [usage.as_dict() for usage in self.usage],
            "licenses_added": list(self.licenses_added),
            "licenses_removed": list(self.licenses_removed),
            "sitemaps_added": list(self.sitemaps_added),
            "sitemaps_removed": list(self.sitemaps_removed),
            **self._other_kinds(),
            "summary": self.summary(),
        }

    def _other_kinds(self) -> dict[str, list[str]]:
        """``<values>_added`` and ``_removed`` of each kind without fields of its own."""
        changed = {change.key: change for change in self.site_wide}
        out: dict[str, list[str]] = {}
        for key, kind in SITE_WIDE.items():
            if key in _NAMED_KINDS:
                continue
            change = changed.get(key, SiteWideChange(key, (), ()))
            out[f"{kind.values}_added"] = list(change.added)
            out[f"{kind.values}_removed"] = list(change.removed)
        return out


def change_for(before: RobotsTxt | None, after: RobotsTxt | None, user_agent: UserAgent) -> Change:
    """What changed for ``user_agent`` (the tokens ``RobotsTxt`` takes, as the
    crawl asks with them) from ``before`` to ``after``; None for a version
    that has no rules (a 4xx answer)."""
    group_before, rules_before = _group(before, user_agent)
    group_after, rules_after = _group(after, user_agent)
    if not (_disallows(rules_before) and _disallows(rules_after)):
        # Without a Disallow everything is allowed: an Allow changes nothing there.
        rules_before, rules_after = _only_disallows(rules_before), _only_disallows(rules_after)
    added = _surplus(rules_after, rules_before, added=True)
    removed = _surplus(rules_before, rules_after, added=False)
    outside = {key: _urls(before, after, key) for key in SITE_WIDE}
    sitemaps_added, sitemaps_removed = outside.pop("sitemap", ((), ()))
    licenses_added, licenses_removed = outside.pop("license", ((), ()))
    return Change(
        newly_disallowed=_of_kind(added, DISALLOW) + _of_kind(removed, ALLOW),
        newly_allowed=_of_kind(removed, DISALLOW) + _of_kind(added, ALLOW),
        group_before=group_before,
        group_after=group_after,
        crawl_delay=_pair(before, after, user_agent, "crawl_delay"),
        request_rate=_pair(before, after, user_agent, "request_rate"),
        usage=usage_changes(
            _matcher_of(before, user_agent),
            _matcher_of(after, user_agent),
        ),
        licenses_added=licenses_added,
        licenses_removed=licenses_removed,
        sitemaps_added=sitemaps_added,
        sitemaps_removed=sitemaps_removed,
        site_wide=tuple(
            SiteWideChange(key, new, gone) for key, (new, gone) in outside.items() if new or gone
        ),
    )


# --- comparing ---------------------------------------------------------------------


def _group(robots: RobotsTxt | None, user_agent: UserAgent) -> tuple[str | None, tuple[Rule, ...]]:
    return (None, ()) if robots is None else group_rules(robots, user_agent)


def _disallows(rules: Sequence[Rule]) -> bool:
    return any(rule.kind == DISALLOW for rule in rules)


def _only_disallows(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    return tuple(rule for rule in rules if rule.kind == DISALLOW)


def _surplus(ours: Sequence[Rule], theirs: Sequence[Rule], *, added: bool) -> list[RuleChange]:
    """The rules of ``ours`` that ``theirs`` lacks, by (kind, pattern) as a
    multiset, in file order: of a rule written n times here and m < n times
    there, the last n - m."""
    left = Counter((rule.kind, rule.pattern) for rule in theirs)
    found: list[RuleChange] = []
    for rule in ours:
        key = (rule.kind, rule.pattern)
        if left[key]:
            left[key] -= 1
        else:
            found.append(RuleChange(rule, added))
    return found


def _of_kind(changes: Iterable[RuleChange], kind: str) -> tuple[RuleChange, ...]:
    return tuple(change for change in changes if change.rule.kind == kind)


def _pair(
    before: RobotsTxt | None, after: RobotsTxt | None, user_agent: UserAgent, name: str
) -> Pair | None:
    """(before, after) of a pacing value (``crawl_delay``, ``request_rate``) when it changed."""
    old, new = (
        None if robots is None else getattr(robots, name)(user_agent) for robots in (before, after)
    )
    return (old, new) if old != new else None


def _urls(
    before: RobotsTxt | None, after: RobotsTxt | None, key: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(added, removed) of one kind of line outside any group (``sitemap``), in file order."""
    old = () if before is None else before.site_wide.get(key, ())
    new = () if after is None else after.site_wide.get(key, ())
    return tuple(url for url in new if url not in old), tuple(url for url in old if url not in new)


def _matcher_of(robots: RobotsTxt | None, user_agent: UserAgent) -> UsageMatcher | None:
    return None if robots is None else robots.usage_matcher(user_agent)


# --- saying it -----------------------------------------------------------------------


def _token(token: str | None) -> str:
    return "none" if token is None else token


def _rules_said(changes: Sequence[RuleChange], what: str) -> str:
    """``2 paths newly disallowed (Disallow: /private/ line 4, ...)``."""
    if not changes:
        return ""
    named = ", ".join(str(change) for change in changes[:SUMMARY_RULES])
    more = ", ..." if len(changes) > SUMMARY_RULES else ""
    noun = "path" if len(changes) == 1 else "paths"
    return f"{len(changes)} {noun} newly {what} ({named}{more})"


def _number(value: float | None) -> str:
    return "none" if value is None else f"{value:g}"


def _pair_said(name: str, pair: Pair | None, unit: str) -> str:
    """``crawl-delay 1 -> 5``."""
    if pair is None:
        return ""
    return f"{name} {_number(pair[0])} -> {_number(pair[1])}{unit}"
