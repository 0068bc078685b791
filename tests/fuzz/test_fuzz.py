"""Run the atheris fuzz target for a bounded time (a longer run is one command away)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CONFORMANCE = ROOT / "tests" / "data" / "conformance" / "google"
SECONDS = int(os.environ.get("REP_FUZZ_SECONDS", "15"))


def body_of(case: dict[str, str]) -> bytes:
    if "robots_b64" in case:
        return base64.b64decode(case["robots_b64"])
    return case["robots"].encode("utf-8")


def test_rfc9309_fuzz_engine_never_raises(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # Seeds: the bodies of Google's conformance cases (tests/data), cut short.
    cases = json.loads((CONFORMANCE / "allowed_cases.json").read_text(encoding="ascii"))
    seeds = sorted({body_of(case)[:4000] for case in cases})
    assert len(seeds) >= 40
    for index, seed in enumerate(seeds):
        # quirks flag, empty URL and agent, then the body: a valid provider layout
        (corpus / f"seed{index}").write_bytes(b"\x00" + seed)
    result = subprocess.run(
        [
            sys.executable,
            str(HERE / "fuzz_engine.py"),
            f"-max_total_time={SECONDS}",
            "-rss_limit_mb=2048",
            "-max_len=8192",
            str(corpus),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
    )
    tail = result.stderr[-3000:]
    assert result.returncode == 0, tail
    assert "Done" in tail and "runs in" in tail, tail
    print(tail.strip().splitlines()[-1])
