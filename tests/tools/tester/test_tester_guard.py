"""The request guard (``scrapy_rep.tools.tester.guard``, docs/tester.md "Safety")
at the edges a mutation run (tests/mutation/run.py) found untested: a body at
the cap and one byte over, bodies cut short, chunk and trailer lines, Host
headers that almost name the Tester, the deadline's very instant, and the
limits docs/tester.md promises. Raw sockets on 127.0.0.1 against a Tester the
test starts, its limits made small (``TesterConfig.limits``); no time rule
waits on the clock (the deadline runs on an injected one).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from scrapy_rep.tools.tester.guard import DeadlineReader, Limits, Refused, check_host, host_names

from .conftest import Running
from .test_tester_security import (
    PATIENCE,
    chunked,
    exchange,
    get,
    post_head,
    read_all,
    status_of,
)

ROOT = Path(__file__).resolve().parents[3]
CAP = 200  # the body cap of these tests' Testers (Limits.max_body)


def small_tester(start_tester: Callable[..., Running]) -> Running:
    return start_tester(limits=Limits(max_body=CAP))


def json_body(size: int) -> bytes:
    """A JSON object of exactly ``size`` bytes, a robots.txt padded with spaces."""
    head, tail = b'{"robots": "User-agent: *\\nDisallow: /a\\n', b'", "urls": ["/a"]}'
    return head + b" " * (size - len(head) - len(tail)) + tail


def error_of(answer: bytes) -> str:
    """The ``error`` of a refusal's JSON body."""
    message: str = json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]
    return message


def send_and_shut(port: int, request: bytes) -> bytes:
    """``request``, then the end of what the client sends (as curl does at EOF)."""
    return exchange(port, request, shut=True)


# --- the body cap -------------------------------------------------------------------------


def test_a_body_exactly_at_the_cap_is_read_and_one_byte_more_is_refused(
    start_tester: Callable[..., Running],
) -> None:
    """Both framings: ``Content-Length`` and chunks summed as they come."""
    tester = small_tester(start_tester)
    port = tester.server.server_address[1]
    at_cap, over = json_body(CAP), json_body(CAP + 1)
    sized = [
        exchange(port, post_head(tester, f"Content-Length: {len(body)}") + body)
        for body in (at_cap, over)
    ]
    head = post_head(tester, "Transfer-Encoding: chunked")
    in_chunks = [
        exchange(port, head + chunked(body[:50], body[50:]) + b"0\r\n\r\n")
        for body in (at_cap, over)
    ]
    assert [status_of(answer) for answer in sized + in_chunks] == [200, 413, 200, 413]
    assert error_of(sized[1]) == error_of(in_chunks[1]) == f"at most {CAP} bytes"
    assert b'"verdict": "disallowed"' in sized[0] and b'"verdict": "disallowed"' in in_chunks[0]


# --- bodies cut short or badly framed ------------------------------------------------------


def test_a_body_shorter_than_announced_is_refused_even_when_it_reads_as_json(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester()
    answer = send_and_shut(
        tester.server.server_address[1], post_head(tester, "Content-Length: 10") + b"{}"
    )
    assert (status_of(answer), error_of(answer)) == (400, "the body is shorter than announced")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"zz\r\n", "bad chunk size"),  # not hex
        (b"-2\r\n{}\r\n0\r\n\r\n", "bad chunk size"),
        (b"2\r\n{}", "bad chunked body"),  # no end of chunk: the client stopped
        (b"2\r\n{}\r\n0\r\nX-Trailer: 1", "bad chunked body"),  # a trailer cut short
        (b"2\r\n{}xx\r\n0\r\n\r\n", "a chunk is longer than announced"),
    ],
)
def test_a_chunked_body_cut_short_or_misframed_is_refused(
    start_tester: Callable[..., Running], body: bytes, error: str
) -> None:
    """Each is refused as what it is, 400, never read as a whole body."""
    tester = start_tester()
    head = post_head(tester, "Transfer-Encoding: chunked")
    answer = send_and_shut(tester.server.server_address[1], head + body)
    assert (status_of(answer), error_of(answer)) == (400, error)


def test_chunk_size_lines_are_read_up_to_1024_bytes(start_tester: Callable[..., Running]) -> None:
    """A chunk-size line (its extensions included) or a trailer line is read up
    to 1,024 bytes with its line end; a longer one is refused, not read on."""
    tester = start_tester()
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked")

    def size_line(length: int) -> bytes:
        line = b"2;x=" + b"y" * (length - len(b"2;x=\r\n")) + b"\r\n"
        assert len(line) == length
        return line

    def trailer(length: int) -> bytes:
        line = b"X-Long: " + b"y" * (length - len(b"X-Long: \r\n")) + b"\r\n"
        assert len(line) == length
        return line

    answers = [
        exchange(port, head + size_line(1024) + b"{}\r\n0\r\n\r\n"),
        send_and_shut(port, head + size_line(1025) + b"{}\r\n0\r\n\r\n"),
        exchange(port, head + b"2\r\n{}\r\n0\r\n" + trailer(1024) + b"\r\n"),
        send_and_shut(port, head + b"2\r\n{}\r\n0\r\n" + trailer(1025) + b"\r\n"),
    ]
    assert [status_of(answer) for answer in answers] == [200, 400, 200, 400]


