"""``scrapy robots``, ``scrapy-rep check`` and the Tester read the crawler's token
from a User-Agent string as the crawl does (docs/spec.md §5.7): here the one
``scrapy startproject`` writes, whose ``shop`` group the crawl obeys
(tests/crawler/test_user_agent.py)."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawler.servers import Reply, SiteServer
from scrapy.settings import Settings

from scrapy_rep.tools.cli.console import main
from scrapy_rep.tools.tester import project

from .conftest import Run, run_module
from .test_robots_command import fields

STARTPROJECT = "shop (+http://www.yourdomain.com)"
ROBOTS = b"User-agent: shop\nDisallow: /\n\nUser-agent: *\nAllow: /\n"


@pytest.fixture(scope="module")
def shop_site() -> Iterator[SiteServer]:
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        yield site


def test_scrapy_5_7_scrapy_robots_reads_the_startproject_user_agent(
    scrapy: Run, shop_site: SiteServer
) -> None:
    with tempfile.TemporaryDirectory() as elsewhere:
        done = scrapy(
            "robots",
            shop_site.url("/page"),
            "-s",
            f"USER_AGENT={STARTPROJECT}",
            cwd=Path(elsewhere),
        )
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["tokens"] == "shop (USER_AGENT)"
    assert (out["group"], out["rule"]) == ("shop", "line 2: Disallow: /")


def test_scrapy_5_7_check_reads_the_startproject_user_agent(
    shop_site: SiteServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", shop_site.url("/robots.txt"), "/page", "--agent", STARTPROJECT])
    out, err = capsys.readouterr()
    assert code == 1
    assert 'group "shop"' in out
    assert "checking as shop" in err


def test_scrapy_5_7_the_testers_project_agents_are_the_crawls() -> None:
    assert project.tester_config(Settings({"USER_AGENT": STARTPROJECT})).agents == ("shop",)
    browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0"
    quirks = Settings({"USER_AGENT": browser, "REP_GOOGLE_QUIRKS": True})
    assert project.tester_config(quirks).agents == ("*",)  # no token, with or without the quirks


# --- every tool inside a `scrapy startproject shop` project, beside its crawl ---------------

SHOP_ROBOTS = b"User-agent: shop\nDisallow: /private\nCrawl-delay: 1\n\nUser-agent: *\nAllow: /\n"
VISIT = """import scrapy


