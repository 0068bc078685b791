"""Why a request was dropped: one exception per reason, all ``IgnoreRequest``.

A spider's errback (or a ``request_dropped`` handler) tells a rule's verdict
from an outage by the class, and reads ``reason`` for the log line.
"""

from __future__ import annotations

from scrapy.exceptions import IgnoreRequest

from scrapy_rep.engine.matching import Rule

__all__ = [
    "SETTING_CLOSE_REASON",
    "STORAGE_CLOSE_REASON",
    "ForbiddenByRobotsTxt",
    "RobotsTxtDisallowed",
    "RobotsTxtNoOrigin",
    "RobotsTxtStorageUnavailable",
    "RobotsTxtUnreachable",
]


class RobotsTxtDisallowed(IgnoreRequest):
    """A request dropped because of robots.txt; ``reason`` says why."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.url = url


class ForbiddenByRobotsTxt(RobotsTxtDisallowed):
    """A rule of the origin's robots.txt forbids the URL (SPEC §8.1)."""

    def __init__(self, rule: Rule, url: str, robotstxt_url: str) -> None:
        super().__init__(
            f"forbidden by rule {rule.pattern} at line {rule.line} of {robotstxt_url}", url
        )
        self.rule = rule


class RobotsTxtUnreachable(RobotsTxtDisallowed):
    """The origin's robots.txt could not be fetched, so the origin is closed (SPEC §2.2, §2.4)."""


class RobotsTxtNoOrigin(RobotsTxtDisallowed):
    """A checked scheme's URL names no origin to ask (``http:///x``, a host IDNA
    cannot encode): nothing is fetched unchecked, so it is dropped."""


class RobotsTxtStorageUnavailable(RobotsTxtDisallowed):
    """The robots.txt cache could not be opened: nothing is let through unchecked."""


#: finish_reason of a crawl whose robots.txt cache could not be opened.
STORAGE_CLOSE_REASON = "robotstxt_storage_unavailable"
#: finish_reason of a crawl whose spider sets an unusable robots.txt attribute.
SETTING_CLOSE_REASON = "robotstxt_bad_setting"
