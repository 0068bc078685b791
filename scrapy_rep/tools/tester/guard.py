"""What the Tester's server refuses before doing any work (docs/tester.md, "Safety").

- Host: only the names it was started for, on every bind address; a name
  that an attacker rebinds to the Tester (DNS rebinding) brings its own.
- Bodies: a declared length within the cap, or chunks counted against the
  same cap as they come; never "read until the client stops".
- Time: one deadline for a connection's whole request, however slowly it
  trickles in (each read waits only for what is left of it).
- Connections: at most ``Limits.max_connections`` at once, each a thread.
"""

from __future__ import annotations

import io
import ipaddress
import re
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from email.message import Message
from typing import Final

__all__ = ["DeadlineReader", "Limits", "Refused", "check_host", "host_names", "read_body"]

#: A chunk-size line: hex digits (at most 2**32 - 1), then extensions we ignore.
_CHUNK_SIZE: Final = re.compile(rb"([0-9A-Fa-f]{1,8})[ \t]*(?:;[^\r\n]*)?\r?\n")
_LENGTH: Final = re.compile(r"[0-9]{1,18}")
_LINE: Final = 1024  # the longest chunk-size or trailer line read
_TRAILERS: Final = 32


@dataclass(frozen=True)
class Limits:
    """How much a client may ask of the server: time, connections and bytes."""

    #: Seconds a connection has to send its whole request (and each write back).
    request_timeout: float = 10.0
    #: Connections served at once; the next ones are answered 503 and closed.
    max_connections: int = 32
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


# --- bodies --------------------------------------------------------------------------------


def read_body(headers: Message, rfile: io.BufferedIOBase, cap: int) -> bytes:
    """The body, framed by one valid ``Content-Length`` or by chunks; refused
    before reading when the framing is missing, bad or over ``cap``."""
    lengths = headers.get_all("Content-Length") or []
    codings = headers.get_all("Transfer-Encoding") or []
    if codings and lengths:
        raise Refused(400, "send Content-Length or Transfer-Encoding, not both")
    if codings:
        if [c.strip().lower() for c in codings] != ["chunked"]:
            raise Refused(400, "only Transfer-Encoding: chunked is read")
        return _read_chunked(rfile, cap)
    if not lengths:
        raise Refused(411, "a body needs Content-Length")
    if len(lengths) > 1 or not _LENGTH.fullmatch(lengths[0].strip()):
        raise Refused(400, "Content-Length must be one number of bytes")
    length = int(lengths[0])
    if length > cap:
        raise Refused(413, f"at most {cap} bytes")
    return _exactly(rfile, length)


def _exactly(rfile: io.BufferedIOBase, size: int) -> bytes:
    try:
        data = rfile.read(size)
    except TimeoutError:
        raise Refused(408, "the request took too long to arrive") from None
    if len(data) < size:
        raise Refused(400, "the body is shorter than announced")
    return data


def _line(rfile: io.BufferedIOBase) -> bytes:
    try:
        line = rfile.readline(_LINE)
    except TimeoutError:
        raise Refused(408, "the request took too long to arrive") from None
    if not line.endswith(b"\n"):
        raise Refused(400, "bad chunked body")
    return line


def _read_chunked(rfile: io.BufferedIOBase, cap: int) -> bytes:
    """Chunks summed against ``cap``: a size past it is refused on its line."""
    parts: list[bytes] = []
    total = 0
    while True:
        found = _CHUNK_SIZE.fullmatch(_line(rfile))
        if found is None:
            raise Refused(400, "bad chunk size")
        size = int(found.group(1), 16)
        if total + size > cap:
            raise Refused(413, f"at most {cap} bytes")
        if size == 0:
            break
        parts.append(_exactly(rfile, size))
        total += size
        if _line(rfile).strip():
            raise Refused(400, "a chunk is longer than announced")
    for _ in range(_TRAILERS):  # trailer fields, read and ignored, to the blank line
        if not _line(rfile).strip():
            return b"".join(parts)
    raise Refused(400, "too many trailer fields")


# --- time ------------------------------------------------------------------------------------


class DeadlineReader(io.RawIOBase):
    """A socket's reads, each given only what is left until ``deadline``: a
    client dripping a byte at a time cannot stretch its request past it."""

    def __init__(
        self, sock: socket.socket, deadline: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self._sock = sock
        self._deadline = deadline
        self._clock = clock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        left = self._deadline - self._clock()
        if left <= 0:
            raise TimeoutError("the request took too long to arrive")
        self._sock.settimeout(left)
        return self._sock.recv_into(buffer)
