"""URL -> origin, the unit a robots.txt governs (docs/spec.md §1).

Pure: no Scrapy, no network. Two URLs share a robots.txt exactly when their
``Origin`` values are equal, so the origin is also the cache key.
"""

from __future__ import annotations

import ipaddress
from typing import Final, NamedTuple
from urllib.parse import ParseResult, SplitResult, urlsplit

__all__ = [
    "DEFAULT_PORTS",
    "ROBOTS_PATH",
    "Origin",
    "normalise_host",
    "origin_of",
    "origin_of_parts",
    "robots_url",
]

#: docs/spec.md §1.3: a default port is the same origin as no port.
#: Where an origin's robots.txt is (docs/spec.md §1.2): the one place it is written.
ROBOTS_PATH: Final = "/robots.txt"

DEFAULT_PORTS: Final[dict[str, int]] = {"http": 80, "https": 443, "ftp": 21}


class Origin(NamedTuple):
    """Scheme, host and port; ``port`` is None when it is the scheme's default."""

    scheme: str  # lower case
    host: str  # lower case, IDNA (punycode) form; IPv6 without brackets
    port: int | None

    @property
    def netloc(self) -> str:
        """``host[:port]`` as written in a URL (IPv6 in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.netloc}"


def origin_of(url: str) -> Origin | None:
    """The origin of an absolute URL, or None when it names no server.

    ``data:``, ``file:///...``, relative and malformed URLs (bad port, empty
    host) have no origin.
    """
    try:
        return origin_of_parts(urlsplit(url))
    except ValueError:
        return None


def origin_of_parts(parts: SplitResult | ParseResult) -> Origin | None:
    """``origin_of`` for a URL already split (``urlparse_cached``'s result).

    Raises ValueError for a bad port, as ``parts.port`` does.
    """
    port = parts.port
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname:
        return None
    host = normalise_host(parts.hostname)
    if not host:
        return None
    if port == DEFAULT_PORTS.get(scheme):
        port = None
    return Origin(scheme, host, port)


def robots_url(origin: Origin) -> str:
    """docs/spec.md §1.2: always ``<scheme>://<host>[:<port>]/robots.txt``."""
    return f"{origin}{ROBOTS_PATH}"


def normalise_host(host: str) -> str:
    """Lower case, IP literals in canonical form, names in IDNA form (docs/spec.md §1.4, §1.5).

    Returns "" for a name that cannot be encoded.
    """
    host = host.strip().lower()
    # Only an IPv6 literal has a colon, and only an IPv4 one ends in a digit
    # (a name's last label is never all digits): a name skips the
    # exception that trying it would raise, most of a host's cost.
    if ":" in host or host[-1:].isdigit():
        try:
            return str(ipaddress.ip_address(host))
        except ValueError:
            pass
    if host.isascii():
        return host
    return _to_idna(host)


def _to_idna(host: str) -> str:
    """UTS #46 processing as browsers do; the stdlib's IDNA 2003 codec as a fallback."""
    try:
        import idna  # a dependency of tldextract, hence of Scrapy

        return idna.encode(host, uts46=True).decode("ascii")
    except (ImportError, UnicodeError, ValueError):
        pass
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return ""
