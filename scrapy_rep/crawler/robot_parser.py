"""``scrapy.robotstxt.RobotParser`` over scrapy_rep's engine.

For code written against Scrapy's built-in middleware: it is what Scrapy's
``robots_parsed`` signal carries, and it can be Scrapy's own parser
(``ROBOTSTXT_PARSER = "scrapy_rep.RepRobotParser"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.robotstxt import RobotParser

from scrapy_rep.cache.outcome import Access, AccessState
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.engine.robotstxt import RobotsTxt

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from typing_extensions import Self

__all__ = ["RepRobotParser"]


class RepRobotParser(RobotParser):
    """``scrapy.robotstxt.RobotParser`` over scrapy_rep's engine.

    Sent with Scrapy's ``robots_parsed`` signal; also usable on its own as
    ``ROBOTSTXT_PARSER = "scrapy_rep.RepRobotParser"``.
    """

    def __init__(self, access: Access, default_user_agent: str = "") -> None:
        self.access = access
        self.robots: RobotsTxt | None = access.robots
        self._default_user_agent = default_user_agent

    @classmethod
    def from_crawler(cls, crawler: Crawler | None, robotstxt_body: bytes | str) -> Self:
        """Scrapy's parser contract: ``crawler`` may be None (then the defaults apply)."""
        config = Config.of(crawler) if crawler is not None else Config()
        robots = RobotsTxt.parse(robotstxt_body, google_quirks=config.google_quirks)
        return cls(Access(AccessState.RULES, robots), config.default_user_agent)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.access.allowed(_text(url), _text(user_agent) or self._default_user_agent)

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        return self.robots.crawl_delay(_text(user_agent)) if self.robots is not None else None


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
