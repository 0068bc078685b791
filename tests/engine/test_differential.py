"""Differential test: scrapy_rep against Google's C++ library (fast-robotstxt).

Every robots/ file of ../shared/corpus with its URLs from urls.jsonl, the
nonrobots/ bodies with a few URLs, and the synthetic/ stress files with their
urls.json are checked by both, in default mode and with ``google_quirks=True``.

A disagreement is acceptable only when a classifier below explains it, and
each explanation is a counterfactual: change the one thing the class is about
(drop the empty ``?``, cut the body at 512,000 bytes, decode the escapes,
add the missing colon) and the two must then agree. Every class is documented
in tests/known_differences.md with the rule that justifies it; anything else
fails the test, with the cases listed.

The reference gets the raw body bytes through the binding's C entry point,
as Google's library reads them; its public ``is_allowed`` takes ``str`` and
would make us decode (and lose invalid UTF-8) first.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from robotstxt import RobotsMatcher  # type: ignore[import-untyped]
from robotstxt.robots import _lib  # type: ignore[import-untyped]

from scrapy_rep import RobotsTxt

KNOWN_DIFFERENCES = Path(__file__).resolve().parent.parent / "known_differences.md"
MAX_BODY_BYTES = 512_000  # SPEC §4.3
NONROBOTS_URLS = (
    "https://example.com/",
    "https://example.com/index.html",
    "https://example.com/robots.txt",
    "https://example.com/a/b?c=d",
    "https://example.com/search?q=x#top",
)
NONROBOTS_AGENTS = ("Googlebot", "mybot")

_MATCHER = RobotsMatcher()


def google_allowed(body: bytes, agent: str, url: str) -> bool:
    """fast-robotstxt's verdict on the raw bytes (its C entry point)."""
    agent_b, url_b = agent.encode("utf-8"), url.encode("utf-8")
    return bool(
        _lib.robots_allowed_by_robots(
            _MATCHER._ptr, body, len(body), agent_b, len(agent_b), url_b, len(url_b)
        )
    )


@dataclass(frozen=True)
class Case:
    source: str  # "robots/<file>", "nonrobots/<file>" or "synthetic/<file>"
    agent: str
    url: str


@dataclass(frozen=True)
class Disagreement:
    case: Case
    google: bool
    ours: bool


# --- the classes ---------------------------------------------------------------
#
# Each classifier gets the disagreement, the body and a way to ask scrapy_rep
# again (same mode) about a changed body or URL. It returns True only when its
# counterfactual makes the two agree.

Ask = Callable[[bytes, str], bool]  # (body, url) -> scrapy_rep's verdict, same mode


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def empty_query(d: Disagreement, body: bytes, ask: Ask) -> bool:
    """The fork parses URLs with ada, which drops an empty ``?``."""
    url = _without_fragment(d.case.url)
    if not url.endswith("?"):
        return False
    stripped = url[:-1]
    return (
        google_allowed(body, d.case.agent, stripped) == d.google
        and ask(body, stripped) == d.google
    )


def beyond_512k(d: Disagreement, body: bytes, ask: Ask) -> bool:
    """The library parses the whole body; SPEC §4.3 reads 512,000 bytes."""
    if len(body) <= MAX_BODY_BYTES:
        return False
    return google_allowed(body[:MAX_BODY_BYTES], d.case.agent, d.case.url) == d.ours


_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _decode_other_escapes(match: re.Match[bytes]) -> bytes:
    byte = int(match.group(1), 16)
    return match.group(0) if byte in _UNRESERVED else bytes([byte])


def _decode_escapes(data: bytes) -> bytes:
    """Decode the escapes SPEC §6.5 keeps (not unreserved): those are ours to decode."""
    return _ESCAPE.sub(_decode_other_escapes, data)


def decoded_escapes(d: Disagreement, body: bytes, ask: Ask) -> bool:
    """The fork decodes every ``%XX`` on both sides, reserved ones included.

    Only escapes of characters outside the unreserved set are decoded here:
    if scrapy_rep mishandled ``%7E`` (which it must decode itself), this
    counterfactual would not hide it.
    """
    url = d.case.url
    if "%" not in url and b"%" not in body:
        return False
    decoded_url = _decode_escapes(url.encode("utf-8")).decode("utf-8", "surrogateescape")
    return ask(_decode_escapes(body), decoded_url) == d.google


