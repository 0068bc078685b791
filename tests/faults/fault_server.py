"""A fault-injecting HTTP server on 127.0.0.1 that controls every byte on the wire.

The stdlib ``http.server`` always writes a well-formed response; hostile
servers do not. Here each path answers with a ``Scenario``: a short tuple of
steps (send these bytes, pause, drip, hang, reset) played on a raw socket, so
a test can state a fault in one line::

    with FaultServer({"/robots.txt": hang_mid_body(body, after=10)}) as bad:
        ...
    assert bad.paths() == ["/robots.txt"]  # no page got through

Every request is recorded with a monotonic timestamp, and paths without a
scenario answer with a tiny HTML page, so a crawl shows what got through and
when. Long bodies (50 MB, a gzip body inflating to gigabytes) are generated
while they are sent and never held in memory. Nothing here imports Scrapy.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import suppress
from dataclasses import dataclass, field

__all__ = [
    "FaultServer",
    "Hit",
    "Scenario",
    "broken_chunked",
    "chunked",
    "drip",
    "gzip_bomb",
    "hang_before_headers",
    "hang_mid_body",
    "hang_mid_headers",
    "huge",
    "raw",
    "redirect",
    "reply",
    "reset_before_headers",
    "reset_mid_body",
    "wrong_length",
]


# --- steps: what a scenario does on the socket ----------------------------------


@dataclass(frozen=True)
class Send:
    data: bytes


@dataclass(frozen=True)
class Stream:
    """Bytes produced while sending (a fresh iterator per request)."""

    chunks: Callable[[], Iterable[bytes]]


@dataclass(frozen=True)
class Drip:
    """Send ``data`` one byte at a time, ``interval`` seconds apart."""

    data: bytes
    interval: float


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Hang:
    """Stop sending and keep the connection open until the server stops."""


@dataclass(frozen=True)
class Reset:
    """Abort the connection: SO_LINGER 0, so the peer gets a TCP RST."""


Step = Send | Stream | Drip | Pause | Hang | Reset


@dataclass(frozen=True)
class Scenario:
    """What one path answers: steps played in order, then the connection closes."""

    steps: tuple[Step, ...]
    label: str = ""


Route = Scenario | Callable[[str], Scenario]  # a callable gets the Host header's host


@dataclass(frozen=True)
class Hit:
    """One request as the server read it."""

    path: str
    host: str
    at: float  # time.monotonic() when the request line arrived


# --- scenarios -------------------------------------------------------------------

_REASONS: Mapping[int, str] = {
    200: "OK", 204: "No Content", 301: "Moved Permanently", 302: "Found",
    303: "See Other", 307: "Temporary Redirect", 308: "Permanent Redirect",
    404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
    503: "Service Unavailable",
}  # fmt: skip


def head(status: int, headers: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> bytes:
    """A status line and headers, with ``Connection: close`` (one request per connection)."""
    items = list(headers.items() if isinstance(headers, Mapping) else headers)
    if not any(name.lower() == "connection" for name, _ in items):
        items.append(("Connection", "close"))
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{name}: {value}" for name, value in items]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply(
    status: int = 200,
    body: bytes = b"",
    headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
) -> Scenario:
    """A well-formed response with any status and any headers (repeats allowed)."""
    items = list(headers.items() if isinstance(headers, Mapping) else headers)
    items.append(("Content-Length", str(len(body))))
    return Scenario((Send(head(status, items) + body),), f"HTTP {status}")


def raw(data: bytes) -> Scenario:
    """Exactly these bytes, whatever they are (a status line that is not HTTP, ...)."""
    return Scenario((Send(data),), "raw bytes")


def redirect(location: str, status: int = 301) -> Scenario:
    return Scenario((Send(head(status, {"Location": location, "Content-Length": "0"})),))


def reset_before_headers() -> Scenario:
    return Scenario((Reset(),), "reset before headers")


def reset_mid_body(body: bytes, after: int) -> Scenario:
    """Announce the whole body, send ``after`` bytes of it, then reset."""
    start = head(200, {"Content-Length": str(len(body))}) + body[:after]
    return Scenario((Send(start), Pause(0.05), Reset()), "reset mid-body")


def hang_before_headers() -> Scenario:
    return Scenario((Hang(),), "hang before headers")


def hang_mid_headers() -> Scenario:
    """The status line and one header, then nothing."""
    return Scenario((Send(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"), Hang()))


def hang_mid_body(body: bytes, after: int) -> Scenario:
    start = head(200, {"Content-Length": str(len(body))}) + body[:after]
    return Scenario((Send(start), Hang()), "hang mid-body")


def drip(body: bytes, interval: float = 1.0) -> Scenario:
    """Headers at once, then the body one byte every ``interval`` seconds."""
    return Scenario(
        (Send(head(200, {"Content-Length": str(len(body))})), Drip(body, interval)),
        f"drip 1 byte per {interval}s",
    )


def wrong_length(body: bytes, announced: int, then_hang: bool = False) -> Scenario:
    """Content-Length says ``announced`` but ``len(body)`` bytes are sent."""
    steps: tuple[Step, ...] = (Send(head(200, {"Content-Length": str(announced)}) + body),)
    return Scenario(steps + ((Hang(),) if then_hang else ()), f"Content-Length {announced}")


def chunked(chunks: Iterable[bytes], headers: Mapping[str, str] | None = None) -> Scenario:
    """A valid chunked body (the chunks are generated lazily if ``chunks`` is lazy)."""
    start = head(200, {**(headers or {}), "Transfer-Encoding": "chunked"})
    return Scenario((Send(start), Stream(lambda: _chunk_frames(chunks))), "chunked")


def _chunk_frames(chunks: Iterable[bytes]) -> Iterator[bytes]:
    for data in chunks:
        if data:
            yield b"%x\r\n%s\r\n" % (len(data), data)
    yield b"0\r\n\r\n"


#: How a chunked body can be broken: what follows a first, valid chunk.
BROKEN_CHUNKS: Mapping[str, bytes] = {
    "bad-size": b"zz\r\nDisallow: /x\r\n0\r\n\r\n",  # not hex
    "short-chunk": b"400\r\nDisallow: /x\n",  # announces 1024 bytes, sends 14, closes
    "no-last-chunk": b"",  # closes without the terminating 0-size chunk
    "missing-crlf": b"e\r\nDisallow: /x\nXX0\r\n\r\n",  # chunk data not followed by CRLF
    "size-overflow": b"ffffffffffffffffffffffff\r\nDisallow: /x\n",  # 96-bit chunk size
}


def broken_chunked(how: str, first: bytes = b"User-agent: *\n") -> Scenario:
    """A chunked body that starts well and then breaks as ``BROKEN_CHUNKS[how]`` says."""
    start = head(200, {"Transfer-Encoding": "chunked"})
    frame = b"%x\r\n%s\r\n" % (len(first), first)
    return Scenario((Send(start + frame + BROKEN_CHUNKS[how]),), f"broken chunked: {how}")


def huge(size: int, prefix: bytes = b"", use_chunked: bool = False) -> Scenario:
    """``size`` bytes: ``prefix`` then comment lines, generated while sending."""
    if use_chunked:
        return Scenario(chunked(_filler(size, prefix)).steps, f"{size} bytes, chunked")
    start = head(200, {"Content-Type": "text/plain", "Content-Length": str(size)})
    return Scenario((Send(start), Stream(lambda: _filler(size, prefix))), f"{size} bytes")


def _filler(size: int, prefix: bytes) -> Iterator[bytes]:
    line = b"# " + b"x" * 61 + b"\n"
    block = line * 1024
    yield prefix[:size]
    left = size - len(prefix)
    while left > 0:
        part = block[: min(len(block), left)]
        yield part
        left -= len(part)


_MIB = 1 << 20


def gzip_bomb(prefix: bytes, inflated: int = 8 << 30, filler: bytes = b"\n") -> Scenario:
    """``Content-Encoding: gzip``: ``prefix``, then ``filler`` up to ``inflated`` bytes.

    About 1 KiB on the wire per MiB inflated; 8 GiB by default. Each MiB is
    deflated once after a full flush, so every block is byte-identical and
    the stream costs nothing to generate. No trailer is sent: a client that
    reads this far has already lost.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(filler * (_MIB // len(filler))) + compressor.flush(
        zlib.Z_FULL_FLUSH
    )
    blocks = (inflated - len(prefix)) // _MIB
    gzip_header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    last = b"\x03\x00"  # an empty final block
    length = len(gzip_header) + len(first) + blocks * len(block) + len(last)

    def stream() -> Iterator[bytes]:
        yield gzip_header + first
        batch = block * 64
        for _ in range(blocks // 64):
            yield batch
        for _ in range(blocks % 64):
            yield block
        yield last

    headers = {
        "Content-Type": "text/plain",
        "Content-Encoding": "gzip",
        "Content-Length": str(length),
    }
    return Scenario((Send(head(200, headers)), Stream(stream)), f"gzip bomb of {inflated} bytes")


# --- the server ------------------------------------------------------------------------


def page(path: str) -> Scenario:
    body = f"<html><body>page {path}</body></html>".encode()
    return reply(200, body, {"Content-Type": "text/html"})


@dataclass
class FaultServer:
    """``with FaultServer({"/robots.txt": scenario}) as server: server.url("/page")``."""

    routes: dict[str, Route] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list, init=False)
    bytes_sent: int = field(default=0, init=False)  # by every scenario, all requests

    def __post_init__(self) -> None:
        self.routes = dict(self.routes)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.settimeout(0.05)
        self.port: int = self._listener.getsockname()[1]
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._workers: list[threading.Thread] = []

    def __enter__(self) -> FaultServer:
        self._acceptor.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stopping.set()
        self._acceptor.join(5)
        self._listener.close()
        for worker in self._workers:
            worker.join(2)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return self.origin + path

    def paths(self) -> list[str]:
        with self._lock:
            return [hit.path for hit in self.hits]

    def hits_for(self, path: str) -> list[Hit]:
        with self._lock:
            return [hit for hit in self.hits if hit.path == path]

    # --- per connection -----------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._workers.append(worker)
            worker.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            request = _read_head(conn, self._stopping)
            if request is None:
                return
            path, host = request
            with self._lock:
                self.hits.append(Hit(path, host, time.monotonic()))
            route = self.routes.get(path.split("?", 1)[0])
            scenario = page(path) if route is None else route(host) if callable(route) else route
            with suppress(OSError):  # the client hanging up is part of several scenarios
                self._play(conn, scenario)

    def _play(self, conn: socket.socket, scenario: Scenario) -> None:
        for step in scenario.steps:
            if isinstance(step, Send):
                self._send(conn, step.data)
            elif isinstance(step, Stream):
                for data in step.chunks():
                    if self._stopping.is_set():
                        return
                    self._send(conn, data)
            elif isinstance(step, Drip):
                for byte in step.data:
                    if self._stopping.wait(step.interval):
                        return
                    self._send(conn, bytes((byte,)))
            elif isinstance(step, Pause):
                self._stopping.wait(step.seconds)
            elif isinstance(step, Hang):
                self._stopping.wait(60)
                return
            else:  # Reset
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
        with suppress(OSError):
            conn.shutdown(socket.SHUT_WR)  # a clean end of the response

    def _send(self, conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        with self._lock:
            self.bytes_sent += len(data)


def _read_head(conn: socket.socket, stopping: threading.Event) -> tuple[str, str] | None:
    """The path and Host of a request, or None if the client never sent one."""
    conn.settimeout(0.2)
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 65536:
        try:
            chunk = conn.recv(4096)
        except TimeoutError:
            if stopping.is_set():
                return None
            continue
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    conn.settimeout(5)  # a client that stops reading must not hold a worker forever
    lines = data.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) < 2:
        return None
    host = ""
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"host":
            host = value.strip().decode("latin-1").rsplit(":", 1)[0]
    return parts[1].decode("latin-1"), host


# --- FTP -------------------------------------------------------------------------------


class FtpServer:
    """``with FtpServer(root) as ftp:`` an anonymous, read-only pyftpdlib server
    on 127.0.0.1 serving the directory ``root``; ``ftp.url("/robots.txt")``.

    ``retrieved`` lists the files sent (" (incomplete)" when the client hung
    up first); ``bytes_sent`` counts the data bytes pyftpdlib sent, all
    transfers together, so a test can say how much of a file left the server
    whatever the client kept.
    """

    def __init__(self, root: str) -> None:
        import logging
        import os

        from pyftpdlib.authorizers import DummyAuthorizer
        from pyftpdlib.handlers import DTPHandler, FTPHandler
        from pyftpdlib.servers import FTPServer

        quiet = logging.getLogger("pyftpdlib")  # else it installs a console handler
        if not quiet.handlers:
            quiet.addHandler(logging.NullHandler())
        quiet.setLevel(logging.WARNING)
        self.retrieved: list[str] = []
        self.bytes_sent = 0
        ftp = self

        class Counting(DTPHandler):  # type: ignore[misc]
            def close(self) -> None:
                if not self._closed:
                    ftp.bytes_sent += self.tot_bytes_sent
                super().close()

        class Handler(FTPHandler):  # type: ignore[misc]
            dtp_handler = Counting
            passive_ports = None
            authorizer = DummyAuthorizer()

            def on_file_sent(self, file: str) -> None:
                ftp.retrieved.append(os.path.basename(file))

            def on_incomplete_file_sent(self, file: str) -> None:
                ftp.retrieved.append(os.path.basename(file) + " (incomplete)")

        Handler.authorizer.add_anonymous(root)
        self._server = FTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self._server.socket.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"ftp://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> FtpServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            self._server.ioloop.loop(0.05, blocking=False)
        self._server.close_all()
