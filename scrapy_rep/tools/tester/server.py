"""The tester's HTTP server: the page, its static files and a small JSON API.

Standard library only (``http.server``), one thread per connection, at
most ``Limits.max_connections`` of them. Safe by construction
(docs/tester.md, "Safety"): it listens on loopback unless told otherwise;
``guard`` refuses, before any work, a Host header that names anything but
the names it was started for (no DNS rebinding, on any address), a body
without a valid length or over the cap, and a request slower than its
deadline; every API call needs the per-run token the page carries (so no
other site can drive it, Refetch included); the page runs under a
Content-Security-Policy that allows its own script only, and its script
writes text, never markup.

API (JSON in and out; header ``X-Tester-Token`` on every call):

- ``GET /api/config`` -> the crawlers, purposes, store, the severities'
  meanings (``lint.finding.MEANING``) and the longest link (``LINK_LIMIT``)
- ``POST /api/test`` ``{robots, urls, agents, purposes, compare, access,
  access_reason}`` -> ``{rows, lines, errors, warnings, summary, linted,
  diff}``, at most ``MAX_ROWS`` URLs x agents (413 beyond); each line ``{n,
  text, severity, findings}``, its severity the worst of lint's findings on
  it (``lint.finding.line_severities``)
- ``GET /api/live?url=U`` -> the live fetch of U's origin's robots.txt
  (``url``): kind, status, message, headers, body, final_url, hops
- ``GET /api/stored?url=U`` -> what the store keeps for U's origin
- ``POST /api/forget`` ``{url}`` -> ``{origin, forgotten, at}``
- ``GET /api/report?state=&flag=&host=&older=&newer=&sort=&reverse=&limit=&deep=``
  -> ``{store, now, summary, matched, deep, max_refetch, rows}`` (``report_api``,
  the page at ``/report``)
- ``POST /api/forget-many`` ``{state, flag, host, older, newer, deep, expect}``
  -> ``{origins, forgotten, at, store}``: Refetch of every origin of a filter
"""

from __future__ import annotations

import io
import ipaddress
import json
import secrets
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import StorageError
from scrapy_rep.cache.storage.errors import UnreadableRecord
from scrapy_rep.crawler.config.table import MIN_BODY_BYTES, MIN_REDIRECTS
from scrapy_rep.engine.origin import origin_of, robots_url
from scrapy_rep.engine.usage import LABELS
from scrapy_rep.tools.fetch.live import (
    DEFAULT_USER_AGENT,
    FetchRefused,
    Network,
    fetch_live,
    is_web_url,
)
from scrapy_rep.tools.lint.finding import MEANING
from scrapy_rep.tools.store.view import StoreName, describe, forget_origin, read_origin
from scrapy_rep.tools.tester.answers import diff_lines, line_report, verdicts
from scrapy_rep.tools.tester.guard import (
    DeadlineReader,
    Limits,
    Refused,
    check_host,
    host_names,
    read_body,
)
from scrapy_rep.tools.tester.report_api import forget_filtered, report_answer

__all__ = ["LINK_LIMIT", "MAX_ROWS", "Limits", "TesterConfig", "make_server", "serve"]

_JS: Final = "text/javascript; charset=utf-8"
_SVG: Final = "image/svg+xml"
#: Path -> (file in static/, type). The favicon answers at /favicon.ico too,
#: where browsers and tools look for one when a page names none.
_STATIC: Final = {
    "/static/tester.js": ("tester.js", _JS),
    "/static/dom.js": ("dom.js", _JS),
    "/static/editor.js": ("editor.js", _JS),
    "/static/link.js": ("link.js", _JS),
    "/static/select.js": ("select.js", _JS),
    "/static/report.js": ("report.js", _JS),
    "/static/report.css": ("report.css", "text/css; charset=utf-8"),
    "/static/tester.css": ("tester.css", "text/css; charset=utf-8"),
    "/static/favicon.svg": ("favicon.svg", _SVG),
    "/favicon.ico": ("favicon.svg", _SVG),
}
#: The pages: the Tester, and the report of the whole store (docs/tester.md).
_PAGES: Final = {"/": "index.html", "/report": "report.html"}
#: The longest path and query a link to the page can have: ``http.server``
#: answers 414 to a request line over 65,536 bytes (``GET <target> HTTP/1.1``
#: and CRLF). The page says so rather than offer a link that opens nothing.
LINK_LIMIT: Final = 65_536 - len("GET  HTTP/1.1\r\n")
#: The most rows (URLs x crawlers) one ``/api/test`` computes: a link of
#: 64 KB can name millions, and the page runs a link's test without a click.
MAX_ROWS: Final = 10_000
_BUG: Final = "the Tester failed on this request (a bug): see its terminal"
_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class TesterConfig:
    """What the tester knows of the crawl: its tokens, store and fetch rules."""

    agents: tuple[str, ...] = ("scrapy",)  # each "a,b" is one crawler's tokens
    purposes: tuple[str, ...] = ()
    google_quirks: bool = False
    store: StoreName | None = None
    user_agent: str = DEFAULT_USER_AGENT
    timeout: float = 10.0
    max_body_bytes: int = MIN_BODY_BYTES  # REP_MAX_BODY_BYTES's default
    max_redirects: int = MIN_REDIRECTS  # REP_FOLLOW_REDIRECTS's default
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    #: Host names answered beside 127.0.0.1, localhost and the bound address.
    allowed_hosts: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    #: How live fetches resolve names and connect (``fetch.guard``; tests give their own).
    network: Network = field(default_factory=Network)


