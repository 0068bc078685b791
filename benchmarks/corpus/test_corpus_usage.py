"""Usage preferences over a real corpus: split from tests/engine's usage tests.

- Content-Signal against fast-robotstxt on every corpus file with signal
  lines put in, and on the first 50 as they are (tests/engine/test_usage.py
  holds the rules that explain a disagreement).
- ``RobotsTxt.usage`` against the standalone reader on every corpus file with
  usage lines put in (tests/engine/test_usage_document.py).
"""

from __future__ import annotations

import random
from pathlib import Path

from test_usage import signal_differential, with_signals
from test_usage_document import agree, with_usage

from scrapy_rep import RobotsTxt


def robots_files(corpus: Path) -> list[Path]:
    files = sorted((corpus / "robots").glob("*.txt"))
    assert len(files) >= 399, f"corpus incomplete at {corpus}"
    return files


def test_differential_content_signal_corpus(corpus: Path) -> None:
    rng = random.Random(20261015)
    files = robots_files(corpus)
    bodies = [(path.name, with_signals(path.read_bytes(), rng)) for path in files]
    bodies += [(path.name + " (as is)", path.read_bytes()) for path in files[:50]]
    result = signal_differential(bodies, rng)
    assert not result.unexplained, result.unexplained[:20]
    # The agreement is about something: 316 stated signals on the shared
    # corpus (the generated files of tests/engine give the other 500+).
    assert result.stated > 250
    explained = {"first_line_only", "path_scoped", "global_fallback", "global_line"}
    assert explained <= result.explained.keys()


def test_scrapy_document_reads_the_usage_lines_of_the_corpus(corpus: Path) -> None:
    rng = random.Random(15)
    for path in robots_files(corpus):
        body = with_usage(path.read_bytes(), rng)
        agents = [a for a in RobotsTxt.parse(body).agents if a != "*"][:3]
        for quirks in (False, True):
            robots = RobotsTxt.parse(body, google_quirks=quirks)
            for agent in [*agents, "mybot", "otherbot", "zzbot"]:
                agree(body, agent, quirks, robots)
