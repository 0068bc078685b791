"""Why a request was dropped: one exception per reason, all ``IgnoreRequest``.

A spider's errback (or a ``request_dropped`` handler) tells a rule's verdict
from an outage by the class, and reads ``reason`` for the log line.
"""

from __future__ import annotations

from scrapy.exceptions import IgnoreRequest

from scrapy_rep.engine.rules import UNDECIDED, UNDECIDED_TEXT, Rule
from scrapy_rep.engine.usage import UsageRule

__all__ = [
    "SETTING_CLOSE_REASON",
    "STORAGE_CLOSE_REASON",
    "ForbiddenByRobotsTxt",
    "RobotsTxtDisallowed",
    "RobotsTxtNoOrigin",
    "RobotsTxtStorageUnavailable",
    "RobotsTxtUnreachable",
    "RobotsTxtUsageDenied",
]


class RobotsTxtDisallowed(IgnoreRequest):
    """A request dropped because of robots.txt; ``reason`` says why."""

    def __init__(self, reason: str, url: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.url = url


class ForbiddenByRobotsTxt(RobotsTxtDisallowed):
    """A rule of the origin's robots.txt forbids the URL (docs/spec.md §8.1)."""

    def __init__(self, rule: Rule, url: str, robotstxt_url: str) -> None:
        if rule == UNDECIDED:  # no line decided: the check gave up (docs/spec.md §6.8)
            reason = f"{robotstxt_url}: {UNDECIDED_TEXT}"
        else:
            reason = f"forbidden by rule {rule.pattern} at line {rule.line} of {robotstxt_url}"
        super().__init__(reason, url)
        self.rule = rule


class RobotsTxtUnreachable(RobotsTxtDisallowed):
    """The origin's robots.txt could not be fetched, so the origin is closed.

    docs/spec.md §2.2, §2.4.
    """


class RobotsTxtNoOrigin(RobotsTxtDisallowed):
    """A checked scheme's URL names no origin to ask (``http:///x``, a host IDNA
    cannot encode): nothing is fetched unchecked, so it is dropped."""


class RobotsTxtStorageUnavailable(RobotsTxtDisallowed):
    """The robots.txt cache could not be opened: nothing is let through unchecked."""


class RobotsTxtUsageDenied(RobotsTxtDisallowed):
    """The site refuses a use the crawl declared (``REP_PURPOSES``): by a
    ``Content-Usage`` / ``Content-Signal`` line of robots.txt (dropped before
    download), or by the ``Content-Usage`` response header (``REP_USAGE_ACTION
    = "drop"``). ``labels`` are the refused purposes, ``rules`` the statements
    that refused them (``rule.line`` is None for the header)."""

    def __init__(
        self, labels: tuple[str, ...], rules: tuple[UsageRule, ...], url: str, where: str
    ) -> None:
        said = "; ".join(_statement(rule, where) for rule in rules)
        super().__init__(f"usage {', '.join(labels)} refused by {said}", url)
        self.labels = labels
        self.rules = rules


def _statement(rule: UsageRule, where: str) -> str:
    if rule.line is None:
        return f"the Content-Usage response header ({rule.text})"
    if rule.line == 0:  # the check gave up (docs/spec.md §6.8)
        return f"{where}: {rule.text}"
    scope = " (global, before any User-agent line)" if rule.is_global else ""
    return f"{rule.written} at line {rule.line}{scope} of {where}"


#: finish_reason of a crawl whose robots.txt cache could not be opened.
STORAGE_CLOSE_REASON = "robotstxt_storage_unavailable"
#: finish_reason of a crawl whose spider sets an unusable robots.txt attribute.
SETTING_CLOSE_REASON = "robotstxt_bad_setting"
