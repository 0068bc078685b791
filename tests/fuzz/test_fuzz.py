"""Run the atheris fuzz target for a bounded time (a longer run is one command away)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SECONDS = int(os.environ.get("REP_FUZZ_SECONDS", "15"))


def test_rfc9309_fuzz_engine_never_raises(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds = sorted((ROOT.parent / "shared" / "corpus" / "robots").glob("*.txt"))[:40]
    for index, seed in enumerate(seeds):
        # quirks flag, empty URL and agent, then the body: a valid provider layout
        (corpus / f"seed{index}").write_bytes(b"\x00" + seed.read_bytes()[:4000])
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
