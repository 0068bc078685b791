"""A robots.txt body turned into groups, rules and sitemaps (SPEC §4, §5, §7).

``RobotsTxt.parse`` never raises on content: a line it cannot read is a line
it ignores. Each group is compiled into a matcher the first time an agent
selects it, and kept: parsing stays cheap for the many groups a crawler never
asks about, and each asked-for group is compiled exactly once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple
from urllib.parse import urlsplit

from scrapy_rep import lines as _lines
from scrapy_rep.agents import crawler_tokens, group_token, select_group
from scrapy_rep.matching import (
    ALLOW,
    DISALLOW,
    CompiledGroup,
    Rule,
    google_escape_pattern,
    normalise,
    path_params_query,
)

__all__ = ["RobotsTxt", "Rule", "Verdict"]

logger = logging.getLogger(__name__)

UserAgent = str | Sequence[str]

_ROBOTS_PATH = "/robots.txt"


class Verdict(NamedTuple):
    """Why a URL is allowed or not."""

    allowed: bool
    rule: Rule | None  # the deciding rule; None when no rule matched
    agent: str | None  # the group's token, "*", or None when no group applies


class _Block(NamedTuple):
    """The rules written under one run of user-agent lines."""

    rules: tuple[Rule, ...]
    crawl_delay: float | None


class RobotsTxt:
    """A parsed robots.txt: ask it whether an agent may fetch a URL."""

    __slots__ = ("_blocks", "_compiled", "_groups", "_quirks", "sitemaps")

    def __init__(
        self,
        blocks: Sequence[_Block],
        groups: dict[str, tuple[int, ...]],
        sitemaps: tuple[str, ...],
        google_quirks: bool,
    ) -> None:
        self._blocks = tuple(blocks)
        self._groups = groups
        self._quirks = google_quirks
        self._compiled: dict[object, tuple[str | None, CompiledGroup | None]] = {}
        #: Absolute sitemap URLs in file order, de-duplicated (SPEC §7.1).
        self.sitemaps = sitemaps

    @classmethod
    def parse(cls, body: bytes | str, *, google_quirks: bool = False) -> RobotsTxt:
        """Parse a body (bytes as served, or text); never raises on content.

        ``google_quirks`` adds what Google's open-source library does beyond
        RFC 9309 and Google's documentation: misspelt and prefixed keys, a
        missing colon, 16,663-byte lines, the ``index.html`` directory rule,
        verbatim URLs and agents, merged groups for several agents, and no
        ``/robots.txt`` exception.
        """
        return _Parser(google_quirks).parse(body)

    # --- questions ---------------------------------------------------------

    def allowed(self, url: str, user_agent: UserAgent, *, use_global: bool = True) -> bool:
        """May an agent with these tokens fetch ``url``?

        ``user_agent`` is a token, a full User-Agent string, or a sequence of
        tokens in preference order. ``use_global=False`` makes the ``*``
        group not apply (SPEC §5.8, Google's AdsBot rule).
        """
        return self.explain(url, user_agent, use_global=use_global).allowed

    def explain(self, url: str, user_agent: UserAgent, *, use_global: bool = True) -> Verdict:
        """The verdict with the deciding rule and the group's token."""
        agent, group = self._group_for(user_agent, use_global)
        path = path_params_query(url)
        if not self._quirks:
            if path == _ROBOTS_PATH:
                return Verdict(True, None, agent)  # SPEC §6.9
            path = normalise(path)
        rule = group.decide(path) if group is not None else None
        return Verdict(rule is None or rule.kind == ALLOW, rule, agent)

    def crawl_delay(self, user_agent: UserAgent) -> float | None:
        """The ``crawl-delay`` of the agent's group, if it has one (never used for access)."""
        tokens = crawler_tokens(user_agent, self._quirks)
        _, block_ids = select_group(self._groups, tokens, self._quirks)
        delays = [
            delay
            for ids in block_ids
            for index in ids
            if (delay := self._blocks[index].crawl_delay) is not None
        ]
        return delays[0] if delays else None

    @property
    def agents(self) -> tuple[str, ...]:
        """The tokens that have a group of their own, ``*`` included."""
        return tuple(self._groups)

    @property
    def rule_count(self) -> int:
        return sum(len(block.rules) for block in self._blocks)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt agents={len(self._groups)} rules={self.rule_count} "
            f"sitemaps={len(self.sitemaps)}>"
        )

    # --- compilation ---------------------------------------------------------

    def _group_for(
        self, user_agent: UserAgent, use_global: bool
    ) -> tuple[str | None, CompiledGroup | None]:
        key = (user_agent if isinstance(user_agent, str) else tuple(user_agent), use_global)
        found = self._compiled.get(key)
        if found is None:
            tokens = crawler_tokens(user_agent, self._quirks)
            agent, block_ids = select_group(self._groups, tokens, self._quirks, use_global)
            found = (agent, self._compile(block_ids) if agent is not None else None)
            self._compiled[key] = found
        return found

    def _compile(self, block_ids: list[tuple[int, ...]]) -> CompiledGroup:
        rules = [rule for ids in block_ids for index in ids for rule in self._blocks[index].rules]
        if not self._quirks:
            return CompiledGroup((rule, normalise(rule.pattern)) for rule in rules)
        extended = [(rule, google_escape_pattern(rule.pattern)) for rule in rules]
        extended += [(rule, rule.pattern) for rule in map(_index_html_rule, rules) if rule]
        return CompiledGroup(extended)


