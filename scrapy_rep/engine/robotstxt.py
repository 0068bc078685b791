"""A robots.txt body turned into groups, rules and the lines outside them (docs/spec.md §4-§7).

``RobotsTxt.parse`` never raises on content: a line it cannot read is a line
it ignores. Each group is compiled into a matcher the first time an agent
selects it, and kept: parsing stays cheap for the many groups a crawler never
asks about, and each asked-for group is compiled exactly once.
"""

from __future__ import annotations

import math
import re
from array import array
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from scrapy_rep.engine import grammar
from scrapy_rep.engine.agents import crawler_tokens, select_group
from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.lines import ALLOW
from scrapy_rep.engine.origin import ROBOTS_PATH
from scrapy_rep.engine.rules import ALLOW_BIT, Rule, rule_of
from scrapy_rep.engine.site_wide import kept_values
from scrapy_rep.engine.url_path import (
    PLAIN_PATH_BYTES,
    PLAIN_WEB_URL,
    match_path,
    path_of,
    path_params_query,
)
from scrapy_rep.engine.usage import Preferences, UsageMatcher, compile_usage

__all__ = [
    "NO_GROUP",
    "NO_RULE",
    "ROBOTS_TXT",
    "ROBOTS_TXT_TEXT",
    "RULE",
    "RobotsTxt",
    "Rule",
    "Verdict",
    "group_rules",
]

UserAgent = str | Sequence[str]

_plain_path = PLAIN_WEB_URL.match
#: Keeps each byte of a path that needs no normalisation and changes every
#: other one: such a path's bytes are translated into themselves.
_KEEP_PLAIN: bytes = bytes(b if b in PLAIN_PATH_BYTES else b ^ 1 for b in range(256))


#: Why a verdict is what it is (``RobotsTxt.reason``): a rule decided; the
#: group has no rule that matches; no group applies; the URL is the origin's
#: robots.txt, always allowed (docs/spec.md §6.9).
RULE: Final = "rule"
NO_RULE: Final = "no-rule"
NO_GROUP: Final = "no-group"
ROBOTS_TXT: Final = "robots-txt"
#: What to say of ``ROBOTS_TXT``.
ROBOTS_TXT_TEXT: Final = "the robots.txt URL itself is always allowed"


class Verdict(NamedTuple):
    """Why a URL is allowed or not."""

    allowed: bool
    rule: Rule | None  # the deciding rule; None when no rule matched
    agent: str | None  # the group's token, "*", or None when no group applies


class _Block(NamedTuple):
    """The rules written under one run of user-agent lines, stored compactly:
    the patterns as one string (one per line) and their kind and line packed
    in an array. Rule objects are made only for the groups a crawler asks about.
    """

    patterns: str
    codes: array[int]
    #: Pacing per agent token: each line belongs to the agent lines just
    #: before it, as crawler-commons, Protego and Google's forks read it.
    crawl_delay: dict[str, float] | None
    request_rate: dict[str, float] | None  # seconds per request
    #: ``Content-Usage`` / ``Content-Signal`` lines per agent token, as
    #: (line, key, value), read like the pacing lines; None when the block has
    #: none, so a file without them costs nothing more. Parsed on first use.
    usage: dict[str, list[tuple[int, str, str]]] | None = None


def _selection_key(user_agent: UserAgent, use_global: bool) -> object:
    """What a group selection is remembered under: the agent as asked."""
    key: object = user_agent if isinstance(user_agent, str) else tuple(user_agent)
    return key if use_global else (key, False)


