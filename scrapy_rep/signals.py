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

Scrapy's own ``robots_parsed`` signal is sent as well, with a
``scrapy.robotstxt.RobotParser``-compatible object.
"""

from __future__ import annotations

from typing import Final

__all__ = ["licenses_found", "request_dropped", "robotstxt_resolved", "sitemaps_found"]

sitemaps_found: Final = object()
licenses_found: Final = object()
request_dropped: Final = object()
robotstxt_resolved: Final = object()
