"""Run one crawl without a Twisted reactor (TWISTED_REACTOR_ENABLED=False).

Used by test_reactorless.py in a fresh interpreter, since a process that has
installed a reactor cannot run reactorless. Usage:
``python reactorless_crawl.py URL...``; prints a JSON report on stdout.
``REP_TEST_SETTINGS`` (JSON) adds to or overrides the settings below.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from scrapy.crawler import AsyncCrawlerProcess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: shared helpers
from report_spider import ReportSpider


def main(urls: list[str]) -> None:
    process = AsyncCrawlerProcess(
        {
            "TWISTED_REACTOR_ENABLED": False,
            "ADDONS": {"scrapy_rep.Addon": 0},
            "ROBOTSTXT_OBEY": True,
            "RETRY_ENABLED": False,
            "DOWNLOAD_TIMEOUT": 5,
            "CONCURRENT_REQUESTS": 32,
            "CONCURRENT_REQUESTS_PER_DOMAIN": 32,
            "LOG_LEVEL": "WARNING",
            "REP_STORAGE": "sqlite",
            "REP_STORAGE_PATH": os.environ["REP_TEST_STORAGE_PATH"],
            "REP_UNREACHABLE_WAIT": 0,
            **json.loads(os.environ.get("REP_TEST_SETTINGS", "{}")),
        }
    )
    crawler = process.create_crawler(ReportSpider)
    process.crawl(crawler, urls=urls)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, ReportSpider) and crawler.stats is not None
    stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("robotstxt/")}
    report = {
        "reactor_installed": "twisted.internet.reactor" in sys.modules,
        "got": spider.got,
        "dropped": spider.dropped,
        "failed": spider.failed,
        "stats": stats,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
