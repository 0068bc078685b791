"""The Tester's connections (``scrapy_rep.tools.tester.server``, docs/tester.md
"Safety"): its port, a connection over the bound turned away, one whose
thread cannot start, Ctrl+C while one starts, and closing with a connection
open. Real Testers on 127.0.0.1, raw sockets; nothing waits on the clock.
"""

from __future__ import annotations

import selectors
import socket
import socketserver
import threading
import time
from collections.abc import Callable
from contextlib import closing
from typing import Any

import pytest

from scrapy_rep.tools.tester import server as tester_server
from scrapy_rep.tools.tester.guard import Limits
from scrapy_rep.tools.tester.server import make_server

from .conftest import Running
from .test_tester_security import PATIENCE, exchange, get, status_of


def connect(port: int) -> closing[socket.socket]:
    return closing(socket.create_connection(("127.0.0.1", port), PATIENCE))


def request_for(port: int) -> bytes:
    return f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()


def test_make_server_without_a_port_picks_a_free_one() -> None:
    servers = [make_server(tester_server.TesterConfig()) for _ in range(2)]
    try:
        ports = [server.server_address[1] for server in servers]
        assert ports[0] != ports[1] and 0 not in ports
    finally:
        for server in servers:
            server.server_close()


def read_to_the_end(sock: socket.socket) -> bytes:
    """All a socket receives until the other side ends it; a reset fails the test."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def test_a_connection_turned_away_reads_its_503_though_its_request_is_unread() -> None:
    """A client over the bound that has sent its whole request (as a browser
    has) reads the 503, then the end of the connection. The Tester never reads
    that request, and a socket closed with bytes unread is reset instead (a
    client may then report the reset, not the 503) unless the Tester ends its
    side first. Both connections are made and the request sent before the
    Tester begins to accept: the request is there when it is turned away."""
    limits = Limits(request_timeout=PATIENCE * 3, max_connections=1)
    server = make_server(tester_server.TesterConfig(limits=limits))
    port = server.server_address[1]
    serving = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    try:
        with connect(port), connect(port) as turned:  # the first sends nothing: it holds the place
            turned.sendall(request_for(port))
            serving.start()
            answer = read_to_the_end(turned)
    finally:
        if serving.is_alive():
            server.shutdown()
        server.server_close()
    assert status_of(answer) == 503 and answer.endswith(b"too many connections: try again")


class OutOfThreads:
    """``threading`` as ``socketserver`` sees it on a machine out of threads
    for one connection: that connection's thread does not start (``start``
    raises RuntimeError, as ``Thread.start`` does then); later ones do."""

    refused = 0

    def Thread(self, *args: Any, **kwargs: Any) -> threading.Thread:
        thread = threading.Thread(*args, **kwargs)
        if not self.refused:
            self.refused += 1

            def start() -> None:
                raise RuntimeError("can't start new thread")

            thread.start = start  # type: ignore[method-assign]
        return thread

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


def test_a_connection_whose_thread_cannot_start_gives_its_place_back(
    start_tester: Callable[..., Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The machine out of threads for a moment: the connection that got none
    is closed unanswered and its place given back. Kept, each such moment
    would hold a place for good, and once all were held every connection
    would be told 503 (here, with one place, the very next one)."""
    tester = start_tester(limits=Limits(request_timeout=PATIENCE * 3, max_connections=1))
    port = tester.server.server_address[1]
    threads = OutOfThreads()
    monkeypatch.setattr(socketserver, "threading", threads)
    unanswered = exchange(port, request_for(port))
    assert (threads.refused, unanswered) == (1, b"")
    assert status_of(get(port, "/", f"127.0.0.1:{port}")) == 200


