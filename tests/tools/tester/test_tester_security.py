"""The Tester against the attacks docs/tester.md's "Safety" section lists.

Each test plays one attack on a Tester the test starts on loopback: a hostile
page served from another loopback port that redirects, frames, fetches or
links into the Tester (in headless Chromium), and raw sockets where an
attacker would use curl (another Host, bad body framing, idle and slow
connections, many connections at once). The time limits are the Tester's
own parameters (``Limits``), made small here; nothing sleeps.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from crawler.servers import Redirect, Reply, SiteServer
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from .conftest import Running, wait_ready

ROOT = Path(__file__).resolve().parents[3]
ROBOTS = b"User-agent: *\nDisallow: /admin\n"
#: How long a test waits for an answer the Tester should give at once: only a
#: bound on a failing test, never a time the Tester is held to.
PATIENCE = 10.0


def internal_site() -> SiteServer:
    """A service on the user's side of the firewall, with a dangerous GET."""
    return SiteServer(
        {
            "/admin/delete-everything": Reply(200, b"everything deleted"),
            "/robots.txt": Reply(200, ROBOTS, {"Content-Type": "text/plain"}),
        }
    )


def link_to(tester: Running, **query: Any) -> str:
    return tester.url + "?" + urlencode(query, doseq=True)


def html(body: str) -> Reply:
    return Reply(200, f"<!DOCTYPE html><html><body>{body}</body></html>".encode(), _HTML)


_HTML = {"Content-Type": "text/html"}


# --- loading a URL never fetches -------------------------------------------------------


