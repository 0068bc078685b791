"""The usage check: what declaring ``REP_PURPOSES`` adds to the robots.txt check.

A site may say what its content may be used for (``Content-Usage`` and
``Content-Signal`` lines in robots.txt, the ``Content-Usage`` response header;
docs/usage-preferences.md). A crawl that declares its purposes gets this
subclass of the middleware instead of the plain one
(``RobotsTxtMiddleware.from_crawler`` picks it), so a crawl that declares none
runs the plain middleware's per-request path unchanged, at no extra cost.

What it adds, per checked request (one the middleware lets through):

- robots.txt's preferences for the URL, for the request's tokens; a purpose
  they refuse drops the request before download (``RobotsTxtUsageDenied``,
  the ``request_dropped`` signal, stat ``robotstxt/usage/forbidden``);
- the response's ``Content-Usage`` header, combined with them (vocab-08 §5.1:
  a refusal anywhere wins); a refused purpose drops the response
  (``REP_USAGE_ACTION = "drop"``, stat ``robotstxt/usage/header_dropped``) or
  keeps it, tagged (``"tag"``, stat ``robotstxt/usage/tagged``);
- ``request.meta["rep_usage"]`` (so ``response.meta``), plain data for item
  pipelines: the purposes, which of them are refused, and per label the state
  and the statements that decided it, each with its source and line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.crawler.errors import RobotsTxtUsageDenied
from scrapy_rep.crawler.middleware import RobotsTxtMiddleware
from scrapy_rep.crawler.reporting import Drop
from scrapy_rep.engine.origin import robots_url
from scrapy_rep.engine.usage import Preferences, UsageRule, combine, header_usage

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.engine.origin import Origin

__all__ = ["USAGE_META_KEY", "UsageCheckingMiddleware", "usage_meta", "with_usage_check"]

#: The request (and response) meta key with the usage preferences.
USAGE_META_KEY: Final = "rep_usage"
_NOTHING_STATED: Final = Preferences()


def usage_meta(purposes: tuple[str, ...], prefs: Preferences, robotstxt: str) -> dict[str, Any]:
    """``meta["rep_usage"]``: plain data, picklable, for pipelines and logs."""
    return {
        "purposes": list(purposes),
        "denied": list(prefs.denied(purposes)),
        "robotstxt": robotstxt,
        **prefs.to_meta(),
    }


def deciding(prefs: Preferences, labels: tuple[str, ...]) -> tuple[UsageRule, ...]:
    """The statements that refused these labels, each once, in order."""
    return tuple(dict.fromkeys(rule for label in labels for rule in prefs[label].rules))


class UsageCheckingMiddleware(RobotsTxtMiddleware):
    """The robots.txt middleware, and the usage preferences of ``REP_PURPOSES``."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self._purposes = self.config.purposes
        self._tag = self.config.usage_action == "tag"
        # robots.txt's preferences of the requests let through, for their response.
        self._robots_usage: WeakKeyDictionary[Request, tuple[Preferences, str]] = (
            WeakKeyDictionary()
        )

    def _verdict(self, request: Request, origin: Origin, access: Access) -> Drop | None:
        drop = super()._verdict(request, origin, access)
        if drop is not None:
            return drop
        tokens = self.tokens_for(request)
        robots = access.robots if access.state is AccessState.RULES else None
        prefs = (
            robots.usage_matcher(tokens).usage(request.url)
            if robots is not None
            else _NOTHING_STATED
        )
        where = robots_url(origin)
        self._robots_usage[request] = (prefs, where)
        request.meta[USAGE_META_KEY] = usage_meta(self._purposes, prefs, where)
        denied = prefs.denied(self._purposes)
        if not denied or robots is None:
            return None
        self._count_denied(denied)
        error = RobotsTxtUsageDenied(denied, deciding(prefs, denied), request.url, where)
        agent = robots.explain(request.url, tokens).agent
        return Drop(error, "usage/forbidden", agent, tokens)

    async def process_response(
        self, request: Request, response: Response, spider: Spider | None = None
    ) -> Response:
        response = await super().process_response(request, response, spider)
        checked = self._robots_usage.pop(request, None)
        if checked is None:
            return response  # not checked: a robots.txt fetch, an opted-out request...
        values = response.headers.getlist(b"Content-Usage")
        if not values:
            return response
        robots_prefs, where = checked
        header = header_usage(values)
        request.meta[USAGE_META_KEY] = usage_meta(
            self._purposes, combine(robots_prefs, header.preferences), where
        )
        denied = header.preferences.denied(self._purposes)
        if not denied or header.rule is None:
            return response
        self._count_denied(denied)
        if self._tag:
            self._report.stats.inc_value("robotstxt/usage/tagged")
            return response
        error = RobotsTxtUsageDenied(denied, (header.rule,), request.url, where)
        self._report.announce(Drop(error, "usage/header_dropped"), request)
        raise error

    def _count_denied(self, labels: tuple[str, ...]) -> None:
        for label in labels:
            self._report.stats.inc_value(f"robotstxt/usage/denied/{label}")


_WITH_CHECK: dict[type[RobotsTxtMiddleware], type[RobotsTxtMiddleware]] = {}


def with_usage_check(cls: type[RobotsTxtMiddleware]) -> type[RobotsTxtMiddleware]:
    """``cls`` with the usage check: the class itself, or for a project's own
    subclass of the middleware, one that puts the check in front of it."""
    if issubclass(cls, UsageCheckingMiddleware):
        return cls
    if cls is RobotsTxtMiddleware:
        return UsageCheckingMiddleware
    found = _WITH_CHECK.get(cls)
    if found is None:
        namespace = {"__module__": cls.__module__, "__doc__": cls.__doc__}
        found = _WITH_CHECK[cls] = type(cls.__name__, (UsageCheckingMiddleware, cls), namespace)
    return found
