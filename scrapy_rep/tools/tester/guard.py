"""What the Tester's server refuses before doing any work (docs/tester.md, "Safety").

- Host: only the names it was started for, on every bind address; a name
  that an attacker rebinds to the Tester (DNS rebinding) brings its own.
- Limits: the time, connections and bytes a client may ask for. aiohttp
  enforces them (framing, the body's size, the deadline of a request's
  head); ``app`` and ``server`` hand them over.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Limits", "Refused", "check_host", "host_names"]


@dataclass(frozen=True)
class Limits:
    """How much a client may ask of the server: time, connections and bytes."""

    #: Seconds a connection has to send a request's head (from its opening, or
    #: from the last answer on a kept-alive one), then as many for its body,
    #: and as many to read the answer.
    request_timeout: float = 10.0
    #: Connections open at once, idle ones included; the next ones are
    #: answered 503 and closed. Each is a few kilobytes, not a thread.
    max_connections: int = 2048
    #: The most a request body may be: a robots.txt at the parse limit, and room.
    max_body: int = 2_000_000


class Refused(Exception):
    """A request answered with ``status`` and a JSON error, nothing done."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# --- the Host header ----------------------------------------------------------------------


def _name(host: str) -> str:
    """A host as a Host header writes it: lower case, IPv6 in brackets."""
    host = host.strip().lower().strip("[]")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    return f"[{address}]" if address.version == 6 else str(address)


def host_names(bound: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The names answered: 127.0.0.1, localhost, the bound address and ``allowed``."""
    return frozenset({"127.0.0.1", "localhost", _name(bound), *(_name(a) for a in allowed)})


def _split(value: str) -> tuple[str, str | None]:
    """``host[:port]`` -> (host, port or None); an IPv6 host keeps its brackets."""
    if value.startswith("["):
        host, _, rest = value.partition("]")
        if rest and not rest.startswith(":"):
            return "", None  # "[::1]junk": no name
        return host + "]", rest[1:] if rest else None
    host, colon, port = value.partition(":")
    return host, port if colon else None


def check_host(value: str | None, names: frozenset[str], port: int) -> None:
    """Refuse (421) a missing Host, another name, or another port."""
    host, given = _split((value or "").strip())
    port_ok = given == str(port) if given is not None else port == 80
    if not host or not port_ok or _name(host) not in names:
        raise Refused(421, f"this tester answers to {', '.join(sorted(names))} (port {port}) only")
