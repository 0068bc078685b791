"""Fetch a robots.txt outside a crawl, with the crawl's rules (docs/spec.md §2, §4.3).

The one stdlib fetch of the tools: ``scrapy-rep check``/``lint`` and the
tester both use it, so they cannot disagree. Redirects are followed here
(counted, loops detected, http(s) only), the body is cut at the crawl's size
cap, one deadline bounds the whole fetch, and the final status is read by
``kind_of_status``, the function the crawl's fetcher uses.
"""

from __future__ import annotations

import queue
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.client import HTTPException
from typing import Any, Final
from urllib.parse import urljoin

from scrapy_rep.cache.outcome import FetchKind, kind_of_status
from scrapy_rep.crawler.config.defaults import MIN_REDIRECTS
from scrapy_rep.engine.lines import MAX_BODY_BYTES
from scrapy_rep.tools.fetch.guard import FetchRefused, Hop, Network

__all__ = [
    "DEFAULT_USER_AGENT",
    "FetchRefused",
    "LiveFetch",
    "Network",
    "fetch_live",
    "is_web_url",
]

#: The hops followed: as many as a crawl follows by default (REP_FOLLOW_REDIRECTS).
MAX_REDIRECTS: Final = MIN_REDIRECTS
#: One byte beyond the parsed limit tells lint that the body was cut (docs/spec.md §4.3).
READ_LIMIT: Final = MAX_BODY_BYTES + 1
DEFAULT_USER_AGENT: Final = "scrapy-rep (robots.txt checker)"
_WEB: Final = ("http://", "https://")
UNREACHABLE_NOTE: Final = (
    "; robots.txt is unreachable, so a crawler must not fetch from this site for now"
)


def is_web_url(url: str) -> bool:
    return url.lower().startswith(_WEB)


@dataclass(frozen=True)
class LiveFetch:
    """How one fetch ended: the crawl's state for it, and what the server said."""

    url: str  # as asked
    kind: FetchKind
    status: int | None  # of the final answer; None when none came
    message: str  # "" for a 2xx; else why (the CLI prints it as it is)
    body: bytes = b""  # a 2xx body, at most ``max_bytes`` (+1 to show a cut)
    final_url: str = ""  # where the redirects ended
    hops: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    """Hand 3xx answers back, so that ``fetch_live`` counts the hops itself."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER: Final = urllib.request.build_opener(_KeepRedirects)
_Answer = tuple[int, list[tuple[str, str]], bytes]


def _get(
    url: str,
    timeout: float,
    user_agent: str,
    limit: int,
    opener: urllib.request.OpenerDirector = _OPENER,
) -> _Answer:
    """One GET: status, headers and at most ``limit`` bytes of body."""
    request = urllib.request.Request(url, headers={"User-Agent": user_agent})
    try:
        with opener.open(request, timeout=timeout) as response:
            return int(response.status), list(response.headers.items()), response.read(limit)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, list(error.headers.items()), b""


def _within(seconds: float, budget: float, *args: Any, hop: Hop | None = None) -> _Answer:
    """``_get(...)``, given up after ``seconds``: a socket timeout bounds each
    read, and a server dripping its answer could stretch the whole past it.
    The download runs in a daemon thread; past the deadline it is abandoned.
    With ``hop``, the URL is checked and its host resolved there too
    (``guard``: the resolution counts against the deadline).
    """
    answer: queue.Queue[_Answer | BaseException] = queue.Queue(maxsize=1)
    url, user_agent, limit, came_from = args

    def download() -> None:
        try:
            opener = _OPENER
            if hop is not None:
                opener = hop.opener(url, hop.addresses(url, came_from), _KeepRedirects())
            answer.put(_get(url, max(seconds, 0.001), user_agent, limit, opener))
        except BaseException as error:  # handed to the caller
            answer.put(error)

    threading.Thread(target=download, daemon=True).start()
    try:
        result = answer.get(timeout=max(seconds, 0.0))
    except queue.Empty:
        raise TimeoutError(f"timed out: no complete answer within {budget:g} s") from None
    if isinstance(result, BaseException):
        raise result
    return result


def _header(headers: list[tuple[str, str]], name: str) -> str:
    return next((value for key, value in headers if key.lower() == name), "")


def fetch_live(
    url: str,
    timeout: float,
    *,
    user_agent: str = DEFAULT_USER_AGENT,
    max_bytes: int = MAX_BODY_BYTES,
    max_redirects: int = MAX_REDIRECTS,
    network: Network | None = None,
) -> LiveFetch:
    """Fetch ``url`` (http or https only) as the crawl would; never raises for
    the network: an unreachable answer is a ``LiveFetch`` of kind UNREACHABLE.
    With ``network`` (the Tester), each hop is guarded (``guard``): a
    hop it refuses raises ``FetchRefused`` before it is fetched."""
    if not is_web_url(url):
        raise ValueError(f"only http(s) URLs are fetched, not {url!r}")
    current, seen, came_from = url, {url}, ""
    deadline = time.monotonic() + timeout
    unreachable = FetchKind.UNREACHABLE
    guard = None if network is None else Hop(network)
    for hop in range(max_redirects + 1):
        try:
            left = deadline - time.monotonic()
            args = (current, user_agent, max_bytes + 1, came_from)
            status, headers, body = _within(left, timeout, *args, hop=guard)
        except (OSError, HTTPException, ValueError) as error:
            reason = getattr(error, "reason", None) or error
            message = f"cannot fetch {current}: {reason}{UNREACHABLE_NOTE}"
            return LiveFetch(url, unreachable, None, message, final_url=current, hops=hop)

        def done(kind: FetchKind, message: str, body: bytes = b"") -> LiveFetch:
            return LiveFetch(url, kind, status, message, body, current, hop, headers)  # noqa: B023

        location = _header(headers, "location")
        if 300 <= status < 400:
            if not location:
                why = f"{current} answered HTTP {status} with no Location header"
                return done(unreachable, why)
            target = urljoin(current, location)
            if not is_web_url(target):
                return done(unreachable, f"{url} redirects to {target}: only http(s) is fetched")
            if target in seen or hop == max_redirects:
                why = "a redirect loop" if target in seen else f"over {max_redirects} redirects"
                return done(FetchKind.UNAVAILABLE, f"{why}: robots.txt unavailable, all allowed")
            seen.add(target)
            came_from, current = current, target
            continue
        kind = kind_of_status(status)
        if kind is FetchKind.SUCCESS:
            return done(kind, "", body)
        if kind is FetchKind.UNAVAILABLE:
            return done(kind, f"HTTP {status}: robots.txt unavailable, all allowed")
        if status == 429 or status >= 500:
            return done(kind, f"{current} answered HTTP {status}{UNREACHABLE_NOTE}")
        return done(kind, f"{current} answered HTTP {status}, which is not a final answer")
    raise AssertionError("unreachable: the loop returns")  # pragma: no cover
