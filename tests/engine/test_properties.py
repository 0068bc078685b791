"""Property tests: the engine never fails on input, and agrees with a reference."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.url_path import normalise

URL = "https://example.com"
AGENTS = ["mybot", "otherbot", "mybot-news"]

# --- strategies ----------------------------------------------------------------

patterns = st.text(alphabet="/ab*$.", min_size=1, max_size=8).map(
    lambda text: text if text[0] in "/*" else "/" + text
)
paths = st.text(alphabet="/ab$.", max_size=12).map(lambda text: "/" + text)
rules = st.lists(st.tuples(st.sampled_from(["allow", "disallow"]), patterns), max_size=8)
groups = st.lists(
    st.tuples(st.lists(st.sampled_from([*AGENTS, "*"]), min_size=1, max_size=2), rules),
    max_size=5,
)


def render(group_list: list[tuple[list[str], list[tuple[str, str]]]], newline: str = "\n") -> str:
    lines = []
    for agents, group_rules in group_list:
        lines += [f"User-agent: {agent}" for agent in agents]
        lines += [f"{kind}: {pattern}" for kind, pattern in group_rules]
        if not group_rules:
            lines.append("Disallow:")  # keeps the next group's agents apart
    return newline.join(lines) + newline


# --- the reference: obviously correct, and slow ----------------------------------


def reference_allowed(group_rules: list[tuple[str, str]], path: str) -> bool:
    """docs/spec.md §6: longest matching pattern wins, allow wins ties, none allows."""
    best: tuple[int, bool] | None = None
    for kind, pattern in group_rules:
        anchored = pattern.endswith("$")
        body = pattern[:-1] if anchored else pattern
        regex = ".*".join(re.escape(piece) for piece in body.split("*"))
        if re.match(regex + (r"\Z" if anchored else ""), path, re.DOTALL):
            # docs/spec.md §6.6: octets, normalised
            candidate = (len(normalise(pattern)), kind == "allow")
            if best is None or candidate > best:
                best = candidate
    return best is None or best[1]


def rfc3986_remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4, step by step as written (docs/spec.md §6.5.1), on the part before ``?``."""
    head, mark, query = path.partition("?")
    source, output = head, ""
    while source:
        if source.startswith("../"):
            source = source[3:]
        elif source.startswith("./") or source.startswith("/./"):
            source = source[2:]
        elif source == "/.":
            source = "/"
        elif source.startswith("/../"):
            source = source[3:]
            output = output[: max(output.rfind("/"), 0)]
        elif source == "/..":
            source = "/"
            output = output[: max(output.rfind("/"), 0)]
        elif source in (".", ".."):
            source = ""
        else:
            end = source.find("/", 1)
            end = len(source) if end < 0 else end
            output, source = output + source[:end], source[end:]
    return output + mark + query


# --- properties --------------------------------------------------------------------


@given(st.binary(max_size=2000))
def test_rfc9309_parse_never_raises_on_bytes(body: bytes) -> None:
    robots = RobotsTxt.parse(body)
    robots.allowed(URL + "/x", "mybot")
    robots.explain(URL + "/x", ["mybot", "other"])
    RobotsTxt.parse(body, google_quirks=True).allowed(URL + "/x", "mybot")


@given(st.text(max_size=300), st.text(max_size=60), st.text(max_size=20))
def test_rfc9309_never_raises_on_text(body: str, url: str, agent: str) -> None:
    for quirks in (False, True):
        robots = RobotsTxt.parse(body, google_quirks=quirks)
        assert robots.allowed(url, agent) is robots.explain(url, agent).allowed


@given(rules, paths)
@settings(max_examples=1000)
def test_rfc9309_allowed_agrees_with_reference_matcher(
    group_rules: list[tuple[str, str]], path: str
) -> None:
    robots = RobotsTxt.parse(render([(["mybot"], group_rules)]))
    expected = reference_allowed(group_rules, rfc3986_remove_dot_segments(path))
    assert robots.allowed(URL + path, "mybot") is expected


@given(groups, st.permutations(range(5)), st.sampled_from(AGENTS), paths)
def test_rfc9309_verdict_independent_of_group_order(
    group_list: list[tuple[list[str], list[tuple[str, str]]]],
    order: list[int],
    agent: str,
    path: str,
) -> None:
    shuffled = [group_list[i] for i in order if i < len(group_list)]
    first = RobotsTxt.parse(render(group_list))
    second = RobotsTxt.parse(render(shuffled))
    assert first.allowed(URL + path, agent) is second.allowed(URL + path, agent)


@given(groups, st.sampled_from(AGENTS), paths)
def test_rfc9309_verdict_independent_of_line_endings(
    group_list: list[tuple[list[str], list[tuple[str, str]]]], agent: str, path: str
) -> None:
    verdicts = {
        RobotsTxt.parse(render(group_list, newline)).allowed(URL + path, agent)
        for newline in ("\n", "\r\n", "\r")
    }
    assert len(verdicts) == 1


@given(st.text(max_size=40))
def test_rfc9309_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert once.isascii()


@given(st.text(alphabet="/.a?", max_size=30).map(lambda text: "/" + text))
@settings(max_examples=2000)
def test_rfc3986_dot_segments_agree_with_the_rfc_algorithm(path: str) -> None:
    from scrapy_rep.engine.url_path import without_dot_segments

    assert without_dot_segments(path) == rfc3986_remove_dot_segments(path)
