"""The response side of the usage check (docs/usage-preferences.md): a
``Content-Usage`` header on a response whose request the check never saw.

A request opted out of robots.txt (``dont_obey_robotstxt``) is not checked
against robots.txt's usage lines, so its response's header has nothing to
be combined with: the page reaches the spider as it is, untagged and
uncounted, while a checked request to the same page is dropped.
"""

from __future__ import annotations

from scrapy.http import Request
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_rep.crawler.errors import RobotsTxtUsageDenied

from .conftest import crawl, spider_of, stats
from .servers import Reply, SiteServer

TRAIN_AI = {"REP_PURPOSES": ["train-ai"]}


@deferred_f_from_coro_f
async def test_scrapy_an_opted_out_request_keeps_its_page_whatever_its_header_says() -> None:
    page = Reply(
        200, b"<html>p</html>", {"Content-Type": "text/html", "Content-Usage": "train-ai=n"}
    )
    routes = {"/robots.txt": Reply(404), "/out": page, "/in": page}
    with SiteServer(routes) as site:
        opted_out = Request(site.url("/out"), meta={"dont_obey_robotstxt": True})
        crawler = await crawl([opted_out, site.url("/in")], TRAIN_AI)
    spider = spider_of(crawler)
    assert spider.got == [site.url("/out")]
    assert spider.failed == {}
    assert isinstance(spider.dropped[site.url("/in")], RobotsTxtUsageDenied)
    values = stats(crawler)
    assert values["robotstxt/usage/header_dropped"] == 1  # /in only
    assert values["robotstxt/usage/denied/train-ai"] == 1
