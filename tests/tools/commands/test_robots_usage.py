"""``scrapy robots URL --purpose``: usage verdicts with the deciding line (issue 15)."""

from __future__ import annotations

from crawler.servers import Reply, SiteServer

from .conftest import Run
from .test_robots_command import fields

ROBOTS = b"User-agent: *\nAllow: /\nContent-Usage: /private/ train-ai=n, search=y\n"


def test_aipref_attach_refused_purpose_exit_1_names_the_line(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        done = scrapy("robots", site.url("/private/a"), "--purpose", "train-ai")
        paths = site.paths()
    assert done.returncode == 1, done.stderr
    out = fields(done)
    assert out["verdict"] == "disallowed"
    assert out["rule"] == "line 2: Allow: /"
    assert (
        out["usage"] == "train-ai: denied by line 3: Content-Usage: /private/ train-ai=n, search=y"
    )
    assert "note" not in out  # a usage drop is not a disagreement with the rules
    assert paths == ["/robots.txt"]


def test_aipref_attach_allowed_purpose_exit_0(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        done = scrapy("robots", site.url("/private/a"), "--purpose", "search")
    assert done.returncode == 0, done.stderr
    assert fields(done)["usage"] == (
        "search: allowed by line 3: Content-Usage: /private/ train-ai=n, search=y"
    )


def test_scrapy_no_purpose_no_usage_line(scrapy: Run) -> None:
    with SiteServer({"/robots.txt": Reply(200, ROBOTS)}) as site:
        done = scrapy("robots", site.url("/private/a"))
    assert done.returncode == 0, done.stderr
    assert "usage" not in fields(done)
