"""Real servers on 127.0.0.1 for crawl tests and benchmarks: HTTP and FTP.

``SiteServer`` is a threaded stdlib HTTP server whose answers are set per path
(and optionally per Host header), and which records every request it gets, so
tests can assert what reached the server. Behaviours cover docs/spec.md §2's table:
statuses, redirects, resets, hangs, truncated and huge bodies. Nothing here
imports Scrapy, so the benchmark script reuses it.
"""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "Behaviour",
    "GzipBomb",
    "Hang",
    "Hit",
    "Huge",
    "Redirect",
    "Reply",
    "Reset",
    "SiteServer",
    "Truncated",
    "ftp_server",
]


# --- behaviours --------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Redirect:
    location: str
    status: int = 301


@dataclass(frozen=True)
class Reset:
    """Read the request, then abort the connection (TCP RST)."""


@dataclass(frozen=True)
class Hang:
    """Read the request and never answer (until the server stops)."""


@dataclass(frozen=True)
class Truncated:
    """Announce more bytes than are sent, then close."""

    body: bytes
    announced: int


@dataclass(frozen=True)
class Huge:
    """``size`` bytes generated on the fly: comment lines, with ``inserts`` at offsets.

    Never held in memory; how much was actually sent is recorded on the server.
    Each insert should start with a newline so it begins a line of its own.
    """

    size: int
    inserts: tuple[tuple[int, bytes], ...] = ()


@dataclass(frozen=True)
class GzipBomb:
    """``Content-Encoding: gzip`` of ``head`` + ``zeros`` NUL bytes + ``tail``, streamed.

    1 GB of zeros is about 1 MB on the wire. Built from one precomputed
    deflate block repeated (full flushes make blocks independent), so the
    server spends no time compressing; bytes sent are recorded.
    """

    head: bytes
    zeros: int
    tail: bytes = b""


Behaviour = Reply | Redirect | Reset | Hang | Truncated | Huge | GzipBomb
Route = Behaviour | Callable[[str], Behaviour]  # a callable gets the Host header


@dataclass(frozen=True)
class Hit:
    """One request as the server saw it."""

    path: str
    host: str
    user_agent: str
    at: float


def page(path: str) -> Reply:
    return Reply(
        200, f"<html><body>page {path}</body></html>".encode(), {"Content-Type": "text/html"}
    )


# --- the HTTP server ----------------------------------------------------------


class SiteServer:
    """``with SiteServer({"/robots.txt": Reply(...)}) as site: site.url("/x")``."""

    def __init__(
        self, routes: Mapping[str, Route] | None = None, address: str = "127.0.0.1"
    ) -> None:
        self.routes: dict[str, Route] = dict(routes or {})
        self.hits: list[Hit] = []
        self.huge_bytes_sent = 0
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = _HTTPServer((address, 0), _Handler)  # 127.0.0.2 too, on Linux
        self._httpd.site = self
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        with self._lock:
            return [hit.path for hit in self.hits]

    def count(self, path: str) -> int:
        return self.paths().count(path)

    def behaviour(self, path: str, host: str) -> Behaviour:
        route = self.routes.get(path)
        if route is None:
            return page(path)
        return route(host) if callable(route) else route

    def record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's 5 drops the SYN of a 6th connection opened at once: the
    # client sends it again a second later (Scrapy opens 8 per host at once).
    request_queue_size = 128
    site: SiteServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets and aborted downloads are the point of several tests


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        site = self.server.site
        host = self.headers.get("Host", "")
        site.record(Hit(self.path, host, self.headers.get("User-Agent", ""), time.monotonic()))
        behaviour = site.behaviour(self.path.split("?", 1)[0], host.rsplit(":", 1)[0])
        if isinstance(behaviour, Reply):
            self._reply(behaviour.status, behaviour.body, behaviour.headers)
        elif isinstance(behaviour, Redirect):
            self._reply(behaviour.status, b"", {"Location": behaviour.location})
        elif isinstance(behaviour, Reset):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif isinstance(behaviour, Hang):
            site.stopping.wait(30)
            self.close_connection = True
        elif isinstance(behaviour, Truncated):
            self.send_response(200)
            self.send_header("Content-Length", str(behaviour.announced))
            self.end_headers()
            self.wfile.write(behaviour.body)
            self.wfile.flush()
            self.close_connection = True
        elif isinstance(behaviour, GzipBomb):
            self._gzip_bomb(behaviour)
        else:
            self._huge(behaviour)

    def _reply(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _huge(self, huge: Huge) -> None:
        site = self.server.site
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(huge.size))
        self.end_headers()
        filler = (b"# " + b"x" * 61 + b"\n") * 1024  # 64-byte comment lines
        sent = 0
        try:
            for offset, data in (*sorted(huge.inserts), (huge.size, b"")):
                while sent < offset and not site.stopping.is_set():
                    part = filler[: min(len(filler), offset - sent)]
                    self._send(part)
                    sent += len(part)
                self._send(data)
                sent += len(data)
        except OSError:
            pass  # the client stopped reading: that is what the test wants
        self.close_connection = True

    def _gzip_bomb(self, bomb: GzipBomb) -> None:
        chunk = 1 << 20
        deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        head = deflate.compress(bomb.head) + deflate.flush(zlib.Z_FULL_FLUSH)
        block = deflate.compress(bytes(chunk)) + deflate.flush(zlib.Z_FULL_FLUSH)
        whole, rest = divmod(bomb.zeros, chunk)
        end = deflate.compress(bytes(rest) + bomb.tail) + deflate.flush()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        try:
            self._send(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + head)
            for _ in range(whole):
                if self.server.site.stopping.is_set():
                    return
                self._send(block)
            crc = zlib.crc32(bomb.head)
            for _ in range(whole):
                crc = zlib.crc32(bytes(chunk), crc)
            crc = zlib.crc32(bytes(rest) + bomb.tail, crc)
            size = len(bomb.head) + bomb.zeros + len(bomb.tail)
            self._send(end + struct.pack("<II", crc, size & 0xFFFFFFFF))
        except OSError:
            pass  # the client stopped reading: that is what the test wants
        self.close_connection = True

    def _send(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()
        with self.server.site._lock:
            self.server.site.huge_bytes_sent += len(data)

    def finish(self) -> None:
        with suppress(OSError):
            super().finish()


# --- FTP ------------------------------------------------------------------------


@contextmanager
def ftp_server(root: Path) -> Iterator[tuple[int, list[str]]]:
    """An anonymous, read-only pyftpdlib server on 127.0.0.1 serving ``root``.

    Yields the port and a live list of the files retrieved.
    """
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import FTPServer

    # pyftpdlib installs its own INFO-level console handler unless one exists.
    ftp_log = logging.getLogger("pyftpdlib")
    if not ftp_log.handlers:
        ftp_log.addHandler(logging.NullHandler())
    ftp_log.setLevel(logging.WARNING)
    retrieved: list[str] = []

    class Handler(FTPHandler):  # type: ignore[misc]
        def on_file_sent(self, file: str) -> None:
            retrieved.append(Path(file).name)

        def on_incomplete_file_sent(self, file: str) -> None:
            retrieved.append(Path(file).name + " (incomplete)")

    authorizer = DummyAuthorizer()
    authorizer.add_anonymous(str(root))
    Handler.authorizer = authorizer
    Handler.passive_ports = None
    server = FTPServer(("127.0.0.1", 0), Handler)
    port = server.socket.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            server.ioloop.loop(0.05, blocking=False)  # serve_forever logs each call
        server.close_all()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield port, retrieved
    finally:
        stop.set()
        thread.join(5)
