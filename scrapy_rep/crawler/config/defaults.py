"""The numbers and words the settings state, each written once: floors,
defaults and accepted choices, for the table (``table.py``), ``Config``, the
extensions' readers and the tools that take a crawl's limits."""

from __future__ import annotations

from typing import Final

from scrapy_rep.cache.policy_config import DAY
from scrapy_rep.engine.lines import MAX_BODY_BYTES

__all__ = [
    "CRAWL_DELAY_MAX",
    "DECISION_LOG_MAX_BYTES",
    "DEFAULT_ROBOTSTXT_TIMEOUT",
    "DEFAULT_STORAGE_FILE",
    "FOLLOW_SITEMAPS",
    "FOLLOW_SITEMAPS_MAX",
    "MAX_KEEP",
    "MIN_BODY_BYTES",
    "MIN_DECISION_LOG_BYTES",
    "MIN_MEMORY",
    "MIN_REDIRECTS",
    "OUTAGE_RULES",
    "SITEMAP_CALLBACK",
    "USAGE_ACTIONS",
    "WAIT_SLACK",
]

#: RFC 9309 §2.5: a parsing limit, if any, must be at least 500 KiB; the
#: engine's (docs/spec.md §4.3) is REP_MAX_BODY_BYTES's floor and default.
MIN_BODY_BYTES: Final = MAX_BODY_BYTES
#: REP_MEMORY_MAX_BYTES's floor: room for a few origins at the parse limit.
MIN_MEMORY: Final = 16 * 1024 * 1024
#: RFC 9309 §2.3.1.2: follow at least five redirect hops (REP_FOLLOW_REDIRECTS's default).
MIN_REDIRECTS: Final = 5
#: REP_CACHE_KEEP's bound (10 years): every backend stores expiries this far
#: out (Redis in integer milliseconds), and timestamps stay finite.
MAX_KEEP: Final = 10 * 365 * DAY

#: REP_ROBOTSTXT_TIMEOUT's default (seconds), well under Scrapy's 180 s
#: DOWNLOAD_TIMEOUT: an origin's requests wait while its robots.txt downloads.
DEFAULT_ROBOTSTXT_TIMEOUT: Final = 30.0
#: Added to the longest a robots.txt fetch can take (its hops' timeouts), for
#: the time between them: how long a request waits at most (docs/decisions.md).
WAIT_SLACK: Final = 30.0

#: REP_STORAGE_PATH's default, inside Scrapy's project data dir (``.scrapy/``).
DEFAULT_STORAGE_FILE: Final = "robotstxt.sqlite3"
#: REP_DECISION_LOG_MAX_BYTES: its default, and its least (a few hundred lines).
DECISION_LOG_MAX_BYTES: Final = 100 * 1024 * 1024
MIN_DECISION_LOG_BYTES: Final = 64 * 1024
#: REP_OUTAGE_RULES presets: Google's current text, and its older edition
#: ("5xx: full disallow until a retry succeeds; after 30 days the cached copy").
OUTAGE_RULES: Final = ("google", "google-legacy")
#: The defaults of the settings read for the extensions (``CrawlDelayConfig``,
#: ``SitemapConfig``), written here once for them and for the reference.
CRAWL_DELAY_MAX: Final = 30.0
FOLLOW_SITEMAPS: Final = False
FOLLOW_SITEMAPS_MAX: Final = 50
SITEMAP_CALLBACK: Final = "parse_sitemap"
#: REP_USAGE_ACTION: what a response whose Content-Usage header refuses a
#: declared purpose gets: dropped (IgnoreRequest), or kept and tagged in meta.
USAGE_ACTIONS: Final = ("drop", "tag")
