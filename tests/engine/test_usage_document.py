"""``RobotsTxt.usage``: the parser keeps the usage lines the standalone reader finds.

``usage_reader.usage_lines`` reads the grammar's blocks on its own and is
pinned by test_usage.py's tables; ``RobotsTxt`` files the same lines per agent
while it parses the rules. The two
must agree, line for line, on Google's conformance bodies (with usage lines
put in) and on generated files, in both reading modes, for every agent.
"""

from __future__ import annotations

import random

import pytest
from google_cases import body_of, load
from hypothesis import given, settings
from hypothesis import strategies as st
from usage_reader import global_signal_lines, usage_lines

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.usage import ALLOWED, DENIED, LABELS, UNSTATED, compile_usage

POOL = [
    "Content-Usage: train-ai=n",
    "Content-Usage: /private/ train-ai=n, search=y",
    "content-usage: ai-use=y # comment",
    "Content-Usage: Train-AI=n",
    "Content-Signal: search=yes, ai-train=no",
    "Content-Signal: /blog/ ai-input=no",
    "Crawl-delay: 2",
    "User-agent: mybot",
    "Disallow: /x",
]


def with_usage(body: bytes, rng: random.Random) -> bytes:
    lines = body.replace(b"\r\n", b"\n").split(b"\n")
    for _ in range(rng.randint(1, 5)):
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(POOL).encode())
    return b"\n".join(lines)


def generated(rng: random.Random) -> bytes:
    agents = ["mybot", "otherbot", "*"]
    out = []
    for _ in range(rng.randint(1, 4)):
        out += [f"User-agent: {a}" for a in rng.sample(agents, rng.randint(1, 2))]
        out += [rng.choice([*POOL, "Allow: /", ""]) for _ in range(rng.randint(0, 4))]
    return "\n".join(out).encode()


def agree(body: bytes, agent: str, quirks: bool, robots: RobotsTxt | None = None) -> None:
    """``robots``: one parse asked about several agents (its caches shared)."""
    robots = robots or RobotsTxt.parse(body, google_quirks=quirks)
    expected = compile_usage(
        usage_lines(body, agent, google_quirks=quirks),
        google_quirks=quirks,
        global_lines=global_signal_lines(body, agent, google_quirks=quirks),
    )
    got = robots.usage_matcher(agent)
    assert got.rules == expected.rules, (agent, quirks)
    assert got.problems == expected.problems
    assert robots.has_usage or not got


def test_scrapy_document_reads_the_usage_lines_of_generated_files() -> None:
    # Generated files, and Google's conformance bodies (tests/data) with usage
    # lines put in; the corpus run is benchmarks/corpus/test_corpus_usage.py.
    rng = random.Random(15)
    bodies = [with_usage(body_of(case), rng) for case in load("allowed_cases.json")]
    bodies += [generated(rng) for _ in range(600)]
    for body in bodies:
        agents = [a for a in RobotsTxt.parse(body).agents if a != "*"][:3]
        for quirks in (False, True):
            robots = RobotsTxt.parse(body, google_quirks=quirks)
            for agent in [*agents, "mybot", "otherbot", "zzbot"]:
                agree(body, agent, quirks, robots)


@settings(max_examples=300)
@given(st.lists(st.sampled_from([*POOL, "User-agent: *", "Allow: /p", "Sitemap: /s"]), max_size=12))
def test_scrapy_property_document_and_reader_agree(lines: list[str]) -> None:
    body = "\n".join(lines).encode()
    for quirks in (False, True):
        robots = RobotsTxt.parse(body, google_quirks=quirks)
        for agent in ("mybot", "otherbot", "*"):
            agree(body, agent, quirks, robots)


def test_scrapy_usage_answers_with_the_deciding_line() -> None:
    robots = RobotsTxt.parse(
        "User-agent: *\nAllow: /\nContent-Usage: train-ai=y\n"
        "Content-Usage: /private/ train-ai=n\nDisallow: /admin/\n"
    )
    private = robots.usage("http://e.com/private/a", "mybot")
    assert private["train-ai"].state == DENIED and private["train-ai"].line == 4
    assert robots.usage("http://e.com/open", "mybot")["train-ai"].state == ALLOWED
    closed = robots.usage("http://e.com/admin/x", "mybot")
    assert not closed.crawlable and closed["train-ai"].state == UNSTATED


def test_scrapy_agents_sharing_a_group_keep_their_own_usage_lines() -> None:
    robots = RobotsTxt.parse(
        "User-agent: a\nContent-Usage: train-ai=n\nUser-agent: b\nContent-Usage: search=n\n"
        "Allow: /\n"
    )
    assert robots.usage("/x", "a").denied() == ("train-ai",)
    assert robots.usage("/x", "b").denied() == ("search",)
    assert robots.usage("/x", "a").denied() == ("train-ai",)  # after b: no shared cache


@pytest.mark.parametrize("use_global", [True, False])
def test_scrapy_usage_without_global_group(use_global: bool) -> None:
    robots = RobotsTxt.parse("User-agent: *\nContent-Usage: train-ai=n\n")
    state = robots.usage("http://e.com/", "adsbot", use_global=use_global)["train-ai"].state
    assert state == (DENIED if use_global else UNSTATED)


def test_scrapy_no_usage_lines_cost_nothing_more() -> None:
    robots = RobotsTxt.parse("User-agent: *\nDisallow: /x\nCrawl-delay: 3\n")
    assert not robots.has_usage
    assert robots.crawl_delay("mybot") == 3.0  # a usage-free file reads as before
    assert not robots.allowed("http://e.com/x", "mybot")


def test_rfc9309_6_8_usage_check_that_gives_up_refuses_every_use() -> None:
    """21,952 ``Content-Usage`` path rules and a URL that would have each tried:
    the check gives up within its cost bound and fails closed (every use
    refused); a URL a rule matches still gets that rule's statement."""
    rules = "".join(
        f"Content-Usage: /*a{i}x*b{j}y*c{k}z train-ai=y\n"
        for i in range(28)
        for j in range(28)
        for k in range(28)
    )
    robots = RobotsTxt.parse(("User-agent: *\nAllow: /\n" + rules).encode())
    hostile = "/" + "".join(
        "".join(f"{letter}{n}{end}" for n in range(28)) for letter, end in ("ax", "cz", "by")
    )
    refused = robots.usage("http://e.com" + hostile, "mybot")
    assert set(refused.denied()) == set(LABELS)
    assert robots.usage("http://e.com/a3xb4yc5z", "mybot")["train-ai"].state == ALLOWED