# A line with no colon and exactly two tokens: "Disallow /x" (Google-specific 1).
_MISSING_COLON = re.compile(rb"^([ \t]*[A-Za-z-]+)[ \t]+([^\s:#]+)[ \t]*$", re.MULTILINE)


def missing_colon(d: Disagreement, body: bytes, ask: Ask) -> bool:
    """Default mode reads only ``key: value``; Google's library also ``key value``."""
    fixed = _MISSING_COLON.sub(rb"\1: \2", body.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
    return fixed != body and ask(fixed, d.case.url) == d.google


#: Class id -> (classifier, which modes it may explain).
CLASSES: dict[str, tuple[Callable[[Disagreement, bytes, Ask], bool], tuple[bool, ...]]] = {
    "empty-query": (empty_query, (False, True)),
    "beyond-512k": (beyond_512k, (False, True)),
    "decoded-escapes": (decoded_escapes, (False, True)),
    "missing-colon": (missing_colon, (False,)),
}


def classify(d: Disagreement, body: bytes, quirks: bool) -> str | None:
    """The first documented class whose counterfactual explains ``d``, else None."""

    def ask(changed: bytes, url: str) -> bool:
        return RobotsTxt.parse(changed, google_quirks=quirks).allowed(url, d.case.agent)

    for name, (classifier, modes) in CLASSES.items():
        if quirks in modes and classifier(d, body, ask):
            return name
    return None


# --- the corpus -------------------------------------------------------------------


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
def outcomes(shared_dir: Path) -> dict[bool, Outcome]:
    """Both modes over the whole corpus; the reference is asked once per case."""
    results = {mode: Outcome(Counter(), []) for mode in (False, True)}
    for source, body, cases in corpus_cases(shared_dir / "corpus"):
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


def test_google_differential_nonrobots_allow_everything(shared_dir: Path) -> None:
    """SPEC §4.4: an HTML page served as robots.txt yields no rules; all is allowed."""
    bodies = sorted((shared_dir / "corpus" / "nonrobots").iterdir())
    assert len(bodies) == 15
    for path in bodies:
        body = path.read_bytes()
        for quirks in (False, True):
            robots = RobotsTxt.parse(body, google_quirks=quirks)
            for url in NONROBOTS_URLS:
                for agent in NONROBOTS_AGENTS:
                    assert robots.allowed(url, agent), (path.name, quirks, url, agent)
                    assert google_allowed(body, agent, url), (path.name, url, agent)


def test_google_differential_classes_are_documented() -> None:
    text = KNOWN_DIFFERENCES.read_text(encoding="utf-8")
    heading = "## Differential test vs Google's library (fast-robotstxt)"
    assert heading in text, "known_differences.md lacks the differential-test section"
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    missing = [name for name in CLASSES if f"### `{name}`" not in section]
    assert not missing, f"classes not documented in known_differences.md: {missing}"


@pytest.mark.parametrize(
    ("body", "url", "expected"),
    [
        (b"User-agent: *\nDisallow: /search?\n", "https://e.com/search?", "empty-query"),
        (b"User-agent: *\nDisallow: /a%25\n", "https://e.com/a%", "decoded-escapes"),
        (b"User-agent: *\nDisallow /private\n", "https://e.com/private", "missing-colon"),
        (b"User-agent: *\nDisallow: /a\n", "https://e.com/b", None),
    ],
    ids=["empty-query", "decoded-escapes", "missing-colon", "no-cause"],
)
def test_google_differential_classifier(body: bytes, url: str, expected: str | None) -> None:
    """Each class's counterfactual explains its own example and nothing else."""
    ours = RobotsTxt.parse(body).allowed(url, "mybot")
    google = google_allowed(body, "mybot", url)
    if expected is None:
        google = not ours  # an invented disagreement with no cause
    assert google != ours
    case = Case("robots/example.txt", "mybot", url)
    assert classify(Disagreement(case, google, ours), body, quirks=False) == expected


def test_google_differential_classifier_beyond_512k() -> None:
    """SPEC §4.3: a rule after byte 512,000 is ignored by us, read by the library."""
    body = b"User-agent: *\n" + b"#" * MAX_BODY_BYTES + b"\nDisallow: /late\n"
    url = "https://e.com/late"
    ours, google = RobotsTxt.parse(body).allowed(url, "mybot"), google_allowed(body, "mybot", url)
    assert (ours, google) == (True, False)
    case = Case("robots/example.txt", "mybot", url)
    assert classify(Disagreement(case, google, ours), body, quirks=True) == "beyond-512k"
