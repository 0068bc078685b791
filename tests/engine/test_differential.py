"""Differential test: scrapy_rep against Google's C++ library (fast-robotstxt).

The classes of disagreement and their counterfactuals live here and are
tested on small bodies; the run over a real-world corpus (every robots/ file
with its URLs from urls.jsonl, the nonrobots/ bodies with a few URLs, the
synthetic/ stress files with their urls.json, in default mode and with
``google_quirks=True``) is benchmarks/corpus/test_corpus_differential.py,
given the corpus with ``--corpus PATH``.

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

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from robotstxt import RobotsMatcher  # type: ignore[import-untyped]
from robotstxt.robots import _lib  # type: ignore[import-untyped]

from scrapy_rep import RobotsTxt

KNOWN_DIFFERENCES = Path(__file__).resolve().parent.parent / "known_differences.md"
MAX_BODY_BYTES = 512_000  # docs/spec.md §4.3

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
        google_allowed(body, d.case.agent, stripped) == d.google and ask(body, stripped) == d.google
    )


def beyond_512k(d: Disagreement, body: bytes, ask: Ask) -> bool:
    """The library parses the whole body; docs/spec.md §4.3 reads 512,000 bytes."""
    if len(body) <= MAX_BODY_BYTES:
        return False
    return google_allowed(body[:MAX_BODY_BYTES], d.case.agent, d.case.url) == d.ours


_ESCAPE = re.compile(rb"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _decode_other_escapes(match: re.Match[bytes]) -> bytes:
    byte = int(match.group(1), 16)
    return match.group(0) if byte in _UNRESERVED else bytes([byte])


def _decode_escapes(data: bytes) -> bytes:
    """Decode the escapes docs/spec.md §6.5 keeps (not unreserved): those are ours to decode."""
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
    """docs/spec.md §4.3: a rule after byte 512,000 is ignored by us, read by the library."""
    body = b"User-agent: *\n" + b"#" * MAX_BODY_BYTES + b"\nDisallow: /late\n"
    url = "https://e.com/late"
    ours, google = RobotsTxt.parse(body).allowed(url, "mybot"), google_allowed(body, "mybot", url)
    assert (ours, google) == (True, False)
    case = Case("robots/example.txt", "mybot", url)
    assert classify(Disagreement(case, google, ours), body, quirks=True) == "beyond-512k"
