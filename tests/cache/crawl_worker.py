"""One crawler process for the cross-process cache tests.

Usage: ``crawl_worker.py '<json job>'`` with ``urls``, ``settings`` and
``clock_offset`` (seconds added to the real clock through REP_CLOCK, the
testing hook). Waits at the barrier of ``TEST_WORKER_BARRIER`` (if set) so
that several processes start together, then prints a JSON report: what the
spider got, what was dropped and why, other failures, robotstxt/* stats,
the finish reason and the reactor. Crawls under the reactor of ``REP_TEST_REACTOR``
(tests/reactor_choice.py; asyncio when unset).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: shared helpers
from reactor_choice import asyncio_process, reactor_setting
from report_spider import ReportSpider
from start_barrier import wait_for_the_others

OFFSET = 0.0


def offset_clock() -> float:
    """REP_CLOCK for this process: the real clock moved by the job's offset."""
    return time.time() + OFFSET


def main(job: dict[str, Any]) -> None:
    global OFFSET
    OFFSET = float(job.get("clock_offset", 0.0))
    settings = {
        "ADDONS": {"scrapy_rep.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 5,
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "REP_CLOCK": "__main__.offset_clock",
        **reactor_setting(),
        **job.get("settings", {}),
    }
    # AsyncCrawlerProcess needs the asyncio reactor or none; CrawlerProcess runs any.
    runner = AsyncCrawlerProcess if asyncio_process() else CrawlerProcess
    process = runner(settings, install_root_handler=True)
    crawler = process.create_crawler(ReportSpider)
    crawler.signals.connect(wait_for_the_others, signal=signals.engine_started)
    process.crawl(crawler, urls=job["urls"])
    process.start()
    reactor: object = None  # reactorless: none was installed, nor may be imported
    if "twisted.internet.reactor" in sys.modules:
        from twisted.internet import reactor

    spider = crawler.spider
    assert isinstance(spider, ReportSpider) and crawler.stats is not None
    stats = crawler.stats.get_stats()
    report = {
        "got": spider.got,
        "dropped": spider.dropped,
        "failed": spider.failed,
        "stats": {k: v for k, v in stats.items() if k.startswith("robotstxt/")},
        "finish_reason": stats.get("finish_reason"),
        "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "reactor": type(reactor).__name__ if reactor is not None else "none",
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
