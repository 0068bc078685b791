"""Lint sees the groups, rules and line numbers that ``RobotsTxt.parse`` keeps.

Both read a body through the engine's grammar (``engine/grammar.py``); these
tests hold them to it on generated files full of what readers get wrong:
lines longer than Google's 16,663-byte cut, keys padded past it, missing
colons, accepted typos, a BOM, CR-only and mixed line ends, invalid UTF-8,
pacing and usage lines between agent lines, rules before any agent line.
Before the grammar, lint cut every line at 16,663 bytes while the parser read
it whole: a 20,000-character rule was two different rules.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.grammar import USAGE
from scrapy_rep.engine.rules import rule_of
from scrapy_rep.tools.lint import groups as lint_groups
from scrapy_rep.tools.lint.lines import lint

TOKENS = ["mybot", "otherbot", "*", "MyBot", "Googlebot/2.1", "360Spider", "* foo"]

SHORT = [
    *(f"User-agent: {token}" for token in TOKENS),
    "Allow: /p",
    "Disallow: /q",
    "Disallow: /q",  # a duplicate
    "Allow: /q",  # shadowing the disallow
    "Disallow:",  # empty: no rule, but it ends the agent lines
    "Disallow: /caf\udce9",  # an invalid UTF-8 byte, kept raw
    "disallow: /lower # comment",
    "Disallow /x",  # missing colon
    "User-agent otherbot",  # missing colon
    "Useragent: mybot",  # typos only Google's library reads
    "user agent: otherbot",
    "Disalow: /typo",
    "Disallowed: /prefix",
    "site-map: https://e.com/s.xml",
    "Sitemap: https://e.com/s.xml",
    "Sitemap: /relative.xml",
    "Crawl-delay: 5",
    "crawl-delay: soon",
    "Request-rate: 1/5",
    "Content-Usage: train-ai=n",
    "Content-Usage: /a/ search=y",
    "Content-Signal: ai-train=no",
    "Host: e.com",
    "unknown: field",
    "just words",
    "# a comment",
    "",
    "   ",
]


def _long_rule(kind: str, length: int, tail: str) -> str:
    return f"{kind}: /{'a' * length}{tail}"


LONG = st.one_of(
    # A value past the cut: Google reads the start, RFC 9309 the whole.
    st.builds(
        _long_rule,
        st.sampled_from(["Disallow", "Allow", "Content-Usage"]),
        st.integers(16_600, 20_000),
        st.sampled_from(["", "*b$", "# comment", " train-ai=n"]),
    ),
    # The colon itself past the cut: a whole line is an agent or a rule.
    st.builds(
        lambda key, pad, value: f"{key}{' ' * pad}: {value}",
        st.sampled_from(["User-agent", "Disallow", "Allow"]),
        st.integers(16_660, 17_000),
        st.sampled_from(["mybot", "/z", "*"]),
    ),
)
LINES = st.lists(st.one_of(st.sampled_from(SHORT), LONG), max_size=14)
ENDS = st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=14, max_size=14)


def body_of(lines: list[str], ends: list[str], bom: bool) -> bytes:
    text = "".join(line + end for line, end in zip(lines, ends))
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogateescape")


def engine_view(body: bytes) -> dict[str, Any]:
    """What the parser kept: each token's blocks with their rules, and each
    token's usage lines."""
    robots = RobotsTxt.parse(body)
    blocks = robots._blocks
    usage = [block.usage or {} for block in blocks]
    rules = [
        [tuple(rule_of(p, c)) for p, c in zip(block.patterns.split("\n"), block.codes)]
        for block in blocks
    ]
    return {
        "agents": list(robots.agents),
        "groups": {token: [rules[i] for i in ids] for token, ids in robots._groups.items()},
        "usage": {
            token: sorted({line for i in ids for line, *_ in usage[i].get(token, ())})
            for token, ids in robots._groups.items()
        },
    }


def lint_view(body: bytes) -> dict[str, Any]:
    """What lint checks: the same, from the view ``lint`` builds."""
    view = lint_groups.GroupView.of(body)
    rules = [[tuple(rule) for rule in block] for block in view.rules]
    usage = {
        token: sorted(
            {
                note.line
                for i in ids
                for note in view.blocks[i].notes
                if note.field in USAGE and token in note.agents
            }
        )
        for token, ids in view.groups.items()
    }
    return {
        "agents": list(view.groups),
        "groups": {token: [rules[i] for i in ids] for token, ids in view.groups.items()},
        "usage": usage,
    }


@settings(max_examples=300, deadline=None)
@given(LINES, ENDS, st.booleans())
@example(["User-agent: *", _long_rule("Disallow", 20_000, "")], ["\n"] * 14, False)
@example(["User-agent" + " " * 16_700 + ": mybot", "Disallow: /x"], ["\r"] * 14, True)
def test_scrapy_property_lint_sees_the_engines_groups_and_rules(
    lines: list[str], ends: list[str], bom: bool
) -> None:
    body = body_of(lines, ends, bom)
    engine = engine_view(body)
    assert lint_view(body) == engine
    # The findings about rules name lines the parser kept as rules; a rule
    # lint calls orphaned is one the parser did not keep.
    kept = {rule[2] for blocks in engine["groups"].values() for block in blocks for rule in block}
    findings = lint(body)
    assert {f.line for f in findings if f.code in ("duplicate-rule", "rule-shadowed")} <= kept
    assert not {f.line for f in findings if f.code == "rule-before-user-agent"} & kept


def test_scrapy_lint_reads_a_long_rule_whole_as_the_parser_does() -> None:
    """A disallow of 20,000 characters and an allow of its first 16,653: to
    the parser (RFC 9309, docs/spec.md §4.4) the disallow is longer and decides its
    own URLs. Cut at Google's 16,663 bytes the two would match the same URLs
    and the allow would shadow the disallow: lint must not say so."""
    body = (
        "User-agent: *\n"
        + _long_rule("Disallow", 20_000, "")
        + "\n"
        + _long_rule("Allow", 16_652, "")
        + "\n"
    ).encode()
    robots = RobotsTxt.parse(body)
    assert not robots.allowed("https://e.com/" + "a" * 20_000, "mybot")
    assert [(f.line, f.code) for f in lint(body)] == [(2, "line-too-long")]
