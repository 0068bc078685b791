"""Parse and check throughput of scrapy_rep beside Protego, urllib.robotparser
and Google's library (fast-robotstxt), on ../shared/corpus, in one run.

    /work/venv/bin/python benchmarks/engine.py [--runs N] [--json FILE]

Why it is built this way:

- Every timed run parses every file afresh and checks the workload against
  those fresh objects. scrapy_rep (and Protego) compile a group lazily on the
  first check for an agent, so that cost lands in the check column of every
  run instead of being paid once in the warm-up and hidden afterwards.
  A second pass over the same objects ("checks again") is reported beside
  it: a crawler asks each group many times, so that is its steady state.
- The text-taking implementations are timed with ``body.decode("utf-8",
  "ignore")`` inside their parse, as Scrapy calls them; scrapy_rep takes bytes.
- fast-robotstxt has no parse-once API: its "parse" is one call, and each of
  its checks re-parses the body.
- The garbage collector stays on (as in a crawl) and is emptied before each
  timed phase, for every implementation alike. Run order rotates per run.
- The synthetic stress files run in a child process per (implementation,
  file) with a deadline per check, so a backtracking matcher cannot hang us.
- The adversarial section (issue 13 §2, docs/spec.md §6.8) fills the 500 KiB parse
  limit with distinct wildcard rules of one family and times, per library,
  the parse, the first check (for scrapy_rep, compiling the group) and warm
  checks with 2 KiB and 100 KiB URLs: a plain one ("abab...") and one made
  to hold as many of the rules' pieces as it can. Each figure is the best
  of 3 (parse and first check on a fresh object each time): on a shared
  machine a single run moves by a third. A library whose check overruns
  ``ADVERSARIAL_DEADLINE_S`` is not asked again for that family. The last
  family is one scrapy_rep refuses within its step budget (starred cells).
  ``--adversarial-only`` runs just this section.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.robotparser import RobotFileParser

from protego import Protego
from robotstxt import RobotsMatcher  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

Item = tuple[int, str, str]  # (index of the parsed file, url, agent)


# --- the implementations -------------------------------------------------------
#
# Each one is a parse function (bytes -> parsed object) and a check loop over
# the whole workload. The loop is written per implementation so that no
# adapter call sits between the timer and the library's own method.


def _decode(body: bytes) -> str:
    return body.decode("utf-8", "ignore")


_ROBOTS_TXT: Any = None  # scrapy_rep.RobotsTxt, imported from --scrapy-rep-path


def load_scrapy_rep(path: Path) -> str:
    """Import scrapy_rep from ``path`` (the repository by default); return where from."""
    global _ROBOTS_TXT
    sys.path.insert(0, str(path))
    from scrapy_rep import RobotsTxt

    _ROBOTS_TXT = RobotsTxt
    return str(Path(sys.modules["scrapy_rep"].__file__ or "?").parent)


def parse_scrapy_rep(body: bytes) -> Any:
    return _ROBOTS_TXT.parse(body)


def checks_scrapy_rep(objs: Sequence[Any], items: Sequence[Item]) -> None:
    for index, url, agent in items:
        objs[index].allowed(url, agent)


def parse_protego(body: bytes) -> Any:
    return Protego.parse(_decode(body))


def checks_protego(objs: Sequence[Any], items: Sequence[Item]) -> None:
    for index, url, agent in items:
        objs[index].can_fetch(url, agent)


def parse_robotparser(body: bytes) -> Any:
    parser = RobotFileParser()
    parser.parse(_decode(body).splitlines())
    return parser


def checks_robotparser(objs: Sequence[Any], items: Sequence[Item]) -> None:
    for index, url, agent in items:
        objs[index].can_fetch(agent, url)


_MATCHER = RobotsMatcher()


def parse_fast(body: bytes) -> Any:
    text = _decode(body)
    _MATCHER.is_allowed(text, "*", "/")  # the library parses only when asked
    return text


def checks_fast(objs: Sequence[Any], items: Sequence[Item]) -> None:
    is_allowed = _MATCHER.is_allowed
    for index, url, agent in items:
        is_allowed(objs[index], agent, url)


def answer(impl: str, obj: Any, url: str, agent: str) -> bool:
    """One check, for agreement and the synthetic files (never timed in bulk)."""
    if impl == "scrapy_rep":
        return bool(obj.allowed(url, agent))
    if impl == "protego":
        return bool(obj.can_fetch(url, agent))
    if impl == "robotparser":
        return bool(obj.can_fetch(agent, url))
    return bool(_MATCHER.is_allowed(obj, agent, url))


@dataclass(frozen=True)
class Impl:
    name: str
    version: str
    parse: Callable[[bytes], Any]
    checks: Callable[[Sequence[Any], Sequence[Item]], None]
    holds_objects: bool = True  # False: nothing parsed to keep (memory "-")


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


IMPLS = (
    Impl("scrapy_rep", "local", parse_scrapy_rep, checks_scrapy_rep),
    Impl("protego", _version("protego"), parse_protego, checks_protego),
    Impl(
        "robotparser", "stdlib " + platform.python_version(), parse_robotparser, checks_robotparser
    ),
    Impl(
        "fast-robotstxt", _version("fast-robotstxt"), parse_fast, checks_fast, holds_objects=False
    ),
)
BY_NAME = {impl.name: impl for impl in IMPLS}
REFERENCE = "fast-robotstxt"


# --- the corpus -------------------------------------------------------------------


@dataclass
class Corpus:
    names: list[str]
    bodies: list[bytes]
    items: list[Item]
    nonrobots: dict[str, bytes]
    synthetic: dict[str, list[dict[str, str]]] = field(default_factory=dict)


def load_corpus(root: Path) -> Corpus:
    if not (root / "urls.jsonl").is_file():
        sys.exit(f"corpus not found at {root} (expected ../shared/corpus beside the repo)")
    names = sorted(path.name for path in (root / "robots").iterdir())
    index = {name: i for i, name in enumerate(names)}
    bodies = [(root / "robots" / name).read_bytes() for name in names]
    items: list[Item] = []
    with open(root / "urls.jsonl", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            items.append((index[row["file"]], row["url"], row["agent"]))
    nonrobots = {p.name: p.read_bytes() for p in sorted((root / "nonrobots").iterdir())}
    synthetic = json.loads((root / "synthetic" / "urls.json").read_text(encoding="utf-8"))
    return Corpus(names, bodies, items, nonrobots, synthetic)


# --- timing -------------------------------------------------------------------------


@dataclass
class RunResult:
    parse_s: float
    parse_median_us: float
    check_s: float
    again_s: float  # the same workload again, on the same objects


def timed_run(impl: Impl, corpus: Corpus) -> RunResult:
    """Parse every file afresh, then run the whole workload on those objects."""
    per_file: list[float] = []
    objs: list[Any] = []
    parse = impl.parse
    clock = time.perf_counter
    gc.collect()
    start = clock()
    for body in corpus.bodies:
        t0 = clock()
        objs.append(parse(body))
        per_file.append(clock() - t0)
    parse_s = clock() - start
    gc.collect()
    start = clock()
    impl.checks(objs, corpus.items)
    check_s = clock() - start
    gc.collect()
    start = clock()
    impl.checks(objs, corpus.items)
    again_s = clock() - start
    del objs
    return RunResult(parse_s, statistics.median(per_file) * 1e6, check_s, again_s)


def answers(impl: Impl, corpus: Corpus) -> list[bool]:
    objs = [impl.parse(body) for body in corpus.bodies]
    return [answer(impl.name, objs[i], url, agent) for i, url, agent in corpus.items]


def retained_mb(impl: Impl, corpus: Corpus) -> tuple[float, float]:
    """tracemalloc: MB still held by the parsed objects, after parse and after all checks."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    objs = [impl.parse(body) for body in corpus.bodies]
    gc.collect()
    after_parse = tracemalloc.get_traced_memory()[0] - before
    impl.checks(objs, corpus.items)
    gc.collect()
    after_checks = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del objs
    return after_parse / 1e6, after_checks / 1e6


