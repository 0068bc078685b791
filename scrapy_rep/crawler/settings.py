"""Every setting scrapy_rep reads, with its default, parsed once at start-up.

``Config.from_settings`` is the only place that looks at Scrapy settings; the
rest of the package takes a ``Config``. A bad value fails the crawl at
start-up with a ``SettingError`` naming the setting, the value and what is
accepted, instead of surfacing as odd behaviour hours later.

To add a setting: add a field to ``Config`` with its default and one entry to
``SETTINGS`` at the end of this module (name, accepted values, what it does,
the field and its parser). ``from_settings`` reads the table, and the
settings reference in docs/ is generated from it.
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any, Final, TypeVar
from weakref import WeakKeyDictionary

from scrapy_rep.cache.policy import DAY, LONG_OUTAGE_VALUES, LongOutage, PolicyConfig
from scrapy_rep.cache.storage import STORAGE_KINDS
from scrapy_rep.engine.agents import configured_token, is_user_agent_string, user_agent_token
from scrapy_rep.engine.page_directives import MAX_HTML_BYTES
from scrapy_rep.engine.usage import LABELS

__all__ = [
    "DEFAULT_STORAGE_FILE",
    "MIN_BODY_BYTES",
    "OUTAGE_RULES",
    "SETTINGS",
    "STORAGE_KINDS",
    "USAGE_ACTIONS",
    "Config",
    "Setting",
    "SettingError",
]

#: RFC 9309 §2.5: a parsing limit, if any, must be at least 500 KiB.
MIN_BODY_BYTES: Final = 512_000
#: REP_MEMORY_MAX_BYTES's floor: room for a few origins at the parse limit.
MIN_MEMORY: Final = 16 * 1024 * 1024
#: RFC 9309 §2.3.1.2: follow at least five redirect hops.
MIN_REDIRECTS: Final = 5
#: REP_CACHE_KEEP's bound (10 years): every backend stores expiries this far
#: out (Redis in integer milliseconds), and timestamps stay finite.
MAX_KEEP: Final = 10 * 365 * DAY

_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.-]*")
_DOTTED: Final = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+")

#: REP_STORAGE_PATH's default, inside Scrapy's project data dir (``.scrapy/``).
DEFAULT_STORAGE_FILE: Final = "robotstxt.sqlite3"
#: REP_OUTAGE_RULES presets: Google's current text, and its older edition
#: ("5xx: full disallow until a retry succeeds; after 30 days the cached copy").
OUTAGE_RULES: Final = ("google", "google-legacy")
#: REP_USAGE_ACTION: what a response whose Content-Usage header refuses a
#: declared purpose gets: dropped (IgnoreRequest), or kept and tagged in meta.
USAGE_ACTIONS: Final = ("drop", "tag")

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

T = TypeVar("T")

#: The policy's defaults are the settings' defaults: one source of truth.
_POLICY: Final = PolicyConfig()
#: Config.of: each crawler's settings, read once.
_BY_CRAWLER: WeakKeyDictionary[Crawler, Config] = WeakKeyDictionary()


class SettingError(ValueError):
    """A setting has a value scrapy_rep cannot use."""

    def __init__(self, name: str, value: object, accepted: str) -> None:
        super().__init__(f"{name}={value!r} is not valid; accepted: {accepted}")
        self.setting = name
        self.value = value


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
    max_redirects: int = 5
    #: REP_MAX_BODY_BYTES: bytes of robots.txt downloaded (parsing stops at 512,000:
    #: a larger value only keeps more of the body for a spider that asks for it).
    max_body_bytes: int = MIN_BODY_BYTES
    #: REP_CHECKED_SCHEMES: URL schemes whose requests are checked.
    checked_schemes: frozenset[str] = field(
        default_factory=lambda: frozenset({"http", "https", "ftp"})
    )

    # --- the cache (docs/spec.md §3) --------------------------------------------------
    #: REP_STORAGE: "sqlite", "memory", "redis" or a dotted Storage class path.
    storage: str = "sqlite"
    #: REP_STORAGE_PATH: the sqlite file; relative paths are inside Scrapy's
    #: project data dir. None -> ``.scrapy/robotstxt.sqlite3``.
    storage_path: str | None = None
    #: REP_MEMORY_MAX_ORIGINS: origins kept in memory (the memory backend, the
    #: Redis stand-in, and the in-process copy of records), least recent out.
    memory_max_origins: int = 10_000
    #: REP_MEMORY_MAX_BYTES: bytes of robots.txt kept in this process, parsed
    #: and raw: half for parsed bodies, a quarter for the per-origin states,
    #: a quarter for the memory store (or Redis's stand-in).
    memory_max_bytes: int = 128 * 1024 * 1024
    #: REP_REDIS_URL, else REDIS_URL (scrapy-redis's setting).
    redis_url: str | None = None
    #: REP_REDIS_PREFIX: every Redis key starts with it.
    redis_prefix: str = "scrapy_rep:"
    #: REP_REDIS_RETRY_INTERVAL: while Redis is lost, how often to try it again.
    redis_retry_interval: float = 5.0
    #: REP_FORGET_POLL_INTERVAL: how often a running crawl reads the store's
    #: log of forgotten origins (``scrapy-rep cache forget``, the Tester's Refetch).
    forget_poll_interval: float = 5.0
    #: REP_CACHE_TTL / REP_CACHE_MIN_TTL / REP_CACHE_MAX_TTL (docs/spec.md §3.1, §3.2).
    cache_ttl: float = _POLICY.default_ttl
    cache_min_ttl: float = _POLICY.min_ttl
    cache_max_ttl: float = _POLICY.max_ttl
    #: REP_CACHE_KEEP: how long a record outlives its last update in storage.
    cache_keep: float = _POLICY.keep_records

    # --- outages (docs/spec.md §2.2) ------------------------------------------------------
    #: REP_OUTAGE_RULES: the preset the three settings below default to.
    outage_rules: str = "google"
    #: REP_UNREACHABLE_DISALLOW: full disallow for this long into a streak.
    #: None -> the preset's (12 h; 30 d for "google-legacy").
    unreachable_disallow: float | None = None
    #: REP_UNREACHABLE_MAX_AGE: the last good copy applies until then. None -> 30 d.
    unreachable_max_age: float | None = None
    #: REP_LONG_OUTAGE: after that, "site" (allow if the site's pages answer,
    #: else disallow) or "cached" (the last good copy, else allow).
    #: None -> the preset's ("site"; "cached" for "google-legacy").
    long_outage: LongOutage | None = None
    #: REP_SITE_REACHABLE_WINDOW: how recent a page answer must be for "site".
    site_reachable_window: float = _POLICY.site_reachable_window
    #: REP_UNREACHABLE_WAIT: how long requests wait for quick retries during
    #: an origin's first failing fetch; 0 drops them at the first failure.
    unreachable_wait: float = _POLICY.unreachable_wait
    #: REP_RETRY_INITIAL / REP_RETRY_MAX: back-off between retries while unreachable.
    retry_initial: float = _POLICY.retry_initial
    retry_max: float = _POLICY.retry_max
    #: REP_RETRY_BUSY_INITIAL / REP_RETRY_BUSY_MAX: the same for 503 and 429.
    retry_busy_initial: float = _POLICY.busy_retry_initial
    retry_busy_max: float = _POLICY.busy_retry_max
    #: REP_RETRY_FACTOR: back-off multiplier per failure (>= 1).
    retry_factor: float = _POLICY.retry_factor
    #: REP_RETRY_JITTER: each delay is shortened by up to this fraction (0..1).
    retry_jitter: float = _POLICY.retry_jitter
    #: REP_RETRY_AFTER_MIN / REP_RETRY_AFTER_MAX: bounds for a Retry-After header.
    retry_after_min: float = _POLICY.retry_after_min
    retry_after_max: float = _POLICY.retry_after_max

    # --- what the content may be used for (docs/usage-preferences.md) ----------
    #: REP_PURPOSES: the usage labels the crawl's output is used for
    #: (``LABELS``: "train-ai", "ai-use", "search", "ai-input"). Empty: no
    #: usage check at all, and no cost.
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
    #: rule reads it instead of ``time.time``. Not for production use.
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
        values = {
            setting.attribute: read_setting(
                settings, setting.name, _default_of(setting, settings, defaults), setting.parse
            )
            for setting in SETTINGS
            if setting.attribute is not None and setting.parse is not None
        }
        values["clock"] = read_setting(settings, "REP_CLOCK", defaults.clock, _to_clock)
        written_tokens = settings.get("ROBOTSTXT_USER_AGENT")
        notes = (
            token_notes("ROBOTSTXT_USER_AGENT", written_tokens)
            if written_tokens is not None
            else _user_agent_notes(values["default_user_agent"])
        )
        max_redirects = values["max_redirects"]
        if max_redirects < MIN_REDIRECTS:
            notes.append(
                f"REP_FOLLOW_REDIRECTS={max_redirects}: RFC 9309 §2.3.1.2 asks crawlers to "
                f"follow at least 5 redirect hops for robots.txt; a chain longer than "
                f"{max_redirects} is treated as no robots.txt (full allow)"
            )
        return cls(notes=tuple(notes), **values).validated()

    def policy(self) -> PolicyConfig:
        """The pure policy's view of these settings (the preset filled in)."""
        preset = PolicyConfig.older_google() if self.outage_rules == "google-legacy" else _POLICY
        disallow, max_age, long_outage = (
            self.unreachable_disallow,
            self.unreachable_max_age,
            self.long_outage,
        )
        return PolicyConfig(
            disallow_window=preset.disallow_window if disallow is None else disallow,
            stale_limit=preset.stale_limit if max_age is None else max_age,
            long_outage=preset.long_outage if long_outage is None else long_outage,
            site_reachable_window=self.site_reachable_window,
            default_ttl=self.cache_ttl,
            min_ttl=self.cache_min_ttl,
            max_ttl=self.cache_max_ttl,
            retry_initial=self.retry_initial,
            retry_max=self.retry_max,
            busy_retry_initial=self.retry_busy_initial,
            busy_retry_max=self.retry_busy_max,
            retry_factor=self.retry_factor,
            retry_jitter=self.retry_jitter,
            retry_after_min=self.retry_after_min,
            retry_after_max=self.retry_after_max,
            unreachable_wait=self.unreachable_wait,
            keep_records=self.cache_keep,
        )

    def validated(self) -> Config:
        """Check what no single setting can: pairs of bounds, and needed companions."""
        pairs = (
            ("REP_CACHE_MIN_TTL", self.cache_min_ttl, "REP_CACHE_MAX_TTL", self.cache_max_ttl),
            (
                "REP_RETRY_AFTER_MIN",
                self.retry_after_min,
                "REP_RETRY_AFTER_MAX",
                self.retry_after_max,
            ),
            ("REP_RETRY_INITIAL", self.retry_initial, "REP_RETRY_MAX", self.retry_max),
            (
                "REP_RETRY_BUSY_INITIAL",
                self.retry_busy_initial,
                "REP_RETRY_BUSY_MAX",
                self.retry_busy_max,
            ),
        )
        for low_name, low, high_name, high in pairs:
            if low > high:
                raise SettingError(low_name, low, f"a number of seconds <= {high_name} ({high:g})")
        if self.storage == "redis" and not self.redis_url:
            raise SettingError(
                "REP_REDIS_URL",
                None,
                "a Redis URL such as 'redis://localhost:6379/0' (or REDIS_URL) "
                "when REP_STORAGE is 'redis'",
            )
        return self


