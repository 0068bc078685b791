"""Which requests the middleware checks, and the origin each one asks.

Checked: a request that does not opt out (``dont_obey_robotstxt``), is not
one of this package's own robots.txt fetches, and has a scheme of
``REP_CHECKED_SCHEMES``. An origin depends on the scheme and netloc only, so
it is worked out (IDNA and all) once per netloc, not once per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from scrapy_rep.crawler.access.fetcher import ROBOTSTXT_FETCH_META_KEY
from scrapy_rep.crawler.errors import RobotsTxtNoOrigin
from scrapy_rep.engine.origin import Origin, origin_of_parts

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn
    from urllib.parse import ParseResult

    from scrapy.http import Request

    from scrapy_rep.crawler.errors import RobotsTxtDisallowed

    #: ``Reporter.drop``: counts, logs and raises a request's drop.
    DropRequest = Callable[[Request, RobotsTxtDisallowed, str], NoReturn]

__all__ = ["CheckedOrigins", "opted_out"]

#: Bound of the per-netloc memo (cleared when full). Small: it saves a URL
#: parse for the origins being crawled now, and every entry is an object the
#: collector walks for the rest of the crawl (docs/benchmarks.md: a 100,000 bound kept
#: the garbage collector's work growing with the origins seen).
_MAX_REMEMBERED: Final = 4_096


def opted_out(request: Request) -> bool:
    """A request that asked not to be checked, or our own robots.txt fetch."""
    meta = request.meta
    return bool(meta.get("dont_obey_robotstxt")) or meta.get(ROBOTSTXT_FETCH_META_KEY) is True


class CheckedOrigins:
    """The checked schemes, and the origin of each (scheme, netloc) seen."""

    def __init__(self, schemes: frozenset[str]) -> None:
        self.schemes = schemes
        self._origins: dict[tuple[str, str], Origin | None] = {}

    def origin(self, parts: ParseResult) -> Origin | None:
        """The origin a URL (parsed: ``parts``) asks; None when it names none."""
        key = (parts.scheme, parts.netloc)
        try:
            return self._origins[key]
        except KeyError:
            pass
        if len(self._origins) >= _MAX_REMEMBERED:
            self._origins.clear()
        try:
            origin = origin_of_parts(parts)
        except ValueError:  # a bad port
            origin = None
        self._origins[key] = origin
        return origin

    def checked(self, request: Request, parts: ParseResult, drop: DropRequest) -> Origin | None:
        """The origin a request asks; None for a scheme not checked (``data:``,
        ``file:``, ...). A checked URL without an origin is given to ``drop``
        (failing closed), with its stat."""
        if parts.scheme not in self.schemes:
            return None
        origin = self.origin(parts)
        if origin is None:
            reason = f"no origin: {request.url} names no host that robots.txt can be asked of"
            drop(request, RobotsTxtNoOrigin(reason, request.url), "no_origin")
        return origin

    def known(self, parts: ParseResult) -> Origin | None:
        """The origin already worked out for this URL's scheme and netloc, if any."""
        return self._origins.get((parts.scheme, parts.netloc))
