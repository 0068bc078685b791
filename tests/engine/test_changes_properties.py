"""Properties of ``change_for`` (docs/spec.md §8.5) on generated pairs of files.

What it says must agree with what the crawl does: no rule change means the
same verdict for every path, and a path whose verdict turned is always
explained by a rule named on that side.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.engine.changes import Change, RuleChange, change_for
from scrapy_rep.engine.robotstxt import RobotsTxt

URL = "https://example.com"
AGENTS = ["mybot", "otherbot"]

patterns = st.text(alphabet="/ab*$", min_size=1, max_size=5).map(
    lambda text: text if text[0] in "/*" else "/" + text
)
paths = st.text(alphabet="/ab$", max_size=8).map(lambda text: "/" + text)
rule_lines = st.tuples(st.sampled_from(["Allow", "Disallow"]), patterns).map(": ".join)
other_lines = st.sampled_from(
    [
        "Crawl-delay: 1",
        "Crawl-delay: 5",
        "Request-rate: 1/10",
        "Content-Usage: train-ai=n",
        "Content-Usage: /a train-ai=y",
        "Content-Signal: ai-train=no, search=yes",
        "Sitemap: https://example.com/s.xml",
        "License: https://example.com/l",
        "# a comment",
        "",
    ]
)
groups = st.lists(
    st.tuples(
        st.lists(st.sampled_from([*AGENTS, "*"]), min_size=1, max_size=2),
        st.lists(st.one_of(rule_lines, other_lines), max_size=6),
    ),
    max_size=3,
)
versions = st.one_of(st.none(), groups)
#: Every short path of the patterns' alphabet, asked beside the generated ones.
SHORT_PATHS = ["/" + "".join(p) for n in range(4) for p in itertools.product("ab/", repeat=n)]


def render(group_list: list[tuple[list[str], list[str]]] | None) -> RobotsTxt | None:
    if group_list is None:
        return None  # a 4xx answer: no rules
    lines: list[str] = []
    for agents, body in group_list:
        lines += [f"User-agent: {agent}" for agent in agents]
        lines += [*body, "Disallow:"]  # keeps the next group's agents apart
    return RobotsTxt.parse("\n".join(lines) + "\n")


def allowed(robots: RobotsTxt | None, path: str, agent: str) -> bool:
    return robots is None or robots.allowed(URL + path, agent)


def flipped(changes: tuple[RuleChange, ...]) -> tuple[RuleChange, ...]:
    return tuple(RuleChange(change.rule, not change.added) for change in changes)


@given(versions, st.sampled_from(AGENTS))
def test_scrapy_a_version_against_itself_is_no_change(
    version: list[tuple[list[str], list[str]]] | None, agent: str
) -> None:
    robots = render(version)
    found = change_for(robots, robots, agent)
    assert not found
    assert found.summary() == ""


@given(versions, versions, st.sampled_from(AGENTS))
def test_scrapy_back_again_is_the_same_change_mirrored(
    old: list[tuple[list[str], list[str]]] | None,
    new: list[tuple[list[str], list[str]]] | None,
    agent: str,
) -> None:
    there, back = (
        change_for(render(old), render(new), agent),
        change_for(render(new), render(old), agent),
    )
    assert back.newly_disallowed == flipped(there.newly_allowed)
    assert back.newly_allowed == flipped(there.newly_disallowed)
    assert (back.group_before, back.group_after) == (there.group_after, there.group_before)
    assert bool(back) is bool(there)
    assert [(u.key, u.before, u.after, u.path) for u in back.usage] == [
        (u.key, u.after, u.before, u.path) for u in there.usage
    ]
    assert (back.sitemaps_added, back.licenses_added) == (
        there.sitemaps_removed,
        there.licenses_removed,
    )


@given(versions, versions, st.sampled_from(AGENTS), st.lists(paths, min_size=1, max_size=6))
@settings(max_examples=500)
def test_scrapy_a_verdict_that_turned_is_named(
    old: list[tuple[list[str], list[str]]] | None,
    new: list[tuple[list[str], list[str]]] | None,
    agent: str,
    asked: list[str],
) -> None:
    before, after = render(old), render(new)
    found: Change = change_for(before, after, agent)
    for path in (*SHORT_PATHS, *asked):
        was, now = allowed(before, path, agent), allowed(after, path, agent)
        if was and not now:
            assert found.newly_disallowed, path
        if now and not was:
            assert found.newly_allowed, path
    if not (found.newly_disallowed or found.newly_allowed):
        for path in (*SHORT_PATHS, *asked):
            assert allowed(before, path, agent) is allowed(after, path, agent), path


@given(st.text(max_size=200), st.text(max_size=200), st.text(max_size=20))
def test_scrapy_never_raises_on_text(old: str, new: str, agent: str) -> None:
    found = change_for(RobotsTxt.parse(old), RobotsTxt.parse(new), agent)
    assert isinstance(found.summary(), str)
    assert bool(found) is bool(found.summary())
