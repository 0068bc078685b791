"""The Tester's server: aiohttp's, on its own event loop, in its own thread or process.

Why aiohttp (docs/tester.md, "Safety"): a maintained HTTP/1.1 server,
already in Scrapy's dependency tree, that frames requests itself (one
``Content-Length`` or chunks, the request line and headers within their
limits), keeps connections alive, and holds an idle connection as a few
kilobytes on one event loop rather than a thread: a thousand idle
connections leave the page's requests answered at once. Its limits are
``guard.Limits``: ``keepalive_timeout`` is the deadline of a request's
head, ``client_max_size`` the body's cap; ``app`` holds the routes and the
Tester's own checks. Here: the listening socket (a backlog for a burst),
the bound on connections open at once (503 past it), and ``serve()``, what
``scrapy-rep tester`` and ``scrapy robots --serve`` run until Ctrl+C.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from aiohttp import web

from scrapy_rep.tools.tester.app import make_app
from scrapy_rep.tools.tester.calls import LINK_LIMIT, MAX_ROWS, TesterConfig
from scrapy_rep.tools.tester.guard import Limits, host_names
from scrapy_rep.tools.tester.room import room_for

__all__ = ["LINK_LIMIT", "MAX_ROWS", "Limits", "TesterConfig", "make_server", "serve"]

#: Connections the kernel completes while the loop is busy (Python's
#: ``socketserver`` has 5, which drops a burst's SYNs; clients resend them a
#: second or more later). Linux caps it at ``net.core.somaxconn``.
BACKLOG: Final = 128
#: Threads that compute the API's answers (a live fetch, a store's report).
WORKERS: Final = 16
#: Seconds a request being answered is given when the Tester stops.
_STOPPING: Final = 0.5
_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 31\r\nConnection: close\r\n\r\ntoo many connections: try again"
)
#: aiohttp's log of malformed requests: refused (400) and not worth a traceback
#: in the terminal of a local tool.
_WIRE = logging.getLogger("scrapy_rep.tools.tester.wire")
_WIRE.addHandler(logging.NullHandler())
_WIRE.propagate = False


class _TurnedAway(asyncio.Protocol):
    """A connection past the bound: told 503 at once, its side ended first
    (closed with its request unread, a socket would be reset instead, and a
    client may then report the reset, not the 503)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_BUSY)
        transport.write_eof()
        transport.close()


class _Counted(asyncio.Protocol):
    """aiohttp's protocol for one connection, counted until it is lost."""

    def __init__(self, inner: asyncio.Protocol, release: Any) -> None:
        self._inner = inner
        self._release = release

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        self._inner.connection_lost(exc)


class TesterServer:
    """The Tester on a bound socket: ``serve_forever`` runs it on a new event
    loop in the calling thread; ``shutdown`` (from another thread) stops it."""

    def __init__(self, address: tuple[str, int], config: TesterConfig) -> None:
        self.config = config
        #: Connections open at once: ``Limits.max_connections``, or fewer when
        #: the open-files limit cannot make room for them (``room``).
        self.max_connections = room_for(config.limits.max_connections)
        family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.socket = socket.create_server(address, family=family, backlog=BACKLOG)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        #: The Host names answered, on every bind address (``guard.check_host``).
        self.hosts = host_names(str(self.server_address[0]), config.allowed_hosts)
        self._open = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._started = self._stopping = False
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve on a new event loop until ``shutdown``; in a thread with no
        loop running (``serve`` gives it one). ``poll_interval`` is
        ``socketserver``'s, unused: the loop wakes when told."""
        with self._lock:
            if self._stopping:
                return
            self._started = True
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._serving())
        finally:
            loop.close()
            self._stopped.set()

    async def _serving(self) -> None:
        workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="tester")
        app = make_app(self.config, self.hosts, self.server_address[1], workers)
        limits = self.config.limits
        runner = web.AppRunner(
            app,
            access_log=None,
            logger=_WIRE,
            shutdown_timeout=_STOPPING,
            keepalive_timeout=limits.request_timeout,  # a request's head, from the last answer
            max_line_size=LINK_LIMIT,  # the request target: a link to the page
            lingering_time=0,  # a refused body is not read on: the connection ends
        )
        await runner.setup()
        try:
            site = _Site(runner, self.socket, self._protocol_for(runner), backlog=BACKLOG)
            await site.start()
            with self._lock:
                self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
                stopping = self._stopping
            if not stopping:
                await self._stop.wait()
        finally:
            await runner.cleanup()
            workers.shutdown(wait=False, cancel_futures=True)

    def _protocol_for(self, runner: web.AppRunner) -> Any:
        def protocol() -> asyncio.Protocol:
            """aiohttp's protocol if a place is free; else 503, at once."""
            if self._open >= self.max_connections or runner.server is None:
                return _TurnedAway()
            self._open += 1
            return _Counted(runner.server(), self._release)

        return protocol

    def _release(self) -> None:
        self._open -= 1

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (from another thread) and wait until it has."""
        with self._lock:
            self._stopping = True
            started, loop, stop = self._started, self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # its loop has closed already
                loop.call_soon_threadsafe(stop.set)
        if started:
            self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()


class _Site(web.SockSite):
    """aiohttp's site on our socket, each connection made by ``protocol``."""

    def __init__(
        self, runner: web.AppRunner, sock: socket.socket, protocol: Any, backlog: int
    ) -> None:
        super().__init__(runner, sock, backlog=backlog)
        self._protocol = protocol

    async def start(self) -> None:
        await super(web.SockSite, self).start()  # BaseSite's: the runner knows its site
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._protocol, sock=self._sock, backlog=self._backlog
        )


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def make_server(config: TesterConfig, host: str = "127.0.0.1", port: int = 0) -> TesterServer:
    """A server bound and listening, ready to ``serve_forever``; port 0 picks a free one."""
    return TesterServer((host, port), config)


def serve(config: TesterConfig, host: str = "127.0.0.1", port: int = 8765) -> int:
    """Run the tester until Ctrl+C; prints its address first."""
    if not _is_loopback(host):
        names = ", ".join(sorted(host_names(host, config.allowed_hosts)))
        print(
            f"warning: the tester listens on {host}, not on loopback: anyone who can reach "
            "this address and send one of the names it answers to can use it to fetch "
            "the /robots.txt of any host this machine reaches, those of its own network "
            "included when they type one (a public site's redirects to loopback, private "
            "or link-local addresses are refused), and, with --store, read the store and "
            "make crawls refetch (the token guards against other pages, not against "
            f"people who see the page). It answers to {names}; add the name people use "
            "with --allow-host NAME",
            file=sys.stderr,
        )
    server = make_server(config, host, port)
    if server.max_connections < config.limits.max_connections:
        print(
            f"note: at most {server.max_connections} connections at once, not "
            f"{config.limits.max_connections}: the open-files limit (ulimit -n) allows no more",
            file=sys.stderr,
        )
    print(f"robots.txt tester: {server.url} (Ctrl+C to stop)", flush=True)
    # Its loop in a thread of its own: this thread may have one already (an
    # installed reactor's), and Ctrl+C lands here, where the wait is.
    serving = threading.Thread(target=server.serve_forever, name="tester", daemon=True)
    try:
        # Started inside: a Ctrl+C the moment the page answers may land in start().
        serving.start()
        while serving.is_alive():
            serving.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
    return 0
