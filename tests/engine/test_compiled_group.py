"""The compiled group's own shortcuts, each checked against the plain rule it
stands for: escape rewriting, whole-text normalisation, parent links over
deep and wide literal tables, and the lines ``explain`` reports."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rule_codes import rule_code
from test_properties import reference_allowed

from scrapy_rep import RobotsTxt
from scrapy_rep.engine import few_wildcards
from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.url_path import (
    _CHANGING_ESCAPE,
    _ESCAPE_FORMS,
    normalise,
    normalise_lines,
)


def test_only_escapes_whose_form_changes_are_rewritten() -> None:
    changing = {body for body in _ESCAPE_FORMS if _CHANGING_ESCAPE.fullmatch("%" + body)}
    expected = {body for body, form in _ESCAPE_FORMS.items() if "%" + body != form}
    assert changing == expected
    # Every spelling, minus the forms kept: all but the 66 unreserved and the
    # 16 reserved characters (not * or $) that RFC 9309 §2.2.2 decodes.
    assert len(expected) == 22 * 22 - (256 - 66 - 16)


@given(st.text(alphabet='/ab%2fF7eE |"{}<>^`\\\té\x7f', max_size=40))
@settings(max_examples=500)
def test_normalise_lines_is_normalise_per_line(text: str) -> None:
    lines = text.replace("\n", "").split("/")  # several lines, none with a newline inside
    joined = "\n".join(lines)
    assert normalise_lines(joined) == "\n".join(map(normalise, lines))


def literal_group(patterns: list[str], kinds: list[str] | None = None) -> CompiledGroup:
    kinds = kinds or ["disallow"] * len(patterns)
    codes = [rule_code(kind, line) for line, kind in enumerate(kinds, 1)]
    return CompiledGroup("\n".join(patterns), codes, False)


def test_a_deep_chain_of_prefixes_needs_no_recursion() -> None:
    patterns = ["/" + "a" * depth for depth in range(1, 5001)]
    kinds = ["allow" if depth % 2 else "disallow" for depth in range(1, 5001)]
    group = literal_group(patterns, kinds)
    rule = group.decide("/" + "a" * 3000 + "b")
    assert rule is not None and rule.pattern == "/" + "a" * 3000 and rule.line == 3000
    assert group.allows("/" + "a" * 2999 + "b") and not group.allows("/" + "a" * 3000 + "b")


def test_many_siblings_walk_up_to_their_common_parent() -> None:
    patterns = ["/shop/", *[f"/shop/item-{number:05d}" for number in range(5000)]]
    group = literal_group(patterns, ["allow", *["disallow"] * 5000])
    for path in ("/shop/item-99999", "/shop/item-", "/shop/zzz", "/shop/item-00001x"):
        rule = group.decide(path)
        expected = "/shop/item-00001" if path.endswith("x") else "/shop/"
        assert rule is not None and rule.pattern == expected, path
    assert group.decide("/shoe") is None and group.decide("/") is None


literal_patterns = st.text(alphabet="/abc", min_size=1, max_size=6).map(lambda text: "/" + text)


@given(
    st.lists(st.tuples(st.sampled_from(["allow", "disallow"]), literal_patterns), max_size=40),
    st.lists(st.text(alphabet="/abcd", max_size=10).map(lambda text: "/" + text), max_size=20),
)
@settings(max_examples=400)
def test_literal_tables_agree_with_reference(
    rules: list[tuple[str, str]], paths: list[str]
) -> None:
    body = "User-agent: *\n" + "".join(f"{kind}: {pattern}\n" for kind, pattern in rules)
    robots = RobotsTxt.parse(body)
    for path in paths:  # one object: later paths reuse the links earlier ones found
        assert robots.allowed("https://example.com" + path, "bot") == reference_allowed(
            rules, path
        ), path


def test_explain_reports_the_first_line_of_a_repeated_rule() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nDisallow: /a\nDisallow: /b\nDisallow: /a\nAllow: /b\nAllow: /b\n"
    )
    first = robots.explain("https://example.com/a/x", "bot").rule
    assert first is not None and (first.kind, first.line) == ("disallow", 2)
    tie = robots.explain("https://example.com/b", "bot").rule
    assert tie is not None and (tie.kind, tie.line) == ("allow", 5)  # an allow wins a tie


def test_explain_reports_a_rule_as_written_when_normalised() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /caf\u00e9\nDisallow: /%7ejoe\n")
    cafe = robots.explain("https://example.com/caf%C3%A9/menu", "bot").rule
    joe = robots.explain("https://example.com/~joe/", "bot").rule
    assert cafe is not None and (cafe.pattern, cafe.line) == ("/caf\u00e9", 2)
    assert joe is not None and (joe.pattern, joe.line) == ("/%7ejoe", 3)


# Floating wildcards ("/*<need>"), many sharing starts and lengths: ties to break.
floating = st.text(alphabet="ab?&", min_size=1, max_size=4).map(lambda text: "/*" + text)


@given(
    st.lists(st.tuples(st.sampled_from(["allow", "disallow"]), floating), min_size=1, max_size=60),
    st.lists(st.text(alphabet="/ab?&", max_size=12).map(lambda text: "/" + text), max_size=20),
)
@example(  # "bab" and "aab" tie; "aab" shares a gate with "aaaa", written first
    [("disallow", "/*aaaa"), ("disallow", "/*bab"), ("disallow", "/*aab")], ["/babaab"]
)
@settings(max_examples=300)
def test_gated_needs_decide_as_the_plain_loop_does(
    rules: list[tuple[str, str]], paths: list[str]
) -> None:
    """A group of many needs tests them behind gates; the rule it names,
    line included (docs/spec.md §6.6: of rules that tie, the first written), is the
    one the need-by-need loop names."""
    joined = "\n".join(pattern for _, pattern in rules)
    codes = [rule_code(kind, line) for line, (kind, _) in enumerate(rules, 1)]
    with patch.object(few_wildcards, "GATED_NEEDS", 1):
        gated = CompiledGroup(joined, codes, False)
    with patch.object(few_wildcards, "GATED_NEEDS", 10**6):
        looped = CompiledGroup(joined, codes, False)
    assert gated._wild._need_gates is not None or not gated._wild._needs  # type: ignore[union-attr]
    assert looped._wild._need_gates is None  # type: ignore[union-attr]
    for path in paths:
        assert gated.allows(path) == looped.allows(path) == reference_allowed(rules, path), path
        assert gated.decide(path) == looped.decide(path), path
