"""Every citation of the behaviour specification points at a section that exists.

Code comments, docstrings and tests cite docs/spec.md by section number
("docs/spec.md §6.5", "docs/spec.md §3.4, §3.5", "docs/spec.md §4-§7"; the
older spelling "SPEC §6.5" is read the same way). A citation of a number
that has no heading in docs/spec.md fails here, with the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec.md"
#: Where citations are written; this file is left out (its examples are wrong on purpose).
CITING = ("scrapy_rep", "tests", "benchmarks", "example_project")
SUFFIXES = {".py", ".md", ".sh", ".cfg", ".toml", ".txt"}

_NUMBER = r"\d+(?:\.\d+)*"
_HEADING = re.compile(rf"^#{{2,4}} ({_NUMBER})\.?\s", re.MULTILINE)
# "SPEC §2.2", "docs/spec.md §3.4, §3.5", "§2.2 and §3", "§5.5-§6.9", "§2-3", "§6.5 / §6.9"
_FOLLOWING = rf"(?:\s*(?:,|and|/)\s*§{_NUMBER}|\s*[-–]\s*§?{_NUMBER})*"
_CITATION = re.compile(rf"(?:\bSPEC|docs/spec\.md) §({_NUMBER})({_FOLLOWING})")
_MORE = re.compile(rf"§?({_NUMBER})")

#: The sections the specification has always had: citations keep their meaning.
NUMBERED = (
    [f"1.{n}" for n in range(1, 8)]
    + ["2", *(f"2.{n}" for n in range(1, 5))]
    + [f"3.{n}" for n in range(1, 6)]
    + [f"4.{n}" for n in range(1, 6)]
    + [f"5.{n}" for n in range(1, 9)]
    + [f"6.{n}" for n in range(1, 10)]
    + ["6.5.1", "7.1", "7.2"]
    + [f"8.{n}" for n in range(1, 5)]
)


def sections(text: str) -> set[str]:
    """The numbers of the headings: '## 2. ...' is 2, '#### 6.5.1 ...' is 6.5.1."""
    return set(_HEADING.findall(text))


def cited(text: str) -> list[tuple[int, str]]:
    """(line, section number) of every citation in ``text``, ranges at both ends."""
    found = []
    for match in _CITATION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, match.group(1)))
        found += [(line, number) for number in _MORE.findall(match.group(2))]
    return found


def citing_files() -> list[Path]:
    me = Path(__file__).resolve()
    return sorted(
        path
        for folder in CITING
        for path in (ROOT / folder).rglob("*")
        if path.suffix in SUFFIXES
        and path.is_file()
        and path.resolve() != me
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    )


def test_spec_has_every_numbered_section() -> None:
    have = sections(SPEC.read_text(encoding="utf-8"))
    assert not [n for n in NUMBERED if n not in have]
    assert {str(n) for n in range(1, 9)} <= have  # the chapters


def test_spec_every_citation_exists() -> None:
    have = sections(SPEC.read_text(encoding="utf-8"))
    missing = []
    total = 0
    for path in citing_files():
        for line, number in cited(path.read_text(encoding="utf-8", errors="replace")):
            total += 1
            if number not in have:
                missing.append(f"{path.relative_to(ROOT)}:{line}: §{number}")
    assert total > 150, "citations not found: is the scan looking in the right places?"
    assert not missing, "citations of sections docs/spec.md does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("# SPEC §2.2: unreachable", ["2.2"]),
        ("(docs/spec.md §6.5.1).", ["6.5.1"]),
        ("SPEC §3.4, §3.5 and §8.3)", ["3.4", "3.5", "8.3"]),
        ("docs/spec.md §2.2 and §3 say", ["2.2", "3"]),
        ("SPEC §4-§7, and", ["4", "7"]),
        ("SPEC §2-3: the policy", ["2", "3"]),
        ("SPEC §6.5 / §6.9", ["6.5", "6.9"]),
        ("SPEC §4.3, 512,000 bytes", ["4.3"]),
        ("RFC 9309 §2.2.2 says", []),
    ],
)
def test_spec_citations_are_read(text: str, numbers: list[str]) -> None:
    assert [number for _, number in cited(text)] == numbers


def test_spec_a_missing_section_is_caught() -> None:
    have = sections("# Title\n\n## 1. One\n\n### 1.1 First\n\n#### 1.1.1 Deeper\n")
    assert have == {"1", "1.1", "1.1.1"}
    wrong = [n for _, n in cited("see docs/spec.md §1.1, §1.2 and SPEC §9")]
    assert [n for n in wrong if n not in have] == ["1.2", "9"]


#: Another project's issue, named with its project: a source, not our tracker.
_THEIRS = re.compile(r"(?:robotstxt|vocab) issues? \d+")
_OURS = re.compile(r"\bissues? #?\d+", re.IGNORECASE)


def test_docs_cite_pages_not_our_issue_numbers() -> None:
    """A reader of docs/ cannot open our tracker: a page cites docs, not issue numbers."""
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "docs").rglob("*.md"))
        if "_build" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _OURS.search(_THEIRS.sub("", line))
    ]
    assert not found, "\n".join(found)
