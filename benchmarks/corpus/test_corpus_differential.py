"""scrapy_rep against Google's C++ library (fast-robotstxt) over a real corpus.

Split from tests/engine/test_differential.py, which keeps the classes of
disagreement and their counterfactuals: every robots/ file with its URLs
from urls.jsonl, the nonrobots/ bodies with a few URLs, and the synthetic/
stress files with their urls.json, in default mode and with
``google_quirks=True``. A disagreement no class explains fails, listed.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_differential import Case, Disagreement, classify, google_allowed

from scrapy_rep import RobotsTxt

NONROBOTS_URLS = (
    "https://example.com/",
    "https://example.com/index.html",
    "https://example.com/robots.txt",
    "https://example.com/a/b?c=d",
    "https://example.com/search?q=x#top",
)
NONROBOTS_AGENTS = ("Googlebot", "mybot")


def corpus_cases(corpus: Path) -> Iterator[tuple[str, bytes, list[Case]]]:
    """(source, body, cases) for every robots/, nonrobots/ and synthetic/ file."""
    by_file: dict[str, list[Case]] = defaultdict(list)
    with open(corpus / "urls.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            source = "robots/" + row["file"]
            by_file[source].append(Case(source, row["agent"], row["url"]))
    for path in sorted((corpus / "robots").iterdir()):
        source = "robots/" + path.name
        yield source, path.read_bytes(), by_file[source]
    for path in sorted((corpus / "nonrobots").iterdir()):
        source = "nonrobots/" + path.name
        cases = [Case(source, a, u) for u in NONROBOTS_URLS for a in NONROBOTS_AGENTS]
        yield source, path.read_bytes(), cases
    synthetic = json.loads((corpus / "synthetic" / "urls.json").read_text(encoding="utf-8"))
    for name, rows in synthetic.items():
        source = "synthetic/" + name
        body = (corpus / "synthetic" / name).read_bytes()
        yield source, body, [Case(source, row["agent"], row["url"]) for row in rows]


@dataclass
class Outcome:
    checks: Counter[str]  # per folder
    disagreements: list[tuple[Disagreement, str | None]]  # with its class


@pytest.fixture(scope="module")
def outcomes(corpus: Path) -> dict[bool, Outcome]:
    """Both modes over the whole corpus; the reference is asked once per case."""
    results = {mode: Outcome(Counter(), []) for mode in (False, True)}
    for source, body, cases in corpus_cases(corpus):
        folder = source.split("/", 1)[0]
        parsed = {mode: RobotsTxt.parse(body, google_quirks=mode) for mode in results}
        for case in cases:
            google = google_allowed(body, case.agent, case.url)
            for mode, outcome in results.items():
                outcome.checks[folder] += 1
                ours = parsed[mode].allowed(case.url, case.agent)
                if ours != google:
                    d = Disagreement(case, google, ours)
                    outcome.disagreements.append((d, classify(d, body, mode)))
    return results


def _summary(outcome: Outcome, mode: str) -> str:
    total = sum(outcome.checks.values())
    lines = [f"scrapy_rep ({mode}) vs fast-robotstxt:"]
    for folder, count in sorted(outcome.checks.items()):
        wrong = sum(1 for d, _ in outcome.disagreements if d.case.source.startswith(folder))
        lines.append(
            f"  {folder:10} {count - wrong:6}/{count:<6} agree ({(count - wrong) / count:.2%})"
        )
    wrong = len(outcome.disagreements)
    lines.append(f"  {'all':10} {total - wrong:6}/{total:<6} agree ({(total - wrong) / total:.2%})")
    classes = Counter(name or "UNCLASSIFIED" for _, name in outcome.disagreements)
    for name, count in classes.most_common():
        lines.append(f"    {count:4}  {name}")
    return "\n".join(lines)


def _unexplained(outcome: Outcome) -> list[str]:
    return [
        f"{d.case.source} agent={d.case.agent!r} url={d.case.url!r} "
        f"fast-robotstxt={'allow' if d.google else 'deny'} "
        f"scrapy_rep={'allow' if d.ours else 'deny'}"
        for d, name in outcome.disagreements
        if name is None
    ]


@pytest.mark.parametrize("quirks", [False, True], ids=["default", "google_quirks"])
def test_google_differential_corpus(outcomes: dict[bool, Outcome], quirks: bool) -> None:
    outcome = outcomes[quirks]
    print("\n" + _summary(outcome, "google_quirks=True" if quirks else "default"))
    # The data must be there in full: a missing folder must not pass empty.
    assert outcome.checks["robots"] == 19_950
    assert outcome.checks["nonrobots"] == 15 * len(NONROBOTS_URLS) * len(NONROBOTS_AGENTS)
    assert outcome.checks["synthetic"] == 12
    unexplained = _unexplained(outcome)
    assert not unexplained, (
        f"{len(unexplained)} disagreements fit no class of tests/known_differences.md:\n"
        + "\n".join(unexplained[:40])
    )


def test_google_differential_nonrobots_allow_everything(corpus: Path) -> None:
    """docs/spec.md §4.4: an HTML page served as robots.txt yields no rules; all is allowed."""
    bodies = sorted((corpus / "nonrobots").iterdir())
    assert len(bodies) == 15
    for path in bodies:
        body = path.read_bytes()
        for quirks in (False, True):
            robots = RobotsTxt.parse(body, google_quirks=quirks)
            for url in NONROBOTS_URLS:
                for agent in NONROBOTS_AGENTS:
                    assert robots.allowed(url, agent), (path.name, quirks, url, agent)
                    assert google_allowed(body, agent, url), (path.name, url, agent)
