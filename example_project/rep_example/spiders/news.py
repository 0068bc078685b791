"""A spider with a list of robots.txt tokens: the specific one first, the generic one second.

Where robots.txt has a group for ``examplebot-news``, that group applies; where
it has none, the ``examplebot`` group does; failing both, ``*``. A group for
``examplebot`` never applies to ``examplebot-news`` by prefix (RFC 9309), so
the list says explicitly which generic group to fall back to.
"""

from __future__ import annotations

from rep_example.spiders.base import ExampleSpider


class NewsSpider(ExampleSpider):
    name = "news"
    custom_settings = {  # noqa: RUF012 (Scrapy idiom)
        "ROBOTSTXT_USER_AGENT": ["examplebot-news", "examplebot"],
    }
