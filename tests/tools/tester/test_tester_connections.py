"""The Tester's connections (``scrapy_rep.tools.tester.server``, docs/tester.md
"Safety"): its port, a connection over the bound turned away, one reset by
its client, closing with a connection open, a burst, and a thousand idle
connections beside a real request. Real Testers on 127.0.0.1, raw sockets;
nothing waits on the clock (how fast the answer comes is measured in
benchmarks/tester_idle.py, never asserted).
"""

from __future__ import annotations

import http.client
import json
import os
import resource
import selectors
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from scrapy_rep.tools.tester import server as tester_server
from scrapy_rep.tools.tester.guard import Limits
from scrapy_rep.tools.tester.server import make_server

from .conftest import Running
from .test_tester_security import PATIENCE, ROOT, get, status_of


def connect(port: int) -> closing[socket.socket]:
    return closing(socket.create_connection(("127.0.0.1", port), PATIENCE))


def request_for(port: int) -> bytes:
    return f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()


def room_for_the_test(descriptors: int) -> None:
    """The open-files soft limit raised to ``descriptors`` (a test that holds
    many connections has both their ends in this process); fails, never skips,
    when the hard limit is lower."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < descriptors:
        if hard != resource.RLIM_INFINITY and hard < descriptors:
            pytest.fail(f"this test needs {descriptors} open files; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, hard))


def test_make_server_without_a_port_picks_a_free_one() -> None:
    servers = [make_server(tester_server.TesterConfig()) for _ in range(2)]
    try:
        ports = [server.server_address[1] for server in servers]
        assert ports[0] != ports[1] and 0 not in ports
    finally:
        for server in servers:
            server.server_close()


def test_on_ipv6_loopback_the_address_and_the_link_are_the_bound_ones() -> None:
    """``--host ::1``: the address is (host, port) as on IPv4, the printed
    link has the host in brackets, and the page answers there."""
    server = make_server(tester_server.TesterConfig(), "::1")
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    try:
        host, port = server.server_address
        assert (host, server.url) == ("::1", f"http://[::1]:{port}/")
        with closing(socket.create_connection(("::1", port), PATIENCE)) as sock:
            head = f"GET / HTTP/1.1\r\nHost: [::1]:{port}\r\nConnection: close\r\n\r\n"
            sock.sendall(head.encode())
            assert status_of(read_to_the_end(sock)) == 200
    finally:
        server.shutdown()
        server.server_close()
        serving.join(PATIENCE)


def test_a_tester_stopped_before_it_serves_stops_quietly() -> None:
    """Ctrl+C at once, before the serving thread has started its loop:
    ``serve`` stops the server without a traceback, and a ``serve_forever``
    that starts after the stop returns at once."""
    server = make_server(tester_server.TesterConfig())
    server.shutdown()
    server.serve_forever()
    server.server_close()
    assert server.socket.fileno() == -1


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


def test_a_connection_reset_by_its_client_gives_its_place_back(
    start_tester: Callable[..., Running],
) -> None:
    """A client that resets its connection halfway through a request (an
    RST, not a FIN) frees its place: with one place, the next connection is
    served, not told 503."""
    tester = start_tester(limits=Limits(request_timeout=PATIENCE * 3, max_connections=1))
    port = tester.server.server_address[1]
    for _ in range(3):
        with connect(port) as client:
            client.sendall(b"POST /api/test HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99\r\n")
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + PATIENCE  # until the Tester has seen the reset
        while (answer := status_of(get(port, "/", f"127.0.0.1:{port}"))) == 503:
            assert time.monotonic() < deadline, "the reset connection kept its place"
        assert answer == 200


def test_closing_the_tester_does_not_wait_for_an_idle_connection() -> None:
    """Ctrl+C (``server_close``) with a browser's idle connection open: the
    Tester closes at once, not when that connection's deadline passes; it
    ends that connection, and its worker threads go (it may be one server
    of many in a process, as in these tests)."""
    server = make_server(tester_server.TesterConfig(limits=Limits(request_timeout=PATIENCE * 3)))
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    serving.start()
    port = server.server_address[1]
    headers = {"X-Tester-Token": server.config.token, "Content-Type": "application/json"}
    with connect(port) as idle:
        assert status_of(get(port, "/", f"127.0.0.1:{port}")) == 200  # the idle one is taken
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=PATIENCE)
        connection.request("POST", "/api/test", b'{"robots": ""}', headers)  # a worker's answer
        assert connection.getresponse().status == 200
        connection.close()

        def close() -> None:
            server.shutdown()
            server.server_close()

        closer = threading.Thread(target=close)
        closer.start()
        closer.join(PATIENCE)
        closed_at_once = not closer.is_alive()
        ended = read_to_the_end(idle)
    closer.join(PATIENCE * 3)
    serving.join(PATIENCE)
    assert closed_at_once
    assert ended == b""  # ended by the Tester: the read did not wait for PATIENCE
    deadline = time.monotonic() + PATIENCE
    while any(thread.name.startswith("tester") for thread in threading.enumerate()):
        assert time.monotonic() < deadline, "the Tester's worker threads outlived it"


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


def test_a_connection_is_kept_alive_between_requests(
    start_tester: Callable[..., Running],
) -> None:
    """HTTP/1.1 keep-alive: the page, its script and an API call over one
    connection, as a browser sends them."""
    tester = start_tester()
    connection = http.client.HTTPConnection("127.0.0.1", tester.server.server_address[1], PATIENCE)
    try:
        statuses, sockets = [], []
        for target, headers in (
            ("/", {}),
            ("/static/tester.js", {}),
            ("/api/config", {"X-Tester-Token": tester.token}),
        ):
            connection.request("GET", target, headers=headers)
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            sockets.append(connection.sock)
    finally:
        connection.close()
    assert statuses == [200, 200, 200]
    assert sockets[0] is not None and sockets == [sockets[0]] * 3


IDLE = 1_000


def still_open(sockets: list[socket.socket]) -> int:
    """How many of ``sockets`` the Tester has neither answered nor closed:
    nothing to read on them (an answer, an end or a reset would be)."""
    with selectors.DefaultSelector() as watching:  # epoll: no limit of 1,024 descriptors
        for sock in sockets:
            watching.register(sock, selectors.EVENT_READ)
        ready = watching.select(0)
    return len(sockets) - len(ready)


def test_a_request_is_answered_while_a_thousand_idle_connections_are_open(
    start_tester: Callable[..., Running],
) -> None:
    """A thousand connections held open, half silent, half stopped halfway
    through a request's head (as a slow client or an attacker holds them):
    a test from the page is answered, and answered right, before a client
    timeout of 5 s; and every idle connection is still open after. The
    thread-per-connection server answered 503 past 32 connections. How fast
    the answer comes is a figure of benchmarks/tester_idle.py."""
    room_for_the_test(2 * IDLE + 256)  # both ends of each connection are in this process
    tester = start_tester(limits=Limits(request_timeout=PATIENCE * 6))  # no idle one times out
    port = tester.server.server_address[1]
    with ExitStack() as held:
        idle = [held.enter_context(connect(port)) for _ in range(IDLE)]
        for sock in idle[::2]:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
        # Connections are taken in the order they were made (the listen backlog
        # is a queue): the Tester holds every idle one before this one.
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        data = {"robots": "User-agent: *\nDisallow: /a\n", "urls": ["/a", "/b"]}
        headers = {"X-Tester-Token": tester.token, "Content-Type": "application/json"}
        try:
            connection.request("POST", "/api/test", json.dumps(data), headers)
            response = connection.getresponse()
            status, answer = response.status, json.loads(response.read())
        finally:
            connection.close()
        open_after = still_open(idle)
    assert status == 200
    assert [(row["url"], row["verdict"]) for row in answer["rows"]] == [
        ("/a", "disallowed"),
        ("/b", "allowed"),
    ]
    assert open_after == IDLE


def test_the_bound_fits_the_open_files_limit(tmp_path: Path) -> None:
    """``scrapy-rep tester`` under an open-files limit of 256 (hard: 512)
    raises its own to 512 and holds 512 - 128 = 384 connections at once (the
    rest of its descriptors are kept for its own files): it says so, and
    the 385th is told 503 rather than refused by the kernel."""

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 512))

    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy_rep.tools.cli", "tester", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=limited,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        with ExitStack() as held:
            for _ in range(384):
                held.enter_context(connect(port))
            with connect(port) as turned:
                status = status_of(read_to_the_end(turned))
    finally:
        process.terminate()
        _, err = process.communicate(timeout=PATIENCE)
    assert status == 503
    assert "note: at most 384 connections at once, not 2048" in err
