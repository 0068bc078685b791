"""A stdlib HTTP server on 127.0.0.1 whose answer is set per path.

An answer is a status with a body, a redirect, an endless body, or a hang.
The server counts the bytes it managed to send, so a test can show that a
huge body was not read.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    location: str = ""  # a Location header (for 3xx)
    endless: bool = False  # send 64 KiB chunks until the client goes away (or 1 GB)
    hang: bool = False  # never answer (until the server stops)
    drip: float = 0.0  # send the body one line at a time, this many seconds apart


@dataclass
class Site:
    """What each path answers, and what happened."""

    server: ThreadingHTTPServer
    answers: dict[str, Answer] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)  # bytes of body sent per path
    stopping: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}{path}"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        site = self.server.site
        answer = site.answers.get(self.path, Answer(404, b"not found"))
        if answer.hang:
            site.stopping.wait(10)
            return
        self.send_response(answer.status)
        if answer.location:
            self.send_header("Location", answer.location)
        if answer.endless:
            self.send_header("Connection", "close")
            self.end_headers()
            self._send_endless(site)
            return
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if answer.drip:
            self._send_drip(site, answer)
            return
        self.wfile.write(answer.body)
        site.sent[self.path] = len(answer.body)

    def _send_drip(self, site: Site, answer: Answer) -> None:
        """Each line in time for any per-read socket timeout, never the whole body."""
        site.sent[self.path] = 0
        try:
            for line in answer.body.splitlines(keepends=True):
                if site.stopping.wait(answer.drip):
                    return
                self.wfile.write(line)
                self.wfile.flush()
                site.sent[self.path] += len(line)
        except OSError:
            pass

    def _send_endless(self, site: Site) -> None:
        chunk = b"Disallow: /x\n" * 5000  # 65,000 bytes
        sent = 0
        try:
            while sent < 1_000_000_000:
                self.wfile.write(chunk)
                sent += len(chunk)
        except OSError:
            pass
        finally:
            site.sent[self.path] = sent

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: Site


def start() -> tuple[Site, threading.Thread]:
    server = _Server(("127.0.0.1", 0), _Handler)
    site = Site(server)
    server.site = site
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return site, thread


def stop(site: Site, thread: threading.Thread) -> None:
    site.stopping.set()
    site.server.shutdown()
    site.server.server_close()
    thread.join(5)
