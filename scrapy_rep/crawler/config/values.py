"""How a setting's value is read: one parser per kind of value, and token warnings.

Each parser takes what a project wrote (a Scrapy setting, a spider attribute,
a command-line string) and returns the parsed value or raises ``Rejected``
with the values it accepts; ``read_setting`` turns that into a
``SettingError`` naming the setting. The schema (which setting, which
parser, which default) is ``table``; ``settings`` reads it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any, Final, TypeVar

from scrapy_rep.cache.storage import ACCEPTED as STORAGE_ACCEPTED
from scrapy_rep.cache.storage import StorageError, storage_kind
from scrapy_rep.cache.storage.redis.urls import ACCEPTED_FORMS, parse_redis_url, safe_url
from scrapy_rep.engine.agents import agent_tokens, is_user_agent_string, product_token
from scrapy_rep.engine.usage import LABELS

__all__ = [
    "Rejected",
    "SettingError",
    "choice",
    "int_at_least",
    "number_within",
    "parse_tokens",
    "read_setting",
    "seconds",
    "to_bool",
    "token_notes",
]

_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.-]*")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

T = TypeVar("T")


class SettingError(ValueError):
    """A setting has a value scrapy_rep cannot use."""

    def __init__(self, name: str, value: object, accepted: str) -> None:
        super().__init__(f"{name}={value!r} is not valid; accepted: {accepted}")
        self.setting = name
        self.value = value


class Rejected(Exception):
    """A value a setting's parser cannot use; ``accepted`` says what it can.

    ``shown``: the value as the message may show it (a URL without its password).
    """

    def __init__(self, accepted: str, shown: object = None) -> None:
        super().__init__(accepted)
        self.accepted = accepted
        self.shown = shown


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
        shown = value if rejected.shown is None else rejected.shown
        raise SettingError(name, shown, rejected.accepted) from None


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


def to_str(value: object) -> str:
    if isinstance(value, str):
        return value
    raise Rejected("a string")


def number_within(low: float, high: float) -> Callable[[object], float]:
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


def seconds(value: object) -> float:
    """A duration in seconds: a number >= 0 (int, float or numeric string)."""
    try:
        return number_within(0.0, math.inf)(value)
    except Rejected:
        raise Rejected("a number of seconds >= 0 (e.g. 3600 or '43200')") from None


def choice(values: tuple[T, ...]) -> Callable[[object], T]:
    def parse(value: object) -> T:
        for accepted in values:
            if value == accepted:
                return accepted
        raise Rejected(" or ".join(repr(v) for v in values))

    return parse


def to_storage(value: object) -> str:
    try:
        return storage_kind(value)
    except StorageError:
        raise Rejected(STORAGE_ACCEPTED) from None


def to_path(value: object) -> str:
    if isinstance(value, (str, os.PathLike)) and os.fspath(value):
        return str(os.fspath(value))
    raise Rejected("a file path (relative paths are inside the project's .scrapy dir)")


def to_redis_url(value: object) -> str:
    """One server, Sentinel or Cluster (``redis.urls``): checked now, at start-up."""
    if not isinstance(value, str):
        raise Rejected(ACCEPTED_FORMS)
    try:
        parse_redis_url(value)
    except ValueError as exc:
        raise Rejected(str(exc), shown=safe_url(value)) from None
    return value


def to_clock(value: object) -> Callable[[], float]:
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


def int_at_least(minimum: int) -> Callable[[object], int]:
    return int_within(minimum, None)


def int_within(minimum: int, maximum: int | None) -> Callable[[object], int]:
    accepted = f"an integer {minimum} to {maximum}" if maximum else f"an integer >= {minimum}"

    def parse(value: object) -> int:
        if isinstance(value, bool):
            raise Rejected(accepted)
        try:
            number = int(value) if isinstance(value, (int, str)) else None
        except ValueError:
            number = None
        if number is None or number < minimum or (maximum is not None and number > maximum):
            raise Rejected(accepted)
        return number

    return parse


_TOKENS_ACCEPTED: Final = (
    "a user-agent string or product token (starting with letters, '-' or '_'), "
    "or a list of such tokens in order of preference"
)


def parse_tokens(name: str, value: object) -> tuple[str, ...]:
    """Tokens from a spider attribute or setting ``name``; SettingError names it."""
    try:
        return to_tokens(value)
    except Rejected as rejected:
        shown = value if rejected.shown is None else rejected.shown
        raise SettingError(name, shown, rejected.accepted) from None


def _token_items(value: object) -> tuple[object, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def to_tokens(value: object) -> tuple[str, ...]:
    """One string (a token or a full User-Agent) or a list of tokens (docs/spec.md §5.7),
    as the lower-cased tokens they stand for (``agent_tokens``), each once."""
    items = _token_items(value)
    read = [agent_tokens(item) if isinstance(item, str) else () for item in items]
    if not items or not all(read):
        raise Rejected(_TOKENS_ACCEPTED)
    return tuple(dict.fromkeys(token for tokens in read for token in tokens))


def token_notes(name: str, value: object) -> list[str]:
    """Warnings for configured tokens that RFC 9309 would read otherwise than written.

    ``bot2`` or ``my bot`` is cut to its leading token, which may be another
    crawler's group; say so, naming the setting, the value and the token used.
    """
    notes = []
    for item in _token_items(value):
        if not isinstance(item, str) or is_user_agent_string(item):
            continue
        token = product_token(item)
        if token and token != item.strip().lower():
            notes.append(
                f"{name}={item!r} is not a valid RFC 9309 product token (letters, '-' and "
                f"'_' only); robots.txt groups are matched as {token!r}"
            )
    return notes


def user_agent_notes(user_agent: str) -> list[str]:
    """USER_AGENT gives the token when ROBOTSTXT_USER_AGENT is unset: say if it names no crawler."""
    if not user_agent or agent_tokens(user_agent):
        return []
    return [
        f"USER_AGENT={user_agent!r} names no crawler (only browser and platform names), "
        "so only robots.txt's '*' group applies to this crawl; set ROBOTSTXT_USER_AGENT "
        "to your crawler's token (e.g. 'mybot')"
    ]


def to_schemes(value: object) -> frozenset[str]:
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


_PURPOSES_ACCEPTED: Final = (
    "a list of usage labels, each one of "
    + ", ".join(repr(label) for label in LABELS)
    + " (docs/usage-preferences.md), e.g. ['train-ai']; "
    "empty for no usage check"
)


def to_purposes(value: object) -> tuple[str, ...]:
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


# --- the extensions' settings (crawl-delay, sitemaps) --------------------------

_PACE_MODES: Final = ("ignore", "obey")


def to_obey_mode(value: object) -> bool:
    """REP_CRAWL_DELAY and REP_RETRY_AFTER: "obey" (True) or "ignore" (False)."""
    mode = value.strip().lower() if isinstance(value, str) else None
    if mode not in _PACE_MODES:
        raise Rejected(" or ".join(repr(mode) for mode in _PACE_MODES))
    return mode == "obey"


def positive_seconds(value: object) -> float:
    if not isinstance(value, bool):
        try:
            number = float(value) if isinstance(value, (int, float, str)) else None
        except ValueError:
            number = None
        if number is not None and 0 < number < float("inf"):
            return number
    raise Rejected("a number of seconds > 0, e.g. 30 or 2.5")


def digits_at_least_one(value: object) -> int:
    """An int, or a string of digits, >= 1."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value)
        if number >= 1:
            return number
    raise Rejected("an integer >= 1")


def to_method_name(value: object) -> str:
    if isinstance(value, str) and _IDENTIFIER.fullmatch(value):
        return value
    raise Rejected("the name of a spider method, e.g. 'parse_sitemap'")
