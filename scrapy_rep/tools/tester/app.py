"""The Tester's web application: its pages, static files and JSON API on aiohttp.

aiohttp frames the requests (HTTP/1.1, keep-alive, the body's size, the
length of the request line and of each header); here are the checks that
are the Tester's own (docs/tester.md, "Safety"), as one middleware around
every route: the ``Host`` header (``guard.check_host``: no DNS rebinding,
on any address), then, for the API, the run's token and a JSON body with a
length, read within its deadline. Every answer carries the page's
Content-Security-Policy and is never cached; a refusal is JSON with an
``error`` the page shows; a bug answers 500 with a fixed message, its text
in the terminal.

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
- ``GET /api/versions?url=U&agent=A`` -> the versions kept for U's origin
  and, per crawler A (repeatable), what changed for its tokens between the
  current one and the one before (``versions_api``)
- ``POST /api/forget`` ``{url}`` -> ``{origin, forgotten, at}``
- ``GET /api/report?state=&flag=&host=&older=&newer=&sort=&reverse=&limit=&deep=``
  -> ``{store, now, summary, matched, deep, max_refetch, rows}`` (``report_api``,
  the page at ``/report``)
- ``POST /api/forget-many`` ``{state, flag, host, older, newer, deep, expect}``
  -> ``{origins, forgotten, at, store}``: Refetch of every origin of a filter
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import traceback
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from importlib import resources
from typing import Any, Final
from urllib.parse import parse_qs

from aiohttp import web

from scrapy_rep.tools.tester import calls
from scrapy_rep.tools.tester.calls import TesterConfig, json_object
from scrapy_rep.tools.tester.guard import Refused, check_host

__all__ = ["make_app"]

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
    "/static/versions.js": ("versions.js", _JS),
    "/static/report.js": ("report.js", _JS),
    "/static/report.css": ("report.css", "text/css; charset=utf-8"),
    "/static/tester.css": ("tester.css", "text/css; charset=utf-8"),
    "/static/favicon.svg": ("favicon.svg", _SVG),
    "/favicon.ico": ("favicon.svg", _SVG),
}
#: The pages: the Tester, and the report of the whole store (docs/tester.md).
_PAGES: Final = {"/": "index.html", "/report": "report.html"}
_BUG: Final = "the Tester failed on this request (a bug): see its terminal"
_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS: Final = {
    "Content-Security-Policy": _CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: A GET call's answer from the query; a POST call's from the JSON body. Each
#: is looked up in ``calls`` when it runs (a test may count or break one).
_GETS: Final[dict[str, Callable[[TesterConfig, Any], dict[str, Any]]]] = {
    "/api/live": lambda config, query: calls.live(config, query),
    "/api/stored": lambda config, query: calls.stored(config, query),
    "/api/versions": lambda config, query: calls.versions_of(config, query),
    "/api/report": lambda config, query: calls.report(config, query),
}
_POSTS: Final[dict[str, Callable[[TesterConfig, Any], dict[str, Any]]]] = {
    "/api/test": lambda config, data: calls.tested(config, data),
    "/api/forget": lambda config, data: calls.forget(config, data),
    "/api/forget-many": lambda config, data: calls.forget_many(config, data),
}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _static(name: str) -> bytes:
    return resources.files("scrapy_rep.tools.tester").joinpath("static").joinpath(name).read_bytes()


def _answer(body: bytes, content_type: str, status: int = 200) -> web.Response:
    headers = {**_HEADERS, "Content-Type": content_type}
    return web.Response(body=body, status=status, headers=headers)


def _json(data: Any, status: int = 200) -> web.Response:
    return _answer(json.dumps(data, ensure_ascii=True).encode("ascii"), "application/json", status)


async def _sent(request: web.Request, response: web.StreamResponse) -> None:
    """The whole answer handed to the connection (aiohttp then has it sent)."""
    await response.prepare(request)
    await response.write_eof()


class Routes:
    """The Tester's routes for one run: its config, names, port and workers."""

    def __init__(
        self, config: TesterConfig, hosts: frozenset[str], port: int, workers: Executor
    ) -> None:
        self.config = config
        self.hosts = hosts
        self.port = port
        self.workers = workers

    @web.middleware
    async def guarded(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The Host check before anything; the answer, sent within its deadline."""
        response = await self._answered(request, handler)
        try:
            await asyncio.wait_for(_sent(request, response), self.config.limits.request_timeout)
        except asyncio.TimeoutError:  # a client that does not read holds nothing for long
            if request.transport is not None:
                request.transport.abort()
            raise ConnectionResetError("the answer was not read in time") from None
        return response

    async def _answered(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """The route's answer; every refusal as JSON; a bug as 500, its text unsaid."""
        try:
            given = request.headers.getall("Host", [])
            if len(given) != 1 or not request.raw_path.startswith("/"):  # no proxy form
                raise Refused(421, "one Host header, and a path (not an absolute URL), please")
            check_host(given[0], self.hosts, self.port)
            return await handler(request)
        except Refused as refused:
            return _json({"error": str(refused)}, refused.status)
        except web.HTTPException as exc:  # the router's 404 and 405
            return _json({"error": exc.reason.lower()}, exc.status)
        except ConnectionError:  # the client went: nobody to answer, nothing to say
            raise
        except Exception:  # a bug: its text (a path, a stored value) stays in the terminal
            traceback.print_exc(file=sys.stderr)
            return _json({"error": _BUG}, 500)

    async def page(self, request: web.Request) -> web.StreamResponse:
        token = self.config.token.encode("ascii")
        page = _static(_PAGES[request.path]).replace(b"{{TOKEN}}", token)
        return _answer(page, "text/html; charset=utf-8")

    async def static(self, request: web.Request) -> web.StreamResponse:
        name, content_type = _STATIC[request.path]
        return _answer(_static(name), content_type)

    async def get_call(self, request: web.Request) -> web.StreamResponse:
        self._check_token(request)
        if request.path == "/api/config":
            return _json(calls.config_answer(self.config))
        query = parse_qs(request.query_string)
        return _json(await self._run(_GETS[request.path], query))

    async def post_call(self, request: web.Request) -> web.StreamResponse:
        self._check_token(request)
        body = await self._body(request)
        call = _POSTS[request.path]
        return _json(await self._run(lambda config, raw: call(config, json_object(raw)), body))

    async def _run(
        self, call: Callable[[TesterConfig, Any], dict[str, Any]], given: Any
    ) -> dict[str, Any]:
        """``call`` in a worker thread: the loop goes on serving meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.workers, call, self.config, given)

    def _check_token(self, request: web.Request) -> None:
        given = request.headers.get("X-Tester-Token", "")
        if not secrets.compare_digest(given.encode(), self.config.token.encode()):
            raise Refused(403, "missing or wrong X-Tester-Token: reload the tester's page")

    async def _body(self, request: web.Request) -> bytes:
        """The body aiohttp frames, within the cap it counts (``client_max_size``)
        and the deadline; a declared length over the cap is refused unread."""
        if request.content_type != "application/json":
            raise Refused(415, "send application/json")
        limits = self.config.limits
        if request.content_length is None and "Transfer-Encoding" not in request.headers:
            raise Refused(411, "a body needs Content-Length")
        if (request.content_length or 0) > limits.max_body:
            raise Refused(413, f"at most {limits.max_body} bytes")
        try:
            return await asyncio.wait_for(request.read(), limits.request_timeout)
        except asyncio.TimeoutError:
            raise Refused(408, "the request took too long to arrive") from None
        except web.HTTPRequestEntityTooLarge:
            raise Refused(413, f"at most {limits.max_body} bytes") from None
        except web.RequestPayloadError as exc:
            raise Refused(400, f"a badly framed body: {exc}") from None


def make_app(
    config: TesterConfig, hosts: frozenset[str], port: int, workers: Executor
) -> web.Application:
    """The application for one run, its body cap aiohttp's ``client_max_size``."""
    routes = Routes(config, hosts, port, workers)
    app = web.Application(middlewares=[routes.guarded], client_max_size=config.limits.max_body)
    for path in _PAGES:
        app.router.add_get(path, routes.page)
    for path in _STATIC:
        app.router.add_get(path, routes.static)
    for path in ("/api/config", *_GETS):
        app.router.add_get(path, routes.get_call)
    for path in _POSTS:
        app.router.add_post(path, routes.post_call)
    return app
