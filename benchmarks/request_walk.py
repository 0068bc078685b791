"""How many times a request's way through scrapy_rep changes module: its walk.

A request is followed from the first scrapy_rep code that sees it (the spider
middleware's early check, as the add-on wires it) until the downloader
middleware's ``process_request`` lets it through or drops it. Under
``sys.setprofile``, every Python frame of a ``scrapy_rep`` module that is
entered, resumed or returned to is noted by its module (its room), but for
code generated at run time (a dataclass's ``__init__``: a value being made,
not a step of the walk); a stay is a run of consecutive notes in one room.
Fewer stays for the same work means fewer back-and-forths between modules
(docs/benchmarks.md, "A request's walk").

Three requests, in one real crawl (the add-on, the memory store) against a
server on 127.0.0.1:

- first: a new origin, its robots.txt fetched (200) while the request waits;
- second: the next request to that origin, its answer known;
- outage: a new origin whose robots.txt answers 503, nobody waiting for a
  quick retry (``REP_UNREACHABLE_WAIT = 0``): closed, the request dropped.

    .venv/bin/python benchmarks/request_walk.py [--rooms] [--runs 5]

Counts, not times, alike on any machine: each request's stays, rooms, and
its stays in the lifecycle and the policy (with ``--rooms`` in every room),
the median of ``--runs`` crawls, as the robots.txt answer may land a step
sooner or later.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scrapy.utils.reactor import install_reactor  # noqa: E402

install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")

from scrapy import Request, Spider  # noqa: E402
from scrapy.crawler import CrawlerRunner  # noqa: E402
from scrapy.http import Response  # noqa: E402
from twisted.internet import reactor  # noqa: E402
from twisted.python.failure import Failure  # noqa: E402

from scrapy_rep.crawler.middleware import RobotsTxtMiddleware  # noqa: E402

ROBOTS = b"User-agent: *\nDisallow: /private\n"
PACKAGE = "scrapy_rep."


class Site(BaseHTTPRequestHandler):
    """Port A: robots.txt 200 and pages; port B: robots.txt 503 (an outage)."""

    down = False

    def do_GET(self) -> None:
        if self.path == "/robots.txt":
            status, body = (503, b"") if self.down else (200, ROBOTS)
        else:
            status, body = 200, b"<html><body>page</body></html>"
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


class Down(Site):
    down = True


class Walk:
    """The rooms a window of the crawl passes through, in order."""

    def __init__(self) -> None:
        self.name: str | None = None
        self.rooms: list[str] = []
        self.walks: dict[str, list[str]] = {}

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if self.name is None:
            return
        if event == "call":
            self._note(frame)
        elif event == "return" and frame.f_back is not None:
            self._note(frame.f_back)

    def _note(self, frame: FrameType) -> None:
        module = frame.f_globals.get("__name__", "")
        # Code a module wrote, not code generated for it (a dataclass's __init__).
        if module.startswith(PACKAGE) and frame.f_code.co_filename.endswith(".py"):
            room = module[len(PACKAGE) :].replace(".", "/")
            if not self.rooms or self.rooms[-1] != room:
                self.rooms.append(room)

    def open(self, name: str) -> None:
        if self.name is None and name not in self.walks:
            self.name, self.rooms = name, []

    def close(self, name: str) -> None:
        if self.name == name:
            self.walks[name], self.name = self.rooms, None


WALK = Walk()


def _watched(request: Request) -> str | None:
    name = request.meta.get("walk")
    return name if isinstance(name, str) else None


def _patch() -> None:
    """Open a request's window where scrapy_rep first sees it, close it when
    ``process_request`` is done with it (these wrappers are not scrapy_rep's)."""
    early: Callable[..., Any] = RobotsTxtMiddleware.early
    process_request: Callable[..., Any] = RobotsTxtMiddleware.process_request

    def early_watched(self: RobotsTxtMiddleware, request: Request) -> Any:
        name = _watched(request)
        if name is not None:
            WALK.open(name)
        return early(self, request)

    async def process_watched(
        self: RobotsTxtMiddleware, request: Request, spider: Any = None
    ) -> Any:
        name = _watched(request)
        if name is not None:
            WALK.open(name)
        try:
            return await process_request(self, request, spider)
        finally:
            if name is not None:
                WALK.close(name)

    RobotsTxtMiddleware.early = early_watched  # type: ignore[method-assign]
    RobotsTxtMiddleware.process_request = process_watched  # type: ignore[method-assign]


class WalkSpider(Spider):
    """first, then second (same origin), then outage (another origin): one at a time."""

    name = "walk"

    def __init__(self, up: str, down: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.up, self.down = up, down

    async def start(self) -> AsyncIterator[Request]:
        yield self._request(f"{self.up}/a", "first")

    def _request(self, url: str, name: str) -> Request:
        return Request(
            url, meta={"walk": name}, callback=self.parse, errback=self.failed, dont_filter=True
        )

    def parse(self, response: Response) -> Iterator[Request]:
        yield from self._next(_watched(response.request))  # type: ignore[arg-type]

    def failed(self, failure: Failure) -> Iterator[Request]:
        yield from self._next(_watched(failure.request))  # type: ignore[attr-defined]

    def _next(self, done: str | None) -> Iterator[Request]:
        if done == "first":
            yield self._request(f"{self.up}/b", "second")
        elif done == "second":
            yield self._request(f"{self.down}/a", "outage")


def serve(handler: type[Site]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def walk_once() -> dict[str, list[str]]:
    """One crawl of the three requests: each one's rooms, in order."""
    _patch()
    up_server, up = serve(Site)
    down_server, down = serve(Down)
    settings = {
        "ADDONS": {"scrapy_rep.Addon": 0},
        "ROBOTSTXT_OBEY": True,
        "REP_STORAGE": "memory",
        "REP_UNREACHABLE_WAIT": 0,
        "RETRY_ENABLED": False,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
    }
    runner = CrawlerRunner(settings)
    sys.setprofile(WALK.hook)
    done = runner.crawl(WalkSpider, up=up, down=down)
    done.addErrback(lambda failure: failure.printTraceback())
    done.addBoth(lambda _: reactor.stop())  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]
    sys.setprofile(None)
    up_server.shutdown()
    down_server.shutdown()
    return WALK.walks


def report(runs: list[dict[str, list[str]]], rooms: bool) -> None:
    """Each request's run of median length (the answer may land a step sooner or later)."""
    print(f"request   stays  rooms  lifecycle  policy    (the median of {len(runs)} crawls)")
    for name in runs[0]:
        walk = sorted((run[name] for run in runs), key=len)[len(runs) // 2]
        stays = Counter(walk)
        print(
            f"{name:<9} {len(walk):>5}  {len(stays):>5}  {stays['cache/lifecycle']:>9}"
            f"  {stays['cache/policy']:>6}"
        )
        if rooms:
            print("    " + ", ".join(f"{room} {n}" for room, n in stays.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rooms", action="store_true", help="the stays in each room too")
    parser.add_argument("--runs", type=int, default=5, help="crawls, one process each")
    parser.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once:  # one crawl (a reactor runs once per process): its walks as JSON
        print(json.dumps(walk_once()))
        return
    me = [sys.executable, str(Path(__file__).resolve()), "--once"]
    runs = [json.loads(subprocess.check_output(me, text=True)) for _ in range(args.runs)]
    report(runs, args.rooms)


if __name__ == "__main__":
    main()
