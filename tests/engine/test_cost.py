"""docs/spec.md §6.8: a check's cost is bounded by steps, not seconds.

The path is a ``str`` subclass that counts the characters each string
search may scan; the bound is a fixed multiple of (path length × total
pattern length), whatever the patterns.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rule_codes import rule_code
from test_properties import reference_allowed

from scrapy_rep.engine import compiled_group, rules, wildcards
from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.rules import Rule
from scrapy_rep.engine.url_path import normalise, normalise_path


class CountingPath(str):
    """A path that counts the characters its searches can touch, and those
    read one by one or sliced out (the index's scan)."""

    steps = 0

    def __iter__(self) -> Any:
        CountingPath.steps += len(self)
        return super().__iter__()

    def __getitem__(self, key: Any) -> str:
        found = super().__getitem__(key)
        CountingPath.steps += len(found)
        return found

    def _count(self, start: Any = None) -> None:
        CountingPath.steps += len(self) - (start or 0) + 1

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        self._count(start)
        return super().find(sub, start, end)

    def startswith(self, prefix: Any, *args: Any) -> bool:
        CountingPath.steps += len(prefix) if isinstance(prefix, str) else len(self)
        return super().startswith(prefix, *args)

    def endswith(self, suffix: Any, *args: Any) -> bool:
        CountingPath.steps += len(suffix) if isinstance(suffix, str) else len(self)
        return super().endswith(suffix, *args)

    def __contains__(self, sub: object) -> bool:
        self._count()
        return super().__contains__(sub)  # type: ignore[operator]


def steps_for(patterns: list[str], path: str) -> tuple[int, int]:
    group = CompiledGroup(
        "\n".join(patterns), [rule_code("disallow", i + 1) for i in range(len(patterns))], False
    )
    CountingPath.steps = 0
    group.decide(CountingPath(path))
    return CountingPath.steps, len(path) * sum(len(p) for p in patterns)


ADVERSARIAL = [
    ["/" + "*a" * k + "*b" for k in range(2, 42)],
    ["/" + "*a" * k + "*b$" for k in range(2, 42)],
    ["/*" + "*".join("abcdefghijklmnopqrstuvwxyz") + "$"],
    ["/" + "*" * 1000 + "a", "/" + "a*" * 500],
]


@pytest.mark.parametrize(
    "patterns", ADVERSARIAL, ids=["stars-b", "stars-b-anchored", "alphabet", "star-runs"]
)
@pytest.mark.parametrize("tail", ["", "b", "c"])
def test_rfc9309_6_8_steps_linear_on_adversarial_patterns(patterns: list[str], tail: str) -> None:
    path = "/" + "a" * 4096 + tail
    steps, bound = steps_for(patterns, path)
    assert steps <= 2 * bound, (steps, bound)


@given(
    st.lists(
        st.text(alphabet="ab*/$", min_size=1, max_size=30).map(lambda t: "/" + t),
        min_size=1,
        max_size=20,
    ),
    st.text(alphabet="ab/", max_size=300),
)
@settings(max_examples=200)
def test_rfc9309_6_8_steps_linear_on_random_patterns(patterns: list[str], path: str) -> None:
    steps, bound = steps_for(patterns, "/" + path)
    assert steps <= 2 * bound + 4 * len(patterns), (steps, bound)


# --- big groups: one scan of the path, not one search per rule (issue 13 §2) -----------


def group_of(patterns: list[str], kinds: list[str] | None = None) -> CompiledGroup:
    kinds = kinds or ["disallow"] * len(patterns)
    codes = [rule_code(kind, i + 1) for i, kind in enumerate(kinds)]
    return CompiledGroup("\n".join(patterns), codes, False)


def counted(group: CompiledGroup, path: str, ask: str = "decide") -> int:
    """Characters read by the index scan plus those the string searches may touch."""
    CountingPath.steps = 0
    if ask == "decide":
        group.decide(CountingPath(path))
    else:
        group.allows(CountingPath(path))
    return CountingPath.steps


def numbers(prefix: str, count: int) -> str:
    return "".join(f"{prefix}{i}" for i in range(count))


RULES = 20_000  # about what fills the 500 KiB parse limit
LENGTH = 4096
WORST_CASES = {
    # (rule i, a path made to contain as many of the rules' pieces as it can)
    "a-number-a-anchored": (lambda i: f"/*a{i}*a$", "/" + numbers("a", 1000)),
    "number": (lambda i: f"/*{i}", "/" + numbers("", 2000)),
    "thirty-stars": (
        lambda i: "/" + "*x".join(str(i + j) for j in range(30)),
        "/" + numbers("x", 900),
    ),
    "pieces-out-of-order": (lambda i: f"/*b*a{i}", "/" + numbers("a", 700) + "b" + "a0" * 1000),
    "anchored-never-at-end": (lambda i: f"/*a{i}*z$", "/" + numbers("a", 1000) + "y"),
    # needs longer than the index's keys, sharing their start or their end
    "shared-start": (lambda i: f"/*/product/{i}", "/product/x" * 500),
    "shared-end": (lambda i: f"/*{i}/product", "/x/product" * 500),
}


@pytest.mark.parametrize("case", WORST_CASES, ids=list(WORST_CASES))
def test_rfc9309_6_8_big_group_steps_linear_in_the_path_not_the_rules(case: str) -> None:
    rule, path = WORST_CASES[case]
    path = path[:LENGTH]
    group = group_of([rule(i) for i in range(RULES)])
    assert isinstance(group._wild, wildcards.WildcardIndex)  # the scan, not one search per need
    steps = counted(group, path)
    # A search per rule would be RULES * LENGTH = 80 million; the index reads
    # each character at most MAX_KEY times, and a few searches follow.
    assert steps <= 8 * len(path), (steps, len(path))


def test_rfc9309_6_8_big_group_steps_do_not_grow_with_the_rules() -> None:
    path = ("/" + numbers("a", 1000))[:LENGTH]
    steps = [
        counted(group_of([f"/*a{i}*a$" for i in range(count)]), path) for count in (1_000, 20_000)
    ]
    assert steps[1] <= 2 * steps[0], steps


def test_scrapy_explain_after_a_drop_reuses_the_check() -> None:
    patterns = [f"/*a{i}*a$" for i in range(RULES)]
    path = ("/" + numbers("a", 1000))[:LENGTH] + "a"
    group = group_of(patterns)
    assert counted(group, path, ask="allows") > len(path)
    assert not group.allows(path)
    assert counted(group, path, ask="decide") == 0  # the path is not read again
    assert group.decide(path) == group_of(patterns).decide(path) is not None


# --- the index decides as the searches do ------------------------------------------------

big_patterns = st.lists(
    st.text(alphabet="ab*$/", min_size=1, max_size=24).map(lambda t: "/" + t),
    min_size=1,
    max_size=30,
)


@given(
    big_patterns,
    st.lists(st.sampled_from(["allow", "disallow"]), min_size=30, max_size=30),
    st.lists(st.text(alphabet="ab/$", max_size=60), min_size=1, max_size=5),
)
@settings(max_examples=500)
def test_rfc9309_6_6_indexed_group_decides_as_searches_do(
    patterns: list[str], kinds: list[str], paths: list[str]
) -> None:
    kinds = kinds[: len(patterns)]
    plain = group_of(patterns, kinds)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", 0):  # index even a small group
        indexed = group_of(patterns, kinds)
    assert not isinstance(plain._wild, wildcards.WildcardIndex)
    for path in paths:
        expected = reference_allowed(list(zip(kinds, patterns)), "/" + path)
        path = normalise_path("/" + path)  # a "$" in a URL is "%24", as in a rule
        assert indexed.allows(path) == plain.allows(path) == expected, path
        # The same kind and length decide (of rules that tie, either may be named).
        assert weight(indexed.decide(path)) == weight(plain.decide(path)), path


def weight(rule: Rule | None) -> tuple[str, int] | None:
    return None if rule is None else (rule.kind, len(normalise(rule.pattern)))


# --- a check's budget: whatever the file, it gives up rather than run long --------------


def grid(rows: int, columns: int) -> list[str]:
    """``/*t<i>x*t<j>y``: every piece in the path, in the wrong order for all."""
    return [f"/*t{i}x*t{j}y" for i in range(rows) for j in range(columns)]


GRID_PATH = "/" + "".join(f"t{j}y" for j in range(150)) + "".join(f"t{i}x" for i in range(150))


def middle_hole(size: int) -> list[str]:
    """``/*a<i>x*b<j>y*c<k>z``: its first piece before its last in the path, the
    middle one after both (``HOLE_PATH``), so every rule passes the index's
    two keys and fails only when tried: what the step budget is for."""
    return [f"/*a{i}x*b{j}y*c{k}z" for i in range(size) for j in range(size) for k in range(size)]


HOLE_PATH = "/" + "".join(
    "".join(f"{letter}{n}{end}" for n in range(28)) for letter, end in ("ax", "cz", "by")
)


def test_rfc9309_6_8_big_group_gives_up_within_its_steps_and_fails_closed() -> None:
    group = group_of(middle_hole(28))  # 21,952 rules that all fail on their middle piece
    tried = 0
    real = wildcards.matches

    def counting(*args: Any) -> bool:
        nonlocal tried
        tried += 1
        return real(*args)

    with patch.object(wildcards, "matches", counting):
        rule = group.decide(HOLE_PATH)
    assert rule == rules.UNDECIDED  # a disallow no line wrote: fail closed
    assert not group.allows(HOLE_PATH)
    # One rule tried costs TRY_STEPS of the check's steps: it stops there,
    # not after the 21,952 a complete answer would take.
    assert tried <= wildcards.steps_for(HOLE_PATH) // wildcards.TRY_STEPS + 1, tried


def test_rfc9309_6_8_a_small_grid_is_answered_not_given_up() -> None:
    group = group_of(grid(30, 20))  # 600 rules: indexed, and within the steps
    assert isinstance(group._wild, wildcards.WildcardIndex)
    assert group.decide(GRID_PATH) is None and group.allows(GRID_PATH)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", 600):
        plain = group_of(grid(30, 20))
    matched = GRID_PATH + "t7y"  # now every t<i>x of the grid has a t7y after it
    # Rules of one length tie (either may be named): the longest match decides.
    assert weight(group.decide(matched)) == weight(plain.decide(matched)) == ("disallow", 10)


@pytest.mark.parametrize("case", WORST_CASES, ids=list(WORST_CASES))
def test_rfc9309_6_8_big_group_worst_cases_answered_exactly(case: str) -> None:
    rule, path = WORST_CASES[case]
    path = path[:LENGTH]
    patterns = [rule(i) for i in range(RULES)]
    indexed = group_of(patterns)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", RULES):  # searched one by one
        plain = group_of(patterns)
    assert not isinstance(plain._wild, wildcards.WildcardIndex)
    for probe in (path, path + "a", path[: LENGTH // 2]):
        found = indexed.decide(probe)
        assert found != rules.UNDECIDED, probe[:40]
        assert weight(found) == weight(plain.decide(probe))


def test_scrapy_big_real_world_group_never_gives_up() -> None:
    """Thousands of rules sharing what they need (``sort=``), by head: a URL
    tries the few whose head starts it, not all of them."""
    patterns = [f"/catalog/item{i}*sort=" for i in range(20_000)]
    patterns += [f"/catalog/item{i}*sort=asc$" for i in range(0, 20_000, 7)]
    kinds = ["disallow"] * 20_000 + ["allow"] * len(range(0, 20_000, 7))
    indexed = group_of(patterns, kinds)
    assert isinstance(indexed._wild, wildcards.WildcardIndex)
    for path, expected in [
        ("/catalog/item7?sort=asc", True),
        ("/catalog/item7?sort=desc", False),
        ("/catalog/item8?sort=asc", False),
        ("/catalog/item19999/x?page=2&sort=", False),
        ("/catalog/other?sort=asc", True),
        ("/catalog/item5?" + "sort=" * 400, False),
    ]:
        assert indexed.decide(path) != rules.UNDECIDED, path
        assert indexed.allows(path) is expected, path