# One class a little past 250 lines: the one object a crawl and the tools ask
# (rules, pacing, usage, site-wide lines); what each answer is made of lives
# elsewhere (compiled_group, engine/usage/, site_wide), here only its accessor.
class RobotsTxt:
    """A parsed robots.txt: ask it whether an agent may fetch a URL."""

    __slots__ = (
        "_blocks",
        "_compiled",
        "_global_usage",
        "_groups",
        "_origin",
        "_outside",
        "_quirks",
        "_selected",
        "_usage_compiled",
        "_usage_selected",
    )

    def __init__(
        self,
        blocks: Sequence[_Block],
        groups: dict[str, tuple[int, ...]],
        google_quirks: bool,
        outside: tuple[tuple[str, tuple[str, ...]], ...],
        global_usage: tuple[tuple[int, str, str], ...] = (),
    ) -> None:
        self._blocks = tuple(blocks)
        self._groups = groups
        self._quirks = google_quirks
        #: Scheme and host of the last URL asked about (``_path``): most
        #: questions are about the same origin. To start with, an empty host.
        self._origin = "https://"
        # agent -> (token, group), and block ids -> group: a group selected by
        # several agents is compiled once.
        self._selected: dict[object, tuple[str | None, CompiledGroup | None]] = {}
        self._compiled: dict[tuple[tuple[int, ...], ...], CompiledGroup | None] | None = None
        # Made when first asked for (most files are never asked about usage):
        # a parsed file's memory is mostly such small fixed costs.
        self._usage_compiled: dict[object, UsageMatcher] | None = None
        self._usage_selected: dict[object, UsageMatcher] | None = None
        #: (key, values) of each kind of line outside any group that has some
        #: (``site_wide``): pairs in a tuple weigh half a dict, in every parsed file.
        self._outside = outside
        #: The Content-Signal lines before any user-agent line, as (line, key,
        #: value): the statement of every group that makes none of its own.
        self._global_usage = global_usage

    @classmethod
    def parse(cls, body: bytes | str, *, google_quirks: bool = False) -> RobotsTxt:
        """Parse a body (bytes as served, or text); never raises on content.

        ``google_quirks`` adds what Google's open-source library does beyond
        RFC 9309 and Google's documentation: misspelt and prefixed keys, a
        missing colon, 16,663-byte lines, the ``index.html`` directory rule,
        verbatim URLs and agents, merged groups for several agents, and no
        ``/robots.txt`` exception.
        """
        read = grammar.read_body(body, google_quirks=google_quirks)
        groups = {token: tuple(ids) for token, ids in read.groups.items()}
        blocks = list(map(_stored, read.patterns, read.codes, read.notes))
        # A file with no line outside the groups, or no global line, makes nothing for them.
        outside = kept_values(read.site_wide) if read.site_wide else ()
        signals = _global_signals(read.orphans) if read.orphans else ()
        return cls(blocks, groups, google_quirks, outside=outside, global_usage=signals)

    @property
    def site_wide(self) -> Mapping[str, tuple[str, ...]]:
        """The values of the lines outside any group (``site_wide.SITE_WIDE``),
        by key: those each kind can use, in file order, each once (docs/spec.md
        §7). A kind with none has no entry."""
        return dict(self._outside)

    def _values(self, key: str) -> tuple[str, ...]:
        for kind, values in self._outside:
            if kind == key:
                return values
        return ()

    @property
    def sitemaps(self) -> tuple[str, ...]:
        """Absolute sitemap URLs in file order, de-duplicated (docs/spec.md §7.1)."""
        return self._values("sitemap")

    @property
    def licenses(self) -> tuple[str, ...]:
        """Absolute ``License`` URLs (RSL 1.0), read as sitemaps are (docs/spec.md §7.3)."""
        return self._values("license")

    # --- questions ---------------------------------------------------------

    def allowed(self, url: str, user_agent: UserAgent, *, use_global: bool = True) -> bool:
        """May an agent with these tokens fetch ``url``?

        ``user_agent`` is a token, a full User-Agent string, or a sequence of
        tokens in preference order. ``use_global=False`` makes the ``*``
        group not apply (docs/spec.md §5.8, Google's AdsBot rule).
        """
        # The hot path of a crawl: one dict probe for the group, keyed by the
        # agent as asked (a token, or the tuple of tokens a crawler asks with:
        # ``_selection_key``); a first question, or a list, takes the long way.
        try:
            group = (
                self._selected[user_agent] if use_global else self._group_for(user_agent, False)
            )[1]
        except (KeyError, TypeError):
            group = self._group_for(user_agent, use_global)[1]
        if group is None:
            return True
        if self._quirks:
            return group.allows(path_params_query(url))
        # ``match_path`` for the usual URL, in C and without a regex: the
        # origin of the last one, then a path that needs no normalisation.
        # (``str.partition`` and ``startswith`` cost more.)
        path = url.removeprefix(self._origin)
        if (
            path == url  # not of that origin
            or not path
            or path[0] != "/"
            or not path.isascii()
            or (raw := path.encode()).translate(_KEEP_PLAIN) != raw
            or "/." in path
        ):
            path = self._path(url)
        return group.allows(path) or path == ROBOTS_PATH  # docs/spec.md §6.9, asked of drops only

    def _path(self, url: str) -> str:
        """``match_path(url)``, remembering the URL's origin when its path
        needs no normalisation: ``allowed`` then reads the path of the next
        URL of that origin as this regex would (the host has no "/")."""
        plain = _plain_path(url)
        if plain is not None:
            self._origin = url[: plain.start(1)]
        return path_of(plain, url)

    def explain(self, url: str, user_agent: UserAgent, *, use_global: bool = True) -> Verdict:
        """The verdict with the deciding rule and the group's token."""
        agent, group = self._group_for(user_agent, use_global)
        path = path_params_query(url) if self._quirks else match_path(url)
        if path == ROBOTS_PATH and not self._quirks:
            return Verdict(True, None, agent)  # docs/spec.md §6.9
        rule = group.decide(path) if group is not None else None
        return Verdict(rule is None or rule.kind == ALLOW, rule, agent)

    def reason(self, url: str, verdict: Verdict) -> str:
        """Why ``verdict``, ``explain``'s answer for ``url``, is what it is:
        ``RULE``, ``NO_GROUP``, ``ROBOTS_TXT`` or ``NO_RULE``."""
        if verdict.rule is not None:
            return RULE
        if verdict.agent is None:
            return NO_GROUP
        if not self._quirks and match_path(url) == ROBOTS_PATH:
            return ROBOTS_TXT
        return NO_RULE

    def crawl_delay(self, user_agent: UserAgent) -> float | None:
        """The ``crawl-delay`` of the agent's group, if it has one (never used for access)."""
        return self._group_value(user_agent, "crawl_delay")

    def request_rate(self, user_agent: UserAgent) -> float | None:
        """Seconds per request from the group's ``request-rate`` (``1/5`` -> 5.0), if any."""
        return self._group_value(user_agent, "request_rate")

    def _group_value(self, user_agent: UserAgent, name: str) -> float | None:
        """The first value written for the selected group's own token.

        A pacing line applies to the agent lines just before it, not to the
        whole group: ``user-agent: a`` / ``crawl-delay: 5`` / ``user-agent: b``
        is one group for the rules, but b has no delay.
        """
        tokens = crawler_tokens(user_agent, self._quirks)
        for token, ids in select_group(self._groups, tokens, self._quirks)[1]:
            for index in ids:
                values: dict[str, float] | None = getattr(self._blocks[index], name)
                if values and token in values:
                    return values[token]
        return None

    # --- what the content may be used for (docs/usage-preferences.md) ----------

    @property
    def has_usage(self) -> bool:
        """Does any group, or a global line, state usage preferences? False:
        ``usage`` is always empty."""
        return bool(self._global_usage) or any(block.usage for block in self._blocks)

    def usage(self, url: str, user_agent: UserAgent, *, use_global: bool = True) -> Preferences:
        """What the selected group's ``Content-Usage`` / ``Content-Signal``
        lines say about ``url`` (longest path wins; each label's ``UsageDecision``
        names its lines). A URL the group disallows has no preferences
        (draft-ietf-aipref-attach-05 §3.1): ``crawlable`` is False then.
        """
        crawlable = self.allowed(url, user_agent, use_global=use_global)
        matcher = self.usage_matcher(user_agent, use_global=use_global)
        return matcher.usage(url, crawlable=crawlable)

    def usage_matcher(self, user_agent: UserAgent, *, use_global: bool = True) -> UsageMatcher:
        """The usage rules of the agent's group, compiled once, with their problems."""
        key = _selection_key(user_agent, use_global)
        selected, compiled = self._usage_selected, self._usage_compiled
        if selected is None or compiled is None:
            selected = self._usage_selected = {}
            compiled = self._usage_compiled = {}
        matcher = selected.get(key)
        if matcher is None:
            tokens = crawler_tokens(user_agent, self._quirks)
            chosen = select_group(self._groups, tokens, self._quirks, use_global)[1]
            # Agents sharing a group's rules may not share its usage lines: the
            # compiled matcher is per (token, blocks), not per blocks.
            group_key = tuple(chosen)
            matcher = compiled.get(group_key)
            if matcher is None:
                lines = _usage_lines(self._blocks, chosen)
                matcher = compile_usage(
                    lines,
                    google_quirks=self._quirks,
                    global_lines=_global_for(self._global_usage, lines),
                )
                compiled[group_key] = matcher
            selected[key] = matcher
        return matcher

    @property
    def agents(self) -> tuple[str, ...]:
        """The tokens that have a group of their own, ``*`` included."""
        return tuple(self._groups)

    @property
    def rule_count(self) -> int:
        return sum(len(block.codes) for block in self._blocks)

    def __repr__(self) -> str:
        return (
            f"<RobotsTxt agents={len(self._groups)} rules={self.rule_count} "
            f"sitemaps={len(self.sitemaps)}>"
        )

    # --- compilation ---------------------------------------------------------

    def _group_for(
        self, user_agent: UserAgent, use_global: bool
    ) -> tuple[str | None, CompiledGroup | None]:
        key = _selection_key(user_agent, use_global)
        found = self._selected.get(key)
        if found is None:
            tokens = crawler_tokens(user_agent, self._quirks)
            agent, chosen = select_group(self._groups, tokens, self._quirks, use_global)
            block_ids = [ids for _, ids in chosen]
            group_key = tuple(block_ids)
            compiled = self._compiled
            if compiled is None:  # made on the first question, as the usage dicts
                compiled = self._compiled = {}
            if group_key in compiled:
                group = compiled[group_key]
            else:
                blocks = [self._blocks[i] for ids in block_ids for i in ids]
                group = compiled[group_key] = _compile(blocks, self._quirks)
            found = self._selected[key] = (agent, group)
        return found


