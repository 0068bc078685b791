"""The settings table: each setting's name, values, default and parser.

``SETTINGS`` is declarative: ``settings.Config.from_settings`` reads the
settings through it, and the settings reference (docs/settings.md) is
generated from its sections (``ENABLE``, ...; their titles: ``GROUPS`` in
``docs/_ext/rep_settings.py``), so what is documented is what is read. To add
a setting: an entry in its section (name, accepted values, what it does, the
field it fills and its parser from ``values``), and that field with its
default: a ``PolicyConfig`` field for the cache's and the outages' settings
(``cache/policy_config.py``), else a ``settings.Config`` field.

A little past 500 lines, by its entries alone: it is data, one entry per
setting in the reference's order, and a table split in two files would be
two places to look for a setting (its row type and constants already live
in ``setting.py`` and ``defaults.py``).
"""

from __future__ import annotations

import math
from typing import Final

from scrapy_rep.cache.policy import DAY, LONG_OUTAGE_VALUES
from scrapy_rep.cache.record import MAX_EARLIER
from scrapy_rep.crawler.config.defaults import (
    CRAWL_DELAY_MAX,
    DEFAULT_ROBOTSTXT_TIMEOUT,
    DEFAULT_STORAGE_FILE,
    FOLLOW_SITEMAPS,
    FOLLOW_SITEMAPS_MAX,
    MAX_KEEP,
    MIN_BODY_BYTES,
    MIN_DECISION_LOG_BYTES,
    MIN_MEMORY,
    OUTAGE_RULES,
    SITEMAP_CALLBACK,
    USAGE_ACTIONS,
)
from scrapy_rep.crawler.config.setting import Setting
from scrapy_rep.crawler.config.values import (
    choice,
    int_at_least,
    int_within,
    number_within,
    positive_seconds,
    seconds,
    to_bool,
    to_path,
    to_purposes,
    to_redis_url,
    to_schemes,
    to_storage,
    to_str,
    to_tokens,
)
from scrapy_rep.crawler.decision_log import KEPT as DECISION_LOGS_KEPT
from scrapy_rep.engine.usage import LABELS

__all__ = [
    "CACHE_AND_OUTAGES",
    "DECISION_LOG",
    "ENABLE",
    "PAGE_RULES",
    "POLITENESS",
    "SETTINGS",
    "SITEMAPS",
    "STORAGE",
    "TOKENS",
    "USAGE",
    "Setting",
]


#: Where the extensions' settings are read (``CrawlDelayConfig``, ``SitemapConfig``).
_EXTENSIONS: Final = "scrapy_rep.crawler.config.settings"
_SECONDS: Final = "seconds >= 0"


#: The reference's section "Enable".
ENABLE: Final[tuple[Setting, ...]] = (
    Setting(
        "ROBOTSTXT_OBEY",
        "bool",
        "Obey robots.txt at all (Scrapy's project template sets `True`).",
        attribute="obey",
        parse=to_bool,
    ),
    Setting(
        "REP_CHECKED_SCHEMES",
        "list or comma-separated string, at least one",
        "URL schemes whose requests are checked; others pass through. A checked URL "
        "with no origin (`http://:80/x`) is dropped (`RobotsTxtNoOrigin`, stat "
        "`robotstxt/no_origin`).",
        attribute="checked_schemes",
        parse=to_schemes,
    ),
    Setting(
        "REP_FOLLOW_REDIRECTS",
        "int >= 0",
        "Redirect hops followed for robots.txt; below 5 (RFC 9309's minimum), a "
        "WARNING at start-up.",
        attribute="max_redirects",
        parse=int_at_least(0),
    ),
    Setting(
        "REP_ROBOTSTXT_TIMEOUT",
        "seconds > 0",
        "How long one robots.txt download may take (each redirect hop anew), in place "
        "of `DOWNLOAD_TIMEOUT` (180 s by default), which still applies to pages. A "
        "request waits for its robots.txt at most this × (`REP_FOLLOW_REDIRECTS` + 1) "
        "+ 30 s; the start-up line says both.",
        attribute="robotstxt_timeout",
        parse=positive_seconds,
        default=f"`{DEFAULT_ROBOTSTXT_TIMEOUT:g}`, or `DOWNLOAD_TIMEOUT` if shorter",
    ),
    Setting(
        "REP_MAX_BODY_BYTES",
        f"int >= {MIN_BODY_BYTES}",
        f"Bytes of robots.txt downloaded (parsing stops at {MIN_BODY_BYTES:,}).",
        attribute="max_body_bytes",
        parse=int_at_least(MIN_BODY_BYTES),
    ),
    Setting(
        "REP_GOOGLE_QUIRKS",
        "bool",
        "Also accept what Google's open-source parser accepts (misspelt fields, "
        "missing colons, ...).",
        attribute="google_quirks",
        parse=to_bool,
    ),
)

