"""Signals sent by scrapy_rep's middleware (connect with ``crawler.signals.connect``).

``sitemaps_found``
    Sent once per origin per crawl when its robots.txt lists sitemaps (docs/spec.md §7.2).
    Keyword arguments: ``sitemaps`` (tuple of absolute URLs, file order),
    ``robotstxt_url`` (the origin's robots.txt URL), ``spider``.

``licenses_found``
    Sent once per origin per crawl when its robots.txt has RSL ``License``
    lines (docs/spec.md §7.3): the site's licence terms, which scrapy_rep does not
    fetch. Keyword arguments: ``licenses`` (tuple of absolute URLs, file
    order), ``robotstxt_url``, ``spider``.

``request_dropped``
    Sent for every request the middleware drops (docs/spec.md §2.4, §8.1), so a spider
    can persist or re-schedule it. Keyword arguments: ``request``, ``reason``
    (the human-readable reason, also the exception message), ``spider``, and
    ``exception`` (the ``RobotsTxtDisallowed`` raised: ``ForbiddenByRobotsTxt``
    or ``RobotsTxtUnreachable``).

``robotstxt_resolved``
    Sent every time an origin's access is set or changes in this process: its
    first resolution (from a fetch or from the cache), each refresh, and each
    change of state during an outage (closed -> last good copy -> ...).
    Keyword arguments: ``origin`` (``scrapy_rep.Origin``),
    ``robotstxt_url``, ``access`` (``scrapy_rep.Access``: ``state``,
    ``robots`` -- the parsed ``RobotsTxt`` or None --, ``reason``), ``spider``.
    For per-origin features such as crawl-delay:
    ``access.robots.crawl_delay(middleware.tokens_for(request))`` with
    ``middleware = crawler.get_downloader_middleware(scrapy_rep.RobotsTxtMiddleware)``.
    Handlers run synchronously (``send_catch_log``), before the requests
    waiting for the origin are answered.

``robotstxt_changed``
    Sent once per change when a robots.txt fetch of this process brings an
    origin a new version that tells the crawl's tokens something else than
    the version before it (perhaps one an earlier crawl stored):
    docs/versions.md, "In the crawl". Keyword arguments: ``origin``,
    ``robotstxt_url``, ``before`` and ``after`` (``scrapy_rep.cache.versions.Version``:
    ``status``, ``body``, ``digest``, ``first_seen``, ``last_seen``),
    ``change`` (``scrapy_rep.engine.changes.Change``: ``summary()``,
    ``as_dict()``, ``newly_disallowed``...), ``spider``. Also counted as
    ``robotstxt/changed`` and said in one INFO line.

``found(values)``
    The signal of each kind of line outside any group handed to the spider
    (``scrapy_rep/engine/site_wide.py``), by its ``values``:
    ``found("sitemaps") is sitemaps_found``. Keyword arguments: the values
    under that name, ``robotstxt_url``, ``spider``.

Scrapy's own ``robots_parsed`` signal is sent as well, with a
``scrapy.robotstxt.RobotParser``-compatible object.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "found",
    "licenses_found",
    "request_dropped",
    "robotstxt_changed",
    "robotstxt_resolved",
    "sitemaps_found",
]

_FOUND: Final[dict[str, object]] = {}


def found(values: str) -> object:
    """The signal that hands the spider an origin's ``values`` (``sitemaps``,
    ``licenses``...): one object per kind, made when first asked for."""
    signal = _FOUND.get(values)
    if signal is None:
        signal = _FOUND[values] = object()
    return signal


sitemaps_found: Final = found("sitemaps")
licenses_found: Final = found("licenses")
request_dropped: Final = object()
robotstxt_resolved: Final = object()
robotstxt_changed: Final = object()
