"""Every case of Google's robots.txt test suite, mapped onto the engine.

Cases marked ``google_specific`` depend on choices of Google's library that
RFC 9309 does not require: they run with ``google_quirks=True``; every other
case runs in both modes. Counts are asserted so that a missing or truncated
data folder fails instead of passing empty.
"""

from __future__ import annotations

import re

import pytest
from google_cases import Case, body_of, ids, load
from google_report import classify_body

from scrapy_rep import RobotsTxt
from scrapy_rep.engine.agents import product_token
from scrapy_rep.engine.url_path import google_escape_pattern, normalise, path_params_query

_VALID_TOKEN = re.compile(r"[A-Za-z_-]+")


def is_valid_token(token: str) -> bool:
    """RFC 9309 §2.2.1: a product token is letters, ``-`` and ``_`` only (what
    Google's ``IsValidUserAgentToObey`` checks; the engine needs no such check:
    it reads whatever token a line starts with)."""
    return _VALID_TOKEN.fullmatch(token) is not None


ALLOWED = load("allowed_cases.json")
SOURCE = load("source_derived_cases.json")
SOURCE_ALLOWED = [case for case in SOURCE if "agents" in case]
ALL_ALLOWED = ALLOWED + SOURCE_ALLOWED
DOCUMENTED = [case for case in ALL_ALLOWED if not case["google_specific"]]
PATHS = load("path_cases.json")
ESCAPES = load("escape_cases.json")
TOKENS = load("user_agent_cases.json")
EXTRACT = [case for case in SOURCE if case.get("function") == "ExtractUserAgent"]
STATS = load("parse_stats_cases.json")
SITEMAPS = load("sitemap_cases.json") + [c for c in SOURCE if c.get("kind") == "sitemaps"]
REPORTS = load("reporting_cases.json")

_DIRECTIVE_TAGS = {"UserAgent", "Allow", "Disallow", "Sitemap"}


def test_google_case_counts_match_the_readme() -> None:
    counts = {
        "allowed": len(ALLOWED),
        "allowed google_specific": sum(c["google_specific"] for c in ALLOWED),
        "source allowed": len(SOURCE_ALLOWED),
        "paths": len(PATHS),
        "escapes": len(ESCAPES),
        "tokens": len(TOKENS),
        "extract": len(EXTRACT),
        "parse stats": len(STATS),
        "sitemaps": len(SITEMAPS),
        "reports": len(REPORTS),
    }
    print("conformance cases:", counts, "total", sum(counts.values()))
    assert counts == {
        "allowed": 145,
        "allowed google_specific": 17,
        "source allowed": 36,
        "paths": 19,
        "escapes": 4,
        "tokens": 11,
        "extract": 3,
        "parse stats": 10,
        "sitemaps": 5,
        "reports": 4,
    }


def _agents(case: Case) -> str | list[str]:
    agents: list[str] = case["agents"]
    return agents[0] if len(agents) == 1 else agents


@pytest.mark.parametrize("case", DOCUMENTED, ids=ids(DOCUMENTED))
def test_rfc9309_allowed_case_by_default(case: Case) -> None:
    robots = RobotsTxt.parse(body_of(case))
    assert robots.allowed(case["url"], _agents(case)) is case["allowed"]
    assert robots.explain(case["url"], _agents(case)).allowed is case["allowed"]


@pytest.mark.parametrize("case", ALL_ALLOWED, ids=ids(ALL_ALLOWED))
def test_google_allowed_case_with_quirks(case: Case) -> None:
    robots = RobotsTxt.parse(body_of(case), google_quirks=True)
    assert robots.allowed(case["url"], _agents(case)) is case["allowed"]
    assert robots.explain(case["url"], _agents(case)).allowed is case["allowed"]


RFC_ANSWERS = [case for case in ALL_ALLOWED if "rfc9309_allowed" in case]


@pytest.mark.parametrize("case", RFC_ANSWERS, ids=ids(RFC_ANSWERS))
def test_rfc9309_answer_where_google_differs(case: Case) -> None:
    """The default mode gives RFC 9309's answer where the file records one."""
    robots = RobotsTxt.parse(body_of(case))
    assert robots.allowed(case["url"], _agents(case)) is case["rfc9309_allowed"]


@pytest.mark.parametrize("case", PATHS, ids=ids(PATHS))
def test_google_path_params_query(case: Case) -> None:
    assert path_params_query(case["input"]) == case["expected"]


@pytest.mark.parametrize("case", ESCAPES, ids=ids(ESCAPES))
def test_rfc9309_pattern_escaping(case: Case) -> None:
    assert normalise(case["input"]) == case["expected"]
    assert google_escape_pattern(case["input"]) == case["expected"]


@pytest.mark.parametrize("case", TOKENS, ids=ids(TOKENS))
def test_rfc9309_product_token_validity(case: Case) -> None:
    assert is_valid_token(case["input"]) is case["expected"]


@pytest.mark.parametrize("case", EXTRACT, ids=ids(EXTRACT))
def test_google_extract_user_agent(case: Case) -> None:
    # Our tokens are lower-cased once, since they compare case-insensitively.
    assert product_token(case["input"]) == case["expected"].lower()


@pytest.mark.parametrize("case", STATS, ids=ids(STATS))
def test_rfc9309_line_endings_and_bom(case: Case) -> None:
    reports = classify_body(body_of(case))
    valid = [r for r in reports if r.tag in _DIRECTIVE_TAGS]
    unknown = [r for r in reports if r.has_directive and r.tag not in _DIRECTIVE_TAGS]
    expect = case["expect"]
    assert len(valid) == expect["valid_directives"]
    if "unknown_directives" in expect:
        assert len(unknown) == expect["unknown_directives"]
    if "last_line_seen" in expect:
        assert max(r.line for r in reports if r.has_directive) == expect["last_line_seen"]


@pytest.mark.parametrize("case", SITEMAPS, ids=ids(SITEMAPS))
def test_google_sitemaps_reported(case: Case) -> None:
    robots = RobotsTxt.parse(body_of(case), google_quirks=True)
    assert list(robots.sitemaps) == case["sitemaps"]


@pytest.mark.parametrize("case", SITEMAPS, ids=ids(SITEMAPS))
def test_rfc9309_sitemaps_reported(case: Case) -> None:
    """By default a misspelt ``site-map`` line is not a sitemap (docs/spec.md §4.5)."""
    robots = RobotsTxt.parse(body_of(case))
    expected = case["sitemaps"]
    if case["id"] == "SRC_Sitemap#1":  # "site-map:" is Google's typo tolerance
        expected = [url for url in expected if url != "https://e/s.xml"]
    assert list(robots.sitemaps) == expected


@pytest.mark.parametrize("case", REPORTS, ids=ids(REPORTS))
def test_google_per_line_classification(case: Case) -> None:
    reports = classify_body(body_of(case))
    expect = case["expect"]
    assert sum(r.tag in _DIRECTIVE_TAGS for r in reports) == expect["valid_directives"]
    assert len(reports) == expect["last_line_seen"]  # the reporter counts every line
    for line in expect.get("lines", []):
        report = reports[line["line"] - 1]
        assert report.tag == line["tag"], line
        assert report.is_typo is line["is_typo"], line
        for flag, value in line["metadata"].items():
            assert getattr(report, flag) is value, (line["line"], flag)
