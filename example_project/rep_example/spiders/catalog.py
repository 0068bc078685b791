"""A spider with its own robots.txt token that follows the sitemaps robots.txt lists.

``ROBOTSTXT_USER_AGENT`` in ``custom_settings`` makes robots.txt groups for
``catalogbot`` apply to this spider only; the project's other spiders keep
their own token. ``robotstxt_sitemaps`` is called once per origin whose
robots.txt lists sitemaps; the requests it yields are scheduled, and the pages
the sitemaps list are still checked against their own origin's robots.txt.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import scrapy
from scrapy.http import Response
from scrapy.utils.sitemap import Sitemap

from rep_example.spiders.base import ExampleSpider


class CatalogSpider(ExampleSpider):
    name = "catalog"
    custom_settings = {"ROBOTSTXT_USER_AGENT": "catalogbot"}  # noqa: RUF012 (Scrapy idiom)

    def robotstxt_sitemaps(
        self, sitemaps: tuple[str, ...], robotstxt_url: str
    ) -> Iterator[scrapy.Request]:
        self.logger.info("%s lists %d sitemaps", robotstxt_url, len(sitemaps))
        for url in sitemaps:
            yield scrapy.Request(url, callback=self.parse_sitemap)

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request | dict[str, Any]]:
        sitemap = Sitemap(response.body)
        follow = self.parse_sitemap if sitemap.type == "sitemapindex" else self.parse
        for entry in sitemap:
            yield scrapy.Request(response.urljoin(entry["loc"]), callback=follow)
        yield {"spider": self.name, "sitemap": response.url, "type": sitemap.type}
