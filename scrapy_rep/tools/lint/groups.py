"""Lint of the groups: what the default parser makes of the blocks (docs/spec.md §5-§6).

Codes (severity, what it means): see ``lint``'s docstring for
``rule-before-user-agent``, ``no-groups``, ``group-never-applies``,
``group-split``, ``duplicate-rule``, ``rule-shadowed`` and
``star-rules-not-inherited``. Kept apart from ``lines.py``, which reads one
line at a time: these checks read the groups the engine's grammar makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, NamedTuple

from scrapy_rep.engine.agents import GLOBAL
from scrapy_rep.engine.grammar import RULES, Block, Body, read_body, rule_text
from scrapy_rep.engine.lines import ALLOW, DISALLOW
from scrapy_rep.engine.rules import Rule
from scrapy_rep.engine.url_path import normalise
from scrapy_rep.tools.lint.finding import ERROR, WARNING, Finding, plural, quoted

__all__ = ["GROUP_SEVERITIES", "GroupView", "group_findings"]

GROUP_SEVERITIES: Final[dict[str, str]] = {
    "rule-before-user-agent": ERROR,
    "group-never-applies": ERROR,
    "group-split": WARNING,
    "duplicate-rule": WARNING,
    "rule-shadowed": WARNING,
    "star-rules-not-inherited": WARNING,
    "no-groups": WARNING,
}


def _finding(line: int, code: str, message: str, hint: str = "") -> Finding:
    return Finding(line, code, GROUP_SEVERITIES[code], message, hint)


class GroupView(NamedTuple):
    """The default parser's blocks as lint checks them (docs/spec.md §5.1-§5.4)."""

    read: Body
    blocks: list[Block]
    rules: list[list[Rule]]  # each block's rules, in file order
    groups: dict[str, list[int]]  # token -> its blocks
    orphans: list[int]  # lines of the rules before any user-agent line

    @classmethod
    def of(cls, body: bytes) -> GroupView:
        read = read_body(body)
        blocks = read.blocks()
        orphans = [line for line, field, _ in read.orphans if field in RULES]
        rules = [block.rules() for block in blocks]
        return cls(read, blocks, rules, read.groups, orphans)

    def agent_line(self, block: int, token: str) -> int:
        """The first user-agent line of a block that names ``token``."""
        return next(agent.line for agent in self.blocks[block].agents if agent.token == token)

    def rules_of(self, members: list[int]) -> list[Rule]:
        return [rule for block in members for rule in self.rules[block]]


def group_findings(view: GroupView) -> Iterator[Finding]:
    for number in view.orphans:
        yield _finding(
            number,
            "rule-before-user-agent",
            "this rule comes before any user-agent line: it belongs to no group and is ignored",
            "put a 'User-agent: *' line (or the right agent) above it",
        )
    if not view.blocks:
        yield _finding(
            1,
            "no-groups",
            "there is no user-agent line: every crawler may fetch everything",
            "start a group with 'User-agent: *' if some paths should be disallowed",
        )
        return
    yield from _dead_blocks(view)
    yield from _split(view)
    for who, members in _sharing(view.groups):
        yield from _shadowed(who, view.rules_of(members))
    yield from _not_inherited(view)


def _sharing(groups: dict[str, list[int]]) -> Iterator[tuple[str, list[int]]]:
    """Each distinct set of blocks once, with the agents it is the group of
    (shown): 10,000 agents over one block of rules are checked once, not
    10,000 times, and a shadowed rule is reported once, not once per agent."""
    tokens: dict[tuple[int, ...], list[str]] = {}
    for token, members in groups.items():
        tokens.setdefault(tuple(members), []).append(token)
    for key, names in tokens.items():
        who = quoted(names[0])
        if len(names) > 1:
            who += f" (and {plural(len(names) - 1, 'other agent')} of the same group)"
        yield who, list(key)


def _dead_blocks(view: GroupView) -> Iterator[Finding]:
    for block, rules in zip(view.blocks, view.rules):
        if rules and not any(agent.token for agent in block.agents):
            first, last = rules[0].line, rules[-1].line
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            yield _finding(
                block.agents[0].line,
                "group-never-applies",
                "no user-agent line of this group names a crawler: no crawler obeys its "
                f"{plural(len(rules), 'rule')} ({where})",
                "write a token such as 'googlebot', or '*' alone for every crawler",
            )


