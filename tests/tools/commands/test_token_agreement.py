"""``scrapy robots``, ``scrapy-rep check`` and the Tester read the crawler's token
from a User-Agent string as the crawl does (docs/spec.md §5.7): here the one
``scrapy startproject`` writes, whose ``shop`` group the crawl obeys
(tests/crawler/test_user_agent.py)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from crawler.servers import Reply, SiteServer
from scrapy.settings import Settings

from scrapy_rep.tools.cli import main
from scrapy_rep.tools.tester import project

from .conftest import Run
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
