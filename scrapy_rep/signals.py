"""Signals sent by scrapy_rep's middleware (connect with ``crawler.signals.connect``).

``sitemaps_found``
    Sent once per origin per crawl when its robots.txt lists sitemaps (SPEC §7.2).
    Keyword arguments: ``sitemaps`` (tuple of absolute URLs, file order),
    ``robotstxt_url`` (the origin's robots.txt URL), ``spider``.

``request_dropped``
    Sent for every request the middleware drops (SPEC §2.4, §8.1), so a spider
    can persist or re-schedule it. Keyword arguments: ``request``, ``reason``
    (the human-readable reason, also the exception message), ``spider``, and
    ``exception`` (the ``RobotsTxtDisallowed`` raised: ``ForbiddenByRobotsTxt``
    or ``RobotsTxtUnreachable``).

Scrapy's own ``robots_parsed`` signal is sent as well, with a
``scrapy.robotstxt.RobotParser``-compatible object.
"""

from __future__ import annotations

from typing import Final

__all__ = ["request_dropped", "sitemaps_found"]

sitemaps_found: Final = object()
request_dropped: Final = object()
