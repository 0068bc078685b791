"""``python -m scrapy_rep.tools.demo``: one run, every behaviour in its table, exit code 0.

The demo is run as a user runs it (a subprocess; it owns its reactor), and
its printed table is parsed: one row per local site, with the robots.txt
outcome and the counts of requests allowed / forbidden / unreachable / opted
out and sitemaps surfaced, all collected from the crawl's signals.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SPIDERS = ("catalog", "monitor", "news")
SITES = ("agents", "missing", "down", "redirect", "huge", "sitemaps", "usage")


@dataclass(frozen=True)
class Demo:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


@dataclass(frozen=True)
class Row:
    site: str
    origin: str
    robots: str
    allowed: int
    forbidden: int
    refused: int
    unreachable: int
    opted_out: int
    sitemaps: int
    check: str


def run_demo(*args: str) -> Demo:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    # Not tmp_path: pytest runs elsewhere on the machine may prune it while in use.
    with tempfile.TemporaryDirectory() as cwd:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "scrapy_rep.tools.demo", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return Demo(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def table(stdout: str) -> dict[str, Row]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("site "))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        site, origin, robots, *numbers, check = cells
        row = Row(site, origin, robots, *(int(n) for n in numbers), check)
        rows[row.site] = row
    return rows


@pytest.fixture(scope="module")
def demo() -> Demo:
    return run_demo()


@pytest.fixture(scope="module")
def rows(demo: Demo) -> dict[str, Row]:
    return table(demo.stdout)


# --- the run as a whole ------------------------------------------------------------------


def test_scrapy_demo_exits_0_quickly_with_every_site_checked(
    demo: Demo, rows: dict[str, Row]
) -> None:
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert demo.seconds < 60
    assert tuple(rows) == SITES
    assert all(row.check == "ok" for row in rows.values())
    assert f"All {len(SITES)} behaviours shown" in demo.stdout
    assert "ERROR" not in demo.stdout


def test_scrapy_demo_explains_every_column_and_ends_with_next_steps(demo: Demo) -> None:
    after_header = demo.stdout.split("\nsite ", 1)[1]
    header = "site " + after_header.split("\n", 1)[0]
    columns = re.split(r"\s{2,}", header.strip())[3:]  # after site, origin, robots.txt
    explained = re.findall(r"^  ([a-z ]+): ", after_header.split("\n\n")[1], re.M)
    assert columns == explained
    assert demo.stdout.rstrip().splitlines()[-5] == "Next:"
    assert "docs/troubleshooting.md" in demo.stdout.rstrip().splitlines()[-1]


def test_scrapy_demo_shows_progress_per_spider_and_site(demo: Demo, rows: dict[str, Row]) -> None:
    progress = demo.stdout.split("Crawling", 1)[1].split("\nsite ", 1)[0]
    for spider in SPIDERS:
        assert re.search(rf"^  {spider} +finished: \d+ allowed", progress, re.M)
        for site, row in rows.items():
            line = rf"^  {spider} +{site} +{re.escape(row.origin)}/robots\.txt: "
            assert re.search(line, progress, re.M), (spider, site)


def test_scrapy_demo_origins_are_distinct_ports_on_loopback(rows: dict[str, Row]) -> None:
    origins = [row.origin for row in rows.values()]
    assert all(re.fullmatch(r"http://127\.0\.0\.1:\d+", origin) for origin in origins)
    assert len(set(origins)) == len(SITES)


# --- one behaviour per site ----------------------------------------------------------------


def test_spec_5_5_agents_each_spider_gets_its_own_group(rows: dict[str, Row]) -> None:
    """news (examplebot-news) loses 1 path, monitor (examplebot) 2, catalog (catalogbot) 4."""
    agents = rows["agents"]
    assert "200" in agents.robots
    assert (agents.forbidden, agents.allowed) == (1 + 2 + 4, 3 * 5 - 7)


def test_status_404_full_allow(rows: dict[str, Row]) -> None:
    missing = rows["missing"]
    assert "404" in missing.robots
    assert (missing.allowed, missing.forbidden, missing.unreachable) == (15, 0, 0)


def test_status_5xx_unreachable_drops_every_checked_request(rows: dict[str, Row]) -> None:
    down = rows["down"]
    assert "503" in down.robots and "unreachable" in down.robots
    assert (down.allowed, down.forbidden, down.unreachable) == (0, 0, 15)


def test_spec_8_2_dont_obey_robotstxt_request_passes_even_when_unreachable(
    rows: dict[str, Row],
) -> None:
    assert all(row.opted_out == 1 for row in rows.values())  # monitor's status page, per site


def test_spec_2_1_redirect_chain_rules_found_at_its_end_apply(rows: dict[str, Row]) -> None:
    redirect = rows["redirect"]
    assert "3 redirects" in redirect.robots
    assert redirect.forbidden == 3  # /private/report for each spider


def test_spec_4_3_rules_after_500_kib_ignored(rows: dict[str, Row]) -> None:
    huge = rows["huge"]
    assert "first 512000 of 2000000 bytes read" in huge.robots, huge.robots
    assert (huge.forbidden, huge.allowed) == (3, 12)  # /early/ forbidden, /late/ not


def test_spec_7_2_sitemaps_surfaced_and_followed(rows: dict[str, Row]) -> None:
    sitemaps = rows["sitemaps"]
    assert sitemaps.sitemaps == 2
    # 3 spiders x 4 pages, 2 sitemaps and 3 of their 4 pages (catalog's robotstxt_sitemaps).
    assert (sitemaps.allowed, sitemaps.forbidden) == (12 + 2 + 3, 3 + 1)
    assert all(row.sitemaps == 0 for site, row in rows.items() if site != "sitemaps")


def test_aipref_attach_usage_site_refuses_train_ai_to_the_spider_declaring_it(
    demo: Demo, rows: dict[str, Row]
) -> None:
    """trainer (REP_PURPOSES=["train-ai"]) loses /articles/ and /private/; the rest lose nothing."""
    usage = rows["usage"]
    assert (usage.allowed, usage.forbidden, usage.refused) == (3 * 5 + 3, 0, 2)
    assert all(row.refused == 0 for site, row in rows.items() if site != "usage")
    refusals = demo.stdout.split("Refused for a declared purpose", 1)[1]
    assert re.search(r"trainer .*/articles/1: usage train-ai refused by Content-Usage: "
                     r"/articles/ train-ai=n, search=y at line 4 of ", refusals)  # fmt: skip
    assert "Content-Signal: /private/ search=yes, ai-train=no at line 5" in refusals


# --- failing runs ------------------------------------------------------------------------


def test_scrapy_demo_fails_when_robots_txt_is_not_obeyed() -> None:
    """The checks are real: with ROBOTSTXT_OBEY off, no behaviour shows, exit code 1."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(ROOT / "example_project", project, ignore=shutil.ignore_patterns(".*"))
        settings = project / "rep_example" / "settings.py"
        text = settings.read_text(encoding="utf-8")
        settings.write_text(text.replace("ROBOTSTXT_OBEY = True", "ROBOTSTXT_OBEY = False"))
        demo = run_demo("--project", str(project))
    assert demo.returncode == 1, demo.stdout + demo.stderr
    rows = table(demo.stdout)
    assert {site for site, row in rows.items() if row.check == "FAIL"} == set(SITES)
    assert "Demo FAILED" in demo.stdout


def test_scrapy_demo_without_project_exits_2() -> None:
    demo = run_demo("--project", "/nonexistent/project")
    assert demo.returncode == 2
    assert "no Scrapy project at /nonexistent/project" in demo.stderr