def _index_html_rule(rule: Rule) -> Rule | None:
    """Google's library: ``Allow: /d/index.htm*`` also allows ``/d/`` exactly."""
    if rule.kind != ALLOW:
        return None
    slash = rule.pattern.rfind("/")
    if slash < 0 or not rule.pattern.startswith("index.htm", slash + 1):
        return None
    return Rule(ALLOW, rule.pattern[: slash + 1] + "$", rule.line)


class _Parser:
    """One pass over the lines, building blocks of rules (SPEC §5.1-§5.4)."""

    def __init__(self, google_quirks: bool) -> None:
        self.quirks = google_quirks
        self.blocks: list[_Block] = []
        self.groups: dict[str, list[int]] = {}
        self.sitemaps: dict[str, None] = {}
        self.rules: list[Rule] | None = None  # rules of the open block
        self.crawl_delay: float | None = None
        self.reading_agents = False

    def parse(self, body: bytes | str) -> RobotsTxt:
        text = _lines.body_text(body)
        quirks = self.quirks
        directive = _lines.directive
        for number, line in enumerate(_lines.split_lines(text), 1):
            if not line:
                continue
            if quirks:
                line = _lines.cut_line(line)
            found = directive(line)
            if found is None or (not quirks and (found.typo or found.missing_colon)):
                continue
            field = found.field
            if field == _lines.ALLOW or field == _lines.DISALLOW:
                self._rule(field, found.value, number)
            elif field == _lines.USER_AGENT:
                self._agent(found.value)
            elif field == _lines.SITEMAP:
                self._sitemap(found.value)
            elif found.key == "crawl-delay" and self.rules is not None:
                self._crawl_delay(found.value)
        self._close_block()
        groups = {token: tuple(ids) for token, ids in self.groups.items()}
        return RobotsTxt(self.blocks, groups, tuple(self.sitemaps), quirks)

    def _agent(self, value: str) -> None:
        if not self.reading_agents:
            self._close_block()
            self.rules = []
            self.reading_agents = True
        token = group_token(value, self.quirks)
        if token:
            ids = self.groups.setdefault(token, [])
            block_id = len(self.blocks)
            if not ids or ids[-1] != block_id:
                ids.append(block_id)

    def _rule(self, field: str, value: str, number: int) -> None:
        if self.rules is None:
            return  # SPEC §5.3: before any user-agent line
        self.reading_agents = False
        if value:  # SPEC §6.2: an empty value is ignored
            self.rules.append(Rule(ALLOW if field == _lines.ALLOW else DISALLOW, value, number))

    def _sitemap(self, value: str) -> None:
        try:
            parts = urlsplit(value)
            absolute = bool(parts.scheme and parts.netloc)
        except ValueError:
            absolute = False
        if absolute:
            self.sitemaps[value] = None
        else:
            logger.debug("Skipping sitemap %r: not an absolute URL", value)

    def _crawl_delay(self, value: str) -> None:
        try:
            delay = float(value)
        except ValueError:
            return
        if delay >= 0 and delay == delay and self.crawl_delay is None:
            self.crawl_delay = delay

    def _close_block(self) -> None:
        if self.rules is not None:
            self.blocks.append(_Block(tuple(self.rules), self.crawl_delay))
        self.rules = None
        self.crawl_delay = None