def test_a_hostile_page_that_redirects_frames_or_fetches_makes_no_fetch(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """A page on another port sends the browser to a Tester link naming an
    internal URL (by a redirect, a meta refresh, an iframe, fetches and an
    image): the Tester's page opens (or is blocked) and nothing is fetched."""
    tester = start_tester()
    with internal_site() as internal:
        target = internal.url("/admin/delete-everything?confirm=1")
        link = link_to(tester, robots_url=target, url=["/x"])
        live = f"{tester.url}api/live?url={quote(target, safe='')}"
        hostile = {
            "/redirect": Redirect(link, 302),
            "/refresh": html(f'<meta http-equiv="refresh" content="0;url={link}">'),
            "/frame": html(f'<iframe src="{link}" onload="document.title=\'framed\'"></iframe>'),
            "/fetch": html(
                "<script>"
                f'new Image().src = "{live}";'
                f'Promise.allSettled([fetch("{link}", {{mode: "no-cors"}}),'
                f' fetch("{live}", {{mode: "no-cors"}}),'
                f' fetch("{live}", {{headers: {{"X-Tester-Token": "guess"}}}})])'
                '.then(() => { document.title = "sent"; });</script>'
            ),
        }
        with SiteServer(hostile) as evil:
            for path in ("/redirect", "/refresh"):
                browser.get(evil.url(path))
                WebDriverWait(browser, PATIENCE).until(
                    lambda d: d.current_url.startswith(tester.url)
                )
                wait_ready(browser)  # the page has started: it fetched then, or never
                field = browser.find_element(By.ID, "robots-url").get_attribute("value")
                assert (path, field) == (path, target)  # the link filled the form...
                assert (path, internal.paths()) == (path, [])  # ...and fetched nothing
            browser.get(evil.url("/frame"))
            WebDriverWait(browser, PATIENCE).until(lambda d: d.title == "framed")
            browser.get(evil.url("/fetch"))
            WebDriverWait(browser, PATIENCE).until(lambda d: d.title == "sent")
        assert internal.paths() == []


def test_a_link_fills_the_form_and_the_button_fetches_only_robots_txt(
    browser: Any, start_tester: Callable[..., Running]
) -> None:
    """A link clicked on a hostile page opens the Tester with the URL filled
    in; only the page's own Fetch live fetches, and what it asks for is the
    robots.txt of the URL's origin, never the path the link named."""
    tester = start_tester()
    with internal_site() as internal:
        target = internal.url("/admin/delete-everything?confirm=1")
        link = link_to(tester, robots_url=target)
        with SiteServer({"/link": html(f'<a id="go" href="{link}">a robots.txt</a>')}) as evil:
            browser.get(evil.url("/link"))
            browser.find_element(By.ID, "go").click()
            wait_ready(browser)
            assert browser.find_element(By.ID, "robots-url").get_attribute("value") == target
            assert internal.paths() == []
            browser.find_element(By.ID, "fetch-live").click()
            WebDriverWait(browser, PATIENCE).until(
                lambda d: "HTTP 200" in d.find_element(By.ID, "fetch-info").text
            )
            wait_ready(browser, runs=2)
            shown = browser.find_element(By.ID, "robots").get_attribute("value")
            field = browser.find_element(By.ID, "robots-url").get_attribute("value")
    assert internal.paths() == ["/robots.txt"]
    assert shown == ROBOTS.decode()
    assert field == internal.url("/robots.txt")  # what was fetched, shown


def test_the_live_call_asks_for_the_origins_robots_txt_whatever_url_it_is_given(
    start_tester: Callable[..., Running],
) -> None:
    """docs/spec.md §1.2: any URL typed becomes its origin's robots.txt URL,
    as the crawl makes it: path, query, fragment and credentials dropped."""
    tester = start_tester()
    with internal_site() as internal:
        port = internal.port
        given = [
            internal.url("/admin/delete-everything?confirm=1"),
            f"http://user:secret@127.0.0.1:{port}/admin/delete-everything#x",
            f"HTTP://127.0.0.1:{port}",
        ]
        answers = [tester.call(f"/api/live?url={quote(url, safe='')}") for url in given]
        bad = tester.call(f"/api/live?url={quote('http:///robots.txt', safe='')}")
    assert [status for status, _ in answers] == [200, 200, 200]
    assert {answer["url"] for _, answer in answers} == {internal.url("/robots.txt")}
    assert internal.paths() == ["/robots.txt"] * 3
    assert bad[0] == 400


# --- the Host check, on every address -----------------------------------------------


def exchange(port: int, request: bytes, *, shut: bool = False) -> bytes:
    """Send ``request`` over a raw socket on loopback; everything the server answers."""
    with closing(socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)) as sock:
        sock.sendall(request)
        if shut:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def get(port: int, path: str, host: str | None, token: str = "") -> bytes:
    lines = [f"GET {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    if token:
        lines.append(f"X-Tester-Token: {token}")
    lines += ["Connection: close", "", ""]
    return exchange(port, "\r\n".join(lines).encode())


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0"])
def test_a_rebound_name_is_refused_on_every_bind_address(
    start_tester: Callable[..., Running], bind: str
) -> None:
    """DNS rebinding: a name the attacker controls, resolved to the Tester,
    arrives with its own Host. Neither the page (with its token) nor an API
    call is answered for it, whatever address the Tester listens on."""
    tester = start_tester(host=bind)
    port = tester.server.server_address[1]
    page = get(port, "/", f"evil.example:{port}")
    live = get(port, "/api/live?url=http://127.0.0.1:1/", f"evil.example:{port}", tester.token)
    assert status_of(page) == 421 and tester.token.encode() not in page
    assert status_of(live) == 421
    for host in (f"127.0.0.1:{port + 1 if port < 65535 else 1}", f"127.0.0.1.evil:{port}"):
        assert (host, status_of(get(port, "/", host))) == (host, 421)
    # No Host, or two: not HTTP/1.1 at all, refused by aiohttp's parser (400).
    close = "Connection: close\r\n\r\n"
    twice = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example:{port}\r\n{close}"
    proxied = f"GET http://evil.example:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{close}"
    for refused in (get(port, "/", None), exchange(port, twice.encode())):
        assert status_of(refused) == 400 and tester.token.encode() not in refused
    # HTTP/1.0 has no Host to send: refused by the Tester's own check.
    assert status_of(exchange(port, b"GET / HTTP/1.0\r\n\r\n")) == 421
    assert status_of(exchange(port, proxied.encode())) == 421
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}", f"{bind}:{port}"):
        answer = get(port, "/", host)
        assert (host, status_of(answer)) == (host, 200)
        assert tester.token.encode() in answer