def group_rules(
    robots: RobotsTxt, user_agent: UserAgent, *, use_global: bool = True
) -> tuple[str | None, tuple[Rule, ...]]:
    """The group these tokens select in ``robots`` (its token, ``*``, or None
    when none applies) and its rules as written, in file order: what is said
    of a whole file (``cache.standing.forbids_everything``), not a URL's check."""
    tokens = crawler_tokens(user_agent, robots._quirks)
    agent, chosen = select_group(robots._groups, tokens, robots._quirks, use_global)
    rules: list[Rule] = []
    for _, ids in chosen:
        for index in ids:
            block = robots._blocks[index]
            if block.codes:
                rules += map(rule_of, block.patterns.split("\n"), block.codes)
    return agent, tuple(rules)


def _usage_lines(
    blocks: Sequence[_Block], chosen: list[tuple[str, tuple[int, ...]]]
) -> list[tuple[int, str, str]]:
    """Each selected token's usage lines in each of its blocks, in line order."""
    found = {
        line
        for name, ids in chosen
        for index in ids
        for line in (blocks[index].usage or {}).get(name, ())
    }
    return sorted(found)


def _global_for(
    global_usage: tuple[tuple[int, str, str], ...], own: list[tuple[int, str, str]]
) -> tuple[tuple[int, str, str], ...]:
    """The global Content-Signal lines, for a group that writes none of its
    own: a group's own Content-Signal lines replace them, and its
    Content-Usage lines leave them be (docs/usage-preferences.md, "Global lines")."""
    if not global_usage or any(key == _CONTENT_SIGNAL for _, key, _ in own):
        return ()
    return global_usage


