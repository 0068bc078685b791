"""How fast the Tester answers while idle connections are held open (docs/benchmarks.md).

    .venv/bin/python benchmarks/tester_idle.py [--idle 1000] [--requests 50] [--runs 3]

Why it is built this way:

- The Tester runs as ``scrapy-rep tester`` runs it (``serve()``), in its own
  process: the client's work here takes nothing from its loop. Its one
  change: a request's head may take 300 s, not 10, so that no idle
  connection is closed by its deadline while the figures are taken (on a
  busy machine, opening a thousand connections can take longer than 10 s:
  the SYNs past the listen backlog wait for their retry).
- The idle connections are opened at once (non-blocking connects) and
  held: half silent, half stopped halfway through a request's head (as a
  slow client or an attacker holds them); at the end the script counts
  those still open.
- A "request" is what the page sends as you type: ``POST /api/test`` of a
  small robots.txt and two URLs, on a new connection each (the worst case
  for the server: it accepts, parses and answers), timed from connect to
  the whole answer read. The same requests with no idle connection open
  come first, in the same process, as the baseline.
- One untimed request before each row: the first of a fresh process, and,
  after the idle connections, the one that proves the Tester has taken
  them all (connections are taken in the order they were made; until then
  some wait in the listen backlog, and a SYN past it waits for its retry).
- Median and p99 over the requests; each run prints both rows.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = "User-agent: *\nDisallow: /a\n"
SERVE = (
    "from scrapy_rep.tools.tester.server import Limits, TesterConfig, serve; "
    "serve(TesterConfig(limits=Limits(request_timeout=300.0)), '127.0.0.1', 0)"
)


@contextmanager
def tester() -> Iterator[tuple[int, str]]:
    """``scrapy-rep tester`` in its own process: its port and its page's token."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd="/",  # outside any Scrapy project
    )
    try:
        assert process.stdout is not None
        found = re.search(r":(\d+)/", process.stdout.readline())
        assert found, "the Tester printed no address"
        port = int(found.group(1))
        page = fetch(port, "GET", "/", None, {})[1].decode()
        token = re.search(r'name="tester-token" content="([^"]+)"', page)
        assert token, "no token in the page"
        yield port, token.group(1)
    finally:
        process.terminate()
        process.wait(10)


def fetch(
    port: int, method: str, target: str, body: str | None, headers: dict[str, str]
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(method, target, body, headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def timed(port: int, token: str, count: int) -> list[float]:
    """``count`` tests from the page, each on a new connection: milliseconds each."""
    body = json.dumps({"robots": ROBOTS, "urls": ["/a", "/b"]})
    headers = {"X-Tester-Token": token, "Content-Type": "application/json"}
    took = []
    fetch(port, "POST", "/api/test", body, headers)  # untimed: see the module's docstring
    for _ in range(count):
        start = time.perf_counter()
        status, answer = fetch(port, "POST", "/api/test", body, headers)
        took.append((time.perf_counter() - start) * 1000)
        verdicts = [row["verdict"] for row in json.loads(answer)["rows"]]
        assert status == 200 and verdicts == ["disallowed", "allowed"], (status, answer[:200])
    return took


def held(port: int, count: int, stack: ExitStack) -> list[socket.socket]:
    """``count`` idle connections, half of them halfway through a request's head."""
    opened = [stack.enter_context(closing(socket.socket())) for _ in range(count)]
    with selectors.DefaultSelector() as connecting:
        for sock in opened:
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            connecting.register(sock, selectors.EVENT_WRITE)
        pending = set(opened)
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            for key, _ in connecting.select(1):
                connecting.unregister(key.fileobj)
                pending.discard(key.fileobj)  # type: ignore[arg-type]
    assert not pending, f"{len(pending)} connections never connected"
    for n, sock in enumerate(opened):
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        sock.setblocking(True)
        if n % 2:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ".encode())
    return opened


def summary(name: str, took: list[float]) -> str:
    ordered = sorted(took)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"{name:<28} median {statistics.median(took):6.2f} ms   p99 {p99:6.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.idle + 256:  # this process holds one end of each connection
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.idle + 256), hard))
    print(f"Tester: {args.requests} tests from the page, each on a new connection")
    for run in range(1, args.runs + 1):
        with tester() as (port, token), ExitStack() as stack:
            alone = timed(port, token, args.requests)
            idle = held(port, args.idle, stack)
            beside = timed(port, token, args.requests)
            still = sum(1 for sock in idle if not _readable(sock))
            print(f"run {run}")
            print("  " + summary("no idle connection", alone))
            print("  " + summary(f"{args.idle:,} idle connections", beside))
            print(f"  idle connections still open at the end: {still:,} of {args.idle:,}")


def _readable(sock: socket.socket) -> bool:
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    return True


if __name__ == "__main__":
    main()