class Visit(scrapy.Spider):
    name = "visit"

    def __init__(self, urls="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = urls.split(",")

    def parse(self, response):
        yield {"url": response.url}
"""
LATER = "import time\n\n\ndef later():\n    return time.time() + 2 * 3600\n"


def startproject(scrapy: Run, folder: Path) -> Path:
    """``scrapy startproject shop`` with its USER_AGENT line uncommented and the add-on."""
    done = scrapy("startproject", "shop", str(folder / "shop"), cwd=folder)
    assert done.returncode == 0, done.stderr
    project = folder / "shop"
    settings = project / "shop" / "settings.py"
    text = settings.read_text(encoding="utf-8")
    assert f'#USER_AGENT = "{STARTPROJECT}"' in text  # the template's line
    text = text.replace(f'#USER_AGENT = "{STARTPROJECT}"', f'USER_AGENT = "{STARTPROJECT}"')
    text = text.replace("ADDONS = {}", 'ADDONS = {"scrapy_rep.Addon": 0}')
    settings.write_text(text + "\nDOWNLOAD_DELAY = 0\n", encoding="utf-8")
    (project / "shop" / "spiders" / "visit.py").write_text(VISIT, encoding="utf-8")
    (project / "shop" / "later.py").write_text(LATER, encoding="utf-8")
    return project


@pytest.fixture(scope="module")
def shop_project(tmp_path_factory: pytest.TempPathFactory, command_path: str) -> Path:
    folder = tmp_path_factory.mktemp("startproject")
    return startproject(_runner(command_path), folder)


def _runner(command_path: str) -> Run:
    def run(*args: str, cwd: Path) -> Any:
        return run_module(command_path, "scrapy.cmdline", *args, cwd=cwd, timeout=120)

    return run


def _cli(command_path: str, *args: str, cwd: Path) -> Any:
    """``scrapy-rep ARGS`` as a user runs it, in ``cwd``."""
    return run_module(command_path, "scrapy_rep.tools.cli", *args, cwd=cwd, timeout=120)


def _store_file(project: Path) -> Path:
    found = list((project / ".scrapy").rglob("*.sqlite3"))
    assert len(found) == 1, found
    return found[0]


def test_scrapy_5_7_every_tool_in_a_startproject_answers_as_its_crawl(
    shop_project: Path, command_path: str, tmp_path: Path
) -> None:
    routes = {"/robots.txt": Reply(200, SHOP_ROBOTS), "/private/secret": Reply(200, b"no")}
    with SiteServer({**routes, "/open": Reply(200, b"yes")}) as site:
        run = _runner(command_path)
        urls = f"{site.url('/private/secret')},{site.url('/open')}"
        crawl = run("crawl", "visit", "-a", f"urls={urls}", cwd=shop_project)
        assert crawl.returncode == 0, crawl.stderr
        crawled = set(site.paths())
        robots = run("robots", site.url("/private/secret"), cwd=shop_project)
        check = _cli(
            command_path, "check", site.url("/robots.txt"), "/private/secret", cwd=shop_project
        )
        shown = _cli(command_path, "cache", "show", site.url("/"), cwd=shop_project)
        outside = _cli(
            command_path, "check", site.url("/robots.txt"), "/private/secret", cwd=tmp_path
        )
    # what the crawl did: /private/secret never fetched, /open fetched
    assert "/private/secret" not in crawled and "/open" in crawled
    assert robots.returncode == 1, robots.stderr
    out = fields(robots)
    assert (out["tokens"], out["group"]) == ("shop (USER_AGENT)", "shop")
    assert "answered from the project's store" in out["robots.txt"]
    assert out["pace"] == (
        '1 s between requests (Crawl-delay/Request-rate): not applied: REP_CRAWL_DELAY = "obey" '
        "applies it"
    )
    assert shown.returncode == 0, shown.stderr
    assert "  pace        the copy asks 1 s between requests of shop " in shown.stdout
    assert check.returncode == 1, check.stderr
    assert 'group "shop"' in check.stdout
    assert "checking as shop (this project's USER_AGENT, as its crawl)" in check.stderr
    # outside a project: Scrapy's default token, and the note says so
    assert outside.returncode == 0, outside.stderr
    assert 'group "*"' in outside.stdout
    assert "checking as scrapy (Scrapy's default USER_AGENT: not inside" in outside.stderr


def test_scrapy_5_7_tester_and_report_in_a_startproject_use_its_tokens_and_store(
    shop_project: Path, command_path: str
) -> None:
    forbids = b"User-agent: shop\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    with SiteServer({"/robots.txt": Reply(200, forbids)}) as site:
        crawl = _runner(command_path)(
            "crawl", "visit", "-a", f"urls={site.url('/a')}", cwd=shop_project
        )
        assert crawl.returncode == 0, crawl.stderr
        assert site.paths() == ["/robots.txt"]
        origin = site.url("/").rstrip("/")
    report = _cli(command_path, "report", "--deep", "--json", "--host", origin, cwd=shop_project)
    assert report.returncode == 0, report.stderr
    (row,) = [json.loads(line) for line in report.stdout.splitlines()]
    assert row["forbids_all"] is True  # the shop group forbids everything, as the crawl found
    assert "reads each file as shop (this project's tokens" in report.stderr
    code = (
        "from scrapy_rep.tools.cli.console import tester_config_of\n"
        "from scrapy_rep.tools.cli.options import parsers\n"
        "args = parsers()[1]['tester'].parse_args([])\n"
        "config, said = tester_config_of(args)\n"
        "print(config.agents, config.store.where if config.store else None)\n"
        "print(said)\n"
    )
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=command_path)
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=shop_project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    agents, said = done.stdout.splitlines()
    assert agents == f"('shop',) {_store_file(shop_project)}"
    assert said.startswith("shop (this project's tokens and store")


def test_spec_2_2_scrapy_robots_leaves_a_due_retry_to_the_crawl(
    shop_project: Path, command_path: str
) -> None:
    """A diagnostic reads the store: with a retry due (the clock 2 h on), it
    answers from the outage record, fetches nothing and changes nothing;
    ``--refetch`` fetches and records."""
    from scrapy_rep.cache.storage.sqlite.once import read_record

    run = _runner(command_path)
    with SiteServer({"/robots.txt": Reply(503, b"down")}) as site:
        crawl = run("crawl", "visit", "-a", f"urls={site.url('/a')}", cwd=shop_project)
        assert crawl.returncode == 0, crawl.stderr
        key = site.url("/").rstrip("/")
        store = _store_file(shop_project)
        before = read_record(store, key, time.time(), 5.0)
        fetches = site.count("/robots.txt")
        later = ("-s", "REP_CLOCK=shop.later.later")
        look = run("robots", site.url("/a"), *later, cwd=shop_project)
        after = read_record(store, key, time.time(), 5.0)
        fetches_after_look = site.count("/robots.txt")
        refetch = run("robots", site.url("/a"), "--refetch", *later, cwd=shop_project)
        refetched = read_record(store, key, time.time(), 5.0)
        fetches_after_refetch = site.count("/robots.txt")
    assert before is not None and before.in_outage
    assert before.next_retry_at is not None and before.next_retry_at < time.time() + 2 * 3600
    assert look.returncode == 1, look.stderr
    out = fields(look)
    assert "answered from the project's store, which is left unchanged" in out["robots.txt"]
    assert "a crawl would fetch it again now" in out["robots.txt"]
    assert out["access"].startswith("every request dropped")
    assert after == before
    assert fetches_after_look == fetches
    assert refetch.returncode == 1, refetch.stderr
    assert fields(refetch)["robots.txt"].startswith(f"{site.url('/robots.txt')}: HTTP 503")
    assert fetches_after_refetch > fetches
    assert refetched is not None and refetched.failures > before.failures
