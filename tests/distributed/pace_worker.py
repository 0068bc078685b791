"""One scrapy-redis worker for the pace tests (issue 26): a RedisSpider whose
queue and dupefilter live in Redis, with scrapy_rep's cache and each origin's
pace in the same Redis, ``REP_CRAWL_DELAY = "obey"``.

Usage: ``pace_worker.py <redis url> <worker name> [settings as JSON]``; prints a
JSON report. The worker's name is in its User-Agent (after the crawler's
token), so the site can tell the workers apart. ``PACE_HOGS`` in the
settings, ``{"urls": [...], "after": n}``: the spider asks for those pages,
before any other, once ``n`` pages named ``/p<n>`` came back (tests/paced_site.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess
from scrapy.http import Response
from scrapy_redis.spiders import RedisSpider

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: shared helpers
from start_barrier import wait_for_the_others
from turn_stamps import TurnStamps

REDIS_KEY = "pace:start_urls"


class PaceSpider(RedisSpider):
    name = "pace"
    redis_key = REDIS_KEY

    def __init__(self, *args: Any, hogs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.got: list[str] = []
        self.hogs: list[str] = list((hogs or {}).get("urls", []))
        self.after: int = (hogs or {}).get("after", 0)

    def parse(self, response: Response) -> Iterator[Request]:
        self.got.append(response.url)
        if response.url.rsplit("/", 1)[-1].startswith("p"):  # a paced page, /p<n>
            self.after -= 1
        if self.hogs and self.after <= 0:
            hogs, self.hogs = self.hogs, []
            for url in hogs:
                yield Request(url, dont_filter=True, priority=100)


def settings_for(redis_url: str, name: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": False,
        "REDIS_URL": redis_url,
        "MAX_IDLE_TIME_BEFORE_CLOSE": 3,
        "ADDONS": {"scrapy_rep.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "REP_STORAGE": "redis",
        "REP_REDIS_RETRY_INTERVAL": 0.5,
        "REP_CRAWL_DELAY": "obey",
        "USER_AGENT": f"PaceBot/1.0 (+http://127.0.0.1/; {name})",
        "CONCURRENT_REQUESTS": 8,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        **extra,
    }


def main(redis_url: str, name: str, extra: dict[str, Any]) -> None:
    # PACE_OWN_QUEUES: a start queue and a request queue of this worker's own
    # (scrapy_rep's cache and pace stay shared), so a test knows which worker
    # downloads which pages.
    own = bool(extra.pop("PACE_OWN_QUEUES", False))
    hogs = extra.pop("PACE_HOGS", None)
    if own:
        extra = {
            "SCHEDULER_QUEUE_KEY": f"pace:{name}:requests",
            "SCHEDULER_DUPEFILTER_KEY": f"pace:{name}:dupefilter",
            **extra,
        }
    settings = settings_for(redis_url, name, extra)
    # AsyncCrawlerProcess needs the asyncio reactor; another one (epoll) runs
    # the stores on scrapy_rep's loop thread.
    kind = CrawlerProcess if "TWISTED_REACTOR" in settings else AsyncCrawlerProcess
    process = kind(settings, install_root_handler=True)
    crawler = process.create_crawler(PaceSpider)
    stamps = TurnStamps()  # when each turn was given and its request left
    stamps.install(crawler)
    crawler.signals.connect(wait_for_the_others, signal=signals.engine_started)
    process.crawl(crawler, redis_key=f"{REDIS_KEY}:{name}" if own else REDIS_KEY, hogs=hogs)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, PaceSpider) and crawler.stats is not None
    stats = crawler.stats.get_stats()
    print(
        json.dumps(
            {
                "got": spider.got,
                "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
                "finish_reason": stats.get("finish_reason"),
                "turns": stamps.turns(),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]) if len(sys.argv) > 3 else {})
