"""Instructions, not seconds: the corpus workload under valgrind, per implementation.

    /work/venv/bin/python benchmarks/engine_instructions.py [--phase checks|again|compile|parse]

Why: on a shared VM the wall-clock ratios of ``engine.py`` move by 20-40%
between runs; instruction counts do not. Each phase is counted as the
difference between two whole-process runs under callgrind, one doing the
phase and one not (imports, corpus loading and teardown cancel out). The
``checks`` phase is what ``engine.py`` times: every URL checked once against
freshly parsed objects, so scrapy_rep's compile-on-first-use is included;
``again`` is its "checks again" column (a second pass, groups compiled);
``compile`` is what the first pass adds to that: for scrapy_rep, selecting
and compiling the group of every (file, agent) of the workload, no check
(for the others, whose first check does the same work, a first check each).
Instructions are a proxy: C code and Python code differ in instructions per
second, so read these beside ``engine.py``'s times, not instead of them.
Needs ``valgrind`` (not used by CI or the tests); takes about 7 minutes,
most of it fast-robotstxt, which re-parses the body on every check.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
IMPLS = ("scrapy_rep", "protego", "fast-robotstxt")


def worker(impl: str, phase: str, measure: bool) -> None:
    """Child process: load the corpus, parse, and run ``phase`` only if ``measure``."""
    import engine  # beside this file: the implementations exactly as engine.py times them

    engine.load_scrapy_rep(ROOT)
    corpus = engine.load_corpus(CORPUS)
    chosen = engine.BY_NAME[impl]
    if phase == "parse":
        if measure:
            [chosen.parse(body) for body in corpus.bodies]
        return _exit()
    objs = [chosen.parse(body) for body in corpus.bodies]
    if phase == "again":
        chosen.checks(objs, corpus.items)
    if phase == "compile":
        firsts = {(index, agent): url for index, url, agent in reversed(corpus.items)}
        items = [(index, url, agent) for (index, agent), url in firsts.items()]
        if measure:
            if impl == "scrapy_rep":
                for index, _, agent in items:
                    objs[index]._group_for(agent, True)  # select and compile, no check
            else:
                chosen.checks(objs, items)
    elif measure:
        chosen.checks(objs, corpus.items)
    _exit()


def _exit() -> None:
    sys.stdout.flush()
    os._exit(0)  # no teardown: freeing what the phase built is not the phase


def instructions(impl: str, phase: str, measure: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            str(Path(__file__).resolve()),
            "--worker",
            impl,
            phase,
            "1" if measure else "0",
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        for line in out.read_text().splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no summary in callgrind output for {impl}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--phase", choices=("checks", "again", "compile", "parse"), default="checks"
    )
    parser.add_argument(
        "--impls",
        nargs="+",
        choices=IMPLS,
        default=list(IMPLS),
        help="only these (scrapy_rep alone: an A/B in under a minute)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        impl, phase, measure = args.worker
        worker(impl, phase, measure == "1")
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found (apt-get install valgrind)")
    counts: dict[str, Any] = {}
    impls = [impl for impl in IMPLS if impl in args.impls]
    for impl in impls:
        instructions(impl, args.phase, False)  # compiles .pyc files, so both runs load them
        with_phase = instructions(impl, args.phase, True)
        counts[impl] = with_phase - instructions(impl, args.phase, False)
        print(f"  {impl:15} {counts[impl] / 1e6:9.1f} M instructions", file=sys.stderr)
    ours = counts.get("scrapy_rep")
    print(f"# {args.phase} of the corpus workload ({CORPUS}), callgrind instructions")
    for impl in impls:
        ratio = f"  {counts[impl] / ours:5.1f}x scrapy_rep" if ours else ""
        print(f"{impl:15} {counts[impl] / 1e6:9.1f} M{ratio}")
    if args.json:
        args.json.write_text(json.dumps({"phase": args.phase, "instructions": counts}, indent=2))


if __name__ == "__main__":
    main()
