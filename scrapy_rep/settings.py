"""Every setting scrapy_rep reads, with its default, parsed once at start-up.

``Config.from_settings`` is the only place that looks at Scrapy settings; the
rest of the package takes a ``Config``. A bad value fails the crawl at
start-up with a ``SettingError`` naming the setting, the value and what is
accepted, instead of surfacing as odd behaviour hours later.

To add a setting: add a field with its default, a ``_read_*`` call in
``from_settings``, and a row in the README's settings table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from scrapy_rep.agents import product_token

__all__ = ["MIN_BODY_BYTES", "Config", "SettingError"]

#: RFC 9309 §2.5: a parsing limit, if any, must be at least 500 KiB.
MIN_BODY_BYTES: Final = 512_000

_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.-]*")

T = TypeVar("T")


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
    #: ROBOTSTXT_USER_AGENT as tokens in preference order; empty -> derive
    #: from the request's User-Agent header, else from USER_AGENT.
    user_agent_tokens: tuple[str, ...] = ()
    #: USER_AGENT, for when the request has no User-Agent header yet.
    default_user_agent: str = ""
    #: REP_GOOGLE_QUIRKS: parse and match as Google's open-source library does.
    google_quirks: bool = False
    #: REP_FOLLOW_REDIRECTS: redirect hops followed for robots.txt (RFC: >= 5).
    max_redirects: int = 5
    #: REP_MAX_BODY_BYTES: bytes of robots.txt downloaded and parsed.
    max_body_bytes: int = MIN_BODY_BYTES
    #: REP_CHECKED_SCHEMES: URL schemes whose requests are checked.
    checked_schemes: frozenset[str] = field(
        default_factory=lambda: frozenset({"http", "https", "ftp"})
    )

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> Config:
        """Read and validate; ``settings`` is a Scrapy ``Settings`` or a plain dict."""
        defaults = cls()
        return cls(
            obey=_read(settings, "ROBOTSTXT_OBEY", defaults.obey, _to_bool),
            user_agent_tokens=_read(
                settings, "ROBOTSTXT_USER_AGENT", defaults.user_agent_tokens, _to_tokens
            ),
            default_user_agent=_read(settings, "USER_AGENT", defaults.default_user_agent, _to_str),
            google_quirks=_read(settings, "REP_GOOGLE_QUIRKS", defaults.google_quirks, _to_bool),
            max_redirects=_read(
                settings, "REP_FOLLOW_REDIRECTS", defaults.max_redirects, _int_at_least(0)
            ),
            max_body_bytes=_read(
                settings,
                "REP_MAX_BODY_BYTES",
                defaults.max_body_bytes,
                _int_at_least(MIN_BODY_BYTES),
            ),
            checked_schemes=_read(
                settings, "REP_CHECKED_SCHEMES", defaults.checked_schemes, _to_schemes
            ),
        )


# --- parsing -----------------------------------------------------------------
# Each parser returns the parsed value or raises _Rejected(accepted values);
# _read turns that into a SettingError that names the setting.


class _Rejected(Exception):
    def __init__(self, accepted: str) -> None:
        super().__init__(accepted)
        self.accepted = accepted


def _read(settings: Mapping[str, Any], name: str, default: T, parse: Callable[[object], T]) -> T:
    value = settings.get(name)
    if value is None:
        return default
    try:
        return parse(value)
    except _Rejected as rejected:
        raise SettingError(name, value, rejected.accepted) from None


_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off", ""})


def _to_bool(value: object) -> bool:
    """Scrapy's getbool rules: bools, 0/1 and their spellings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _Rejected("True or False (or 1/0, 'true'/'false', 'yes'/'no', 'on'/'off')")


def _to_str(value: object) -> str:
    if isinstance(value, str):
        return value
    raise _Rejected("a string")


def _int_at_least(minimum: int) -> Callable[[object], int]:
    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise _Rejected(f"an integer >= {minimum}")
        try:
            number = int(value) if isinstance(value, (int, str)) else None
        except ValueError:
            number = None
        if number is None or number < minimum:
            raise _Rejected(f"an integer >= {minimum}")
        return number

    return parse


_TOKENS_ACCEPTED: Final = (
    "a user-agent string or product token (starting with letters, '-' or '_'), "
    "or a list of such tokens in order of preference"
)


def _to_tokens(value: object) -> tuple[str, ...]:
    """One string (a token or a full User-Agent) or a list of tokens (SPEC §5.7)."""
    items: Iterable[object] = (
        (value,) if isinstance(value, str) else value if isinstance(value, (list, tuple)) else ()
    )
    tokens = tuple(item for item in items if isinstance(item, str) and product_token(item))
    if not tokens or len(tokens) != len(tuple(items)):
        raise _Rejected(_TOKENS_ACCEPTED)
    return tokens


def _to_schemes(value: object) -> frozenset[str]:
    items = value.split(",") if isinstance(value, str) else _as_list(value)
    schemes = frozenset(str(item).strip().lower() for item in items)
    if not all(_SCHEME.fullmatch(scheme) for scheme in schemes):
        raise _Rejected("a list of URL schemes, e.g. ['http', 'https', 'ftp']")
    return schemes


def _as_list(value: object) -> list[object]:
    if isinstance(value, (list, tuple, set, frozenset)):
        return list(value)
    raise _Rejected("a list")
