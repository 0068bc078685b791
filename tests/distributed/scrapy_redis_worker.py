"""One scrapy-redis worker for the distributed test: a RedisSpider whose
scheduler, dupefilter and start URLs live in Redis, with scrapy_rep's cache
in the same Redis (REP_STORAGE = "redis", reading REDIS_URL).

Usage: ``scrapy_redis_worker.py <redis url> [<store url>]``; prints a JSON
report. A store URL puts scrapy_rep's store elsewhere (REP_REDIS_URL: a
Cluster), scrapy-redis's queue staying on the first.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.crawler import AsyncCrawlerProcess
from scrapy.http import Request, Response
from scrapy_redis.spiders import RedisSpider

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared helpers
from start_barrier import wait_for_the_others, wait_until_all

REDIS_KEY = "dist:start_urls"
#: The pages of the test's origins that their robots.txt allows (it disallows /private).
PAGES = ("/a", "/b")
#: Beyond a worker's sleep until the engine's next heartbeat (5 s): only a
#: worker that never gets a page (sharing broken) waits this long.
GATE_TIMEOUT = 30.0


class EveryWorkerHasAPage:
    """Hold the pages a worker takes until every worker has taken one.

    Without it the sharing is a race: scrapy_rep parks requests that wait for
    robots.txt outside CONCURRENT_REQUESTS, so one worker refills from the
    start list at each idle moment and can hold all 90 URLs within a tenth of
    a second, while another worker whose first look at the shared queue found
    it empty and then non-empty (a push in between) is not idle, so gets no
    ``spider_idle`` and sleeps until Scrapy's 5 s engine heartbeat. Placed
    before scrapy_rep's middleware, a held page stays in CONCURRENT_REQUESTS:
    a worker holds at most 8 until the others have theirs, the rest stays in Redis.
    """

    def __init__(self) -> None:
        self._gate: asyncio.Future[bool] | None = None

    async def process_request(self, request: Request) -> None:
        if urlsplit(request.url).path not in PAGES:
            return  # robots.txt, and /private pages (dropped, never parsed)
        if self._gate is None:
            self._gate = asyncio.ensure_future(wait_until_all("page", GATE_TIMEOUT))
        await self._gate  # on a timeout too: the test's assertion tells


class DistributedSpider(RedisSpider):
    name = "dist"
    redis_key = REDIS_KEY

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.got: list[str] = []

    def parse(self, response: Response) -> Iterator[Request]:
        self.got.append(response.url)
        if response.url.endswith("/a"):  # a link the origin's robots.txt forbids
            yield Request(response.url[: -len("/a")] + "/private/linked", callback=self.parse)


def main(redis_url: str, store_url: str | None = None) -> None:
    settings = {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": False,
        "REDIS_URL": redis_url,
        "MAX_IDLE_TIME_BEFORE_CLOSE": 4,
        "ADDONS": {"scrapy_rep.Addon": 0},
        "DOWNLOADER_MIDDLEWARES": {EveryWorkerHasAPage: 50},  # before scrapy_rep's (100)
        "ROBOTSTXT_OBEY": True,
        "REP_STORAGE": "redis",  # REDIS_URL is scrapy-redis's setting, read too
        "USER_AGENT": "DistBot/1.0 (+http://127.0.0.1/)",
        "CONCURRENT_REQUESTS": 8,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        **({"REP_REDIS_URL": store_url} if store_url else {}),
    }
    process = AsyncCrawlerProcess(settings, install_root_handler=True)
    crawler = process.create_crawler(DistributedSpider)
    crawler.signals.connect(wait_for_the_others, signal=signals.engine_started)
    process.crawl(crawler)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, DistributedSpider) and crawler.stats is not None
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "got": spider.got,
                "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
                "finish_reason": stats.get("finish_reason"),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
