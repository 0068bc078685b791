"""Every setting scrapy_rep reads, with its default, read once at start-up.

``Config.from_settings`` reads the package's settings, and
``CrawlDelayConfig`` and ``SitemapConfig`` those of its two extensions: the
rest of the package takes these, and no other module reads a setting of
scrapy_rep's (but the add-on, which runs before there is a crawler and reads
``REP_PAGE_DIRECTIVES`` through the same parser). A bad value fails the
crawl at start-up with a ``SettingError`` naming the setting, the value and
what is accepted, instead of surfacing as odd behaviour hours later.

Which settings there are, their defaults in words and their parsers is the
schema, ``table.SETTINGS`` (the settings reference is generated
from it); how a value is parsed is ``values``. A setting of the pure policy
(``cache/policy_config.py``: the cache's and the outages' durations and
choices) has no field here: its entry names the ``PolicyConfig`` field it
fills, which holds its default, and ``Config.policy`` is that object.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.policy_config import out_of_order
from scrapy_rep.cache.storage.defaults import (
    MAX_ORIGINS,
    MEMORY_MAX_BYTES,
    REDIS_PREFIX,
    REDIS_RETRY_INTERVAL,
    STORAGE_KIND,
)
from scrapy_rep.crawler.config.defaults import (
    CRAWL_DELAY_MAX,
    DECISION_LOG_MAX_BYTES,
    DEFAULT_ROBOTSTXT_TIMEOUT,
    DEFAULT_STORAGE_FILE,
    FOLLOW_SITEMAPS,
    FOLLOW_SITEMAPS_MAX,
    MIN_BODY_BYTES,
    MIN_REDIRECTS,
    SITEMAP_CALLBACK,
    WAIT_SLACK,
)
from scrapy_rep.crawler.config.setting import Setting
from scrapy_rep.crawler.config.table import SETTINGS
from scrapy_rep.crawler.config.unknown import unknown_setting_notes
from scrapy_rep.crawler.config.values import (
    SettingError,
    digits_at_least_one,
    positive_seconds,
    read_setting,
    to_bool,
    to_clock,
    to_method_name,
    to_obey_mode,
    token_notes,
    user_agent_notes,
)
from scrapy_rep.engine.page_directives import MAX_HTML_BYTES

__all__ = [
    "DEFAULT_STORAGE_FILE",
    "SETTING_OF",
    "Config",
    "CrawlDelayConfig",
    "SettingError",
    "SitemapConfig",
    "field_default",
]

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: The fields of the pure policy a setting may fill (its entry's ``attribute``).
_POLICY_FIELDS: Final = frozenset(item.name for item in fields(PolicyConfig))
#: A field of ``Config`` or of ``PolicyConfig`` -> the setting that fills it.
SETTING_OF: Final = {s.attribute: s.name for s in SETTINGS if s.attribute is not None}
#: Config.of: each crawler's settings, read once.
_BY_CRAWLER: WeakKeyDictionary[Crawler, Config] = WeakKeyDictionary()


@dataclass(frozen=True)
class Config:
    """The settings of one crawler, validated."""

    #: ROBOTSTXT_OBEY: the middleware is disabled when false.
    obey: bool = False
    #: ROBOTSTXT_USER_AGENT as the tokens used, lower-cased, in preference
    #: order; empty -> derive from the request's User-Agent header, else from
    #: USER_AGENT (the crawler's name in it, never a browser's).
    user_agent_tokens: tuple[str, ...] = ()
    #: Warnings for the log at start-up: a token that was cut or not found,
    #: a value RFC 9309 advises against.
    notes: tuple[str, ...] = ()
    #: USER_AGENT, for when the request has no User-Agent header yet.
    default_user_agent: str = ""
    #: REP_GOOGLE_QUIRKS: parse and match as Google's open-source library does.
    google_quirks: bool = False
    #: REP_FOLLOW_REDIRECTS: redirect hops followed for robots.txt (RFC: >= 5).
    max_redirects: int = MIN_REDIRECTS
    #: REP_ROBOTSTXT_TIMEOUT: seconds one robots.txt download may take; None
    #: (unset): ``DEFAULT_ROBOTSTXT_TIMEOUT``, or DOWNLOAD_TIMEOUT if shorter
    #: (``fetch_timeout``).
    robotstxt_timeout: float | None = None
    #: REP_MAX_BODY_BYTES: bytes of robots.txt downloaded (parsing stops at 512,000:
    #: a larger value only keeps more of the body for a spider that asks for it).
    max_body_bytes: int = MIN_BODY_BYTES
    #: REP_CHECKED_SCHEMES: URL schemes whose requests are checked.
    checked_schemes: frozenset[str] = field(
        default_factory=lambda: frozenset({"http", "https", "ftp"})
    )

    # --- the cache (docs/spec.md §3) --------------------------------------------------
    #: REP_STORAGE: "sqlite", "memory", "redis" or a dotted Storage class path.
    storage: str = STORAGE_KIND
    #: REP_STORAGE_PATH: the sqlite file; relative paths are inside Scrapy's
    #: project data dir. None -> ``.scrapy/robotstxt.sqlite3``.
    storage_path: str | None = None
    #: REP_MEMORY_MAX_ORIGINS: origins kept in memory (the memory backend, the
    #: Redis stand-in, and the in-process copy of records), least recent out.
    memory_max_origins: int = MAX_ORIGINS
    #: REP_MEMORY_MAX_BYTES: bytes of robots.txt kept in this process, parsed
    #: and raw: half for parsed bodies, a quarter for the per-origin states,
    #: a quarter for the memory store (or Redis's stand-in).
    memory_max_bytes: int = MEMORY_MAX_BYTES
    #: REP_REDIS_URL, else REDIS_URL (scrapy-redis's setting).
    redis_url: str | None = None
    #: REP_REDIS_PREFIX: every Redis key starts with it.
    redis_prefix: str = REDIS_PREFIX
    #: REP_REDIS_RETRY_INTERVAL: while Redis is lost, how often to try it again.
    redis_retry_interval: float = REDIS_RETRY_INTERVAL
    #: REP_FORGET_POLL_INTERVAL: how often a running crawl reads the store's
    #: log of forgotten origins (``scrapy-rep cache forget``, the Tester's Refetch).
    forget_poll_interval: float = 5.0

    # --- the cache's life and outages (docs/spec.md §2.2, §3) -------------------------
    #: REP_OUTAGE_RULES: the preset the outage settings left unset take
    #: (``PolicyConfig()``, or ``PolicyConfig.older_google()``), applied by
    #: ``from_settings`` as it fills ``policy``.
    outage_rules: str = "google"
    #: Every setting whose entry names a ``PolicyConfig`` field (REP_CACHE_TTL:
    #: ``cache_ttl``, REP_UNREACHABLE_DISALLOW, the retries, ...), read into
    #: the pure policy's one value; an unset one keeps the preset's default.
    policy: PolicyConfig = field(default_factory=PolicyConfig)

    # --- why each request was fetched (docs/versions.md) -------------------------------
    #: REP_DECISION_LOG: the decision log's path (None: no log), and
    #: REP_DECISION_LOG_MAX_BYTES: its file's bound (``crawler/decision_log.py``).
    decision_log: str | None = None
    decision_log_max_bytes: int = DECISION_LOG_MAX_BYTES

    # --- what the content may be used for (docs/usage-preferences.md) ----------
    #: REP_PURPOSES: the usage labels (of ``LABELS``) the crawl's output is
    #: used for. Empty: no usage check at all, and no cost.
    purposes: tuple[str, ...] = ()
    #: REP_USAGE_ACTION: "drop" or "tag" a response whose Content-Usage header
    #: refuses a purpose (robots.txt refusals are always dropped, before download).
    usage_action: str = "drop"
    #: REP_PAGE_DIRECTIVES: read X-Robots-Tag and robots meta tags; obey nofollow.
    page_directives: bool = False
    #: REP_PAGE_DIRECTIVES_MAX_BYTES: how much of an HTML body is searched for meta tags.
    page_directives_max_bytes: int = MAX_HTML_BYTES

    #: REP_CLOCK: a testing hook. The dotted path of (or the object itself) a
    #: zero-argument callable returning seconds since the epoch; every time
    #: rule reads it instead of ``time.time``. Not for production use. If it
    #: also has ``sleep`` (a coroutine function) and ``monotonic``, they time
    #: the waits between a first failure's quick retries instead of real time.
    clock: Callable[[], float] = time.time

    @classmethod
    def of(cls, crawler: Crawler) -> Config:
        """The crawler's settings, read once and shared by its components."""
        config = _BY_CRAWLER.get(crawler)
        if config is None:
            config = _BY_CRAWLER[crawler] = cls.from_settings(crawler.settings)
        return config

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Config:
        """Read and validate; ``settings`` is a Scrapy ``Settings`` or a plain dict.

        Every setting comes through ``SETTINGS`` (the table the reference
        documentation is generated from) but REP_CLOCK, a testing hook.
        """
        defaults = cls()
        values = _read(settings, defaults)
        legacy = values["outage_rules"] == "google-legacy"
        policy = _read(settings, PolicyConfig.older_google() if legacy else defaults.policy)
        wrong = out_of_order(policy)
        if wrong is not None:
            low, high = (policy[name] for name in wrong)
            low_name, high_name = (SETTING_OF[name] for name in wrong)
            raise SettingError(low_name, low, f"a number of seconds <= {high_name} ({high:g})")
        values["policy"] = PolicyConfig(**policy)
        values["clock"] = read_setting(settings, "REP_CLOCK", defaults.clock, to_clock)
        written_tokens = settings.get("ROBOTSTXT_USER_AGENT")
        notes = (
            token_notes("ROBOTSTXT_USER_AGENT", written_tokens)
            if written_tokens is not None
            else user_agent_notes(values["default_user_agent"])
        )
        notes.extend(unknown_setting_notes(settings))
        max_redirects = values["max_redirects"]
        if max_redirects < MIN_REDIRECTS:
            notes.append(
                f"REP_FOLLOW_REDIRECTS={max_redirects}: RFC 9309 §2.3.1.2 asks crawlers to "
                f"follow at least 5 redirect hops for robots.txt; a chain longer than "
                f"{max_redirects} is treated as no robots.txt (allow-all)"
            )
        return cls(notes=tuple(notes), **values).validated()

    def fetch_timeout(self, download_timeout: float) -> float:
        """Seconds one robots.txt download may take (``download_timeout`` meta),
        given Scrapy's DOWNLOAD_TIMEOUT (docs/decisions.md)."""
        if self.robotstxt_timeout is not None:
            return self.robotstxt_timeout
        if download_timeout > 0:
            return min(DEFAULT_ROBOTSTXT_TIMEOUT, download_timeout)
        return DEFAULT_ROBOTSTXT_TIMEOUT

    def longest_wait(self, download_timeout: float) -> float:
        """The longest a request waits for its robots.txt: a timeout per hop,
        and slack for the time between them (docs/decisions.md)."""
        return self.fetch_timeout(download_timeout) * (self.max_redirects + 1) + WAIT_SLACK

    def validated(self) -> Config:
        """Check what no single setting can: a needed companion (the pairs of
        bounds are checked as the policy is read, in ``from_settings``)."""
        if self.storage == "redis" and not self.redis_url:
            raise SettingError(
                "REP_REDIS_URL",
                None,
                "a Redis URL such as 'redis://localhost:6379/0' (or REDIS_URL) "
                "when REP_STORAGE is 'redis'",
            )
        return self