class CtrlCWhileStarting:
    """``threading`` as ``socketserver`` sees it when Ctrl+C lands in
    ``Thread.start`` after the connection's thread has run: ``start`` waits
    for the thread to begin, and on a busy machine the thread may have served
    the whole request before the accepting thread runs again."""

    def Thread(self, *args: Any, **kwargs: Any) -> threading.Thread:
        thread = threading.Thread(*args, **kwargs)
        started = thread.start

        def start() -> None:
            started()
            thread.join(PATIENCE)
            raise KeyboardInterrupt

        thread.start = start  # type: ignore[method-assign]
        return thread

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


def test_ctrl_c_while_a_connections_thread_starts_gives_its_place_back_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Ctrl+C goes through (``serve()`` stops on it), not a "released too
    many times" in its place, and the Tester's one place is still one."""
    limits = Limits(request_timeout=PATIENCE * 3, max_connections=1)
    server = make_server(tester_server.TesterConfig(limits=limits))
    port = server.server_address[1]
    serving = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    try:
        with connect(port) as client:
            client.sendall(request_for(port))
            request, address = server.get_request()
            monkeypatch.setattr(socketserver, "threading", CtrlCWhileStarting())
            with pytest.raises(KeyboardInterrupt):
                server.process_request(request, address)
            monkeypatch.undo()
            assert status_of(read_to_the_end(client)) == 200  # its thread served it
        serving.start()
        with connect(port), connect(port) as turned:  # the first holds the place
            turned.sendall(request_for(port))
            assert status_of(read_to_the_end(turned)) == 503
    finally:
        if serving.is_alive():
            server.shutdown()
        server.server_close()


def test_closing_the_tester_does_not_wait_for_an_idle_connection() -> None:
    """Ctrl+C (``server_close``) with a browser's idle connection open: the
    Tester closes at once, not when that connection's deadline passes."""
    server = make_server(tester_server.TesterConfig(limits=Limits(request_timeout=PATIENCE * 3)))
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    port = server.server_address[1]
    with connect(port):
        assert status_of(get(port, "/", f"127.0.0.1:{port}")) == 200  # the idle one is taken

        def close() -> None:
            server.shutdown()
            server.server_close()

        closer = threading.Thread(target=close)
        closer.start()
        closer.join(PATIENCE)
        closed_at_once = not closer.is_alive()
    closer.join(PATIENCE * 3)
    serving.join(PATIENCE)
    assert closed_at_once


def test_a_burst_of_connections_is_taken_at_once_not_after_syn_retries() -> None:
    """Fifty connections at once, as a page of many requests or a few tabs
    opening together make: the kernel completes every handshake while the
    Tester is busy (its listen backlog holds them), instead of dropping the
    SYNs past the backlog, which clients then resend a second or more later.
    The connections are made before the Tester accepts any, so the backlog
    alone must hold them: with a backlog of 5 the sixth and later never
    connect, however long the wait. Then each is answered (200, or 503 past
    ``max_connections``)."""
    server = make_server(tester_server.TesterConfig())
    port = server.server_address[1]
    clients = [socket.socket() for _ in range(50)]
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", port))
        pending = set(clients)
        with selectors.DefaultSelector() as waiting:
            for client in clients:
                waiting.register(client, selectors.EVENT_WRITE)
            deadline = time.monotonic() + PATIENCE
            while pending and time.monotonic() < deadline:
                for key, _ in waiting.select(deadline - time.monotonic()):
                    waiting.unregister(key.fileobj)
                    pending.discard(key.fileobj)  # type: ignore[arg-type]
        assert not pending, f"{len(pending)} of 50 connections waited for a SYN retry"
        assert all(client.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for client in clients)
        serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        serving.start()
        try:
            statuses = []
            for client in clients:
                client.setblocking(True)
                client.settimeout(PATIENCE)
                client.sendall(request_for(port))
                statuses.append(status_of(read_to_the_end(client)))
                client.close()
            assert set(statuses) <= {200, 503} and statuses.count(200) >= 1
        finally:
            server.shutdown()
            serving.join(PATIENCE)
    finally:
        for client in clients:
            client.close()
        server.server_close()
