"""Answers: per usage label, whether it is allowed, and which statements said so.

vocab-08 §5.1 combines statements about one asset: a disallow anywhere wins,
then an allow, else the preference is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final, NamedTuple

from scrapy_rep.engine.usage.vocabulary import ALLOWED, DENIED, LABELS, UNSTATED, UsageRule

__all__ = ["Preferences", "UsageDecision", "combine", "decide"]


class UsageDecision(NamedTuple):
    """The preference for one label, and the statements that gave it."""

    state: str  # ALLOWED, DENIED or UNSTATED
    rules: tuple[UsageRule, ...] = ()

    @property
    def line(self) -> int | None:
        """The first deciding line (None: unstated, or the HTTP header)."""
        return self.rules[0].line if self.rules else None


_UNSTATED: Final = UsageDecision(UNSTATED)


def decide(found: Iterable[tuple[bool, UsageRule]]) -> UsageDecision:
    """vocab-08 §5.1: any disallow wins, then any allow, else unknown."""
    denied: list[UsageRule] = []
    allowed: list[UsageRule] = []
    for is_allowed, rule in found:
        (allowed if is_allowed else denied).append(rule)
    if denied:
        return UsageDecision(DENIED, tuple(denied))
    if allowed:
        return UsageDecision(ALLOWED, tuple(allowed))
    return _UNSTATED


class Preferences(Mapping[str, UsageDecision]):
    """label -> UsageDecision for every label in ``LABELS``; immutable.

    ``crawlable`` is False when robots.txt disallows the path: then nothing
    is stated, whatever the usage lines say (attach-05 §3.1).
    """

    __slots__ = ("_decisions", "crawlable")

    def __init__(
        self, decisions: Mapping[str, UsageDecision] | None = None, *, crawlable: bool = True
    ) -> None:
        given = decisions or {}
        self._decisions = {label: given.get(label, _UNSTATED) for label in LABELS}
        self.crawlable = crawlable

    @classmethod
    def of_rules(cls, rules: Iterable[UsageRule], *, crawlable: bool = True) -> Preferences:
        """What these statements say together (most restrictive per label)."""
        found: dict[str, list[tuple[bool, UsageRule]]] = {}
        for rule in rules:
            for label, allowed in rule.preferences.items():
                found.setdefault(label, []).append((allowed, rule))
        return cls({label: decide(pairs) for label, pairs in found.items()}, crawlable=crawlable)

    def __getitem__(self, label: str) -> UsageDecision:
        return self._decisions[label]

    def __iter__(self) -> Iterator[str]:
        return iter(self._decisions)

    def __len__(self) -> int:
        return len(self._decisions)

    def state(self, label: str) -> str:
        """The state of any label: one outside ``LABELS`` is unstated."""
        return self._decisions.get(label, _UNSTATED).state

    def denied(self, labels: Iterable[str] | None = None) -> tuple[str, ...]:
        """The labels (of these, or all) whose use the site disallows."""
        wanted = LABELS if labels is None else labels
        return tuple(label for label in wanted if self.state(label) == DENIED)

    def to_meta(self) -> dict[str, object]:
        """Plain data for ``response.meta["rep_usage"]`` and logs."""
        return {
            "crawlable": self.crawlable,
            "labels": {
                label: {
                    "state": decision.state,
                    "by": [
                        {
                            "source": rule.source,
                            "line": rule.line,
                            "text": rule.text,
                            "global": rule.is_global,
                        }
                        for rule in decision.rules
                    ],
                }
                for label, decision in self._decisions.items()
            },
        }

    def __repr__(self) -> str:
        states = ", ".join(f"{label}={d.state}" for label, d in self._decisions.items())
        return f"<Preferences {states}{'' if self.crawlable else ' not crawlable'}>"


def combine(*preferences: Preferences) -> Preferences:
    """Several statements about one asset (robots.txt and the header, say).

    vocab-08 §5.1: per label, a disallow anywhere wins, else an allow, else
    unknown; every statement that gave the result is kept.
    """
    decisions = {
        label: decide(
            (decision.state == ALLOWED, rule)
            for prefs in preferences
            for decision in (prefs[label],)
            if decision.state != UNSTATED
            for rule in decision.rules
        )
        for label in LABELS
    }
    return Preferences(decisions, crawlable=all(prefs.crawlable for prefs in preferences))
