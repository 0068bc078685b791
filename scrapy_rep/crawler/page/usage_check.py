"""The usage check: what declaring ``REP_PURPOSES`` adds to the robots.txt check.

A site may say what its content may be used for (``Content-Usage`` and
``Content-Signal`` lines in robots.txt, the ``Content-Usage`` response header;
docs/usage-preferences.md). A crawl that declares its purposes holds this
check after the robots.txt one (``request_checks``), so a crawl that declares
none runs no part of it, at no extra cost.

What it adds, per checked request (one robots.txt's rules let through):

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
from scrapy_rep.crawler.reporting import Drop
from scrapy_rep.engine.origin import robots_url
from scrapy_rep.engine.usage import Preferences, UsageRule, combine, header_usage

if TYPE_CHECKING:
    from scrapy.http import Request, Response

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.crawler.access.tokens import RequestTokens
    from scrapy_rep.crawler.config.settings import Config
    from scrapy_rep.crawler.reporting import Reporter
    from scrapy_rep.engine.origin import Origin

__all__ = ["USAGE_META_KEY", "UsageCheck", "usage_meta"]

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


class UsageCheck:
    """The usage preferences of ``REP_PURPOSES``: a request check and a response check."""

    def __init__(self, config: Config, tokens: RequestTokens, report: Reporter) -> None:
        self._purposes = config.purposes
        self._tag = config.usage_action == "tag"
        self._tokens = tokens
        self._report = report
        # robots.txt's preferences of the requests let through, for their response.
        self._robots_usage: WeakKeyDictionary[Request, tuple[Preferences, str]] = (
            WeakKeyDictionary()
        )

    def verdict(self, request: Request, origin: Origin, access: Access) -> Drop | None:
        """Run after robots.txt's rules let ``request`` through."""
        tokens = self._tokens(request)
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

    def response(self, request: Request, response: Response) -> None:
        """The ``Content-Usage`` header, with robots.txt's preferences: keep, tag or drop."""
        checked = self._robots_usage.pop(request, None)
        if checked is None:
            return  # not checked: a robots.txt fetch, an opted-out request...
        values = response.headers.getlist(b"Content-Usage")
        if not values:
            return
        robots_prefs, where = checked
        header = header_usage(values)
        request.meta[USAGE_META_KEY] = usage_meta(
            self._purposes, combine(robots_prefs, header.preferences), where
        )
        denied = header.preferences.denied(self._purposes)
        if not denied or header.rule is None:
            return
        self._count_denied(denied)
        if self._tag:
            self._report.stats.inc_value("robotstxt/usage/tagged")
            return
        error = RobotsTxtUsageDenied(denied, (header.rule,), request.url, where)
        self._report.announce(Drop(error, "usage/header_dropped"), request)
        raise error

    def _count_denied(self, labels: tuple[str, ...]) -> None:
        for label in labels:
            self._report.stats.inc_value(f"robotstxt/usage/denied/{label}")
