"""A spider's own requests for an origin's robots.txt (a SitemapSpider's, say).

Answered from the cache with the status, headers and body we fetched, flagged
``"cached"``, so the server sees one robots.txt request; an unreachable
origin's goes to the network as asked, and a robots.txt response the spider
got that way is newer than ours, so it is kept.
"""

from __future__ import annotations

from urllib.parse import ParseResult

from scrapy.http import Headers, Request, Response
from scrapy.responsetypes import responsetypes

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome, kind_of_status
from scrapy_rep.crawler.access.fetcher import first_header
from scrapy_rep.engine.origin import ROBOTS_PATH, Origin, robots_url

__all__ = ["ROBOTS_PATH", "cached_response", "is_robots_path", "outcome_of"]

#: Headers that described the bytes on the wire, not the body we replay.
_WIRE_HEADERS = ("content-length", "content-encoding", "transfer-encoding")


def is_robots_path(parts: ParseResult) -> bool:
    """Is this URL (parsed: ``urlparse_cached``) the origin's /robots.txt
    (docs/spec.md §1.2), whatever asked for it?"""
    return parts.path == ROBOTS_PATH and not parts.query and not parts.params


def cached_response(request: Request, answer: FetchOutcome | None) -> Response | None:
    """Our answer as the response to the spider's request; None: go to the network."""
    if answer is None or answer.status is None:
        return None
    headers = Headers(
        {name: values for name, values in answer.headers.items() if name not in _WIRE_HEADERS}
    )
    respcls = responsetypes.from_args(headers=headers, url=request.url, body=answer.body)
    return respcls(
        url=request.url,
        status=answer.status,
        headers=headers,
        body=answer.body,
        flags=["cached"],
        request=request,
    )


def outcome_of(
    origin: Origin, response: Response, now: float, max_body_bytes: int
) -> FetchOutcome | None:
    """The fetch outcome a spider's own robots.txt response stands for.

    None for what we answered ourselves and for a redirect (the spider follows it).
    """
    if "cached" in response.flags or 300 <= response.status < 400:
        return None
    kind = kind_of_status(response.status)
    headers = {
        key.decode("latin-1").lower(): tuple(value.decode("latin-1") for value in values)
        for key, values in response.headers.items()
    }
    return FetchOutcome(
        kind,
        robots_url(origin),
        now,
        status=response.status,
        body=response.body[:max_body_bytes] if kind is FetchKind.SUCCESS else b"",
        reason=f"HTTP {response.status} (the spider's own request)",
        cache_control=first_header(headers, "cache-control"),
        retry_after=first_header(headers, "retry-after"),
        final_url=response.url if response.url != robots_url(origin) else None,
        truncated=kind is FetchKind.SUCCESS and len(response.body) > max_body_bytes,
        headers=headers,
    )
