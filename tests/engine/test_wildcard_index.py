"""docs/spec.md §6.8, issue 13 §2: a big group's index answers exactly, in few steps.

Steps, not seconds: how many rules a check tries (``wildcards.matches``,
about ``TRY_STEPS`` each) and how many characters its scan and searches
read. The families are those of ``benchmarks/engine.py``'s adversarial
section, with the path made to hold as many of their pieces as it can;
every answer is checked against the same group searched rule by rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cost import CountingPath, group_of, weight
from test_properties import reference_allowed

from scrapy_rep.engine import compiled_group, rules, wildcards
from scrapy_rep.engine.compiled_group import CompiledGroup
from scrapy_rep.engine.url_path import normalise_path


def numbers(prefix: str, length: int) -> str:
    text, number = [], 0
    while sum(map(len, text)) < length:
        text.append("".join(f"{prefix}{i}" for i in range(number, number + 500)))
        number += 500
    return "".join(text)[:length]


def grid_path(length: int) -> str:
    """Every ``t<j>y`` before every ``t<i>x``: each grid rule fails on its last piece."""
    text = "".join(f"t{j}y" for j in range(150)) + "".join(f"t{i}x" for i in range(160))
    return (text + "z" * length)[:length]


def reversed_grid_path(length: int) -> str:
    """Every ``t<i>x`` before every ``t<j>y``: every grid rule matches."""
    text = "".join(f"t{i}x" for i in range(160)) + "".join(f"t{j}y" for j in range(150))
    return (text + "z" * length)[:length]


#: family -> (rule i, a hostile path of a given length, how many rules fill 500 KiB)
FAMILIES: dict[str, tuple[Callable[[int], str], Callable[[int], str], int]] = {
    "a-number-a-anchored": (lambda i: f"/*a{i}*a$", lambda n: numbers("a", n), 23_000),
    "number": (lambda i: f"/*{i}", lambda n: numbers("", n), 29_000),
    "thirty-stars": (
        lambda i: "/" + "*x".join(str(i + j) for j in range(30)),
        lambda n: numbers("x", n),
        2_800,
    ),
    "out-of-order": (
        lambda i: f"/*b*a{i}",
        lambda n: numbers("a", n // 2) + "b" + "a0" * (n // 4),
        24_000,
    ),
    "shared-start": (
        lambda i: f"/*/product/{i}",
        lambda n: ("/product/x" * (n // 10 + 1))[:n],
        19_000,
    ),
    "grid": (lambda i: f"/*t{i // 150}x*t{i % 150}y", grid_path, 22_500),
    "grid-reversed": (lambda i: f"/*t{i // 150}x*t{i % 150}y", reversed_grid_path, 22_500),
}


@contextmanager
def tries_counted() -> Iterator[list[int]]:
    """How many rules the checks inside try (``wildcards.matches`` calls)."""
    count = [0]
    real = wildcards.matches

    def counting(*args: Any) -> bool:
        count[0] += 1
        return real(*args)

    with patch.object(wildcards, "matches", counting):
        yield count


_GROUPS: dict[str, tuple[CompiledGroup, CompiledGroup]] = {}


def groups(family: str) -> tuple[CompiledGroup, CompiledGroup]:
    """(indexed, searched one rule at a time) for a family, made once."""
    if family not in _GROUPS:
        rule, _, count = FAMILIES[family]
        patterns = [rule(i) for i in range(count)]
        indexed = group_of(patterns)
        with patch.object(compiled_group, "INDEXED_WILDCARDS", count):
            plain = group_of(patterns)
        assert isinstance(indexed._wild, wildcards.WildcardIndex)
        assert not isinstance(plain._wild, wildcards.WildcardIndex)
        _GROUPS[family] = indexed, plain
    return _GROUPS[family]


@pytest.mark.parametrize("family", FAMILIES, ids=list(FAMILIES))
@pytest.mark.parametrize("length", [2048, 8192])
def test_rfc9309_6_8_adversarial_families_answered_exactly_in_few_tries(
    family: str, length: int
) -> None:
    indexed, plain = groups(family)
    path = "/" + FAMILIES[family][1](length)
    for probe in (path, path + "a", path[: length // 2]):
        with tries_counted() as tried:
            found = indexed.decide(probe)
        assert found != rules.UNDECIDED, probe[:40]
        assert weight(found) == weight(plain.decide(probe)), probe[:40]
        # A rule per key found would be thousands (the grid: 22,500 rules, all
        # of whose keys are in the path); the index tries a handful.
        assert tried[0] <= 40, (family, tried[0])
        assert indexed.allows(probe) == plain.allows(probe)


@pytest.mark.parametrize("family", FAMILIES, ids=list(FAMILIES))
def test_rfc9309_6_8_adversarial_families_read_each_character_a_few_times(family: str) -> None:
    indexed, _ = groups(family)
    path = "/" + FAMILIES[family][1](4096)
    CountingPath.steps = 0
    indexed._last = None
    indexed.decide(CountingPath(path))
    # The scan reads each character at most MAX_KEY times; the searches that
    # follow are few and short.
    assert CountingPath.steps <= 8 * len(path), (family, CountingPath.steps)


def test_rfc9309_6_8_grid_rules_failing_on_their_last_piece_are_never_tried() -> None:
    """The sweep rejects them with set intersections: no rule is tried, and
    the grid does not give up as it did when each had to be tried."""
    indexed, _ = groups("grid")
    with tries_counted() as tried:
        assert indexed.decide("/" + grid_path(2048)) is None
    assert tried[0] == 0


def test_rfc9309_6_8_a_second_key_must_start_after_the_first_ends() -> None:
    """``/*k5q*q7`` needs ``q`` twice: in ``/k5q7`` its second key starts inside
    its first, so the sweep rejects it and nothing is tried."""
    indexed = group_of([f"/*k{i}q*q{j}" for i in range(40) for j in range(40)])
    assert isinstance(indexed._wild, wildcards.WildcardIndex)
    with tries_counted() as tried:
        assert indexed.decide("/k5q7") is None
        assert indexed.decide("/k5q") is None
    assert tried[0] == 0
    assert weight(indexed.decide("/k5qq7")) == ("disallow", 8)  # now after it: matches


def test_rfc9309_6_8_pairs_under_several_heads() -> None:
    """Many rules under one first key, with different heads: each head that
    starts the path brings its own second keys."""
    patterns = [f"/h{h}/*x{i}*y{j}" for h in range(12) for i in range(8) for j in range(8)]
    patterns += [f"/h{h}*x{i}*z{j}$" for h in range(12) for i in range(8) for j in range(8)]
    kinds = ["allow" if n % 5 == 0 else "disallow" for n in range(len(patterns))]
    indexed = group_of(patterns, kinds)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", len(patterns)):
        plain = group_of(patterns, kinds)
    assert isinstance(indexed._wild, wildcards.WildcardIndex)
    for path in [
        "/h3/x2y5",
        "/h3/y5x2",
        "/h1/x7x0y7",
        "/h11/x3z4",
        "/h11/ax3bz4",
        "/h1x3z7",
        "/h10/x1y1z1",
        "/h7/x",
    ]:
        assert indexed.allows(path) == plain.allows(path), path
        assert weight(indexed.decide(path)) == weight(plain.decide(path)), path


# --- the index decides as the rules searched one by one, and as the reference ---------

#: Pieces that overlap, repeat and exceed the index's keys (MAX_KEY = 6).
PIECES = ["a", "b", "ab", "ba", "/x", "b/", "aab", "abab", "abababab", "bbbbbbbb", "x/ab"]
HEADS = ["/", "", "/a", "/ab", "/x/"]


@st.composite
def wildcard_pattern(draw: Any) -> str:
    head = draw(st.sampled_from(HEADS))
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=4))
    pattern = head + "*" + "*".join(pieces)
    if draw(st.booleans()):
        pattern += "$"
    elif draw(st.integers(0, 4)) == 0:
        pattern += "*"
    return pattern if pattern.startswith(("/", "*")) else "/" + pattern


@st.composite
def path_from_pieces(draw: Any) -> str:
    parts = draw(st.lists(st.sampled_from([*PIECES, "a", "b", "/", "x"]), max_size=10))
    return "/" + "".join(parts)


@given(
    st.lists(wildcard_pattern(), min_size=1, max_size=60),
    st.randoms(use_true_random=False),
    st.lists(path_from_pieces(), min_size=1, max_size=6),
)
@settings(max_examples=400, deadline=None)
def test_rfc9309_6_6_index_with_pairs_decides_as_searches_do(
    patterns: list[str], rng: random.Random, paths: list[str]
) -> None:
    kinds = [rng.choice(["allow", "disallow"]) for _ in patterns]
    plain = group_of(patterns, kinds)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", 0):  # index even a small group
        indexed = group_of(patterns, kinds)
    assert not isinstance(plain._wild, wildcards.WildcardIndex)
    assert isinstance(indexed._wild, wildcards.WildcardIndex)
    for path in paths:
        expected = reference_allowed(list(zip(kinds, patterns)), path)
        path = normalise_path(path)
        assert indexed.allows(path) == plain.allows(path) == expected, path
        assert weight(indexed.decide(path)) == weight(plain.decide(path)), path


def test_rfc9309_6_6_crowded_keys_decide_as_searches_do() -> None:
    """Lists long enough to be filed by head (and by second key): a few
    thousand random rules from a small vocabulary, so many share keys."""
    rng = random.Random(13)
    patterns = []
    for _ in range(3000):
        head = rng.choice(HEADS)
        pieces = [rng.choice(PIECES) for _ in range(rng.randint(1, 3))]
        pattern = head + "*" + "*".join(pieces) + rng.choice(["", "", "$"])
        patterns.append(pattern if pattern[0] in "/*" else "/" + pattern)
    kinds = [rng.choice(["allow", "disallow"]) for _ in patterns]
    indexed = group_of(patterns, kinds)
    with patch.object(compiled_group, "INDEXED_WILDCARDS", len(patterns)):
        plain = group_of(patterns, kinds)
    assert isinstance(indexed._wild, wildcards.WildcardIndex)
    for _ in range(400):
        parts = [rng.choice([*PIECES, "a", "b", "/"]) for _ in range(rng.randint(0, 12))]
        path = "/" + "".join(parts)
        assert indexed.allows(path) == plain.allows(path), path
        assert weight(indexed.decide(path)) == weight(plain.decide(path)), path
