"""The request guard (``scrapy_rep.tools.tester.guard``, docs/tester.md "Safety")
at the edges a mutation run (tests/mutation/run.py) found untested: a body at
the cap and one byte over, bodies cut short, chunk and trailer lines, Host
headers that almost name the Tester, and the limits docs/tester.md promises.
Raw sockets on 127.0.0.1 against a Tester the test starts, its limits made
small (``TesterConfig.limits``). aiohttp frames the requests: what is
asserted is what a client sees (the status, the connection ended), not the
wording of a parser's error.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path

import pytest

from scrapy_rep.tools.tester.guard import Limits, Refused, check_host, host_names

from .conftest import Running
from .test_tester_connections import room_for_the_test
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


def test_a_body_shorter_than_announced_is_never_read_as_a_whole(
    start_tester: Callable[..., Running],
) -> None:
    """``{}`` under ``Content-Length: 10`` reads as JSON, and is never taken
    for the body: a client that ends its side is closed unanswered; one that
    waits is told 408 at the body's deadline."""
    tester = start_tester(limits=Limits(request_timeout=0.3))
    port = tester.server.server_address[1]
    short = post_head(tester, "Content-Length: 10") + b"{}"
    assert send_and_shut(port, short) == b""
    waited = exchange(port, short)
    assert (status_of(waited), error_of(waited)) == (408, "the request took too long to arrive")
    assert status_of(get(port, "/", f"127.0.0.1:{port}")) == 200  # and it serves on


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"zz\r\n", 400),  # not hex
        (b"-2\r\n{}\r\n0\r\n\r\n", 400),
        (b"2\r\n{}", 408),  # no end of chunk: the client waits
        (b"2\r\n{}\r\n0\r\nX-Trailer: 1", 408),  # a trailer cut short
        (b"2\r\n{}xx\r\n0\r\n\r\n", 400),  # a chunk longer than announced
    ],
)
def test_a_chunked_body_cut_short_or_misframed_is_refused(
    start_tester: Callable[..., Running], body: bytes, status: int
) -> None:
    """Each is refused as what it is (400 when misframed, 408 when the rest
    never comes), never read as a whole body; with the client's side ended,
    the connection is closed unanswered."""
    tester = start_tester(limits=Limits(request_timeout=0.3))
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked")
    assert status_of(exchange(port, head + body)) == status
    assert send_and_shut(port, head + body) == b""


def test_chunk_extensions_are_skipped_and_a_trailer_line_is_bounded(
    start_tester: Callable[..., Running],
) -> None:
    """A chunk-size line's extensions are passed over as they come, however
    long (nothing of them is kept); a trailer line is a header line, refused
    (400) past aiohttp's 8,190 bytes."""
    tester = start_tester()
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked")

    def extended(length: int) -> bytes:
        return b"2;x=" + b"y" * length + b"\r\n{}\r\n0\r\n\r\n"

    def trailer(length: int) -> bytes:
        return b"2\r\n{}\r\n0\r\nX-Long: " + b"y" * length + b"\r\n\r\n"

    answers = [
        exchange(port, head + extended(1_000)),
        exchange(port, head + extended(70_000)),
        exchange(port, head + trailer(8_000)),
        exchange(port, head + trailer(9_000)),
    ]
    assert [status_of(answer) for answer in answers] == [200, 200, 200, 400]


def test_trailer_fields_count_with_the_headers(
    start_tester: Callable[..., Running],
) -> None:
    """A chunked body's trailer fields are held to the number of header
    fields a request may have (aiohttp's 128): a hundred are read, two
    hundred refused; as are two hundred headers."""
    tester = start_tester()
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked") + b"2\r\n{}\r\n0\r\n"

    def trailers(count: int) -> bytes:
        return b"".join(b"X-T%d: 1\r\n" % n for n in range(count)) + b"\r\n"

    headers = [f"X-H{n}: 1" for n in range(200)]
    many_headers = exchange(port, post_head(tester, *headers, "Content-Length: 2") + b"{}")
    statuses = [status_of(exchange(port, head + trailers(n))) for n in (31, 100, 200)]
    assert [*statuses, status_of(many_headers)] == [200, 200, 400, 400]


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


# --- the limits docs/tester.md gives ------------------------------------------------------


def test_the_default_limits_are_those_docs_tester_md_gives() -> None:
    """ "Request bodies ... at most 2,000,000 bytes", "A connection has 10 seconds
    to send a request's head", "At most 2,048 connections are open at once"."""
    text = " ".join((ROOT / "docs" / "tester.md").read_text(encoding="utf-8").split())
    body = re.search(r"is at most ([\d,]+) bytes either way \(413", text)
    seconds = re.search(r"A connection has (\d+) seconds to send a request's head", text)
    connections = re.search(r"At most ([\d,]+) connections are open at once", text)
    assert body and seconds and connections, "docs/tester.md's Safety section changed"
    documented = Limits(
        request_timeout=float(seconds.group(1)),
        max_connections=int(connections.group(1).replace(",", "")),
        max_body=int(body.group(1).replace(",", "")),
    )
    assert Limits() == documented


def test_at_most_max_connections_at_once_by_default(
    start_tester: Callable[..., Running],
) -> None:
    """With the default bound, every place taken by an idle connection, the
    next connection at once is told 503 at once. (The idle ones are given
    time enough not to time out while 2,048 connections are made on a busy
    machine.)"""
    room_for_the_test(2 * Limits().max_connections + 64)  # both ends are in this process
    tester = start_tester(limits=Limits(request_timeout=PATIENCE * 6))
    assert tester.server.max_connections == Limits().max_connections
    port = tester.server.server_address[1]
    with ExitStack() as held:
        for _ in range(Limits().max_connections):
            held.enter_context(closing(socket.create_connection(("127.0.0.1", port), PATIENCE)))
        with closing(socket.create_connection(("127.0.0.1", port), PATIENCE)) as turned:
            assert status_of(read_all(turned)) == 503
