"""What the example spiders share: where they start and what they ask for.

Each spider requests the same few paths on every base URL it is given, so that
runs against the demo's sites (one behaviour per origin) are comparable: the
only differences between spiders are their robots.txt settings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar
from urllib.parse import urljoin

import scrapy
from scrapy.http import Response

#: Requested on every base URL, in this order.
PATHS: tuple[str, ...] = ("/", "/articles/1", "/private/report", "/early/page", "/late/page")


class ExampleSpider(scrapy.Spider):
    """Start URLs come from ``-a base=URL[,URL...]``, else the EXAMPLE_BASE_URLS setting."""

    paths: ClassVar[tuple[str, ...]] = PATHS

    def __init__(self, base: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base = base

    def base_urls(self) -> list[str]:
        if self.base:
            return [url.strip() for url in self.base.split(",") if url.strip()]
        return [str(url) for url in self.settings.getlist("EXAMPLE_BASE_URLS")]

    async def start(self) -> AsyncIterator[scrapy.Request]:
        bases = self.base_urls()
        if not bases:
            self.logger.warning("No start URL: run with -a base=http://host:port")
        for base in bases:
            for request in self.requests_for(base):
                yield request

    def requests_for(self, base: str) -> Iterator[scrapy.Request]:
        for path in self.paths:
            yield scrapy.Request(urljoin(base, path), callback=self.parse)

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"spider": self.name, "url": response.url, "status": response.status}
