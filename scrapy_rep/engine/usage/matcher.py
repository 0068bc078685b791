"""Usage rules in robots.txt, matched by path (draft-ietf-aipref-attach-05 §3).

A ``Content-Usage`` or ``Content-Signal`` line of a group applies to the paths
its pattern matches, the longest match deciding as for allow and disallow: the
engine's ``CompiledGroup`` finds the deciding patterns.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.rules import UNDECIDED, UNDECIDED_TEXT
from scrapy_rep.engine.url_path import (
    google_escape_pattern,
    match_path,
    normalise,
    path_params_query,
)
from scrapy_rep.engine.usage.preferences import Preferences, UsageDecision, decide
from scrapy_rep.engine.usage.vocabulary import (
    CONTENT_SIGNAL,
    CONTENT_USAGE,
    SIGNAL_KEYS,
    SPEAKS_FOR,
    Problem,
    UsageRule,
    read_rule,
)

__all__ = ["UsageMatcher", "compile_usage"]


class _PathIndex:
    """The rules of one source in a group, matched like allow and disallow.

    attach-05 §3.1: the longest matching path decides, counted in octets of
    the encoded path; rules with identical paths all apply (combined by
    vocab-08 §5.1, where allow/disallow would let the allow win). A rule
    without a path matches every path, more weakly than any rule with one.
    Different patterns of one length that match tie, and all apply too: the
    engine's ``CompiledGroup`` finds them all in one search, within the step
    budget of an allow/disallow check (docs/spec.md §6.8); past it, every key is
    refused (fail closed).
    """

    __slots__ = ("_group", "_pathless", "_refused", "_rules")

    def __init__(self, rules: Sequence[UsageRule], google: bool) -> None:
        escape = google_escape_pattern if google else normalise
        by_pattern: dict[str, list[UsageRule]] = {}
        self._pathless = tuple(rule for rule in rules if not rule.path)
        for rule in rules:
            if rule.path:
                by_pattern.setdefault(escape(rule.path), []).append(rule)
        patterns = list(by_pattern)
        self._rules = [tuple(by_pattern[pattern]) for pattern in patterns]
        # Every pattern as a "disallow" whose line is its index + 1.
        codes = array("I", range(1, len(patterns) + 1))
        self._group = CompiledGroup("\n".join(patterns), codes, google) if patterns else None
        # What a check that gave up (docs/spec.md §6.8) answers: every key refused.
        source = rules[0].source if rules else CONTENT_USAGE
        statement = tuple((key, False) for src, key in SPEAKS_FOR if src == source)
        self._refused = (UsageRule(0, "*", statement, source, UNDECIDED_TEXT),)

    def winners(self, path: str) -> tuple[UsageRule, ...]:
        """The rules that decide ``path`` (normalised): the longest matches'."""
        found = self._group.deciding(path) if self._group is not None else ()
        if not found:
            return self._pathless
        if found[0] == UNDECIDED:
            return self._refused
        return tuple(rule for pattern in found for rule in self._rules[pattern.line - 1])


class UsageMatcher:
    """The usage rules of one selected group: ask it about a URL."""

    __slots__ = ("_indexes", "_quirks", "problems", "rules")

    def __init__(
        self,
        rules: Sequence[UsageRule],
        problems: Sequence[Problem] = (),
        *,
        google_quirks: bool = False,
    ) -> None:
        self.rules = tuple(rules)
        self.problems = tuple(problems)
        self._quirks = google_quirks
        self._indexes = {
            source: _PathIndex([r for r in self.rules if r.source == source], google_quirks)
            for source in (CONTENT_USAGE, CONTENT_SIGNAL)
        }

    def _path(self, url: str) -> str:
        return path_params_query(url) if self._quirks else match_path(url)

    def deciding(self, url: str) -> dict[str, tuple[UsageRule, ...]]:
        """Per source, the rules that decide ``url`` (a URL or a path)."""
        path = self._path(url)
        return {source: index.winners(path) for source, index in self._indexes.items()}

    def usage(self, url: str, *, crawlable: bool = True) -> Preferences:
        """The preferences for ``url``.

        Within a source the longest matching rule decides, its statement
        whole: a label it leaves out is unknown there, whatever a shorter rule
        says. Content-Usage and Content-Signal are two statements, combined
        most restrictively (vocab-08 §5.1). Pass ``crawlable=False`` when the group disallows
        the URL: no preference then applies (attach-05 §3.1).
        """
        if not crawlable:
            return Preferences(crawlable=False)
        winners = self.deciding(url)
        return Preferences.of_rules(rule for rules in winners.values() for rule in rules)

    def signals(self, url: str) -> dict[str, UsageDecision]:
        """The Content-Signal keys as written (``search``, ``ai-input``,
        ``ai-train``) for ``url``, before any mapping: for lint, and for
        comparison with other readers of the policy."""
        found: dict[str, list[tuple[bool, UsageRule]]] = {}
        for rule in self._indexes[CONTENT_SIGNAL].winners(self._path(url)):
            for key, allowed in rule.statement:
                found.setdefault(key, []).append((allowed, rule))
        return {key: decide(found.get(key, ())) for key in SIGNAL_KEYS}

    def __bool__(self) -> bool:
        return bool(self.rules)

    def __repr__(self) -> str:
        return f"<UsageMatcher rules={len(self.rules)} problems={len(self.problems)}>"


def compile_usage(
    lines: Iterable[tuple[int, str, str]],
    *,
    google_quirks: bool = False,
    global_lines: Iterable[tuple[int, str, str]] = (),
) -> UsageMatcher:
    """A matcher for the usage lines of one selected group.

    ``lines``: (line number, key, value) for each ``Content-Usage`` or
    ``Content-Signal`` line of the group's blocks, in any order (the order of
    rules carries no meaning, attach-05 §3.1). ``global_lines``: the lines
    written before any group that apply to this one, read the same way and
    marked ``is_global`` (docs/usage-preferences.md, "Global lines").
    """
    rules: list[UsageRule] = []
    problems: list[Problem] = []
    for is_global, given in ((False, lines), (True, global_lines)):
        for number, key, value in given:
            rule, found = read_rule(number, key, value)
            problems += found
            if rule is not None:
                rules.append(rule._replace(is_global=True) if is_global else rule)
    return UsageMatcher(rules, problems, google_quirks=google_quirks)
