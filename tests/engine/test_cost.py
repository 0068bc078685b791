"""SPEC §6.8: a check's cost is bounded by steps, not seconds.

The path is a ``str`` subclass that counts the characters each string
search may scan; the bound is a fixed multiple of (path length × total
pattern length), whatever the patterns.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.engine.matching import CompiledGroup, rule_code


class CountingPath(str):
    """A path that counts the characters its searches can touch."""

    steps = 0

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