def test_names_given_to_allow_host_are_answered_and_no_others(
    start_tester: Callable[..., Running],
) -> None:
    tester = start_tester(host="0.0.0.0", allowed_hosts=("tester.lan", "fd00::5"))
    port = tester.server.server_address[1]
    for host, status in (
        (f"tester.lan:{port}", 200),
        (f"TESTER.LAN:{port}", 200),
        (f"[fd00::5]:{port}", 200),
        (f"other.lan:{port}", 421),
    ):
        assert (host, status_of(get(port, "/", host))) == (host, status)


def test_scrapy_rep_tester_answers_the_names_given_with_allow_host() -> None:
    """The option, from the command line to the server's check."""
    command = ["tester", "--port", "0", "--allow-host", "tester.lan"]
    process = subprocess.Popen(
        [sys.executable, "-m", "scrapy_rep.tools.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        named = status_of(get(port, "/", f"tester.lan:{port}"))
        other = status_of(get(port, "/", f"other.lan:{port}"))
    finally:
        process.terminate()
        process.communicate(timeout=PATIENCE)
    assert (named, other) == (200, 421)


# --- bodies ------------------------------------------------------------------------------


def post_head(tester: Running, *headers: str) -> bytes:
    port = tester.server.server_address[1]
    lines = [
        "POST /api/test HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"X-Tester-Token: {tester.token}",
        "Content-Type: application/json",
        *headers,
        "Connection: close",  # else the Tester keeps it open for the next request
        "",
        "",
    ]
    return "\r\n".join(lines).encode()


@pytest.mark.parametrize(
    ("framing", "status"),
    [
        (["Content-Length: -1"], 400),
        (["Content-Length: abc"], 400),
        (["Content-Length: +5"], 400),
        (["Content-Length: 5", "Content-Length: 5"], 400),
        (["Content-Length: 5", "Transfer-Encoding: chunked"], 400),
        (["Transfer-Encoding: gzip"], 400),
        ([], 411),
        (["Content-Length: 3000000"], 413),
    ],
)
def test_a_body_without_a_valid_length_is_refused_before_it_is_read(
    start_tester: Callable[..., Running], framing: list[str], status: int
) -> None:
    """Only the headers are sent, and the connection stays open: the Tester
    answers at once, without waiting to read a body it must not accept."""
    tester = start_tester()
    with closing(
        socket.create_connection(("127.0.0.1", tester.server.server_address[1]), PATIENCE)
    ) as sock:
        sock.sendall(post_head(tester, *framing))
        answer = read_all(sock)
    assert status_of(answer) == status, answer[:200]


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts)


def test_a_chunked_body_is_read_within_the_cap(start_tester: Callable[..., Running]) -> None:
    tester = start_tester()
    port = tester.server.server_address[1]
    head = post_head(tester, "Transfer-Encoding: chunked")
    body = b'{"robots": "User-agent: *\\nDisallow: /a\\n", "urls": ["/a", "/b"]}'
    answer = exchange(port, head + chunked(body[:20], body[20:]) + b"0\r\n\r\n")
    assert status_of(answer) == 200
    assert b'"verdict": "disallowed"' in answer and b'"verdict": "allowed"' in answer
    # A chunk announced past the cap: refused once its bytes pass the cap.
    too_big = exchange(port, head + b"2dc6c0\r\n" + b" " * 2_000_001)
    assert status_of(too_big) == 413
    # Chunks up to the cap, then one byte more: refused at that byte.
    at_cap = exchange(port, head + chunked(*[b" " * 100_000] * 20) + b"1\r\n ")
    assert status_of(at_cap) == 413


# --- time and connections ---------------------------------------------------------------


def test_idle_and_slow_connections_time_out(start_tester: Callable[..., Running]) -> None:
    """A deadline for a request's head (aiohttp's ``keepalive_timeout``, from
    the connection's opening), and one for its body: silent, dripping a
    header byte by byte faster than any read could time out, or sending half
    its body, each is closed once its deadline has passed."""
    from scrapy_rep.tools.tester.guard import Limits

    tester = start_tester(limits=Limits(request_timeout=0.3))
    port = tester.server.server_address[1]
    with closing(socket.create_connection(("127.0.0.1", port), PATIENCE)) as idle:
        assert read_all(idle) == b""  # closed by the server, not by PATIENCE
    with closing(socket.create_connection(("127.0.0.1", port), PATIENCE)) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nX-Drip: ")
        dripped = 0
        while not select.select([slow], [], [], 0.02)[0]:  # until the server acts
            slow.sendall(b"x")
            dripped += 1
        assert read_all(slow) == b"" and dripped > 1
    with closing(socket.create_connection(("127.0.0.1", port), PATIENCE)) as half:
        half.sendall(post_head(tester, "Content-Length: 100") + b'{"robots": ')
        assert status_of(read_all(half)) == 408


@contextmanager
def idle_connections(port: int, count: int) -> Iterator[list[socket.socket]]:
    opened = [socket.create_connection(("127.0.0.1", port), PATIENCE) for _ in range(count)]
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


def test_connections_at_once_are_bounded(start_tester: Callable[..., Running]) -> None:
    """Half-open connections hold at most ``max_connections`` places; the
    rest are told 503 at once; the Tester serves again once they go, and
    the bound holds as before (each place given back once)."""
    from scrapy_rep.tools.tester.guard import Limits

    tester = start_tester(limits=Limits(request_timeout=PATIENCE * 3, max_connections=4))
    port = tester.server.server_address[1]
    threads = threading.active_count()
    with idle_connections(port, 4) as held, idle_connections(port, 6) as turned:
        answers = [read_all(sock) for sock in turned]
        during = threading.active_count() - threads
        assert [sock.fileno() > 0 for sock in held] == [True] * 4
    assert [status_of(answer) for answer in answers] == [503] * 6
    assert during <= 4
    deadline = time.monotonic() + PATIENCE  # the Tester sees the held ones go
    while status_of(get(port, "/", f"127.0.0.1:{port}")) != 200:
        assert time.monotonic() < deadline, "never served again"
    with idle_connections(port, 4), idle_connections(port, 1) as [again]:
        assert status_of(read_all(again)) == 503


def test_a_client_that_does_not_read_its_answer_is_let_go(
    start_tester: Callable[..., Running],
) -> None:
    """An answer far larger than the sockets' buffers (10,000 rows, each
    naming its 600-byte URL: about 14 MB), asked for by a client that never
    reads: once the answer's deadline passes, the Tester drops the connection
    and its place is free (here the only place), instead of holding it, and
    the answer in memory, for as long as the client likes."""
    from scrapy_rep.tools.tester.guard import Limits

    tester = start_tester(limits=Limits(request_timeout=1.0, max_connections=1))
    port = tester.server.server_address[1]
    data = {
        "robots": "User-agent: *\nDisallow: /a\n",
        "urls": [f"/p{n:03}" + "x" * 600 for n in range(100)],
        "agents": [f"bot{n}" for n in range(100)],
    }
    body = json.dumps(data).encode()
    with socket.socket() as reader:
        reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting
        reader.settimeout(PATIENCE)
        reader.connect(("127.0.0.1", port))
        reader.sendall(post_head(tester, f"Content-Length: {len(body)}") + body)
        deadline = time.monotonic() + PATIENCE * 3
        while (answer := status_of(get(port, "/", f"127.0.0.1:{port}"))) == 503:
            assert time.monotonic() < deadline, "a client that does not read kept its place"
        assert answer == 200
