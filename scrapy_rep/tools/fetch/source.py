"""The robots.txt a command is given: a file, standard input or a URL to fetch.

A URL is fetched as a crawler fetches it (docs/spec.md §2, §4.3): up to 5
redirects, at most 512,000 bytes kept, a 4xx other than 429 means
"everything allowed", and a 429, 5xx or network failure is a fetch error.
"""

from __future__ import annotations

import sys
from typing import Final, NamedTuple

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.tools.fetch.live import MAX_REDIRECTS, READ_LIMIT, fetch_live

__all__ = ["Source", "SourceError", "fetch", "read_source"]

_WEB: Final = ("http://", "https://")


class SourceError(Exception):
    """robots.txt could not be read or fetched (exit code 2)."""


class Source(NamedTuple):
    """A robots.txt body and where it came from."""

    name: str  # the path, URL or "<stdin>" given
    body: bytes
    status: int | None = None  # HTTP status of the final response; None for a file
    allow_all: str = ""  # why every URL is allowed without rules (docs/spec.md §2), else ""


def read_source(arg: str, timeout: float) -> Source:
    """The robots.txt named on the command line."""
    if arg == "-":
        return Source("<stdin>", sys.stdin.buffer.read(READ_LIMIT))
    if arg.lower().startswith(_WEB):
        return fetch(arg, timeout)
    try:
        with open(arg, "rb") as file:
            return Source(arg, file.read(READ_LIMIT))
    except FileNotFoundError:
        raise SourceError(
            f"no such file: {arg!r} (a URL must start with http:// or https://)"
        ) from None
    except OSError as error:
        raise SourceError(f"cannot read {arg!r}: {error.strerror or error}") from None


def fetch(url: str, timeout: float) -> Source:
    """Fetch robots.txt as docs/spec.md §2 says a crawler must, or raise ``SourceError``.

    ``timeout`` bounds the whole fetch, redirects and a slow body included.
    """
    got = fetch_live(url, timeout, max_redirects=MAX_REDIRECTS)
    if got.kind is FetchKind.SUCCESS:
        return Source(url, got.body[:READ_LIMIT], got.status)
    if got.kind is FetchKind.UNAVAILABLE:
        return Source(url, b"", got.status, got.message)
    raise SourceError(got.message)