def _static(name: str) -> bytes:
    return resources.files("scrapy_rep.tools.tester").joinpath("static").joinpath(name).read_bytes()


class TesterHandler(BaseHTTPRequestHandler):
    server: TesterServer
    server_version = "scrapy-rep-tester"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: a local tool
        return

    def setup(self) -> None:
        """Every read of this connection's request within one deadline."""
        super().setup()
        self.rfile.close()  # the socket's own reader, replaced by one with a deadline
        timeout = self.server.config.limits.request_timeout
        deadline = time.monotonic() + timeout
        self.rfile = io.BufferedReader(DeadlineReader(self.connection, deadline))

    # --- routing -------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def _answer(self, route: Any) -> None:
        try:
            self._check_host()
            route(urlsplit(self.path))
        except Refused as refused:
            self._json({"error": str(refused)}, refused.status)
        except Exception:  # a bug: its text (a path, a stored value) stays in the terminal
            traceback.print_exc(file=sys.stderr)
            self._json({"error": _BUG}, 500)

    def _get(self, parts: Any) -> None:
        if parts.path in _PAGES:
            page = _static(_PAGES[parts.path]).replace(
                b"{{TOKEN}}", self.server.config.token.encode("ascii")
            )
            self._send(page, "text/html; charset=utf-8")
        elif parts.path in _STATIC:
            name, content_type = _STATIC[parts.path]
            self._send(_static(name), content_type)
        elif parts.path == "/api/config":
            self._check_token()
            self._json(self._config())
        elif parts.path == "/api/live":
            self._check_token()
            self._json(self._live(_one(parts.query, "url")))
        elif parts.path == "/api/stored":
            self._check_token()
            self._json(self._stored(_one(parts.query, "url")))
        elif parts.path == "/api/report":
            self._check_token()
            config = self.server.config
            answer = report_answer(
                self._store(), parse_qs(parts.query), config.policy, _tokens(config),
                config.google_quirks,
            )
            self._json(answer)
        else:
            raise Refused(404, "no such page")

    def _post(self, parts: Any) -> None:
        self._check_token()
        data = self._read_json()
        if parts.path == "/api/test":
            self._json(self._test(data))
        elif parts.path == "/api/forget":
            self._json(self._forget(data))
        elif parts.path == "/api/forget-many":
            config = self.server.config
            self._json(
                forget_filtered(
                    self._store(), data, config.policy, _tokens(config), config.google_quirks
                )
            )
        else:
            raise Refused(404, "no such call")

    # --- guards --------------------------------------------------------------

    def _check_host(self) -> None:
        """Only the names it was started for: a page whose name rebinds to
        the Tester's address sends its own Host, and is refused."""
        given = self.headers.get_all("Host") or []
        if len(given) != 1 or not self.path.startswith("/"):  # no second name, no proxy form
            raise Refused(421, "one Host header, and a path (not an absolute URL), please")
        check_host(given[0], self.server.hosts, self.server.server_address[1])

    def _check_token(self) -> None:
        given = self.headers.get("X-Tester-Token", "")
        if not secrets.compare_digest(given.encode(), self.server.config.token.encode()):
            raise Refused(403, "missing or wrong X-Tester-Token: reload the tester's page")

    def _read_json(self) -> dict[str, Any]:
        if self.headers.get_content_type() != "application/json":
            raise Refused(415, "send application/json")
        body = read_body(self.headers, self.rfile, self.server.config.limits.max_body)
        try:
            data = json.loads(body or b"{}")
        except ValueError as exc:
            raise Refused(400, f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise Refused(400, "send a JSON object")
        return data

    # --- the calls -------------------------------------------------------------

    def _config(self) -> dict[str, Any]:
        config = self.server.config
        return {
            "agents": list(config.agents),
            "purposes": list(config.purposes),
            "labels": list(LABELS),
            "store": config.store.shown() if config.store is not None else None,
            "user_agent": config.user_agent,
            "severities": MEANING,
            "link_limit": LINK_LIMIT,
        }

    def _test(self, data: dict[str, Any]) -> dict[str, Any]:
        config = self.server.config
        text = _text(data.get("robots"), "robots")
        urls = _texts(data.get("urls"), "urls")
        agents = _texts(data.get("agents"), "agents") or list(config.agents)
        if len(urls) * len(agents) > MAX_ROWS:
            raise Refused(
                413,
                f"{len(urls):,} URLs x {len(agents):,} crawlers = {len(urls) * len(agents):,} "
                f"results: at most {MAX_ROWS:,} are tested at once; test fewer URLs or crawlers",
            )
        purposes = [p for p in _texts(data.get("purposes"), "purposes") if p in LABELS]
        access = _text(data.get("access"), "access")
        reason = _text(data.get("access_reason"), "access_reason")
        answer = line_report(text)
        answer["rows"] = verdicts(
            text, urls, agents, purposes, config.google_quirks, access, reason
        )
        compare = data.get("compare")
        answer["diff"] = (
            diff_lines(_text(compare, "compare"), text) if isinstance(compare, str) else None
        )
        return answer

    def _live(self, url: str) -> dict[str, Any]:
        """The robots.txt of ``url``'s origin, never ``url`` itself: a link
        naming an internal page must not make the Tester send that GET; nor
        may a redirect (``fetch.guard``: /robots.txt paths only, and no
        internal address unless the origin asked for is one)."""
        config = self.server.config
        if not is_web_url(url):
            raise Refused(400, f"only http(s) URLs are fetched, not {url!r}")
        origin = origin_of(url)
        if origin is None:
            raise Refused(400, f"not an absolute http(s) URL with a host: {url!r}")
        try:
            got = fetch_live(
                robots_url(origin),
                config.timeout,
                user_agent=config.user_agent,
                max_bytes=config.max_body_bytes,
                max_redirects=config.max_redirects,
                network=config.network,
            )
        except FetchRefused as refused:
            raise Refused(403, str(refused)) from None
        return {
            "url": got.url,
            "kind": got.kind.value,
            "status": got.status,
            "message": got.message,
            "final_url": got.final_url,
            "hops": got.hops,
            "headers": [[key, value] for key, value in got.headers],
            "body": got.body[: config.max_body_bytes].decode("utf-8", "replace"),
            "cut": len(got.body) > config.max_body_bytes,
        }

    def _store(self) -> StoreName:
        store = self.server.config.store
        if store is None:
            raise Refused(409, "no store: start the tester with --store (or from a project)")
        return store

    def _stored(self, url: str) -> dict[str, Any]:
        store = self._store()
        try:
            key, record = read_origin(store, url)
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        except UnreadableRecord as exc:  # the store answers; this record is not one
            raise Refused(422, str(exc)) from None
        except StorageError as exc:
            raise Refused(503, str(exc)) from None
        config = self.server.config
        answer = describe(record, policy=config.policy, tokens=_tokens(config) or ("*",),
                          google_quirks=config.google_quirks)
        answer.update(origin=key, store=store.shown(), now=time.time())
        return answer

    def _forget(self, data: dict[str, Any]) -> dict[str, Any]:
        store = self._store()
        try:
            key, found = forget_origin(store, _text(data.get("url"), "url"))
        except ValueError as exc:
            raise Refused(400, str(exc)) from None
        except StorageError as exc:
            raise Refused(503, str(exc)) from None
        return {"origin": key, "forgotten": found, "at": time.time(), "store": store.shown()}

    # --- answers ---------------------------------------------------------------

    def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
        self.connection.settimeout(self.server.config.limits.request_timeout)  # a slow reader
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, data: Any, status: int = 200) -> None:
        body = json.dumps(data, ensure_ascii=True).encode("ascii")
        self._send(body, "application/json", status)


