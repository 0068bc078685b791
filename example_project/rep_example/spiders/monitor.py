"""A spider that opts one request out of robots.txt with ``dont_obey_robotstxt``.

Its pages are checked against robots.txt under the project's token
(``examplebot``, from USER_AGENT); only the status page, which the site's
owner asked it to watch, skips the check. Opting out is per request: nothing
else this spider sends escapes robots.txt.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urljoin

import scrapy

from rep_example.spiders.base import ExampleSpider

STATUS_PATH = "/private/status"


class MonitorSpider(ExampleSpider):
    name = "monitor"

    def requests_for(self, base: str) -> Iterator[scrapy.Request]:
        yield from super().requests_for(base)
        yield scrapy.Request(
            urljoin(base, STATUS_PATH),
            callback=self.parse,
            meta={"dont_obey_robotstxt": True},
        )
