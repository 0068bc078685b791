"""The tester's HTTP server: the page, its static files and a small JSON API.

Standard library only (``http.server``), one thread per request. Safe by
construction: it listens on loopback unless told otherwise; every API call
needs the per-run token the page carries (so no other site can drive it,
Refetch included), and only answers a Host header naming the address it
serves (no DNS rebinding); the page runs under a Content-Security-Policy
that allows its own script only, and its script writes text, never markup.

API (JSON in and out; header ``X-Tester-Token`` on every call):

- ``POST /api/test`` ``{robots, urls, agents, purposes, compare, access,
  access_reason}`` -> ``{rows, lines, errors, warnings, diff}``
- ``GET /api/live?url=U`` -> the live fetch: kind, status, message,
  headers, body, final_url, hops
- ``GET /api/stored?url=U`` -> what the store keeps for U's origin
- ``POST /api/forget`` ``{url}`` -> ``{origin, forgotten, at}``
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import sys
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from scrapy_rep.cache.policy import PolicyConfig
from scrapy_rep.cache.storage import StorageError
from scrapy_rep.engine.usage import LABELS
from scrapy_rep.tools.live_fetch import DEFAULT_USER_AGENT, fetch_live, is_web_url
from scrapy_rep.tools.store_view import StoreName, describe, forget_origin, read_origin
from scrapy_rep.tools.tester.answers import diff_lines, line_report, verdicts

__all__ = ["TesterConfig", "make_server", "serve"]

#: The most a request body may be: a robots.txt at the parse limit, and room.
MAX_REQUEST_BYTES: Final = 2_000_000
_STATIC: Final = {
    "/static/tester.js": "application/javascript; charset=utf-8",
    "/static/tester.css": "text/css; charset=utf-8",
}
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
    max_bytes: int = 512_000
    max_redirects: int = 5
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _static(name: str) -> bytes:
    return resources.files("scrapy_rep.tools.tester").joinpath("static").joinpath(name).read_bytes()


class TesterHandler(BaseHTTPRequestHandler):
    server: TesterServer
    server_version = "scrapy-rep-tester"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet: a local tool
        return

    # --- routing -------------------------------------------------------------

    def do_GET(self) -> None:
        self._answer(self._get)

    def do_POST(self) -> None:
        self._answer(self._post)

    def _answer(self, route: Any) -> None:
        try:
            self._check_host()
            route(urlsplit(self.path))
        except _Refused as refused:
            self._json({"error": str(refused)}, refused.status)
        except Exception as exc:  # a bug must not kill the server thread silently
            self._json({"error": f"{type(exc).__name__}: {exc}"}, 500)

    def _get(self, parts: Any) -> None:
        if parts.path == "/":
            page = _static("index.html").replace(
                b"{{TOKEN}}", self.server.config.token.encode("ascii")
            )
            self._send(page, "text/html; charset=utf-8")
        elif parts.path in _STATIC:
            self._send(_static(parts.path.rsplit("/", 1)[1]), _STATIC[parts.path])
        elif parts.path == "/api/config":
            self._check_token()
            self._json(self._config())
        elif parts.path == "/api/live":
            self._check_token()
            self._json(self._live(_one(parts.query, "url")))
        elif parts.path == "/api/stored":
            self._check_token()
            self._json(self._stored(_one(parts.query, "url")))
        else:
            raise _Refused(404, "no such page")

    def _post(self, parts: Any) -> None:
        self._check_token()
        data = self._read_json()
        if parts.path == "/api/test":
            self._json(self._test(data))
        elif parts.path == "/api/forget":
            self._json(self._forget(data))
        else:
            raise _Refused(404, "no such call")

    # --- guards --------------------------------------------------------------

    def _check_host(self) -> None:
        """Only the names of the address served: a page whose name rebinds to
        127.0.0.1 sends its own Host, and is refused."""
        host = self.headers.get("Host", "")
        if self.server.hosts is not None and host not in self.server.hosts:
            raise _Refused(421, f"this tester answers to {self.server.url} only")

    def _check_token(self) -> None:
        given = self.headers.get("X-Tester-Token", "")
        if not secrets.compare_digest(given.encode(), self.server.config.token.encode()):
            raise _Refused(403, "missing or wrong X-Tester-Token: reload the tester's page")

    def _read_json(self) -> dict[str, Any]:
        if self.headers.get_content_type() != "application/json":
            raise _Refused(415, "send application/json")
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            raise _Refused(413, f"at most {MAX_REQUEST_BYTES} bytes")
        try:
            data = json.loads(self.rfile.read(length) or b"{}")
        except ValueError as exc:
            raise _Refused(400, f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise _Refused(400, "send a JSON object")
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
        }

    def _test(self, data: dict[str, Any]) -> dict[str, Any]:
        config = self.server.config
        text = _text(data.get("robots"), "robots")
        urls = _texts(data.get("urls"), "urls")
        agents = _texts(data.get("agents"), "agents") or list(config.agents)
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
        config = self.server.config
        if not is_web_url(url):
            raise _Refused(400, f"only http(s) URLs are fetched, not {url!r}")
        got = fetch_live(
            url,
            config.timeout,
            user_agent=config.user_agent,
            max_bytes=config.max_bytes,
            max_redirects=config.max_redirects,
        )
        return {
            "url": got.url,
            "kind": got.kind.value,
            "status": got.status,
            "message": got.message,
            "final_url": got.final_url,
            "hops": got.hops,
            "headers": [[key, value] for key, value in got.headers],
            "body": got.body[: config.max_bytes].decode("utf-8", "replace"),
            "cut": len(got.body) > config.max_bytes,
        }

    def _store(self) -> StoreName:
        store = self.server.config.store
        if store is None:
            raise _Refused(409, "no store: start the tester with --store (or from a project)")
        return store

    def _stored(self, url: str) -> dict[str, Any]:
        store = self._store()
        try:
            key, record = read_origin(store, url)
        except ValueError as exc:
            raise _Refused(400, str(exc)) from None
        except StorageError as exc:
            raise _Refused(503, str(exc)) from None
        answer = describe(record, policy=self.server.config.policy)
        answer.update(origin=key, store=store.shown(), now=time.time())
        return answer

    def _forget(self, data: dict[str, Any]) -> dict[str, Any]:
        store = self._store()
        try:
            key, found = forget_origin(store, _text(data.get("url"), "url"))
        except ValueError as exc:
            raise _Refused(400, str(exc)) from None
        except StorageError as exc:
            raise _Refused(503, str(exc)) from None
        return {"origin": key, "forgotten": found, "at": time.time(), "store": store.shown()}

    # --- answers ---------------------------------------------------------------

    def _send(self, body: bytes, content_type: str, status: int = 200) -> None:
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


def _one(query: str, name: str) -> str:
    values = parse_qs(query).get(name)
    if not values:
        raise _Refused(400, f"missing {name}=")
    return values[0]


def _text(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Refused(400, f"{name} must be a string")
    return value


def _texts(value: object, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Refused(400, f"{name} must be a list of strings")
    return [item.strip() for item in value if item.strip()]


class TesterServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], config: TesterConfig) -> None:
        super().__init__(address, TesterHandler)
        self.config = config
        host, port = str(self.server_address[0]), self.server_address[1]
        names = {f"[{host}]" if ":" in host else host}
        if _is_loopback(host):
            names |= {"localhost", "127.0.0.1", "[::1]"}
        #: The Host headers answered; None (any) on a non-loopback address.
        self.hosts: set[str] | None = {f"{name}:{port}" for name in names}
        if not _is_loopback(host):
            self.hosts = None

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"


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
        print(
            f"warning: the tester listens on {host}, not on loopback: anyone who can reach "
            "this address can use it to fetch URLs (the token guards Refetch only "
            "against other pages, not against people who see the page)",
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
