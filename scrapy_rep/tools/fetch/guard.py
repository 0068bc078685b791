"""What the Tester's live fetch may reach (docs/tester.md, "Safety").

A live fetch runs on the user's machine, inside their network: a hostile
site's robots.txt that redirects to ``http://127.0.0.1/admin`` or to a cloud
metadata address would make the Tester send that GET and show the answer.
So, at every hop:

- only a ``/robots.txt`` path is fetched: a redirect elsewhere is named,
  not followed (a crawler follows it, RFC 9309 §2.3.1.2, and reads that page
  as the rules; the Tester shows robots.txt files only);
- a host is resolved once, and refused when any of its addresses is not a
  global one (loopback, private, link-local, unspecified, shared, reserved)
  unless the origin the user typed is itself such an address (testing a
  local site stays possible); the connection then goes to the address
  checked, never to a second resolution (no DNS rebinding between the
  check and the connection).

``Network`` is the seam: how a name is resolved and an address connected
to. The system's by default; tests give their own, to declare a name public
while its connection goes to a server on loopback.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

__all__ = ["FetchRefused", "Hop", "Network", "is_internal", "pinned_opener"]

ROBOTS_PATH: Final = "/robots.txt"


class FetchRefused(Exception):
    """A hop the Tester does not make: the message says where and why."""


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _connect(address: str, port: int, timeout: float) -> socket.socket:
    return socket.create_connection((address, port), timeout)


@dataclass(frozen=True)
class Network:
    """Name -> addresses, and a connection to one address."""

    resolve: Callable[[str, int], list[str]] = field(default=_resolve)
    connect: Callable[[str, int, float], socket.socket] = field(default=_connect)


def is_internal(address: str) -> bool:
    """Not a global address: this machine's or its network's own."""
    ip = ipaddress.ip_address(address.partition("%")[0])  # an IPv6 zone: fe80::1%eth0
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


@dataclass
class Hop:
    """The hops of one fetch: the first decides whether internal addresses
    may be reached (the user typed one); each later one is checked."""

    network: Network
    local: bool | None = None  # decided at the first hop

    def addresses(self, url: str, came_from: str) -> list[str]:
        """Where ``url`` may be fetched; raises ``FetchRefused`` if nowhere."""
        parts = urlsplit(url)
        if parts.path != ROBOTS_PATH and not came_from:
            raise FetchRefused(f"{url}: the Tester fetches {ROBOTS_PATH} only")
        if parts.path != ROBOTS_PATH:
            raise FetchRefused(
                f"{came_from} redirects to {url}: not a {ROBOTS_PATH} path, so the Tester "
                "does not fetch it (a crawler would, and would read that page as the "
                "rules: paste it into the editor to test it)"
            )
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        found = self.network.resolve(host, port)
        internal = [address for address in found if is_internal(address)]
        if self.local is None:
            self.local = bool(internal)
        elif internal and not self.local:
            raise FetchRefused(
                f"{came_from} redirects to {url}, and {host} is {internal[0]}, an address of "
                "this machine or its network (loopback, private, link-local or "
                "unspecified): the Tester does not follow a public site there"
            )
        return found

    def opener(
        self, url: str, addresses: list[str], redirects: Any = None
    ) -> urllib.request.OpenerDirector:
        """An opener whose connections go to ``addresses`` only, in turn."""
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        connect = self.network.connect

        def dial(timeout: float) -> socket.socket:
            error: OSError = OSError(f"no address for {parts.hostname}")
            for address in addresses:
                try:
                    return connect(address, port, timeout)
                except OSError as exc:
                    error = exc
            raise error

        return pinned_opener(dial, redirects)


class _PinnedHTTP(http.client.HTTPConnection):
    """A connection to the address checked, not to a new resolution of its host."""

    dial: Callable[[float], socket.socket]

    def connect(self) -> None:
        timeout = self.timeout if isinstance(self.timeout, (int, float)) else 10.0
        self.sock = self.dial(timeout)


class _PinnedHTTPS(http.client.HTTPSConnection, _PinnedHTTP):
    """TLS over the pinned socket, verified for the host's name (SNI too)."""


def pinned_opener(
    dial: Callable[[float], socket.socket], redirects: Any = None
) -> urllib.request.OpenerDirector:
    """No proxy (a proxy would connect elsewhere), connections from ``dial``."""

    def made(kind: type[_PinnedHTTP]) -> Callable[..., http.client.HTTPConnection]:
        def make(host: str, **kwargs: Any) -> http.client.HTTPConnection:
            connection = kind(host, **kwargs)
            connection.dial = dial
            return connection

        return make

    context = ssl.create_default_context()

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(made(_PinnedHTTP), req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(made(_PinnedHTTPS), req, context=context)

    handlers: list[Any] = [urllib.request.ProxyHandler({}), Http(), Https()]
    if redirects is not None:
        handlers.append(redirects)
    return urllib.request.build_opener(*handlers)