def nonrobots_pass(impl: Impl, corpus: Corpus) -> dict[str, Any]:
    """HTML pages served as robots.txt: must parse and allow everything."""
    urls = ("https://example.com/", "https://example.com/index.html?q=1")
    errors: list[str] = []
    denied = total = 0
    start = time.perf_counter()
    for name, body in corpus.nonrobots.items():
        try:
            obj = impl.parse(body)
        except Exception as exc:
            errors.append(f"{name}: parse {type(exc).__name__}: {exc}")
            continue
        for url in urls:
            total += 1
            try:
                denied += not answer(impl.name, obj, url, "mybot")
            except Exception as exc:
                errors.append(f"{name}: check {type(exc).__name__}: {exc}")
    return {
        "parse_all_s": time.perf_counter() - start,
        "denied": denied,
        "answers": total,
        "errors": errors,
    }


# --- synthetic files, each in a child process ---------------------------------------


def synthetic_worker(impl_name: str, file_name: str, scrapy_rep_path: Path) -> None:
    """Child process: parse one synthetic file, then time each of its URLs.

    Prints one JSON line per step, flushed, so the parent sees each result as
    soon as it exists and can kill us when a check overruns its deadline.
    """
    impl = BY_NAME[impl_name]
    load_scrapy_rep(scrapy_rep_path)
    corpus_items = json.loads((CORPUS / "synthetic" / "urls.json").read_text("utf-8"))
    body = (CORPUS / "synthetic" / file_name).read_bytes()
    clock = time.perf_counter
    t0 = clock()
    obj = impl.parse(body)
    print(json.dumps({"step": "parse", "s": clock() - t0}), flush=True)
    for case in corpus_items[file_name]:
        t0 = clock()
        verdict = answer(impl_name, obj, case["url"], case["agent"])
        cold = clock() - t0
        warm = []
        for _ in range(5 if cold < 0.2 else 0):
            t0 = clock()
            answer(impl_name, obj, case["url"], case["agent"])
            warm.append(clock() - t0)
        warm_s = statistics.median(warm) if warm else cold
        print(
            json.dumps({"step": "check", "cold_s": cold, "warm_s": warm_s, "allowed": verdict}),
            flush=True,
        )