def _read(settings: Mapping[str, Any], defaults: Config | PolicyConfig) -> dict[str, Any]:
    """Each setting whose entry names a field of ``defaults``' class, parsed;
    an unset one takes its fallback setting's value, else the field's."""
    names = {item.name for item in fields(defaults)}
    return {
        setting.attribute: read_setting(
            settings, setting.name, _default_of(setting, settings, defaults), setting.parse
        )
        for setting in SETTINGS
        if setting.attribute in names and setting.parse is not None
    }


def _default_of(
    setting: Setting, settings: Mapping[str, Any], defaults: Config | PolicyConfig
) -> Any:
    """The value a setting takes when unset: its fallback setting's, else the field's."""
    default = getattr(defaults, str(setting.attribute))
    if setting.fallback is None or setting.parse is None:
        return default
    return read_setting(settings, setting.fallback, default, setting.parse)


def field_default(attribute: str) -> Any:
    """The default of the field a setting fills, ``Config``'s or ``PolicyConfig``'s
    (the settings reference prints it, docs/_ext/rep_settings.py)."""
    config = Config()
    return getattr(config.policy if attribute in _POLICY_FIELDS else config, attribute)


@dataclass(frozen=True)
class CrawlDelayConfig:
    """REP_CRAWL_DELAY, REP_CRAWL_DELAY_MAX and REP_RETRY_AFTER, validated."""

    #: REP_CRAWL_DELAY == "obey": pace each origin's requests by its crawl-delay,
    #: through the store (``scrapy_rep.crawler.pace.turns``).
    obey: bool = False
    #: REP_CRAWL_DELAY_MAX: seconds; a larger crawl-delay is cut to this.
    max_delay: float = CRAWL_DELAY_MAX
    #: REP_RETRY_AFTER == "obey": a 429/503 with Retry-After pauses its origin
    #: for every process sharing the store. Default: as REP_CRAWL_DELAY.
    retry_after: bool = False

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> CrawlDelayConfig:
        defaults = cls()
        obey = read_setting(settings, "REP_CRAWL_DELAY", defaults.obey, to_obey_mode)
        return cls(
            obey=obey,
            max_delay=read_setting(
                settings, "REP_CRAWL_DELAY_MAX", defaults.max_delay, positive_seconds
            ),
            retry_after=read_setting(settings, "REP_RETRY_AFTER", obey, to_obey_mode),
        )


@dataclass(frozen=True)
class SitemapConfig:
    """REP_FOLLOW_SITEMAPS and REP_SITEMAP_CALLBACK, validated."""

    #: REP_FOLLOW_SITEMAPS: schedule the sitemaps robots.txt lists.
    follow: bool = FOLLOW_SITEMAPS
    #: REP_SITEMAP_CALLBACK: the spider method that receives each sitemap.
    callback: str = SITEMAP_CALLBACK
    #: REP_FOLLOW_SITEMAPS_MAX: sitemaps scheduled per robots.txt at most; a
    #: hostile file may list thousands.
    max_per_robotstxt: int = FOLLOW_SITEMAPS_MAX

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> SitemapConfig:
        defaults = cls()
        return cls(
            follow=read_setting(settings, "REP_FOLLOW_SITEMAPS", defaults.follow, to_bool),
            callback=read_setting(
                settings, "REP_SITEMAP_CALLBACK", defaults.callback, to_method_name
            ),
            max_per_robotstxt=read_setting(
                settings, "REP_FOLLOW_SITEMAPS_MAX", defaults.max_per_robotstxt, digits_at_least_one
            ),
        )
