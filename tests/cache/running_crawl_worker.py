"""A crawler process that is still running when its store is told to forget.

Usage: ``running_crawl_worker.py '<json job>'`` with ``first`` and ``then``
(URLs), ``control`` (a URL the test holds open) and ``settings``. The spider
requests ``first``; once all are answered it requests ``control``, which
the test answers when it has run ``scrapy-rep cache forget``; then it waits
(for at most ``wait`` seconds, checking the crawl's stats) until the crawl
has heard of the forget (``robotstxt/cache/forgotten``), and requests
``then``. Prints a JSON report: per round what the spider got and what was
dropped, the robotstxt/* stats, and whether the forget was heard. Crawls
under the reactor of ``REP_TEST_REACTOR`` (asyncio when unset).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess
from scrapy.http import Response
from twisted.python.failure import Failure

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: shared helpers
from reactor_choice import asyncio_process, reactor_setting

from scrapy_rep.crawler.async_bridge import sleep
from scrapy_rep.crawler.errors import RobotsTxtDisallowed

FORGOTTEN = "robotstxt/cache/forgotten"


class RunningSpider(Spider):
    name = "running"

    def __init__(self, job: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = job
        self.rounds: list[dict[str, Any]] = [{"got": [], "dropped": []}, {"got": [], "dropped": []}]
        self.left = len(job["first"])
        self.heard = False

    async def start(self) -> AsyncIterator[Request]:
        for url in self.job["first"]:
            yield self._request(url, 0)

    def _request(self, url: str, round_: int) -> Request:
        return Request(
            url,
            callback=self.parse,
            errback=self.errback,
            dont_filter=True,
            cb_kwargs={"round_": round_},
        )

    def parse(self, response: Response, round_: int) -> Iterator[Request]:
        self.rounds[round_]["got"].append(response.url)
        yield from self._done(round_)

    def errback(self, failure: Failure) -> Iterator[Request]:
        request = failure.request  # type: ignore[attr-defined]
        round_ = request.cb_kwargs["round_"]
        kind = "dropped" if isinstance(failure.value, RobotsTxtDisallowed) else "failed"
        self.rounds[round_].setdefault(kind, []).append(request.url)
        yield from self._done(round_)

    def _done(self, round_: int) -> Iterator[Request]:
        if round_ != 0:
            return
        self.left -= 1
        if self.left == 0:  # the first round is over: wait for the test's forget
            yield Request(
                self.job["control"],
                callback=self.then,
                dont_filter=True,
                meta={"dont_obey_robotstxt": True, "download_timeout": 120},
            )

    async def then(self, response: Response) -> AsyncIterator[Request]:
        stats = self.crawler.stats
        assert stats is not None
        deadline = time.monotonic() + float(self.job.get("wait", 30))
        # Waiting for the crawl's progress (its poll of the store), not for time to pass.
        while not stats.get_value(FORGOTTEN) and time.monotonic() < deadline:
            await sleep(0.02)  # on asyncio's loop or the reactor, as the crawl runs
        self.heard = bool(stats.get_value(FORGOTTEN))
        for url in self.job["then"]:
            yield self._request(url, 1)


def main(job: dict[str, Any]) -> None:
    settings = {
        "ADDONS": {"scrapy_rep.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        **reactor_setting(),
        **job.get("settings", {}),
    }
    runner = AsyncCrawlerProcess if asyncio_process() else CrawlerProcess
    process = runner(settings, install_root_handler=True)
    crawler = process.create_crawler(RunningSpider)
    process.crawl(crawler, job=job)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, RunningSpider) and crawler.stats is not None
    stats = crawler.stats.get_stats()
    report = {
        "rounds": spider.rounds,
        "heard": spider.heard,
        "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
        "finish_reason": stats.get("finish_reason"),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