#: The reference's section "Tokens".
TOKENS: Final[tuple[Setting, ...]] = (
    Setting(
        "ROBOTSTXT_USER_AGENT",
        "a token, or a list of tokens in order of preference",
        "The tokens robots.txt groups are matched with. Unset: the crawler named in the "
        "request's `User-Agent`, else in `USER_AGENT` (never a browser's name).",
        attribute="user_agent_tokens",
        parse=to_tokens,
        default="unset",
    ),
    Setting(
        "USER_AGENT",
        "str",
        "Scrapy's own setting: the crawler's token is taken from it when "
        "`ROBOTSTXT_USER_AGENT` is unset and a request has no `User-Agent` header yet.",
        attribute="default_user_agent",
        parse=to_str,
        default="Scrapy's",
    ),
)

#: The reference's section "Caching and outages".
CACHE_AND_OUTAGES: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_CACHE_TTL",
        _SECONDS,
        "The life of a cached robots.txt without Cache-Control.",
        attribute="cache_ttl",
        parse=seconds,
    ),
    Setting(
        "REP_CACHE_MIN_TTL",
        "seconds >= 0, <= `REP_CACHE_MAX_TTL`",
        "The lower bound for Cache-Control's `max-age` / `s-maxage`.",
        attribute="cache_min_ttl",
        parse=seconds,
    ),
    Setting(
        "REP_CACHE_MAX_TTL",
        _SECONDS,
        "The upper bound for Cache-Control's `max-age` / `s-maxage`.",
        attribute="cache_max_ttl",
        parse=seconds,
    ),
    Setting(
        "REP_CACHE_KEEP",
        f"seconds, 0 to {MAX_KEEP:.0f} (10 years)",
        "How long a record is kept in storage after its last update.",
        attribute="cache_keep",
        parse=number_within(0.0, MAX_KEEP),
    ),
    Setting(
        "REP_VERSIONS_KEPT",
        f"int 0 to {MAX_EARLIER}",
        "Earlier good robots.txt answers kept per origin beside the current one, "
        "to tell what changed (docs/versions.md); 0 keeps none.",
        attribute="versions_kept",
        parse=int_within(0, MAX_EARLIER),
    ),
    Setting(
        "REP_VERSIONS_MAX_BYTES",
        "int >= 0",
        "The most bytes the earlier answers' bodies of one origin may take; the oldest go first.",
        attribute="versions_max_bytes",
        parse=int_at_least(0),
    ),
    Setting(
        "REP_OUTAGE_RULES",
        "`google`, `google-legacy`",
        "The preset that `REP_UNREACHABLE_DISALLOW`, `REP_UNREACHABLE_MAX_AGE` and "
        "`REP_LONG_OUTAGE` default to: Google's current rules, or its older edition.",
        attribute="outage_rules",
        parse=choice(OUTAGE_RULES),
    ),
    Setting(
        "REP_UNREACHABLE_DISALLOW",
        _SECONDS,
        "Full disallow this long into an outage (0: the last good copy at once).",
        attribute="unreachable_disallow",
        parse=seconds,
    ),
    Setting(
        "REP_UNREACHABLE_MAX_AGE",
        _SECONDS,
        "The last good copy applies until then.",
        attribute="unreachable_max_age",
        parse=seconds,
    ),
    Setting(
        "REP_LONG_OUTAGE",
        "`site`, `cached`",
        "After that: allow if the site's pages answer, else disallow (`site`), or the "
        "last good copy, else allow (`cached`).",
        attribute="long_outage",
        parse=choice(LONG_OUTAGE_VALUES),
    ),
    Setting(
        "REP_SITE_REACHABLE_WINDOW",
        _SECONDS,
        'How recent a page answer must be to count as "the site answers".',
        attribute="site_reachable_window",
        parse=seconds,
    ),
    Setting(
        "REP_UNREACHABLE_WAIT",
        _SECONDS,
        "How long requests wait for quick retries during an origin's first failing "
        "fetch; 0 drops them at the first failure.",
        attribute="unreachable_wait",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_INITIAL",
        "seconds >= 0, <= `REP_RETRY_MAX`",
        "The first wait between robots.txt retries during an outage.",
        attribute="retry_initial",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_MAX",
        _SECONDS,
        "The longest wait between robots.txt retries during an outage.",
        attribute="retry_max",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_BUSY_INITIAL",
        "seconds >= 0, <= `REP_RETRY_BUSY_MAX`",
        "`REP_RETRY_INITIAL` for 503 and 429 answers.",
        attribute="retry_busy_initial",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_BUSY_MAX",
        _SECONDS,
        "`REP_RETRY_MAX` for 503 and 429 answers.",
        attribute="retry_busy_max",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_FACTOR",
        "a number >= 1",
        "The back-off's growth per failure.",
        attribute="retry_factor",
        parse=number_within(1.0, math.inf),
    ),
    Setting(
        "REP_RETRY_JITTER",
        "a number from 0 to 1",
        "Each wait is shortened by up to this fraction, at random.",
        attribute="retry_jitter",
        parse=number_within(0.0, 1.0),
    ),
)