_PURPOSES_ACCEPTED: Final = (
    "a list of usage labels, each one of "
    + ", ".join(repr(label) for label in LABELS)
    + " (draft-ietf-aipref-vocab-08, and Content Signals' 'ai-input'), e.g. ['train-ai']; "
    "empty for no usage check"
)


def _to_purposes(value: object) -> tuple[str, ...]:
    """Labels as a list, or one string of comma-separated labels (command line)."""
    items = value.split(",") if isinstance(value, str) else _as_list_of(value, _PURPOSES_ACCEPTED)
    labels = [item.strip() if isinstance(item, str) else item for item in items]
    labels = [label for label in labels if label != ""]
    if not all(isinstance(label, str) and label in LABELS for label in labels):
        raise Rejected(_PURPOSES_ACCEPTED)
    return tuple(dict.fromkeys(str(label) for label in labels))


def _as_list_of(value: object, accepted: str) -> list[object]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    raise Rejected(accepted)


# --- parsing -----------------------------------------------------------------
# Each parser returns the parsed value or raises Rejected(accepted values);
# read_setting turns that into a SettingError that names the setting.


class Rejected(Exception):
    """A value a setting's parser cannot use; ``accepted`` says what it can."""

    def __init__(self, accepted: str) -> None:
        super().__init__(accepted)
        self.accepted = accepted


