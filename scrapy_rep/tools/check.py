"""``scrapy-rep check``: the verdict for each URL, with why, as text and JSON.

Every verdict, and why it is what it is, comes from the engine
(``RobotsTxt.explain`` and ``RobotsTxt.reason``); this module only says it.
The tester serves the same answers (``tools.tester.answers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from scrapy_rep.engine.grammar import rule_text
from scrapy_rep.engine.robotstxt import NO_GROUP, ROBOTS_TXT, ROBOTS_TXT_TEXT, RobotsTxt, Rule
from scrapy_rep.engine.rules import UNDECIDED, UNDECIDED_TEXT
from scrapy_rep.engine.site_wide import SiteWide, beside_verdicts
from scrapy_rep.engine.usage import Preferences
from scrapy_rep.tools.fetch.source import Source
from scrapy_rep.tools.lint.finding import printable

__all__ = [
    "Checked",
    "check_json",
    "check_urls",
    "explanation",
    "refused",
    "site_wide_lines",
    "usage_lines",
]


class Checked(NamedTuple):
    """The verdict for one URL, with why."""

    url: str
    allowed: bool
    reason: str  # ``RobotsTxt.reason``, or "unavailable"
    group: str | None
    rule: Rule | None
    usage: Preferences | None = None  # with --purpose: what robots.txt states
    #: The values of the lines outside any group shown beside the verdicts
    #: (``site_wide.beside_verdicts``: the RSL 1.0 licence terms, docs/spec.md
    #: §7.3): they cover every URL of the origin, so each result carries them.
    site_wide: tuple[tuple[SiteWide, tuple[str, ...]], ...] = ()


def check_urls(
    source: Source,
    urls: Sequence[str],
    agents: Sequence[str],
    google_quirks: bool,
    purposes: Sequence[str] = (),
) -> list[Checked]:
    """Decide every URL for an agent's tokens (docs/spec.md §5.5-§6.9), and with
    ``purposes`` what robots.txt's usage lines state for it."""
    if source.allow_all:
        nothing = Preferences() if purposes else None
        return [Checked(url, True, "unavailable", None, None, nothing) for url in urls]
    robots = RobotsTxt.parse(source.body, google_quirks=google_quirks)
    results = []
    shown = beside_verdicts(robots.site_wide)
    for url in urls:
        verdict = robots.explain(url, agents)
        reason = robots.reason(url, verdict)
        usage = robots.usage(url, agents) if purposes else None
        results.append(
            Checked(url, verdict.allowed, reason, verdict.agent, verdict.rule, usage, shown)
        )
    return results


def refused(checked: Checked, purposes: Sequence[str]) -> tuple[str, ...]:
    """The purposes robots.txt refuses for this URL."""
    return checked.usage.denied(purposes) if checked.usage is not None else ()


def usage_lines(checked: Checked, purposes: Sequence[str]) -> list[str]:
    """One line per purpose: its state and the lines that decided it."""
    usage = checked.usage
    if usage is None:
        return []
    out = []
    for label in purposes:
        decision = usage[label]
        if not usage.crawlable:
            why = "the URL is disallowed, so no preference applies"
        elif decision.rules:
            by = "; ".join(
                f"line {rule.line}{' (global)' if rule.is_global else ''}: {rule.written}"
                if rule.line
                else rule.text
                for rule in decision.rules
            )
            why = f"by {by}"
        else:
            why = "no Content-Usage or Content-Signal line states it"
        out.append(f"  usage {label}: {decision.state} ({why})")
    return out


def explanation(checked: Checked, tokens: Sequence[str], source: Source) -> str:
    rule = checked.rule
    if rule == UNDECIDED:
        return f'group "{checked.group}": {UNDECIDED_TEXT}'
    if rule is not None:
        return f'rule "{rule_text(rule)}" at line {rule.line}, group "{checked.group}"'
    if checked.reason == "unavailable":
        return source.allow_all
    if checked.reason == ROBOTS_TXT:
        return ROBOTS_TXT_TEXT
    if checked.reason == NO_GROUP:
        return f"no group for {' or '.join(tokens)}: everything allowed"
    return f'no rule matched, group "{checked.group}"'


def check_json(checked: Checked, purposes: Sequence[str]) -> dict[str, Any]:
    rule = checked.rule
    found: dict[str, Any] = {
        "url": printable(checked.url),
        "allowed": checked.allowed,
        "reason": checked.reason,
        "group": checked.group,
        "rule": None
        if rule is None
        else {"kind": rule.kind, "pattern": printable(rule.pattern), "line": rule.line},
    }
    if checked.usage is not None:
        labels = checked.usage.to_meta()["labels"]
        assert isinstance(labels, dict)
        found["usage"] = {label: labels[label] for label in purposes}
    for kind, values in checked.site_wide:
        if values:
            found[kind.values] = [printable(value) for value in values]
    return found


def site_wide_lines(results: Sequence[Checked]) -> list[str]:
    """The values shown beside the verdicts (the site's licence URLs, docs/spec.md
    §7.3), once for all the URLs checked."""
    shown = results[0].site_wide if results else ()
    return [f"{kind.key:<10}  {value}  ({kind.about})" for kind, vals in shown for value in vals]