def run_synthetic(
    impl_name: str, file_name: str, timeout: float, scrapy_rep_path: Path
) -> dict[str, Any]:
    """Run the worker with a deadline on the parse and on each check."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--synthetic-worker",
        impl_name,
        file_name,
        "--scrapy-rep-path",
        str(scrapy_rep_path),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    steps: list[dict[str, Any]] = []
    expected = 1 + len(
        json.loads((CORPUS / "synthetic" / "urls.json").read_text("utf-8"))[file_name]
    )
    timed_out = False
    while len(steps) < expected:
        if not selector.select(timeout=timeout + 5.0 if not steps else timeout):
            timed_out = True
            break
        line = proc.stdout.readline()
        if not line:
            break  # the child died
        steps.append(json.loads(line))
    if timed_out:
        proc.kill()
    proc.wait()
    selector.close()
    error = (
        ""
        if timed_out or len(steps) == expected
        else (proc.stderr.read() if proc.stderr else "")[-300:]
    )
    return {"steps": steps, "expected": expected, "timed_out": timed_out, "error": error}


# --- adversarial files: wildcard rules up to the parse limit (issue 13 §2) ------------------

ADVERSARIAL_LIMIT = 500 * 1024
ADVERSARIAL_DEADLINE_S = 2.0
ADVERSARIAL_LENGTHS = (2 * 1024, 100 * 1024)


def _fill(rule: Callable[[int], str]) -> bytes:
    """``User-agent: *`` and rule(0), rule(1)... up to the parse limit."""
    lines, size = ["User-agent: *"], 14
    while True:
        line = rule(len(lines) - 1)
        size += len(line) + 1
        if size > ADVERSARIAL_LIMIT:
            return ("\n".join(lines) + "\n").encode()
        lines.append(line)


def _numbers(prefix: str, length: int) -> str:
    text, number = [], 0
    while sum(map(len, text)) < length:  # cheap enough: a few thousand pieces
        text.append("".join(f"{prefix}{i}" for i in range(number, number + 1000)))
        number += 1000
    return "".join(text)[:length]


def _random_piece(seed: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    state, piece = seed * 2654435761 + 1, []
    for _ in range(20):
        state = (state * 1103515245 + 12345) % 2**31
        piece.append(alphabet[state % len(alphabet)])
    return "".join(piece)


def _grid_path() -> str:
    """Every ``t<j>y`` before every ``t<i>x``: each rule of the grid fails on its last piece."""
    return "".join(f"t{j}y" for j in range(150)) + "".join(f"t{i}x" for i in range(160))


def _hole_path() -> str:
    """Every ``a<i>x``, then every ``c<k>z``, then every ``b<j>y``: each rule of
    ``/*a<i>x*b<j>y*c<k>z`` has its first piece before its last, and fails only
    on its middle one, which comes after both."""
    return "".join(
        "".join(f"{letter}{n}{end}" for n in range(40)) for letter, end in ("ax", "cz", "by")
    )


#: family -> (rule i, a hostile path of a given length: as many pieces as it holds)
ADVERSARIAL: dict[str, tuple[Callable[[int], str], Callable[[int], str]]] = {
    "Disallow: /*a<N>*a$": (lambda i: f"Disallow: /*a{i}*a$", lambda n: _numbers("a", n)),
    "Disallow: /*<N>": (lambda i: f"Disallow: /*{i}", lambda n: _numbers("", n)),
    "30 stars: /<N>*x<N+1>*...": (
        lambda i: "Disallow: /" + "*x".join(str(i + j) for j in range(30)),
        lambda n: _numbers("x", n),
    ),
    "out of order: /*b*a<N>": (
        lambda i: f"Disallow: /*b*a{i}",
        lambda n: _numbers("a", n // 2) + "b" + "a0" * (n // 4),
    ),
    "shared start: /*/product/<N>": (
        lambda i: f"Disallow: /*/product/{i}",
        lambda n: ("/product/x" * (n // 10 + 1))[:n],
    ),
    "grid: /*t<I>x*t<J>y, every t<J>y first": (
        lambda i: f"Disallow: /*t{i // 150}x*t{i % 150}y",
        lambda n: (_grid_path() + "z" * n)[:n],
    ),
    "20 random chars: /*<R>": (
        lambda i: f"Disallow: /*{_random_piece(i)}",
        lambda n: "".join(_random_piece(i) for i in range(1_000_000, 1_000_000 + n // 20 + 1)),
    ),
    # What the step budget is still for: the index checks a rule's first and
    # last pieces, not the order of those between; here each rule fails on its
    # middle piece only, so every one would have to be tried (scrapy_rep gives up).
    "hole in the middle: /*a<I>x*b<J>y*c<K>z": (
        lambda i: f"Disallow: /*a{i // 784}x*b{i // 28 % 28}y*c{i % 28}z",
        lambda n: (_hole_path() + "w" * n)[:n],
    ),
}
ADVERSARIAL_IMPLS = ("scrapy_rep", "protego", "fast-robotstxt")


def adversarial_run(impl: Impl, family: str) -> dict[str, Any]:
    """Seconds: parse, first check, and the warm checks (None: skipped, too slow);
    under "gave up", the checks scrapy_rep refused within its cost bound."""
    rule, hostile = ADVERSARIAL[family]
    body = _fill(rule)
    clock = time.perf_counter
    parse, first = [], []
    for _ in range(3):  # each time a fresh object: the first check compiles the group
        t0 = clock()
        obj = impl.parse(body)
        parse.append(clock() - t0)
        t0 = clock()
        answer(impl.name, obj, "https://example.com/", "mybot")
        first.append(clock() - t0)
        if first[-1] > ADVERSARIAL_DEADLINE_S:
            break
    out: dict[str, Any] = {"parse": min(parse), "first": min(first), "gave up": []}
    slow = out["first"] > ADVERSARIAL_DEADLINE_S
    for kind, make in (("plain", lambda n: ("ab" * n)[:n]), ("hostile", hostile)):
        for length in ADVERSARIAL_LENGTHS:
            name = f"{kind}@{length // 1024}K"
            if slow:
                out[name] = None
                continue
            url = "https://example.com/" + make(length)
            times = []
            for _ in range(3):
                t0 = clock()
                answer(impl.name, obj, url, "mybot")
                times.append(clock() - t0)
                if times[-1] > ADVERSARIAL_DEADLINE_S:
                    slow = True
                    break
            out[name] = min(times)
            if impl.name == "scrapy_rep" and _gave_up(obj.explain(url, "mybot").rule):
                out["gave up"].append(name)
    return out


def _gave_up(rule: Any) -> bool:
    """scrapy_rep's ``UNDECIDED`` (line 0: no line decided, docs/spec.md §6.8)."""
    return rule is not None and rule.line == 0


def adversarial(impls: Sequence[str] = ADVERSARIAL_IMPLS) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for family in ADVERSARIAL:
        print(f"adversarial: {family}...", file=sys.stderr)
        results[family] = {name: adversarial_run(BY_NAME[name], family) for name in impls}
    return results


def adversarial_report(results: dict[str, dict[str, Any]]) -> str:
    out = [
        "## adversarial: 500 KiB of distinct wildcard rules (ms, each the best of 3; 'parse' "
        "and 'first' on fresh objects, 'first' includes compiling the group; fast-robotstxt "
        "re-parses on every check)",
    ]
    columns = ["parse", "first"] + [
        f"{kind}@{length // 1024}K"
        for kind in ("plain", "hostile")
        for length in ADVERSARIAL_LENGTHS
    ]
    for family, per_impl in results.items():
        rows = [
            [name]
            + [
                f">{ADVERSARIAL_DEADLINE_S:.0f}s"
                if times[c] is None
                else f"{times[c] * 1e3:.2f}{'*' if c in times['gave up'] else ''}"
                for c in columns
            ]
            for name, times in per_impl.items()
        ]
        out.append("")
        out.append(f"### {family} ({len(_fill(ADVERSARIAL[family][0]).splitlines()) - 1} rules)")
        out.append(_table(["impl", *columns], rows))
    ours = [
        times
        for per_impl in results.values()
        for name, times in per_impl.items()
        if name == "scrapy_rep"
    ]
    gave_up = {
        family: per_impl["scrapy_rep"]["gave up"]
        for family, per_impl in results.items()
        if per_impl.get("scrapy_rep", {}).get("gave up")
    }
    if gave_up:
        out.append("")
        out.append(
            "  * scrapy_rep gave up within its cost bound and refused the URL "
            "(fails closed, docs/spec.md §6.8); every other cell is an exact answer:"
        )
        out += [f"      {family}: {', '.join(cells)}" for family, cells in gave_up.items()]
    if ours:
        compile_ms = max(t["first"] for t in ours) * 1e3
        warm = {
            length: max(
                t[f"{kind}@{length // 1024}K"] or float("inf")
                for t in ours
                for kind in ("plain", "hostile")
            )
            * 1e3
            for length in ADVERSARIAL_LENGTHS
        }
        out.append("")
        out.append(
            f"  {'PASS' if compile_ms <= 60 else 'FAIL'}  first check (compiles the "
            f"group) <= 60 ms: {compile_ms:.1f} ms"
        )
        out.append(
            f"  {'PASS' if warm[2048] <= 2 else 'FAIL'}  check with a 2 KiB URL "
            f"<= 2 ms: {warm[2048]:.2f} ms"
        )
        out.append(
            f"  {'PASS' if warm[102400] <= 100 else 'FAIL'}  check with a 100 KiB URL "
            f"<= 100 ms: {warm[102400]:.2f} ms"
        )
    return "\n".join(out)


# --- the whole benchmark ------------------------------------------------------------------


def _median(values: list[float]) -> float:
    return statistics.median(values)


def measure(
    corpus: Corpus, runs: int, synthetic_timeout: float, scrapy_rep_path: Path
) -> dict[str, Any]:
    order = list(IMPLS)
    print("warm-up and answers...", file=sys.stderr)
    given = {impl.name: answers(impl, corpus) for impl in order}
    timings: dict[str, list[RunResult]] = {impl.name: [] for impl in order}
    for run in range(runs):
        for impl in order:
            result = timed_run(impl, corpus)
            timings[impl.name].append(result)
            print(
                f"  run {run + 1}/{runs} {impl.name:15} parse {result.parse_s:7.3f}s  "
                f"checks {result.check_s:7.3f}s  again {result.again_s:7.3f}s",
                file=sys.stderr,
            )
        order = order[1:] + order[:1]
    results: dict[str, Any] = {"impls": {}, "synthetic": {}}
    reference = given[REFERENCE]
    for impl in IMPLS:
        runs_of = timings[impl.name]
        mem = retained_mb(impl, corpus) if impl.holds_objects else None
        same = sum(a == b for a, b in zip(given[impl.name], reference))
        results["impls"][impl.name] = {
            "version": impl.version,
            "parse_s": _median([r.parse_s for r in runs_of]),
            "parse_median_us": _median([r.parse_median_us for r in runs_of]),
            "check_s": _median([r.check_s for r in runs_of]),
            "again_s": _median([r.again_s for r in runs_of]),
            "runs": [vars(r) for r in runs_of],
            "retained_mb_after_parse": mem[0] if mem else None,
            "retained_mb_after_checks": mem[1] if mem else None,
            "agreement_vs_reference": same / len(reference),
            "nonrobots": nonrobots_pass(impl, corpus),
        }
    print("synthetic files...", file=sys.stderr)
    for file_name in corpus.synthetic:
        results["synthetic"][file_name] = {
            impl.name: run_synthetic(impl.name, file_name, synthetic_timeout, scrapy_rep_path)
            for impl in IMPLS
        }
    return results


# --- the report -----------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    line = "  ".join(
        h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths))
    )
    rule = "  ".join("-" * w for w in widths)
    body = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in rows
    ]
    return "\n".join([line, rule, *body])