def _split(view: GroupView) -> Iterator[Finding]:
    for token, members in view.groups.items():
        first = view.agent_line(members[0], token)
        for block in members[1:]:
            yield _finding(
                view.agent_line(block, token),
                "group-split",
                f"{quoted(token)} already has a group at line {first}: the groups are merged "
                "(RFC 9309), but some crawlers read only the first",
                f"put every rule for {quoted(token)} in one group",
            )


def _same_urls_key(pattern: str) -> str:
    """Patterns with equal keys match exactly the same URLs (docs/spec.md §6.4, §6.5)."""
    normal = normalise(pattern)
    if normal.endswith("$"):
        return normal
    return normal.rstrip("*") or "/"


def _shadowed(who: str, rules: list[Rule]) -> Iterator[Finding]:
    """docs/spec.md §6.6: among rules matching the same URLs, one always decides.
    Linear in the rules: each is filed under its set of URLs once."""
    alike: dict[str, list[Rule]] = {}
    for rule in rules:
        alike.setdefault(_same_urls_key(rule.pattern), []).append(rule)
    for same in alike.values():
        if len(same) < 2:
            continue
        winner = max(same, key=lambda r: (len(normalise(r.pattern)), r.kind == ALLOW))
        for rule in same:
            if rule is winner:
                continue
            written = rule_text(winner)
            if rule.kind == winner.kind:
                yield _finding(
                    rule.line,
                    "duplicate-rule",
                    f"for {who}, this rule has the same effect as "
                    f"{quoted(written)} at line {winner.line}",
                    "remove one of them",
                )
            else:
                why = (
                    "allow wins a tie"
                    if len(normalise(rule.pattern)) == len(normalise(winner.pattern))
                    else "the longer pattern wins"
                )
                yield _finding(
                    rule.line,
                    "rule-shadowed",
                    f"for {who}, this rule never decides: {quoted(written)} at line "
                    f"{winner.line} matches the same URLs and {why}",
                    "keep only the rule you mean",
                )


def _not_inherited(view: GroupView) -> Iterator[Finding]:
    """docs/spec.md §5.5: a crawler with its own group ignores every ``*`` rule."""
    star = view.rules_of(view.groups.get(GLOBAL, []))
    star_disallows: dict[str, Rule] = {}  # set of URLs -> the first rule naming it
    for rule in star:  # in file order
        if rule.kind == DISALLOW:
            key = _same_urls_key(rule.pattern)
            if key != "/":
                star_disallows.setdefault(key, rule)
    if not star_disallows:
        return
    # Per distinct set of blocks, once: (how many '*' sets of URLs it lacks, the first).
    lacking: dict[tuple[int, ...], tuple[int, Rule | None]] = {}
    for token, members in view.groups.items():
        if token == GLOBAL:
            continue
        ids = tuple(members)
        if ids not in lacking:
            lacking[ids] = _lacking(view.rules_of(members), star_disallows)
        count, first = lacking[ids]
        if first is not None:
            yield _finding(
                view.agent_line(members[0], token),
                "star-rules-not-inherited",
                f"the group for {quoted(token)} lacks {plural(count, 'Disallow rule')} "
                f"of the '*' group (first: {quoted(first.pattern)} at line {first.line}); "
                f"{quoted(token)} obeys only its own group",
                f"copy the '*' rules that {quoted(token)} must obey into its group",
            )


def _lacking(own: list[Rule], star_disallows: dict[str, Rule]) -> tuple[int, Rule | None]:
    """How many of the '*' group's disallowed sets of URLs a group does not
    name, and the first of them (None: nothing to report). Linear in the
    group's own rules: the '*' ones are walked only past those it names."""
    disallowed = {_same_urls_key(r.pattern) for r in own if r.kind == DISALLOW}
    if not disallowed or "/" in disallowed:
        return 0, None  # a group that allows or disallows everything says what it means
    patterns = {_same_urls_key(rule.pattern) for rule in own}
    named = sum(key in star_disallows for key in patterns)
    if named == len(star_disallows):
        return 0, None
    first = next(rule for key, rule in star_disallows.items() if key not in patterns)
    return len(star_disallows) - named, first