def _compile(blocks: list[_Block], google_quirks: bool) -> CompiledGroup | None:
    """One compiled group of a selected group's blocks, in file order."""
    blocks = [block for block in blocks if block.codes]
    if not blocks:
        return None
    if len(blocks) == 1 and not google_quirks:  # the usual case: nothing to copy
        return CompiledGroup(blocks[0].patterns, blocks[0].codes, False)
    patterns = [block.patterns for block in blocks]
    codes = array("I")
    for block in blocks:
        codes.extend(block.codes)
    if google_quirks:  # Google's library: "Allow: /d/index.htm*" also allows "/d/"
        for pattern, code in zip("\n".join(patterns).split("\n"), list(codes)):
            extra = _index_html_pattern(pattern) if code & ALLOW_BIT else None
            if extra is not None:
                patterns.append(extra)
                codes.append(code)
    return CompiledGroup("\n".join(patterns), codes, google_quirks)


def _index_html_pattern(pattern: str) -> str | None:
    slash = pattern.rfind("/")
    if slash < 0 or not pattern.startswith("index.htm", slash + 1):
        return None
    return pattern[: slash + 1] + "$"


_CONTENT_SIGNAL: Final = grammar.Field.CONTENT_SIGNAL.value


def _global_signals(
    orphans: list[tuple[int, grammar.Field, str]],
) -> tuple[tuple[int, str, str], ...]:
    """The Content-Signal lines before any user-agent line. Content-Usage is
    not among them: attach-05 §3 makes it a rule of a group, and RFC 9309's
    rules are read in groups only (docs/usage-preferences.md, "Global lines")."""
    return tuple(
        (line, _CONTENT_SIGNAL, value)
        for line, field, value in orphans
        if field is grammar.Field.CONTENT_SIGNAL
    )


