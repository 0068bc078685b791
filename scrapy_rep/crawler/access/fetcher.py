"""Download one origin's robots.txt through Scrapy and say how it went (docs/spec.md §2, §4.3).

The request goes through the engine, so proxies, auth, headers and the other
downloader middlewares apply; Scrapy's redirect and retry middlewares are
switched off for it because the rules for robots.txt differ: redirects are
followed here (counted, across hosts, loops detected), and an unreachable
robots.txt is the policy's business, not a reason to hammer the server. The
body is cut at ``max_body_bytes`` while it arrives, so a huge file is never
downloaded whole; a compressed body is inflated here, up to the same limit,
so a small gzip that inflates to gigabytes costs at most that much memory
(Scrapy's HttpCompressionMiddleware would inflate it all: the request must
lift DOWNLOAD_MAXSIZE for the raw cut-off to apply).
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import urljoin, urlsplit

from scrapy import signals
from scrapy.exceptions import StopDownload
from scrapy.http import Request, Response
from scrapy.http.request import NO_CALLBACK
from w3lib.url import safe_url_string

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome, kind_of_status, proxy_answer
from scrapy_rep.crawler.access.ftp import download_ftp
from scrapy_rep.crawler.access.resolver import FetchStopped
from scrapy_rep.crawler.config.settings import Config
from scrapy_rep.engine.origin import Origin, origin_of, robots_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "ENVIRONMENT",
    "ROBOTSTXT_FETCH_META_KEY",
    "ROBOTS_PRIORITY",
    "Fetcher",
    "Route",
    "answered_for_another",
    "describe_error",
    "route_of",
]

logger = logging.getLogger(__name__)

#: Set on every robots.txt request this package sends (value: True).
ROBOTSTXT_FETCH_META_KEY: Final = "rep_robotstxt"
#: Above ordinary requests, as Scrapy's built-in middleware does.
ROBOTS_PRIORITY: Final = 1000

_RECEIVED: Final = "_rep_bytes_received"
_DECODED: Final = "_rep_decoded_body"
_INFLATED: Final = "rep_inflated"
_UNDECODABLE: Final = "rep_undecodable"
#: Only what can be inflated a piece at a time, within a bound.
_ACCEPT_ENCODING: Final = b"gzip, deflate"
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})
_FOLLOWED_SCHEMES: Final = frozenset({"http", "https", "ftp"})


class Route(NamedTuple):
    """The way a request goes out, which its origin's robots.txt goes too.

    As Scrapy's HttpProxyMiddleware reads ``meta``: ``named`` when the request
    has a "proxy" key; ``proxy`` is then its value (None: direct, whatever the
    environment says) and ``authorization`` the Proxy-Authorization header the
    request carries. Not ``named``: the environment's proxy (``http_proxy``,
    ``no_proxy``...) applies, or none.
    """

    named: bool
    proxy: object = None
    authorization: bytes | None = None


#: A request that names no proxy: Scrapy's rules for the environment apply.
ENVIRONMENT: Final = Route(named=False)
_DIRECT: Final = Route(named=True)


def route_of(request: Request) -> Route:
    """The route of ``request`` now (before HttpProxyMiddleware fills it in)."""
    meta = request.meta
    if "proxy" not in meta:
        return ENVIRONMENT
    proxy = meta["proxy"]
    if proxy is None:
        return _DIRECT
    return Route(True, proxy, request.headers.get(b"Proxy-Authorization"))


class Fetcher:
    """``await fetcher.fetch(origin, route)`` -> the ``FetchOutcome`` of its robots.txt."""

    def __init__(
        self,
        crawler: Crawler,
        config: Config,
        tally: Callable[[str], None],
        clock: Callable[[], float] = time.time,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self._crawler = crawler
        #: Adds one to a stat, in batches (``Reporter.tally``).
        self._tally = tally
        self._config = config
        self._clock = clock
        self._stopping = stopping
        #: A proxy has answered for a site once: said at WARNING, then DEBUG.
        self._proxy_answered = False
        #: robots.txt downloads under way: the two signal handlers are
        #: connected only meanwhile, as every page's signals would call them.
        self._downloading = 0

    async def fetch(self, origin: Origin, route: Route = ENVIRONMENT) -> FetchOutcome:
        """Every hop goes the ``route`` of the request the fetch is made for
        (its proxy and credentials, or direct, or the environment's proxy).

        Raises ``FetchStopped`` rather than follow a redirect once the crawl
        is stopping: no robots.txt download starts after a stop.
        """
        start = robots_url(origin)
        tally = self._tally
        tally("robotstxt/request_count")
        url, seen = start, {start}
        while True:
            try:
                response = await self._download(url, route)
            except Exception as exc:
                tally(f"robotstxt/exception_count/{type(exc)}")
                reason = describe_error(exc)
                logger.debug("Fetching %s failed: %s (%r)", url, reason, exc)
                return self._outcome(FetchKind.UNREACHABLE, start, url, reason=reason)
            tally("robotstxt/response_count")
            tally(f"robotstxt/response_status_count/{response.status}")
            try:
                target = _redirect_target(response, url)
            except ValueError as exc:  # e.g. "http://[::1": the server's fault, not ours
                reason = f"HTTP {response.status} with an invalid Location ({exc})"
                return self._outcome(FetchKind.UNREACHABLE, start, url, reason=reason)
            if target is None:
                return self._final(response, start, url, hops=len(seen) - 1)
            if target in seen:
                return self._outcome(FetchKind.UNAVAILABLE, start, target, reason="redirect loop")
            if len(seen) > self._config.max_redirects:
                reason = f"more than {self._config.max_redirects} redirects"
                return self._outcome(FetchKind.UNAVAILABLE, start, target, reason=reason)
            if urlsplit(target).scheme not in _FOLLOWED_SCHEMES:
                reason = f"redirect to an unsupported URL ({target})"
                return self._outcome(FetchKind.UNAVAILABLE, start, target, reason=reason)
            seen.add(target)
            url = target
            if self._stopping():
                raise FetchStopped

    async def _download(self, url: str, route: Route) -> Response:
        settings = self._crawler.settings
        # REP_ROBOTSTXT_TIMEOUT, not the pages' DOWNLOAD_TIMEOUT (docs/decisions.md).
        timeout = self._config.fetch_timeout(settings.getfloat("DOWNLOAD_TIMEOUT", 180.0))
        if url.startswith("ftp:"):  # Scrapy's FTP handler has no byte cap
            return await download_ftp(url, self._config.max_body_bytes, settings, timeout)
        request = Request(
            url,
            callback=NO_CALLBACK,
            priority=ROBOTS_PRIORITY,
            dont_filter=True,
            headers={"Accept-Encoding": _ACCEPT_ENCODING},
            meta={
                ROBOTSTXT_FETCH_META_KEY: True,
                "dont_obey_robotstxt": True,
                "dont_redirect": True,
                "dont_retry": True,
                "allow_offsite": True,
                # Our own cut-off replaces DOWNLOAD_MAXSIZE: a huge robots.txt
                # is read up to max_body_bytes, not refused or fully read.
                "download_maxsize": 0,
                "download_warnsize": 0,
                "download_fail_on_dataloss": True,
                # Our own cache replaces Scrapy's: a cached 503 must not keep
                # an origin closed, run after run (HTTPCACHE_ENABLED).
                "dont_cache": True,
                "download_timeout": timeout,
            },
        )
        if route.named:  # else HttpProxyMiddleware applies the environment's, as to pages
            request.meta["proxy"] = route.proxy
            if route.authorization is not None:
                request.headers[b"Proxy-Authorization"] = route.authorization
        engine = self._crawler.engine
        assert engine is not None
        self._listen()
        try:
            response = await engine.download_async(request)
        finally:
            self._unlisten()
        decoded = request.meta.get(_DECODED)
        if decoded is not None:
            response = response.replace(body=decoded, flags=[*response.flags, _INFLATED])
        elif request.meta.get(_UNDECODABLE):
            response = response.replace(body=b"", flags=[*response.flags, _UNDECODABLE])
        return response

    def _listen(self) -> None:
        """Watch the signals of every download while ours is one of them."""
        if not self._downloading:
            self._crawler.signals.connect(self._bytes_received, signal=signals.bytes_received)
            self._crawler.signals.connect(self._downloaded, signal=signals.response_downloaded)
        self._downloading += 1

    def _unlisten(self) -> None:
        self._downloading -= 1
        if not self._downloading:
            self._crawler.signals.disconnect(self._bytes_received, signal=signals.bytes_received)
            self._crawler.signals.disconnect(self._downloaded, signal=signals.response_downloaded)

    def _final(self, response: Response, start: str, url: str, hops: int) -> FetchOutcome:
        kind = kind_of_status(response.status)
        reason = f"HTTP {response.status}"
        headers = {
            key.decode("latin-1").lower(): tuple(value.decode("latin-1") for value in values)
            for key, values in response.headers.items()
        }
        proxied = proxy_answer(response.status, headers)
        if proxied:  # not the site's answer: a failed fetch, never a copy
            kind = FetchKind.UNREACHABLE
            reason += f" from the proxy ({proxied}), not the site"
            self._say_proxy_answer(start, reason)
        if _UNDECODABLE in response.flags:  # an invalid response (RFC 9309 §2.3.1.4)
            kind = FetchKind.UNREACHABLE
            reason += " with a body that does not decode as its Content-Encoding says"
        if hops:
            reason += f" after {hops} redirect{'s' if hops > 1 else ''}"
        limit = self._config.max_body_bytes
        inflated = _INFLATED in response.flags
        stopped = "download_stopped" in response.flags
        if stopped:
            reason += f", cut at {limit} {'compressed ' if inflated else ''}bytes"
        cut = inflated and len(response.body) >= limit
        if cut:
            reason += f", inflated to its first {limit} bytes"
        body = response.body[:limit] if kind is FetchKind.SUCCESS else b""
        return FetchOutcome(
            kind,
            start,
            self._clock(),
            status=response.status,
            body=body,
            reason=reason,
            cache_control=first_header(headers, "cache-control"),
            retry_after=first_header(headers, "retry-after"),
            final_url=url if url != start else None,
            truncated=stopped or cut or len(response.body) > limit,
            headers=headers,
        )

    def _say_proxy_answer(self, url: str, reason: str) -> None:
        """A WARNING the first time (the proxy's credentials or setup need a
        look), then DEBUG: a rotating pool may answer so for many origins."""
        level = logging.DEBUG if self._proxy_answered else logging.WARNING
        self._proxy_answered = True
        logger.log(
            level,
            "robots.txt %s: %s; counted as a failed fetch (the origin is closed, or its "
            "last good copy applies) and not kept",
            url,
            reason,
            extra={"spider": self._crawler.spider},
        )

    def _outcome(self, kind: FetchKind, start: str, url: str, *, reason: str) -> FetchOutcome:
        final_url = url if url != start else None
        return FetchOutcome(kind, start, self._clock(), reason=reason, final_url=final_url)

    def _bytes_received(self, data: bytes, request: Request, **_: Any) -> None:
        """Stop a robots.txt download once ``max_body_bytes`` have arrived."""
        if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return
        received = request.meta.get(_RECEIVED, 0) + len(data)
        request.meta[_RECEIVED] = received
        if received >= self._config.max_body_bytes:
            raise StopDownload(fail=False)

    def _downloaded(self, response: Response, request: Request, **_: Any) -> None:
        """Inflate a compressed robots.txt here, within ``max_body_bytes``.

        Runs after the download and before the downloader middlewares see the
        response: the inflated prefix goes into the request's meta and
        Content-Encoding is removed, so HttpCompressionMiddleware leaves the
        body alone. Encodings we did not ask for (br, zstd) are left to it,
        capped at ``max_body_bytes`` (past that it drops the response, which
        makes the origin unreachable).
        """
        if not request.meta.get(ROBOTSTXT_FETCH_META_KEY):
            return
        limit = self._config.max_body_bytes
        request.meta["download_maxsize"] = limit
        request.meta["download_warnsize"] = 0
        encodings = response.headers.getlist(b"Content-Encoding")
        if not encodings:
            return
        try:
            decoded = inflate_prefix(response.body, encodings, limit)
        except ValueError:
            request.meta[_UNDECODABLE] = True
            del response.headers[b"Content-Encoding"]  # nothing for anyone to decode
            return
        if decoded is not None:
            request.meta[_DECODED] = decoded
            del response.headers[b"Content-Encoding"]
        elif not all(value.isascii() for value in encodings):
            # HttpCompressionMiddleware names an encoding it does not know by
            # decoding it as UTF-8, which fails on "\xb2" and loses the answer
            # (docs/spec.md §2): escaped, it is an unknown encoding like any other.
            response.headers.setlist(b"Content-Encoding", [_ascii(v) for v in encodings])


def _ascii(value: bytes) -> bytes:
    return value.decode("latin-1").encode("ascii", "backslashreplace")


def inflate_prefix(body: bytes, encodings: list[bytes], limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``body`` decoded; None for an encoding we do not inflate.

    A truncated stream (our own cut-off) gives what it holds; a body that is
    not in its encoding at all raises ``ValueError``.
    """
    tokens = [token.strip().lower() for header in encodings for token in header.split(b",")]
    for token in reversed([t for t in tokens if t and t != b"identity"]):
        if token in (b"gzip", b"x-gzip"):
            body = _inflate(body, 16 + zlib.MAX_WBITS, limit)
        elif token == b"deflate":  # zlib-wrapped as the RFC says, or raw as some servers send
            try:
                body = _inflate(body, zlib.MAX_WBITS, limit)
            except ValueError:
                body = _inflate(body, -zlib.MAX_WBITS, limit)
        else:
            return None
    return body


def _inflate(data: bytes, wbits: int, limit: int) -> bytes:
    """Inflate at most ``limit`` bytes, member after member (concatenated gzip).

    Damage in the first member raises ``ValueError``; bytes after a complete
    member that are not another one are ignored, as gzip(1) does.
    """
    out = bytearray()
    first = True
    while data and len(out) < limit:
        inflater = zlib.decompressobj(wbits)
        try:
            out += inflater.decompress(data, limit - len(out))
        except zlib.error as exc:
            if first:
                raise ValueError(f"not a valid compressed stream: {exc}") from exc
            break
        first = False
        if not inflater.eof:
            break  # the limit was reached, or the stream was cut
        data = inflater.unused_data
    return bytes(out)


def _redirect_target(response: Response, url: str) -> str | None:
    if response.status not in _REDIRECTS:
        return None
    location = response.headers.get(b"Location")
    if not location:
        return None  # an invalid redirect: kind_of_status says unreachable
    return urljoin(url, safe_url_string(location.decode("latin-1")))


def answered_for_another(
    origin: Origin, outcome: FetchOutcome
) -> tuple[Origin, FetchOutcome] | None:
    """A redirect that ended at another origin's own /robots.txt answered for
    that origin too: the outcome it stands for there, else None."""
    final = outcome.final_url
    target = origin_of(final) if final else None
    if (
        target is None
        or target == origin
        or final != robots_url(target)
        or outcome.status is None
        or not 200 <= outcome.status < 500
        or outcome.kind is FetchKind.UNREACHABLE
    ):
        return None
    return target, replace(outcome, url=robots_url(target), final_url=None)


def first_header(headers: dict[str, tuple[str, ...]], name: str) -> str | None:
    """The first value of a header (names lower-case), if it was sent."""
    values = headers.get(name)
    return values[0] if values else None


# --- errors -------------------------------------------------------------------

# Class names (not classes) so that every download handler's errors are
# recognised without importing each handler's libraries.
_LABELS: Final[tuple[tuple[frozenset[str], str], ...]] = (
    (
        frozenset({"DownloadTimeoutError", "TimeoutError", "TCPTimedOutError"}),
        "timeout",
    ),
    (
        frozenset({"CannotResolveHostError", "DNSLookupError", "gaierror"}),
        "DNS failure",
    ),
    (
        frozenset({"DownloadConnectionRefusedError", "ConnectionRefusedError"}),
        "connection refused",
    ),
    (
        frozenset({"ResponseDataLossError", "_DataLoss", "PotentialDataLoss"}),
        "truncated response",
    ),
    (frozenset({"ConnectionResetError"}), "connection reset"),
    (frozenset({"NotSupported", "UnsupportedURLSchemeError"}), "unsupported URL scheme"),
    (frozenset({"IgnoreRequest"}), "ignored by a downloader middleware"),
)


def describe_error(exc: BaseException) -> str:
    """A short, readable reason for a failed download: "timeout", "TLS failure", ..."""
    causes = list(_causes(exc))
    names = {type(cause).__name__ for cause in causes}
    tls = any(_is_tls(cause) for cause in causes)
    for classes, label in _LABELS:
        if names & classes:
            # Scrapy's aiohttp handler (reactorless) raises a failed handshake
            # as a refused connection, the ssl error as its cause.
            return "TLS failure" if tls and label == "connection refused" else label
    if tls:
        return "TLS failure"
    text = " ".join(str(cause) for cause in causes).lower()
    if "reset" in text or "non-clean" in text:  # Twisted: an RST is a non-clean close
        return "connection reset"
    if names & {"ConnectionLost", "ConnectionDone", "ResponseNeverReceived", "ResponseFailed"}:
        return "connection lost"
    return f"{type(exc).__name__}: {exc}"[:200]


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, the failures it wraps (Twisted's ``reasons``), and its causes."""
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        for reason in getattr(current, "reasons", None) or ():
            value = getattr(reason, "value", None)
            if isinstance(value, BaseException):
                pending.append(value)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)


def _is_tls(exc: BaseException) -> bool:
    module = type(exc).__module__.lower()
    return "ssl" in module or "tls" in module or type(exc).__name__.startswith("SSL")