def targets(results: dict[str, Any]) -> list[tuple[str, str, bool]]:
    r = results["impls"]
    ours, protego, fast = r["scrapy_rep"], r["protego"], r[REFERENCE]
    check_vs_protego = protego["check_s"] / ours["check_s"]
    check_vs_fast = fast["check_s"] / ours["check_s"]
    parse_vs_protego = protego["parse_s"] / ours["parse_s"]
    memory = ours["retained_mb_after_parse"] / protego["retained_mb_after_parse"]
    compiled = ours["retained_mb_after_checks"] / protego["retained_mb_after_checks"]
    wild = results["synthetic"]["wildcard_backtrack.txt"]["scrapy_rep"]
    checks = [s for s in wild["steps"] if s["step"] == "check"]
    complete = not wild["timed_out"] and len(checks) == wild["expected"] - 1
    warm_ms = max((s["warm_s"] for s in checks), default=float("inf")) * 1e3
    cold_ms = max((s["cold_s"] for s in checks), default=float("inf")) * 1e3
    again_vs_protego = protego["again_s"] / ours["again_s"]
    return [
        ("checks >= 8x Protego's throughput", f"{check_vs_protego:.1f}x", check_vs_protego >= 8),
        ("checks >= 10x fast-robotstxt's throughput", f"{check_vs_fast:.1f}x", check_vs_fast >= 10),
        ("parse of whole corpus >= 3x Protego", f"{parse_vs_protego:.1f}x", parse_vs_protego >= 3),
        (
            "retained memory of the parsed files <= 25% of Protego's (both after parse, "
            "the issue's measure)",
            f"{memory:.0%}",
            memory <= 0.25,
        ),
        (
            "  stricter reading: both after every check, when each asked-for group of ours "
            "is compiled",
            f"{compiled:.0%}",
            compiled <= 0.25,
        ),
        (
            "wildcard_backtrack.txt, 4 KiB URL <= 2 ms per check (slowest URL, warm; "
            "its first check, which also compiles the group, in brackets)",
            f"{warm_ms:.3f} ms [{cold_ms:.3f} ms]",
            complete and warm_ms <= 2.0,
        ),
        # Issue 13 §2: the same columns, the bar raised.
        (
            "issue 13 §2: checks again (groups compiled) >= 12x Protego's throughput",
            f"{again_vs_protego:.1f}x",
            again_vs_protego >= 12,
        ),
        (
            "issue 13 §2: checks (fresh objects, compiling included) >= 5x Protego's",
            f"{check_vs_protego:.2f}x",
            check_vs_protego >= 5,
        ),
        ("issue 13 §2: parse >= 4x Protego's", f"{parse_vs_protego:.1f}x", parse_vs_protego >= 4),
        ("issue 13 §2: memory after parse <= 15% of Protego's", f"{memory:.2%}", memory <= 0.15),
    ]


