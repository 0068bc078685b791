"""The spider of the crawls run in worker processes: it records every outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from scrapy import Request, Spider
from scrapy.http import Response
from twisted.python.failure import Failure

from scrapy_rep.crawler.errors import RobotsTxtDisallowed


class ReportSpider(Spider):
    """Requests ``urls``; keeps what it got, what was dropped (and why), other failures."""

    name = "worker"

    def __init__(self, urls: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = urls
        self.got: list[str] = []
        self.dropped: dict[str, str] = {}
        self.failed: dict[str, str] = {}

    async def start(self) -> AsyncIterator[Request]:
        for url in self.urls:
            yield Request(url, callback=self.parse, errback=self.errback, dont_filter=True)

    def parse(self, response: Response) -> None:
        self.got.append(response.url)

    def errback(self, failure: Failure) -> None:
        url = failure.request.url  # type: ignore[attr-defined]
        if isinstance(failure.value, RobotsTxtDisallowed):
            self.dropped[url] = str(failure.value)
        else:
            self.failed[url] = repr(failure.value)