_RATE = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*([smhd]?)", re.IGNORECASE)
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _seconds_per_request(value: str) -> float | None:
    """``request-rate: n/period[unit] [hhmm-hhmm]`` as seconds per request."""
    rate = _RATE.match(value)
    if rate is None or int(rate[1]) == 0:
        return None
    period = float(rate[2]) * _UNIT_SECONDS[rate[3].lower()]
    return period / int(rate[1])


def _stored(patterns: list[str], codes: array[int], notes: Sequence[grammar.Note]) -> _Block:
    """A block of the grammar as a parsed file keeps it: the patterns joined,
    and the pacing and usage lines filed under each agent token they apply to
    (for pacing, the first good value of each kind; bad values are ignored)."""
    joined = "\n".join(patterns)
    if not notes:  # most blocks
        return _Block(joined, codes, None, None, None)
    crawl_delay: dict[str, float] = {}
    request_rate: dict[str, float] = {}
    usage: dict[str, list[tuple[int, str, str]]] = {}
    for note in notes:
        if note.field in grammar.USAGE:
            for token in note.agents:
                usage.setdefault(token, []).append((note.line, note.field.value, note.value))
            continue
        if note.field is grammar.Field.REQUEST_RATE:
            seconds, values = _seconds_per_request(note.value), request_rate
        else:
            seconds, values = _number(note.value), crawl_delay
        if seconds is not None:
            for token in note.agents:
                values.setdefault(token, seconds)
    return _Block(
        joined,
        codes,
        crawl_delay or None,
        request_rate or None,
        usage or None,
    )