def _tokens(config: TesterConfig) -> list[str]:
    """The first crawler's tokens: the report's "forbids everything" is said of them."""
    first = config.agents[0] if config.agents else ""
    return [token.strip() for token in first.split(",") if token.strip()]


def _one(query: str, name: str) -> str:
    values = parse_qs(query).get(name)
    if not values:
        raise Refused(400, f"missing {name}=")
    return values[0]


def _text(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Refused(400, f"{name} must be a string")
    return value


def _texts(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Refused(400, f"{name} must be a list of strings")
    return [item.strip() for item in value if item.strip()]


class TesterServer(ThreadingHTTPServer):
    daemon_threads = True
    #: Connections the kernel completes while the accepting thread is busy
    #: (``socketserver``'s 5 drops a burst's SYNs, which clients resend a
    #: second or more later). Linux caps it at ``net.core.somaxconn``.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], config: TesterConfig) -> None:
        super().__init__(address, TesterHandler)
        self.config = config
        #: The Host names answered, on every bind address (``guard.check_host``).
        self.hosts = host_names(str(self.server_address[0]), config.allowed_hosts)
        self._slots = threading.BoundedSemaphore(config.limits.max_connections)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread for the connection if one is free; else 503, at once."""
        if not self._slots.acquire(blocking=False):
            _turn_away(request)
            self.shutdown_request(request)
            return
        # A thread that could not start frees its place here. Not on Ctrl+C
        # (KeyboardInterrupt): it can land in Thread.start after the thread has
        # begun, and the thread frees its place itself (a second release raises).
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


_BUSY: Final = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 31\r\nConnection: close\r\n\r\ntoo many connections: try again"
)


def _turn_away(request: socket.socket) -> None:
    """Without waiting: the accepting thread must never block on one client."""
    try:
        request.setblocking(False)
        request.send(_BUSY)
    except OSError:
        pass


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def make_server(config: TesterConfig, host: str = "127.0.0.1", port: int = 0) -> TesterServer:
    """A server ready to ``serve_forever``; port 0 picks a free one."""
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
    print(f"robots.txt tester: {server.url} (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