def read_setting(
    settings: Mapping[str, Any], name: str, default: T, parse: Callable[[object], T]
) -> T:
    """``settings[name]`` through ``parse``, or ``default``; SettingError names the setting."""
    value = settings.get(name)
    if value is None:
        return default
    try:
        return parse(value)
    except Rejected as rejected:
        raise SettingError(name, value, rejected.accepted) from None


_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off", ""})


def to_bool(value: object) -> bool:
    """Scrapy's getbool rules: bools, 0/1 and their spellings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise Rejected("True or False (or 1/0, 'true'/'false', 'yes'/'no', 'on'/'off')")


def _to_str(value: object) -> str:
    if isinstance(value, str):
        return value
    raise Rejected("a string")


def _number_within(low: float, high: float) -> Callable[[object], float]:
    """A finite (or +inf when ``high`` is) number in [low, high]; numeric strings too."""
    upper = "" if math.isinf(high) else f" and <= {high:g}"
    accepted = f"a number >= {low:g}{upper}"

    def parse(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise Rejected(accepted)
        try:
            number = float(value)
        except ValueError:
            raise Rejected(accepted) from None
        if math.isnan(number) or not low <= number <= high or math.isinf(number):
            raise Rejected(accepted)
        return number

    return parse


def _seconds(value: object) -> float:
    """A duration in seconds: a number >= 0 (int, float or numeric string)."""
    try:
        return _number_within(0.0, math.inf)(value)
    except Rejected:
        raise Rejected("a number of seconds >= 0 (e.g. 3600 or '43200')") from None


def _choice(values: tuple[T, ...]) -> Callable[[object], T]:
    def parse(value: object) -> T:
        for accepted in values:
            if value == accepted:
                return accepted
        raise Rejected(" or ".join(repr(v) for v in values))

    return parse


_STORAGE_ACCEPTED: Final = (
    "'sqlite' (the default), 'memory', 'redis', "
    "or the dotted path of a class implementing scrapy_rep.cache.storage.Storage"
)


def _to_storage(value: object) -> str:
    if isinstance(value, str) and (value in STORAGE_KINDS or _DOTTED.fullmatch(value)):
        return value
    raise Rejected(_STORAGE_ACCEPTED)


def _to_path(value: object) -> str:
    if isinstance(value, (str, os.PathLike)) and os.fspath(value):
        return str(os.fspath(value))
    raise Rejected("a file path (relative paths are inside the project's .scrapy dir)")


def _to_redis_url(value: object) -> str:
    if isinstance(value, str) and value.split("://", 1)[0] in ("redis", "rediss", "unix"):
        return value
    raise Rejected("a Redis URL: 'redis://host:port/db', 'rediss://...' or 'unix://...'")


def _to_clock(value: object) -> Callable[[], float]:
    """REP_CLOCK (a testing hook): a zero-argument callable, or its dotted path."""
    accepted = "a zero-argument callable returning seconds since the epoch, or its dotted path"
    if isinstance(value, str):
        module, _, name = value.rpartition(".")
        try:
            value = getattr(import_module(module), name)
        except (ImportError, AttributeError, ValueError):
            raise Rejected(accepted) from None
    if not callable(value):
        raise Rejected(accepted)
    clock: Callable[[], float] = value
    try:
        now = clock()
    except Exception:
        raise Rejected(accepted) from None
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise Rejected(accepted)
    return clock


def _int_at_least(minimum: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise Rejected(f"an integer >= {minimum}")
        try:
            number = int(value) if isinstance(value, (int, str)) else None
        except ValueError:
            number = None
        if number is None or number < minimum:
            raise Rejected(f"an integer >= {minimum}")
        return number

    return parse


_TOKENS_ACCEPTED: Final = (
    "a user-agent string or product token (starting with letters, '-' or '_'), "
    "or a list of such tokens in order of preference"
)


def parse_tokens(name: str, value: object) -> tuple[str, ...]:
    """Tokens from a spider attribute or setting ``name``; SettingError names it."""
    try:
        return _to_tokens(value)
    except Rejected as rejected:
        raise SettingError(name, value, rejected.accepted) from None


def _token_items(value: object) -> tuple[object, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def _to_tokens(value: object) -> tuple[str, ...]:
    """One string (a token or a full User-Agent) or a list of tokens (docs/spec.md §5.7),
    as the lower-cased tokens they stand for (``configured_token``)."""
    items = _token_items(value)
    tokens = tuple(configured_token(item) for item in items if isinstance(item, str))
    if not tokens or len(tokens) != len(items) or not all(tokens):
        raise Rejected(_TOKENS_ACCEPTED)
    return tokens


def token_notes(name: str, value: object) -> list[str]:
    """Warnings for configured tokens that RFC 9309 would read otherwise than written.

    ``bot2`` or ``my bot`` is cut to its leading token, which may be another
    crawler's group; say so, naming the setting, the value and the token used.
    """
    notes = []
    for item in _token_items(value):
        if not isinstance(item, str):
            continue
        token = configured_token(item)
        if token and token != item.strip().lower() and not is_user_agent_string(item):
            notes.append(
                f"{name}={item!r} is not a valid RFC 9309 product token (letters, '-' and "
                f"'_' only); robots.txt groups are matched as {token!r}"
            )
    return notes


def _user_agent_notes(user_agent: str) -> list[str]:
    """USER_AGENT gives the token when ROBOTSTXT_USER_AGENT is unset: say if it names no crawler."""
    if not user_agent or user_agent_token(user_agent):
        return []
    return [
        f"USER_AGENT={user_agent!r} names no crawler (only browser and platform names), "
        "so only robots.txt's '*' group applies to this crawl; set ROBOTSTXT_USER_AGENT "
        "to your crawler's token (e.g. 'mybot')"
    ]


def _to_schemes(value: object) -> frozenset[str]:
    """At least one scheme: with none, nothing would be checked, silently."""
    items = value.split(",") if isinstance(value, str) else _as_list(value)
    schemes = frozenset(str(item).strip().lower() for item in items) - {""}
    if not schemes or not all(_SCHEME.fullmatch(scheme) for scheme in schemes):
        raise Rejected("a list of URL schemes (at least one), e.g. ['http', 'https', 'ftp']")
    return schemes


def _as_list(value: object) -> list[object]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    raise Rejected("a list")


# --- the table -----------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One setting scrapy_rep reads: ``Config`` validates it, the docs print it.

    The settings reference (docs/settings.md) is generated from ``SETTINGS``
    by ``docs/_ext/rep_settings.py``, so what is documented is what is read.
    """

    name: str
    #: The values it takes, in words.
    accepted: str
    #: What it does, in a sentence or two (``code`` in backquotes).
    doc: str
    #: The ``Config`` field it fills, and the parser that validates it.
    #: None for a setting another component reads (``read_by``).
    attribute: str | None = None
    parse: Callable[[object], Any] | None = None
    #: The default in words, when the ``Config`` field's default does not say it.
    default: str | None = None
    #: A setting read instead when this one is unset (scrapy-redis's REDIS_URL).
    fallback: str | None = None
    #: The module that reads a setting ``Config`` does not.
    read_by: str | None = None


