"""The vocabulary between fetching, caching and deciding (docs/spec.md §2).

A fetch ends in one of three RFC 9309 states; the policy turns an origin's
history of such outcomes into an ``Access``, which is what the middleware
applies to a request. Pure data, no Scrapy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from scrapy_rep.engine.robotstxt import RobotsTxt


class FetchKind(str, Enum):
    """RFC 9309 §2.3.1: what a robots.txt fetch means for access."""

    SUCCESS = "success"  # 2xx: the rules decide
    UNAVAILABLE = "unavailable"  # 4xx except 429, too many redirects, loop: allow-all
    UNREACHABLE = "unreachable"  # 429, 5xx, network/TLS errors, truncation: see docs/spec.md §2.2


def kind_of_status(status: int) -> FetchKind:
    """The state an HTTP status puts an origin in (3xx are followed before this)."""
    if 200 <= status < 300:
        return FetchKind.SUCCESS
    if status == 429 or status >= 500:
        return FetchKind.UNREACHABLE
    if 400 <= status < 500:
        return FetchKind.UNAVAILABLE
    # 1xx, or a 3xx the fetcher could not follow (no Location): an invalid
    # response, which RFC 9309 counts as unreachable.
    return FetchKind.UNREACHABLE


#: RFC 9209 Proxy-Status: an intermediary names the error that made it answer.
_PROXY_ERROR: Final = re.compile(r";\s*error\s*=\s*\"?([A-Za-z0-9_.-]+)")


def proxy_answer(status: int, headers: Mapping[str, tuple[str, ...]]) -> str:
    """Why an answer came from a proxy, not the site: "" when it is the site's.

    A 407 asks for the proxy's own credentials (RFC 9110 §15.5.8), and a
    ``Proxy-Status`` with an ``error`` (RFC 9209) says an intermediary failed
    to get the site's answer. Neither says anything about the site's
    robots.txt, so either is a failed fetch (docs/proxies.md).
    """
    if status == 407:
        return "Proxy Authentication Required"
    for value in headers.get("proxy-status", ()):
        error = _PROXY_ERROR.search(value)
        if error:
            return f"Proxy-Status error {error.group(1)}"
    return ""


@dataclass(frozen=True)
class FetchOutcome:
    """How one robots.txt fetch (with its redirects) ended."""

    kind: FetchKind
    url: str  # the robots.txt URL of the origin (not the redirect target)
    fetched_at: float  # seconds since the epoch, from the injected clock
    status: int | None = None  # final HTTP status; None for network errors
    body: bytes = b""  # at most 512,000 bytes; empty unless SUCCESS
    reason: str = ""  # for people: "HTTP 503", "timeout", "redirect loop", ...
    cache_control: str | None = None  # the final response's Cache-Control header
    retry_after: str | None = None  # the final response's Retry-After header
    final_url: str | None = None  # where the redirects ended, if any
    truncated: bool = False  # the body was cut at the size cap (docs/spec.md §4.3)
    #: Names in lower case. Values in tuples, which the garbage collector stops
    #: tracking: a broad crawl keeps each origin's last outcome (docs/benchmarks.md, "At scale").
    headers: dict[str, tuple[str, ...]] = field(default_factory=dict)


class AccessState(str, Enum):
    """How an origin's requests are answered: by the rules, all allowed, or all dropped."""

    RULES = "rules"  # the parsed rules decide
    ALLOW_ALL = "allow-all"  # no robots.txt applies
    CLOSED = "closed"  # every request dropped: an outage (docs/spec.md §2.2)


@dataclass(frozen=True)
class Access:
    """What applies to an origin's requests right now."""

    state: AccessState
    robots: RobotsTxt | None = None  # set when state is RULES
    reason: str = ""  # why, for logs and dropped-request messages

    def allowed(self, url: str, user_agent: str | tuple[str, ...]) -> bool:
        if self.state is AccessState.RULES and self.robots is not None:
            return self.robots.allowed(url, user_agent)
        return self.state is AccessState.ALLOW_ALL