#: The reference's section "The decision log" (docs/versions.md).
DECISION_LOG: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_DECISION_LOG",
        "a path (relative: in the project data dir)",
        "A JSON Lines file with one line per request let through or dropped: its URL, "
        'the verdict, and the fields of `meta["rep_decision"]` (docs/versions.md, '
        '"The decision log"). Unset: no log.',
        attribute="decision_log",
        parse=to_path,
        default="unset",
    ),
    Setting(
        "REP_DECISION_LOG_MAX_BYTES",
        f"int >= {MIN_DECISION_LOG_BYTES}",
        "The most bytes the decision log's file grows to; then it becomes `.1` (and `.1` "
        f"`.2`...), {DECISION_LOGS_KEPT} such files kept.",
        attribute="decision_log_max_bytes",
        parse=int_at_least(MIN_DECISION_LOG_BYTES),
    ),
)

#: The reference's section "Storage".
STORAGE: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_STORAGE",
        "`sqlite`, `memory`, `redis`, or the dotted path of a `scrapy_rep.Storage` class",
        "Where robots.txt records are kept. Every store works under every "
        "`TWISTED_REACTOR` Scrapy supports (asyncio, epoll, poll, select); under a "
        "reactor other than asyncio, the store runs on an asyncio loop in a thread "
        "of its own.",
        attribute="storage",
        parse=to_storage,
    ),
    Setting(
        "REP_STORAGE_PATH",
        "a path (relative: in the project data dir)",
        "The sqlite file.",
        attribute="storage_path",
        parse=to_path,
        default=f"`.scrapy/{DEFAULT_STORAGE_FILE}`",
    ),
    Setting(
        "REP_MEMORY_MAX_ORIGINS",
        "int >= 1",
        "Origins kept by the memory store and the in-process cache.",
        attribute="memory_max_origins",
        parse=int_at_least(1),
    ),
    Setting(
        "REP_MEMORY_MAX_BYTES",
        f"int >= {MIN_MEMORY} (16 MiB)",
        "Bytes of robots.txt kept in the process, whatever the files: half for parsed "
        "bodies, a quarter for the per-origin copies, a quarter for the memory store "
        "(or Redis's stand-in); least recently used out. An answer evicted before its "
        "origin's next request is read back from the sqlite or Redis store, or fetched "
        "again with the memory store.",
        attribute="memory_max_bytes",
        parse=int_at_least(MIN_MEMORY),
    ),
    Setting(
        "REP_REDIS_URL",
        "one server: `redis://`, `rediss://` or `unix://`; Sentinel: "
        "`redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]"
        "[?sentinel_password=...]`; Cluster: "
        "`redis+cluster://[[user]:password@]host[:port][,host[:port]...]`",
        "The Redis store (required when `REP_STORAGE` is `redis`): one server, the primary "
        "the sentinels name (followed through a failover), or a Cluster from its seed "
        "nodes. The password before `@` is the data nodes', `sentinel_password` the "
        "sentinels' own. Checked at start-up, never shown with its passwords; see "
        'Storage, "Production Redis".',
        attribute="redis_url",
        parse=to_redis_url,
        default="`REDIS_URL`, else unset",
        fallback="REDIS_URL",
    ),
    Setting(
        "REP_REDIS_PREFIX",
        "str",
        "The prefix of every Redis key.",
        attribute="redis_prefix",
        parse=to_str,
    ),
    Setting(
        "REP_REDIS_RETRY_INTERVAL",
        _SECONDS,
        "How often Redis is tried again while it is down.",
        attribute="redis_retry_interval",
        parse=seconds,
    ),
    Setting(
        "REP_FORGET_POLL_INTERVAL",
        "seconds, 0.01 to 86400",
        "How often a running crawl reads the store's log of forgotten origins "
        "(`scrapy-rep cache forget`, the Tester's *Refetch now*; one query each time, "
        "whatever the number of origins) and drops those it holds, so that their next "
        "request fetches robots.txt again.",
        attribute="forget_poll_interval",
        parse=number_within(0.01, DAY),
    ),
)

