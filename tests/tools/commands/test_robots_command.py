"""``scrapy robots URL``: the verdict, its explanation and the exit code, from a real subprocess.

Each test runs ``scrapy robots`` inside example_project/ (its settings: the
add-on, USER_AGENT "ExampleBot/1.0", the spiders' tokens) against servers on
127.0.0.1 started here, and asserts what it printed and what reached the
servers.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from crawler.servers import Redirect, Reply, SiteServer
from scrapy.utils.defer import deferred_f_from_coro_f

from .conftest import ENTRY_POINT, ROOT, Run, declared_entry_points

AGENTS = b"""\
User-agent: examplebot-news
Disallow: /private/

User-agent: examplebot
Disallow: /private/
Disallow: /articles/

User-agent: catalogbot
Allow: /$
Disallow: /

User-agent: *
Disallow: /
"""


@pytest.fixture(scope="module")
def agents() -> Iterator[SiteServer]:
    with SiteServer({"/robots.txt": Reply(200, AGENTS)}) as site:
        yield site


def fields(done: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The explanation's ``name  value`` lines, and the verdict under "verdict"."""
    lines = done.stdout.splitlines()
    verdict, _, url = lines[0].partition(": ")
    result = {"verdict": verdict, "url": url}
    for line in lines[1:]:
        name, _, value = line.strip().partition(" ")
        result[name] = value.strip()
    return result


# --- verdicts with the project's settings ----------------------------------------------


def test_spec_8_1_disallowed_by_rule_exit_1_names_rule_line_and_group(
    scrapy: Run, agents: SiteServer
) -> None:
    done = scrapy("robots", agents.url("/articles/1"))
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["verdict"] == "disallowed"
    assert out["robots.txt"] == f"{agents.url('/robots.txt')}: HTTP 200"
    assert out["access"] == "rules: the group below decides"
    assert out["tokens"] == "examplebot (USER_AGENT)"  # the project's USER_AGENT
    assert out["group"] == "examplebot"
    assert out["rule"] == "line 6: Disallow: /articles/"


def test_scrapy_allowed_exit_0_and_url_itself_never_fetched(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(200, AGENTS)}) as site:
        done = scrapy("robots", site.url("/"))
        hits = list(site.hits)
    assert done.returncode == 0, done.stderr
    assert fields(done)["verdict"] == "allowed"
    assert fields(done)["rule"] == "(none matches: allowed)"
    # robots.txt went through Scrapy with the project's User-Agent; "/" was not downloaded.
    assert [hit.path for hit in hits] == ["/robots.txt"]
    assert hits[0].user_agent == "ExampleBot/1.0 (+https://example.invalid/bot)"


def test_spec_6_6_allow_rule_decides_and_is_shown(scrapy: Run, agents: SiteServer) -> None:
    done = scrapy("robots", agents.url("/"), "--agent", "catalogbot")
    assert done.returncode == 0, done.stderr
    out = fields(done)
    assert out["tokens"] == "catalogbot (--agent)"
    assert (out["group"], out["rule"]) == ("catalogbot", "line 9: Allow: /$")


def test_spec_5_7_spider_token_list_first_token_with_a_group_wins(
    scrapy: Run, agents: SiteServer
) -> None:
    """--spider news: ROBOTSTXT_USER_AGENT = ["examplebot-news", "examplebot"]."""
    done = scrapy("robots", agents.url("/articles/1"), "--spider", "news")
    assert done.returncode == 0, done.stderr
    out = fields(done)
    assert out["tokens"] == "examplebot-news, examplebot (ROBOTSTXT_USER_AGENT)"
    assert out["group"] == "examplebot-news"  # not examplebot, which forbids /articles/


def test_spec_8_4_agent_option_overrides_the_spider_setting(
    scrapy: Run, agents: SiteServer
) -> None:
    done = scrapy("robots", agents.url("/articles/1"), "--spider", "news", "--agent", "catalogbot")
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert (out["group"], out["rule"]) == ("catalogbot", "line 10: Disallow: /")


def test_spec_5_5_outside_a_project_scrapy_default_agent_gets_star(
    scrapy: Run, agents: SiteServer
) -> None:
    # Not tmp_path: pytest runs elsewhere on the machine may prune it while in use.
    with tempfile.TemporaryDirectory() as elsewhere:
        done = scrapy("robots", agents.url("/"), cwd=Path(elsewhere))
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["tokens"] == "scrapy (USER_AGENT)"
    assert (out["group"], out["rule"]) == ("*", "line 13: Disallow: /")