def _default_of(setting: Setting, settings: Mapping[str, Any], defaults: Config) -> Any:
    """The value a setting takes when unset: its fallback setting's, else the field's."""
    default = getattr(defaults, str(setting.attribute))
    if setting.fallback is None or setting.parse is None:
        return default
    return read_setting(settings, setting.fallback, default, setting.parse)


_CRAWL_DELAY: Final = "scrapy_rep.crawler.crawl_delay"
_SITEMAPS: Final = "scrapy_rep.crawler.sitemaps"
_SECONDS: Final = "seconds >= 0"

#: Every setting scrapy_rep reads but REP_CLOCK (a testing hook), in the order
#: the reference lists them. A new setting is one entry here (and, when
#: ``Config`` reads it, a field of ``Config`` with its default).
SETTINGS: Final[tuple[Setting, ...]] = (
    # --- obeying robots.txt --------------------------------------------------
    Setting(
        "ROBOTSTXT_OBEY",
        "bool",
        "Obey robots.txt at all (Scrapy's project template sets `True`).",
        attribute="obey",
        parse=to_bool,
    ),
    Setting(
        "ROBOTSTXT_USER_AGENT",
        "a token, or a list of tokens in order of preference",
        "The tokens robots.txt groups are matched with. Unset: the crawler named in the "
        "request's `User-Agent`, else in `USER_AGENT` (never a browser's name).",
        attribute="user_agent_tokens",
        parse=_to_tokens,
        default="unset",
    ),
    Setting(
        "USER_AGENT",
        "str",
        "Scrapy's own setting: the crawler's token is taken from it when "
        "`ROBOTSTXT_USER_AGENT` is unset and a request has no `User-Agent` header yet.",
        attribute="default_user_agent",
        parse=_to_str,
        default="Scrapy's",
    ),
    Setting(
        "REP_GOOGLE_QUIRKS",
        "bool",
        "Also accept what Google's open-source parser accepts (misspelt fields, "
        "missing colons, ...).",
        attribute="google_quirks",
        parse=to_bool,
    ),
    Setting(
        "REP_FOLLOW_REDIRECTS",
        "int >= 0",
        "Redirect hops followed for robots.txt; below 5 (RFC 9309's minimum), a "
        "WARNING at start-up.",
        attribute="max_redirects",
        parse=_int_at_least(0),
    ),
    Setting(
        "REP_MAX_BODY_BYTES",
        f"int >= {MIN_BODY_BYTES}",
        f"Bytes of robots.txt downloaded (parsing stops at {MIN_BODY_BYTES:,}).",
        attribute="max_body_bytes",
        parse=_int_at_least(MIN_BODY_BYTES),
    ),
    Setting(
        "REP_CHECKED_SCHEMES",
        "list or comma-separated string, at least one",
        "URL schemes whose requests are checked; others pass through. A checked URL "
        "with no origin (`http://:80/x`) is dropped (`RobotsTxtNoOrigin`, stat "
        "`robotstxt/no_origin`).",
        attribute="checked_schemes",
        parse=_to_schemes,
    ),
    # --- the cache and its storage -------------------------------------------
    Setting(
        "REP_STORAGE",
        "`sqlite`, `memory`, `redis`, or the dotted path of a `scrapy_rep.Storage` class",
        "Where robots.txt records are kept. Every store works under every "
        "`TWISTED_REACTOR` Scrapy supports (asyncio, epoll, poll, select); under a "
        "reactor other than asyncio, the store runs on an asyncio loop in a thread "
        "of its own.",
        attribute="storage",
        parse=_to_storage,
    ),
    Setting(
        "REP_STORAGE_PATH",
        "a path (relative: in the project data dir)",
        "The sqlite file.",
        attribute="storage_path",
        parse=_to_path,
        default=f"`.scrapy/{DEFAULT_STORAGE_FILE}`",
    ),
    Setting(
        "REP_MEMORY_MAX_ORIGINS",
        "int >= 1",
        "Origins kept by the memory store and the in-process cache.",
        attribute="memory_max_origins",
        parse=_int_at_least(1),
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
        parse=_int_at_least(MIN_MEMORY),
    ),
    Setting(
        "REP_REDIS_URL",
        "a `redis://`, `rediss://` or `unix://` URL",
        "The Redis server (required when `REP_STORAGE` is `redis`).",
        attribute="redis_url",
        parse=_to_redis_url,
        default="`REDIS_URL`, else unset",
        fallback="REDIS_URL",
    ),
    Setting(
        "REP_REDIS_PREFIX",
        "str",
        "The prefix of every Redis key.",
        attribute="redis_prefix",
        parse=_to_str,
    ),
    Setting(
        "REP_REDIS_RETRY_INTERVAL",
        _SECONDS,
        "How often Redis is tried again while it is down.",
        attribute="redis_retry_interval",
        parse=_seconds,
    ),
    Setting(
        "REP_FORGET_POLL_INTERVAL",
        "seconds, 0.01 to 86400",
        "How often a running crawl reads the store's log of forgotten origins "
        "(`scrapy-rep cache forget`, the Tester's *Refetch now*; one query each time, "
        "whatever the number of origins) and drops those it holds, so that their next "
        "request fetches robots.txt again.",
        attribute="forget_poll_interval",
        parse=_number_within(0.01, DAY),
    ),
    Setting(
        "REP_CACHE_TTL",
        _SECONDS,
        "The life of a cached robots.txt without Cache-Control.",
        attribute="cache_ttl",
        parse=_seconds,
    ),
    Setting(
        "REP_CACHE_MIN_TTL",
        "seconds >= 0, <= `REP_CACHE_MAX_TTL`",
        "The lower bound for Cache-Control's `max-age` / `s-maxage`.",
        attribute="cache_min_ttl",
        parse=_seconds,
    ),
    Setting(
        "REP_CACHE_MAX_TTL",
        _SECONDS,
        "The upper bound for Cache-Control's `max-age` / `s-maxage`.",
        attribute="cache_max_ttl",
        parse=_seconds,
    ),
    Setting(
        "REP_CACHE_KEEP",
        f"seconds, 0 to {MAX_KEEP:.0f} (10 years)",
        "How long a record is kept in storage after its last update.",
        attribute="cache_keep",
        parse=_number_within(0.0, MAX_KEEP),
    ),
    # --- outages ---------------------------------------------------------------
    Setting(
        "REP_OUTAGE_RULES",
        "`google`, `google-legacy`",
        "The preset that `REP_UNREACHABLE_DISALLOW`, `REP_UNREACHABLE_MAX_AGE` and "
        "`REP_LONG_OUTAGE` default to: Google's current rules, or its older edition.",
        attribute="outage_rules",
        parse=_choice(OUTAGE_RULES),
    ),
    Setting(
        "REP_UNREACHABLE_DISALLOW",
        _SECONDS,
        "Full disallow this long into an outage (0: the last good copy at once).",
        attribute="unreachable_disallow",
        parse=_seconds,
        default="`43200` (12 h); 30 d with `google-legacy`",
    ),
    Setting(
        "REP_UNREACHABLE_MAX_AGE",
        _SECONDS,
        "The last good copy applies until then.",
        attribute="unreachable_max_age",
        parse=_seconds,
        default="`2592000` (30 d)",
    ),
    Setting(
        "REP_LONG_OUTAGE",
        "`site`, `cached`",
        "After that: allow if the site's pages answer, else disallow (`site`), or the "
        "last good copy, else allow (`cached`).",
        attribute="long_outage",
        parse=_choice(LONG_OUTAGE_VALUES),
        default='`"site"`; `"cached"` with `google-legacy`',
    ),
    Setting(
        "REP_SITE_REACHABLE_WINDOW",
        _SECONDS,
        'How recent a page answer must be to count as "the site answers".',
        attribute="site_reachable_window",
        parse=_seconds,
    ),
    Setting(
        "REP_UNREACHABLE_WAIT",
        _SECONDS,
        "How long requests wait for quick retries during an origin's first failing "
        "fetch; 0 drops them at the first failure.",
        attribute="unreachable_wait",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_INITIAL",
        "seconds >= 0, <= `REP_RETRY_MAX`",
        "The first wait between robots.txt retries during an outage.",
        attribute="retry_initial",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_MAX",
        _SECONDS,
        "The longest wait between robots.txt retries during an outage.",
        attribute="retry_max",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_BUSY_INITIAL",
        "seconds >= 0, <= `REP_RETRY_BUSY_MAX`",
        "`REP_RETRY_INITIAL` for 503 and 429 answers.",
        attribute="retry_busy_initial",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_BUSY_MAX",
        _SECONDS,
        "`REP_RETRY_MAX` for 503 and 429 answers.",
        attribute="retry_busy_max",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_FACTOR",
        "a number >= 1",
        "The back-off's growth per failure.",
        attribute="retry_factor",
        parse=_number_within(1.0, math.inf),
    ),
    Setting(
        "REP_RETRY_JITTER",
        "a number from 0 to 1",
        "Each wait is shortened by up to this fraction, at random.",
        attribute="retry_jitter",
        parse=_number_within(0.0, 1.0),
    ),
    Setting(
        "REP_RETRY_AFTER_MIN",
        "seconds >= 0, <= `REP_RETRY_AFTER_MAX`",
        "The lower bound for a `Retry-After` header.",
        attribute="retry_after_min",
        parse=_seconds,
    ),
    Setting(
        "REP_RETRY_AFTER_MAX",
        _SECONDS,
        "The upper bound for a `Retry-After` header.",
        attribute="retry_after_max",
        parse=_seconds,
    ),
    # --- crawl-delay and sitemaps (read by their extensions) -------------------
    Setting(
        "REP_CRAWL_DELAY",
        "`ignore`, `obey`",
        "Obey `crawl-delay` / `request-rate` as a download slot's minimum delay.",
        default='`"ignore"`',
        read_by=_CRAWL_DELAY,
    ),
    Setting(
        "REP_CRAWL_DELAY_MAX",
        "seconds > 0",
        "Longer crawl-delays are cut to this, with a warning.",
        default="`30`",
        read_by=_CRAWL_DELAY,
    ),
    Setting(
        "REP_RETRY_AFTER",
        "`ignore`, `obey`",
        "A 429 or 503 page with `Retry-After` pauses its origin, for every "
        "process sharing the store.",
        default="as `REP_CRAWL_DELAY`",
        read_by=_CRAWL_DELAY,
    ),
    Setting(
        "REP_FOLLOW_SITEMAPS",
        "bool",
        "Request the sitemaps robots.txt lists, once per crawl.",
        default="`False`",
        read_by=_SITEMAPS,
    ),
    Setting(
        "REP_FOLLOW_SITEMAPS_MAX",
        "int >= 1",
        "Sitemaps followed per robots.txt at most (a hostile file may list thousands).",
        default="`50`",
        read_by=_SITEMAPS,
    ),
    Setting(
        "REP_SITEMAP_CALLBACK",
        "a spider method's name",
        "The callback of those requests.",
        default='`"parse_sitemap"`',
        read_by=_SITEMAPS,
    ),
    # --- what the content may be used for, and page rules ---------------------
    Setting(
        "REP_PURPOSES",
        "a list (or comma-separated string) of `train-ai`, `ai-use`, `search`, `ai-input`",
        "What the crawl's output is used for: robots.txt refusals drop requests before "
        "download. Empty: no usage check at all.",
        attribute="purposes",
        parse=_to_purposes,
    ),
    Setting(
        "REP_USAGE_ACTION",
        "`drop`, `tag`",
        "A response whose `Content-Usage` header refuses a purpose: dropped, or kept "
        'and tagged in `meta["rep_usage"]`.',
        attribute="usage_action",
        parse=_choice(USAGE_ACTIONS),
    ),
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
        parse=_int_at_least(1024),
    ),
)