#: The reference's section "Politeness".
POLITENESS: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_CRAWL_DELAY",
        "`ignore`, `obey`",
        "Obey `crawl-delay` / `request-rate` as the least time between two requests of "
        "an origin, kept for every process sharing the store (download slots are left "
        "alone). With `ignore`, an INFO line still names each origin's value.",
        default='`"ignore"`',
        read_by=_EXTENSIONS,
    ),
    Setting(
        "REP_CRAWL_DELAY_MAX",
        "seconds > 0",
        "Longer crawl-delays are cut to this, with a warning.",
        default=f"`{CRAWL_DELAY_MAX:g}`",
        read_by=_EXTENSIONS,
    ),
    Setting(
        "REP_RETRY_AFTER",
        "`ignore`, `obey`",
        "A 429 or 503 page with `Retry-After` pauses its origin, for every "
        "process sharing the store.",
        default="as `REP_CRAWL_DELAY`",
        read_by=_EXTENSIONS,
    ),
    Setting(
        "REP_RETRY_AFTER_MIN",
        "seconds >= 0, <= `REP_RETRY_AFTER_MAX`",
        "The lower bound for a `Retry-After` header.",
        attribute="retry_after_min",
        parse=seconds,
    ),
    Setting(
        "REP_RETRY_AFTER_MAX",
        _SECONDS,
        "The upper bound for a `Retry-After` header.",
        attribute="retry_after_max",
        parse=seconds,
    ),
)

#: The reference's section "Usage preferences".
USAGE: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_PURPOSES",
        "a list (or comma-separated string) of " + ", ".join(f"`{label}`" for label in LABELS),
        "What the crawl's output is used for: robots.txt refusals drop requests before "
        "download. Empty: no usage check at all.",
        attribute="purposes",
        parse=to_purposes,
    ),
    Setting(
        "REP_USAGE_ACTION",
        "`drop`, `tag`",
        "A response whose `Content-Usage` header refuses a purpose: dropped, or kept "
        'and tagged in `meta["rep_usage"]`.',
        attribute="usage_action",
        parse=choice(USAGE_ACTIONS),
    ),
)

#: The reference's section "Page rules".
PAGE_RULES: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_PAGE_DIRECTIVES",
        "bool",
        "Read `X-Robots-Tag` and robots meta tags; obey `nofollow`, expose the rest in "
        '`meta["rep_directives"]`.',
        attribute="page_directives",
        parse=to_bool,
    ),
    Setting(
        "REP_PAGE_DIRECTIVES_MAX_BYTES",
        "int >= 1024",
        "Bytes of an HTML body searched for meta tags.",
        attribute="page_directives_max_bytes",
        parse=int_at_least(1024),
    ),
)

#: The reference's section "Sitemaps".
SITEMAPS: Final[tuple[Setting, ...]] = (
    Setting(
        "REP_FOLLOW_SITEMAPS",
        "bool",
        "Request the sitemaps robots.txt lists, once per crawl.",
        default=f"`{FOLLOW_SITEMAPS}`",
        read_by=_EXTENSIONS,
    ),
    Setting(
        "REP_FOLLOW_SITEMAPS_MAX",
        "int >= 1",
        "Sitemaps followed per robots.txt at most (a hostile file may list thousands).",
        default=f"`{FOLLOW_SITEMAPS_MAX}`",
        read_by=_EXTENSIONS,
    ),
    Setting(
        "REP_SITEMAP_CALLBACK",
        "a spider method's name",
        "The callback of those requests.",
        default=f'`"{SITEMAP_CALLBACK}"`',
        read_by=_EXTENSIONS,
    ),
)


#: Every setting scrapy_rep reads but REP_CLOCK (a testing hook), in the
#: order the reference lists them.
SETTINGS: Final[tuple[Setting, ...]] = (
    ENABLE
    + TOKENS
    + CACHE_AND_OUTAGES
    + DECISION_LOG
    + STORAGE
    + POLITENESS
    + USAGE
    + PAGE_RULES
    + SITEMAPS
)
