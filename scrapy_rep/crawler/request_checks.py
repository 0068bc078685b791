"""The checks a request passes before download: robots.txt's rules first.

The middleware holds the checks its config asks for (``request_checks``, in
order), and asks each for a verdict once the origin's access is known (twice
per request: before the scheduler and at download, so a verdict is kept to
plain lookups). The first drop wins. A crawl that declares no purposes
(``REP_PURPOSES``) holds no usage check, so it costs that crawl nothing.

A check that also looks at responses (the usage check reads the
``Content-Usage`` header) is a ``ResponseCheck`` as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt, RobotsTxtUnreachable
from scrapy_rep.crawler.page.usage_check import UsageCheck
from scrapy_rep.crawler.reporting import Drop
from scrapy_rep.engine.origin import robots_url

if TYPE_CHECKING:
    from scrapy.http import Request, Response

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.crawler.access.tokens import RequestTokens
    from scrapy_rep.crawler.config.settings import Config
    from scrapy_rep.crawler.reporting import Reporter
    from scrapy_rep.engine.origin import Origin

__all__ = ["RequestCheck", "ResponseCheck", "RobotsCheck", "first_drop", "request_checks"]

_ALLOW_ALL: Final = AccessState.ALLOW_ALL
_CLOSED: Final = AccessState.CLOSED


class RequestCheck(Protocol):
    """One reason a request may be dropped before download."""

    def verdict(self, request: Request, origin: Origin, access: Access) -> Drop | None:
        """None to pass; else why ``request`` is dropped."""
        ...


@runtime_checkable
class ResponseCheck(Protocol):
    """A check that also reads the response of a request it passed."""

    def response(self, request: Request, response: Response) -> None:
        """Return to keep ``response``; raise the drop's error to drop it."""
        ...


class RobotsCheck:
    """robots.txt's rules for the request's user-agent tokens (docs/spec.md §5, §6)."""

    def __init__(self, tokens: RequestTokens) -> None:
        self._tokens = tokens

    def verdict(self, request: Request, origin: Origin, access: Access) -> Drop | None:
        state, robots = access.state, access.robots
        if state is _ALLOW_ALL:
            return None
        url = request.url
        if state is _CLOSED or robots is None:
            return Drop(RobotsTxtUnreachable(access.reason, url), "unreachable")
        tokens = self._tokens(request)
        if robots.allowed(url, tokens):
            return None
        verdict = robots.explain(url, tokens)  # why, for the drop
        if verdict.allowed or verdict.rule is None:
            return None
        error = ForbiddenByRobotsTxt(verdict.rule, url, robots_url(origin))
        return Drop(error, "forbidden", verdict.agent, tokens)


def request_checks(
    config: Config, tokens: RequestTokens, report: Reporter
) -> tuple[RequestCheck, ...]:
    """The checks ``config`` asks for, in the order they run."""
    robots = RobotsCheck(tokens)
    if not config.purposes:
        return (robots,)
    return (robots, UsageCheck(config, tokens, report))


def first_drop(
    checks: tuple[RequestCheck, ...], request: Request, origin: Origin, access: Access
) -> Drop | None:
    """None to pass; else the first check's drop (``checks``, in order)."""
    for check in checks:
        drop = check.verdict(request, origin, access)
        if drop is not None:
            return drop
    return None