def report(results: dict[str, Any], corpus: Corpus, runs: int) -> str:
    r = results["impls"]
    protego = r["protego"]
    mib = sum(map(len, corpus.bodies)) / 2**20
    out = [
        f"# scrapy_rep engine benchmark  python {platform.python_version()}  "
        f"cpus={os.cpu_count()}  runs={runs} (median; 1 warm-up; gc on, collected before "
        "each phase)",
        f"# corpus: {len(corpus.bodies)} robots/ files, {mib:.2f} MiB, {len(corpus.items)} "
        f"URL checks ({CORPUS})",
        f"# scrapy_rep imported from {results['scrapy_rep_from']}",
        "",
        "## parse and checks; 'x Protego' = time / Protego's time (lower is faster)",
    ]
    rows = []
    for name, v in r.items():
        star = " *" if name == REFERENCE else ""
        mem_p = v["retained_mb_after_parse"]
        mem_c = v["retained_mb_after_checks"]
        rows.append(
            [
                f"{name}{star} {v['version']}",
                f"{v['parse_s']:.3f}",
                f"{v['parse_s'] / protego['parse_s']:.2f}x",
                f"{v['parse_median_us']:.1f}",
                f"{v['check_s']:.3f}",
                f"{v['check_s'] / protego['check_s']:.2f}x",
                f"{v['check_s'] / len(corpus.items) * 1e6:.2f}",
                f"{v['again_s']:.3f}",
                f"{v['again_s'] / protego['again_s']:.2f}x",
                "-" if mem_p is None else f"{mem_p:.1f}",
                "-" if mem_c is None else f"{mem_c:.1f}",
                "-" if mem_c is None else f"{mem_c / protego['retained_mb_after_parse']:.0%}",
                f"{v['agreement_vs_reference']:.2%}",
                f"{_spread(v['runs']):.0%}",
            ]
        )
    out.append(
        _table(
            [
                "impl",
                "parse all (s)",
                "x Protego",
                "parse/file median (us)",
                "checks all (s)",
                "x Protego",
                "us/check",
                "checks again (s)",
                "x Protego",
                "MB after parse",
                "MB after checks",
                "after checks / Protego after parse",
                "agrees w/ fast-robotstxt",
                "run spread",
            ],
            rows,
        )
    )
    out.append(
        "  * no parse-once API: 'parse' = decode + one call; each check re-parses the "
        "body; it keeps only the text (memory '-')."
    )
    out.append(
        "  scrapy_rep's check column includes compiling each group on first use "
        "(fresh objects every run); 'checks again' is a second pass on them."
    )
    out.append(
        "  run spread = (max - min) / median of parse + checks across runs; other load "
        "on the machine shows here."
    )
    ours = r["scrapy_rep"]
    out.append("")
    out.append("## scrapy_rep speed-up factors")
    out.append(f"  checks vs Protego:        {protego['check_s'] / ours['check_s']:.1f}x")
    out.append(f"  checks vs fast-robotstxt: {r[REFERENCE]['check_s'] / ours['check_s']:.1f}x")
    out.append(f"  checks vs robotparser:    {r['robotparser']['check_s'] / ours['check_s']:.1f}x")
    out.append(
        f"  checks again (same objects, groups compiled) vs Protego: "
        f"{protego['again_s'] / ours['again_s']:.1f}x, vs fast-robotstxt: "
        f"{r[REFERENCE]['again_s'] / ours['again_s']:.1f}x"
    )
    out.append(f"  parse vs Protego:         {protego['parse_s'] / ours['parse_s']:.1f}x")
    out.append("")
    out.append(
        f"## nonrobots/: {len(corpus.nonrobots)} HTML or rule-less bodies; must parse "
        "and allow everything"
    )
    rows = []
    for name, v in r.items():
        n = v["nonrobots"]
        rows.append(
            [
                name,
                f"{n['parse_all_s']:.3f}",
                f"{n['denied']}/{n['answers']}",
                str(len(n["errors"])),
                "PASS" if not n["errors"] and not n["denied"] else "FAIL",
            ]
        )
    out.append(_table(["impl", "parse+check all (s)", "denied", "errors", ""], rows))
    for file_name, per_impl in results["synthetic"].items():
        cases = corpus.synthetic[file_name]
        out.append("")
        out.append(
            f"## synthetic/{file_name}: ms per check (warm median of 5; cold first "
            "check in brackets)"
        )
        headers = ["impl", "parse (ms)"] + [
            f"url{i} ({len(c['url'])}B,{c['agent']})" for i, c in enumerate(cases)
        ]
        rows = []
        for name, run in per_impl.items():
            steps = run["steps"]
            row = [name]
            row.append(f"{steps[0]['s'] * 1e3:.1f}" if steps else _missing(run))
            for i in range(len(cases)):
                if i + 1 < len(steps):
                    s = steps[i + 1]
                    verdict = "allow" if s["allowed"] else "deny"
                    row.append(f"{s['warm_s'] * 1e3:.3f} [{s['cold_s'] * 1e3:.3f}] {verdict}")
                else:
                    row.append(_missing(run))
            rows.append(row)
        out.append(_table(headers, rows))
    out.append("")
    out.append("## targets (issue 2, then issue 13 §2)")
    for label, value, ok in targets(results):
        out.append(f"  {'PASS' if ok else 'FAIL'}  {label}: {value}")
    return "\n".join(out)