def test_a_chunked_body_has_at_most_31_trailer_fields(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester()
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked") + b"2\r\n{}\r\n0\r\n"

    def trailers(count: int) -> bytes:
        return b"".join(b"X-T%d: 1\r\n" % n for n in range(count)) + b"\r\n"

    most, one_more = exchange(port, head + trailers(31)), exchange(port, head + trailers(32))
    assert status_of(most) == 200
    assert (status_of(one_more), error_of(one_more)) == (400, "too many trailer fields")


# --- the Host header ---------------------------------------------------------------------


def test_a_host_without_a_port_names_port_80(start_tester: Callable[..., Running]) -> None:
    """``Host: 127.0.0.1`` is port 80: refused by a Tester on any other port.
    (The Tester on port 80 is the pure check: binding it needs privileges.)"""
    tester = start_tester()
    port = tester.server.server_address[1]
    assert port != 80
    assert status_of(get(port, "/", "127.0.0.1")) == 421
    assert status_of(get(port, "/", "localhost")) == 421
    names = host_names("127.0.0.1")
    check_host("127.0.0.1", names, 80)  # answered
    check_host("localhost:80", names, 80)
    for host, port_number in (("127.0.0.1", 81), ("127.0.0.1:81", 80), ("127.0.0.1:80", 81)):
        with pytest.raises(Refused) as refused:
            check_host(host, names, port_number)
        assert refused.value.status == 421


def test_a_bracketed_address_followed_by_anything_but_a_port_is_refused(
    start_tester: Callable[..., Running],
) -> None:
    """``[::1]x8765`` is no name: not read as ``[::1]`` on port ``8765``."""
    tester = start_tester(allowed_hosts=("::1",))
    port = tester.server.server_address[1]
    assert status_of(get(port, "/", f"[::1]:{port}")) == 200
    for host in (f"[::1]x{port}", f"[::1]]:{port}", f"[::1]{port}"):
        answer = get(port, "/", host)
        assert (host, status_of(answer)) == (host, 421)
        assert tester.token.encode() not in answer


def test_a_refused_host_is_told_the_names_as_a_host_header_writes_them(
    start_tester: Callable[..., Running],
) -> None:
    """The 421 says what to use: each name lower-cased, an IPv6 address in
    brackets, and the port (what ``--allow-host`` adds)."""
    tester = start_tester(allowed_hosts=("Tester.LAN", "fd00::5", "[fd00::6]"))
    port = tester.server.server_address[1]
    answer = get(port, "/", f"other.lan:{port}")
    assert status_of(answer) == 421
    assert error_of(answer) == (
        f"this tester answers to 127.0.0.1, [fd00::5], [fd00::6], localhost, tester.lan "
        f"(port {port}) only"
    )


# --- the deadline, on an injected clock ---------------------------------------------------


class Clock:
    """A monotonic clock the test sets by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("at", [100.0, 100.5])
def test_a_read_that_starts_at_or_after_the_deadline_times_out_with_bytes_waiting(
    at: float,
) -> None:
    """The deadline is the connection's whatever is waiting in its socket: a
    read begun at (or past) it is refused, not served from what arrived."""
    server_side, client_side = socket.socketpair()
    with closing(server_side), closing(client_side):
        client_side.sendall(b"GET / HTTP/1.1\r\n")
        clock = Clock(99.0)
        reader = DeadlineReader(server_side, 100.0, clock)
        buffer = bytearray(4)
        assert reader.readinto(buffer) == 4 and bytes(buffer) == b"GET "  # before it: read
        clock.now = at
        with pytest.raises(TimeoutError):
            reader.readinto(buffer)


# --- the limits docs/tester.md gives ------------------------------------------------------


def test_the_default_limits_are_those_docs_tester_md_gives() -> None:
    """ "Request bodies ... at most 2,000,000 bytes", "a connection has 10 seconds
    to send its whole request", "At most 32 connections are served at once"."""
    text = " ".join((ROOT / "docs" / "tester.md").read_text(encoding="utf-8").split())
    body = re.search(r"is at most ([\d,]+) bytes either way \(413\)", text)
    seconds = re.search(r"A connection has (\d+) seconds to send its whole request", text)
    connections = re.search(r"At most (\d+) connections are served at once", text)
    assert body and seconds and connections, "docs/tester.md's Safety section changed"
    documented = Limits(
        request_timeout=float(seconds.group(1)),
        max_connections=int(connections.group(1)),
        max_body=int(body.group(1).replace(",", "")),
    )
    assert Limits() == documented


def test_at_most_32_connections_at_once_by_default(start_tester: Callable[..., Running]) -> None:
    """With the default limits the 33rd connection at once is told 503 at once."""
    tester = start_tester()
    port = tester.server.server_address[1]
    threads = threading.active_count()
    with ExitStack() as held:
        for count in range(1, 33):
            held.enter_context(closing(socket.create_connection(("127.0.0.1", port), PATIENCE)))
            # Until the Tester has taken it (a thread each), for speed only: opened
            # faster than it accepts, connections past the listen backlog wait a
            # second for their SYN to be sent again. It takes them in order anyway.
            deadline = time.monotonic() + 1.0
            while threading.active_count() < threads + count and time.monotonic() < deadline:
                time.sleep(0.001)  # waiting for the server's thread, not a time rule
        with closing(socket.create_connection(("127.0.0.1", port), PATIENCE)) as turned:
            assert status_of(read_all(turned)) == 503