def test_spec_3_1_second_run_explains_from_the_project_store(scrapy: Run) -> None:
    """With a persistent store (REP_STORAGE=sqlite) the second run does not fetch again."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        SiteServer({"/robots.txt": Reply(200, AGENTS)}) as site,
    ):
        store = ("-s", "REP_STORAGE=sqlite", "-s", f"REP_STORAGE_PATH={tmp}/robots.sqlite3")
        first = scrapy("robots", site.url("/articles/1"), *store)
        second = scrapy("robots", site.url("/articles/1"), *store)
        fetched = site.count("/robots.txt")
    assert (first.returncode, second.returncode) == (1, 1), first.stderr + second.stderr
    assert fields(first)["robots.txt"].endswith(
        ": HTTP 200 (fetched now, and recorded in the project's store)"
    )
    assert (
        ": not fetched: answered from the project's store, which is left unchanged"
        in (fields(second)["robots.txt"])
    )
    assert fields(second)["rule"] == fields(first)["rule"] == "line 6: Disallow: /articles/"
    assert fetched == 1


# --- robots.txt outcomes (docs/spec.md §2) -------------------------------------------------


def test_status_404_full_allow(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(404, b"Disallow: /")}) as site:
        done = scrapy("robots", site.url("/private/x"))
    assert done.returncode == 0, done.stderr
    out = fields(done)
    assert out["robots.txt"].endswith(": HTTP 404")
    assert out["access"].startswith("every URL allowed: ")
    assert "unavailable (HTTP 404)" in out["access"]


def test_status_5xx_unreachable_disallowed_exit_1(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(503, b"")}) as site:
        done = scrapy("robots", site.url("/"))
        fetched = site.paths()
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["verdict"] == "disallowed"
    assert out["robots.txt"].endswith(": HTTP 503")
    assert out["access"].startswith("every request dropped: ")
    assert "unreachable (HTTP 503)" in out["access"]
    assert "/" not in fetched


def test_status_connection_refused_unreachable_exit_1(scrapy: Run) -> None:
    with SiteServer() as site:
        url = site.url("/page")  # the port is closed once the server stops
    done = scrapy("robots", url)
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["robots.txt"].endswith(": no response")
    assert "unreachable (connection refused)" in out["access"]


def test_spec_2_1_redirect_chain_rules_apply_to_the_original_origin(scrapy: Run) -> None:
    with (
        SiteServer({"/rules.txt": Reply(200, b"User-agent: *\nDisallow: /old/\n")}) as target,
        SiteServer({"/robots.txt": Redirect(target.url("/rules.txt"))}) as site,
    ):
        done = scrapy("robots", site.url("/old/page"))
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["robots.txt"].endswith(f"HTTP 200 after 1 redirect (to {target.url('/rules.txt')})")
    assert out["rule"] == "line 2: Disallow: /old/"


def test_spec_1_6_scheme_without_server_is_not_checked(scrapy: Run) -> None:
    done = scrapy("robots", "data:text/plain,hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("allowed: data:text/plain,hello\n")
    assert "not checked" in done.stdout


# --- usage ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [("robots",), ("robots", "example.com/page"), ("robots", "http:///x")],
)
def test_scrapy_usage_error_exit_2(scrapy: Run, args: tuple[str, ...]) -> None:
    done = scrapy(*args)
    assert done.returncode == 2
    assert "scrapy robots [options] <url>" in done.stdout + done.stderr


def test_scrapy_unknown_spider_exit_2(scrapy: Run, agents: SiteServer) -> None:
    done = scrapy("robots", agents.url("/"), "--spider", "nope")
    assert done.returncode == 2
    assert "no spider named 'nope'" in done.stderr


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("REP_STORAGE=bogus", "the check did not run"),
        ('DOWNLOADER_MIDDLEWARES={"scrapy_rep.RobotsTxtMiddleware": null}', "is not enabled"),
    ],
)
def test_scrapy_check_that_cannot_run_exit_2(
    scrapy: Run, agents: SiteServer, setting: str, says: str
) -> None:
    done = scrapy("robots", agents.url("/"), "-s", setting)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.startswith(f"error: {agents.url('/')}: ")
    assert says in done.stdout


def test_scrapy_command_is_listed_and_light_to_import(scrapy: Run) -> None:
    listing = scrapy()
    assert "robots" in listing.stdout
    assert "Explain whether robots.txt lets this project crawl a URL" in listing.stdout
    # Scrapy imports every entry-point command on every call: no middleware, no Twisted web.
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, scrapy.cmdline; before = set(sys.modules);"
            "import scrapy_rep.tools.cli.scrapy_robots;"
            "print(sorted(set(sys.modules) - before))",
        ],
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "scrapy_rep.crawler.middleware" not in probe.stdout
    assert "scrapy_rep.tools.cli.scrapy_robots" in probe.stdout


def test_scrapy_command_entry_point_declared_in_pyproject() -> None:
    """What pip installs is what these tests register when the project is not installed."""
    assert ENTRY_POINT in declared_entry_points(), (
        'pyproject.toml needs [project.entry-points."scrapy.commands"] '
        'robots = "scrapy_rep.tools.cli.scrapy_robots:RobotsCommand"'
    )


@deferred_f_from_coro_f
async def test_scrapy_robots_failure_other_than_a_drop_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 13 §8: an exception from the check is exit 2 with its message, never "allowed"."""
    from scrapy.utils.test import get_crawler

    from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
    from scrapy_rep.tools.cli.scrapy_robots import EXIT_ERROR, Probe, _probe_spider

    async def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the store exploded")

    monkeypatch.setattr(RobotsTxtMiddleware, "process_request", broken)
    probe = Probe("http://127.0.0.1:9/page")
    settings = {"ADDONS": {"scrapy_rep.Addon": 0}, "ROBOTSTXT_OBEY": True, "REP_STORAGE": "memory"}
    crawler = get_crawler(_probe_spider({}), settings)
    probe.connect(crawler)
    await crawler.crawl_async(probe=probe)
    assert probe.exit_code() == EXIT_ERROR
    assert probe.explain() == (
        "error: http://127.0.0.1:9/page: the check failed: RuntimeError: the store exploded"
    )