def _spread(runs: list[dict[str, float]]) -> float:
    totals = [run["parse_s"] + run["check_s"] for run in runs]
    return (max(totals) - min(totals)) / statistics.median(totals)


def _missing(run: dict[str, Any]) -> str:
    return "TIMEOUT" if run["timed_out"] else "ERROR"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs (median is reported)")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    parser.add_argument(
        "--synthetic-timeout",
        type=float,
        default=20.0,
        help="seconds allowed for each synthetic check before the child is killed",
    )
    parser.add_argument(
        "--scrapy-rep-path",
        type=Path,
        default=ROOT,
        help="folder holding the scrapy_rep package (default: this repository)",
    )
    parser.add_argument(
        "--adversarial-only",
        action="store_true",
        help="run only the adversarial section (issue 13 §2)",
    )
    parser.add_argument(
        "--synthetic-worker", nargs=2, metavar=("IMPL", "FILE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.synthetic_worker:
        impl_name, file_name = args.synthetic_worker
        synthetic_worker(impl_name, file_name, args.scrapy_rep_path)
        return 0
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    where = load_scrapy_rep(args.scrapy_rep_path)
    started = time.perf_counter()
    if args.adversarial_only:
        results = {"adversarial": adversarial(), "scrapy_rep_from": where}
        print(f"# scrapy_rep imported from {where}\n")
        print(adversarial_report(results["adversarial"]))
        print(f"\n# benchmark took {time.perf_counter() - started:.1f}s")
        if args.json:
            args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
        return 0
    corpus = load_corpus(CORPUS)
    results = measure(corpus, args.runs, args.synthetic_timeout, args.scrapy_rep_path)
    results["scrapy_rep_from"] = where
    results["adversarial"] = adversarial()
    text = report(results, corpus, args.runs) + "\n\n" + adversarial_report(results["adversarial"])
    print(text)
    print(f"\n# benchmark took {time.perf_counter() - started:.1f}s")
    if args.json:
        results["targets"] = [
            {"target": label, "value": value, "pass": ok} for label, value, ok in targets(results)
        ]
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
