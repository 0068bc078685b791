"""What obeying robots.txt costs a broad crawl: many origins, a few pages each, with latency.

One server process answers on ``--origins`` loopback addresses ``127.1.x.y``
(one origin each, so Scrapy gives each its own download slot and every
middleware its own robots.txt), over keep-alive HTTP/1.1, from precomputed
bytes. Responses are delayed without blocking anything else (asyncio
``call_later``): ``--robots-latency`` for ``/robots.txt``, ``--page-latency``
for pages. The server counts robots.txt requests per origin and every page
request by path, and reports them to the parent after each crawl.

Each crawl runs in a fresh subprocess (a new asyncio reactor, nothing cached)
and asks for the same pages: page 0 of every origin, then page 1 of every
origin, and so on, all from ``start()`` (Scrapy 2.13+ schedules them eagerly,
and ``DownloaderAwarePriorityQueue`` picks the least busy origin first). Every
robots.txt says ``User-agent: *`` / ``Disallow: /private/`` (and ``Disallow: /``
to another bot); page ``k`` of an origin lives under ``/private/`` when
``k % N == N - 1`` (``--disallowed-every N``), so obeying crawls drop those
and the ``none`` crawl fetches them.

Modes: ``none`` (ROBOTSTXT_OBEY = False), ``builtin`` (Scrapy's
RobotsTxtMiddleware with Protego), ``rep`` (``ADDONS = {"scrapy_rep.Addon": 0}``
with ``REP_STORAGE = "memory"``) and ``rep-sqlite`` (the add-on with its
default sqlite store, ``REP_STORAGE_PATH`` in a fresh temporary directory per
crawl); ``rep-sqlite-log`` is ``rep-sqlite`` with the decision log on
(``REP_DECISION_LOG`` beside the store).

    cd /work/main && .venv/bin/python benchmarks/broad_crawl.py --preset latency --runs 3
    cd /work/main && .venv/bin/python benchmarks/broad_crawl.py --preset cpu --runs 3
    cd /work/main && .venv/bin/python benchmarks/broad_crawl.py --preset latency-dense \\
        --modes none,rep --runs 1 --timeline 0.5
    cd /work/main && .venv/bin/python benchmarks/broad_crawl.py --preset scale \\
        --origins 100000 --runs 1

Presets (any flag given as well overrides the preset's value):

- ``latency``: 500 origins x 5 pages (1 in 5 disallowed), robots.txt 1.6 s,
  pages 0.6 s, CONCURRENT_REQUESTS 50 (the project's reference broad crawl:
  its ideal is 1.33 x the latency-only time): one crawl takes 30 to 60 s.
- ``latency-dense``: 1,000 origins x 3 pages (1 in 3 disallowed), robots.txt
  0.8 s, pages 0.3 s, CONCURRENT_REQUESTS 100: robots.txt weighs more here
  (its allowed-only ideal is 1.56 x the latency-only time); about 20 s a crawl.
- ``cpu``: 100 origins x 80 pages (1 in 20 disallowed), no latency,
  CONCURRENT_REQUESTS 100: what the crawler's CPU allows.
- ``scale``: 10,000 origins x 2 pages (1 in 2 disallowed), no latency,
  named hosts (below): what each origin costs in memory and CPU at sizes
  the address-per-origin layout cannot reach.

Named hosts (``--named-hosts``, on in the ``scale`` preset): origins are
host names ``o<N>.broad.test`` that a resolver inside the crawl maps to
127.0.0.1, all served by one listening socket that reads the origin from the
Host header and closes each connection after its response. One socket per
origin stops near 4,900 origins (RLIMIT_NOFILE 20,000 here); names reach
any count, at the price of a TCP connection per request in every mode.

Figures printed besides the table:

- latency-only time = P x page_latency / C, with P the pages the ``none``
  crawl fetches and C = CONCURRENT_REQUESTS: no crawl that keeps C requests
  in flight can fetch P pages faster. ``none`` close to it means the preset
  is latency-bound (not CPU-bound), which is what it is meant to be.
- ideal = (P x page_latency + O x robots_latency) / C: the latency-only time
  plus one robots.txt round trip per origin (O origins), each also holding
  one of the C places for its duration. Obeying crawls skip the disallowed
  pages, so they could in principle beat it: the line shows the same formula
  with P' (allowed pages only) too.
- held-place bound = (P' x page_latency + 2 x O x robots_latency) / C:
  Scrapy's built-in middleware keeps the request that triggered a robots.txt
  fetch in the downloader's active set (one of the C places) while the
  robots.txt request takes another, so each origin's first round trip costs
  two places; a crawl near this bound loses nothing else. scrapy_rep gives
  the waiting request's place up (issue 14 §2), so it can come well below.
- mean in-flight = (robots.txt requests x robots_latency + pages served x
  page_latency) / wall time: how many of the C places the crawl kept busy on
  average at the server; "peak" is the most requests the server held at once.

Binding: one listening socket per address (``127.1.x.y``, the same port
number when free), never ``0.0.0.0``, so nothing is reachable from outside
the machine, not even for a moment, and no peer check is needed. Linux routes
all of 127.0.0.0/8 to ``lo``, so these addresses need no set-up. This costs
one file descriptor per origin in the server, plus one per keep-alive
connection on both sides (Scrapy keeps at least one idle connection per
origin until the crawl ends): both processes raise RLIMIT_NOFILE to its hard
limit and the parent refuses origin counts the limit cannot hold.

Scrapy settings in every mode: CONCURRENT_REQUESTS = CONCURRENT_REQUESTS_PER_DOMAIN
= ``--concurrency``, SCHEDULER_PRIORITY_QUEUE = DownloaderAwarePriorityQueue,
DOWNLOAD_DELAY 0, CONCURRENT_ITEMS 1 (Scrapy 2.19 starts CONCURRENT_ITEMS
tasks per callback result, even an empty one), TELNETCONSOLE off,
USER_AGENT ``BroadBot/1.0 (+http://127.0.0.1/)``, ROBOTSTXT_USER_AGENT
``broadbot``. RETRY_ENABLED, COOKIES_ENABLED, DOWNLOAD_TIMEOUT (180 s) keep
Scrapy's defaults: a retried request would show up as a duplicate fetch.

Checks, per crawl (any failure is printed and the script exits with 1): no
disallowed page reaches the server in obeying modes; every allowed page
reaches it exactly once; exactly one robots.txt request per origin in
obeying modes (none in ``none``); no request fails, and the crawl's own
counts (fetched, dropped) agree with the server's.

On a machine with at least 2 CPUs the server is pinned to one CPU and the
crawler to another, so the two do not fight over a core.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import json
import multiprocessing
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import AsyncIterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODES = ("none", "builtin", "rep", "rep-sqlite", "rep-sqlite-log")
LABELS = {
    "none": "none (no robots.txt)",
    "builtin": "builtin (Protego)",
    "rep": "rep (memory)",
    "rep-sqlite": "rep-sqlite",
    "rep-sqlite-log": "rep-sqlite + decision log",
}
USER_AGENT = "BroadBot/1.0 (+http://127.0.0.1/)"
ROBOTSTXT_USER_AGENT = "broadbot"
ROBOTS = (
    b"User-agent: otherbot\nDisallow: /\n\n"
    b"User-agent: *\nDisallow: /private/\n"
    b"Sitemap: http://127.0.0.1/sitemap.xml\n"
)
PRESETS: dict[str, dict[str, Any]] = {
    "latency": {
        "origins": 500,
        "pages_per_origin": 5,
        "disallowed_every": 5,
        "robots_latency": 1.6,
        "page_latency": 0.6,
        "concurrency": 50,
        "named_hosts": False,
    },
    "latency-dense": {
        "origins": 1000,
        "pages_per_origin": 3,
        "disallowed_every": 3,
        "robots_latency": 0.8,
        "page_latency": 0.3,
        "concurrency": 100,
        "named_hosts": False,
    },
    "cpu": {
        "origins": 100,
        "pages_per_origin": 80,
        "disallowed_every": 20,
        "robots_latency": 0.0,
        "page_latency": 0.0,
        "concurrency": 100,
        "named_hosts": False,
    },
    "scale": {
        "origins": 10_000,
        "pages_per_origin": 2,
        "disallowed_every": 2,
        "robots_latency": 0.0,
        "page_latency": 0.0,
        "concurrency": 100,
        "named_hosts": True,
    },
}
#: Origins per third octet: 127.1.x.1 to 127.1.x.254.
_PER_OCTET = 254


def origin_host(index: int, named: bool = False) -> str:
    """The loopback address (or, ``named``, the host name) of the ``index``-th origin."""
    if named:
        return f"o{index}.{_NAMED_DOMAIN}"
    return f"127.1.{index // _PER_OCTET}.{index % _PER_OCTET + 1}"


_NAMED_DOMAIN = "broad.test"


def named_origin(host_header: bytes) -> int:
    """The origin index a ``Host: o<N>.broad.test:port`` header names."""
    return int(host_header.split(b".", 1)[0][1:])


class LoopbackNames:
    """A Scrapy DNS_RESOLVER answering 127.0.0.1 for ``*.broad.test`` names only."""

    def __init__(self, reactor: Any) -> None:
        self.reactor = reactor

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> LoopbackNames:
        return cls(reactor)

    def install_on_reactor(self) -> None:
        from twisted.internet.interfaces import IResolverSimple
        from zope.interface import alsoProvides

        alsoProvides(self, IResolverSimple)
        self.reactor.installResolver(self)

    def getHostByName(self, name: str, timeout: Any = ()) -> Any:
        from twisted.internet import defer
        from twisted.internet.error import DNSLookupError

        if name.endswith("." + _NAMED_DOMAIN):
            return defer.succeed("127.0.0.1")
        return defer.fail(DNSLookupError(name))


def _loopback_aiohttp_handler() -> type:
    """Scrapy's reactorless (aiohttp) download handler, with ``*.broad.test``
    resolved to 127.0.0.1 (``--reactorless`` with named hosts): aiohttp
    resolves names itself, not through Scrapy's DNS_RESOLVER."""
    import aiohttp.abc
    from scrapy.core.downloader.handlers._aiohttp import AiohttpDownloadHandler

    class Loopback(aiohttp.abc.AbstractResolver):
        async def resolve(self, host: str, port: int = 0, family: int = 0) -> list[Any]:
            if not host.endswith("." + _NAMED_DOMAIN):
                raise OSError(f"{host}: only *.{_NAMED_DOMAIN} is resolved here")
            return [
                {
                    "hostname": host,
                    "host": "127.0.0.1",
                    "port": port,
                    "family": socket.AF_INET,
                    "proto": 0,
                    "flags": socket.AI_NUMERICHOST,
                }
            ]

        async def close(self) -> None:
            pass

    class LoopbackAiohttpHandler(AiohttpDownloadHandler):
        def __init__(self, crawler: Any) -> None:
            super().__init__(crawler)
            self._session.connector._resolver = Loopback()  # type: ignore[union-attr]

    return LoopbackAiohttpHandler


def page_path(number: int, disallowed_every: int) -> str:
    """Page ``number`` of any origin; 1 in ``disallowed_every`` is under /private/."""
    private = disallowed_every > 0 and number % disallowed_every == disallowed_every - 1
    return f"/{'private' if private else 'p'}/{number}.html"


def is_disallowed(path: str) -> bool:
    return path.startswith("/private/")


def raise_file_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; return the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


# --- the server (one process, one listening socket per address) ---------------------


def _response(body: bytes, content_type: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


_ROBOTS_RESPONSE = _response(ROBOTS, b"text/plain")
_PAGE_RESPONSE = _response(
    b"<!DOCTYPE html><html><head><title>page</title></head>"
    b"<body><p>A small page for the broad-crawl benchmark.</p></body></html>",
    b"text/html",
)


class _State:
    """What the server saw since the last reset."""

    def __init__(self, origins: int) -> None:
        self.origins = origins
        self.reset()

    def reset(self) -> None:
        self.robots = [0] * self.origins
        self.pages: Counter[tuple[int, str]] = Counter()
        self.connections = 0
        self.in_flight = 0
        self.peak_in_flight = 0
        #: (time.perf_counter(), robots?, +1 arrived / -1 answered), for ``--timeline``
        self.events: list[tuple[float, bool, int]] = []

    def report(self) -> dict[str, Any]:
        return {
            "robots": self.robots,
            "pages": [[origin, path, n] for (origin, path), n in self.pages.items()],
            "connections": self.connections,
            "peak_in_flight": self.peak_in_flight,
            "events": self.events,
        }


class _Http(asyncio.Protocol):
    """Keep-alive HTTP/1.1 for GET requests without a body, answered after a delay.

    Responses leave in request order (pipelining-safe): each request takes a
    place in ``queue`` that its timer fills, and the filled head is written.
    """

    def __init__(
        self,
        origin: int | None,
        state: _State,
        robots_latency: float,
        page_latency: float,
    ):
        self.origin = origin  # None: named hosts, read from each request's Host header
        self.state = state
        self.latency = {True: robots_latency, False: page_latency}
        self.buffer = b""
        self.queue: deque[list[bytes | None]] = deque()
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.state.connections += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = self.buffer[:end]
            first = head[: head.find(b"\r\n")]
            self.buffer = self.buffer[end + 4 :]
            path = first.split(b" ", 2)[1].decode("latin-1")
            origin = self.origin
            if origin is None:
                host = re.search(rb"\r\nhost: *([^\r]*)", head, re.IGNORECASE)
                origin = named_origin(host.group(1) if host else b"")
            robots = path == "/robots.txt"
            if robots:
                self.state.robots[origin] += 1
            else:
                self.state.pages[(origin, path)] += 1
            response = _ROBOTS_RESPONSE if robots else _PAGE_RESPONSE
            if self.origin is None:
                response = response.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1)
            self._delay(response, self.latency[robots], robots)

    def _delay(self, response: bytes, latency: float, robots: bool) -> None:
        state = self.state
        state.in_flight += 1
        state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
        state.events.append((time.perf_counter(), robots, 1))
        place: list[bytes | None] = [None]
        self.queue.append(place)
        if latency > 0:
            self.loop.call_later(latency, self._ready, place, response, robots)
        else:
            self._ready(place, response, robots)

    def _ready(self, place: list[bytes | None], response: bytes, robots: bool) -> None:
        self.state.in_flight -= 1
        self.state.events.append((time.perf_counter(), robots, -1))
        place[0] = response
        out = []
        while self.queue and self.queue[0][0] is not None:
            out.append(self.queue.popleft()[0])
        if out and self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(b for b in out if b is not None))
            if self.origin is None and not self.queue:  # named hosts: one request per connection
                self.transport.close()


def serve(
    origins: int,
    robots_latency: float,
    page_latency: float,
    control: Connection,
    cpu: int | None,
    named: bool = False,
) -> None:
    """The server process: report the (host, port) pairs, then answer requests and commands."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    raise_file_limit()
    asyncio.run(_serve(origins, robots_latency, page_latency, control, named))


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``: on ``port`` if free, else on any port."""
    try:
        return socket.create_server((host, port), backlog=1024)
    except OSError as exc:
        if port == 0 or exc.errno != errno.EADDRINUSE:
            raise
        return socket.create_server((host, 0), backlog=1024)


async def _serve(
    origins: int, robots_latency: float, page_latency: float, control: Connection, named: bool
) -> None:
    loop = asyncio.get_running_loop()
    state = _State(origins)
    servers = []
    targets: list[tuple[str, int]] = []
    port = 0
    if named:
        sock = _listen("127.0.0.1", 0)
        port = sock.getsockname()[1]
        targets = [(origin_host(index, named=True), port) for index in range(origins)]

        def named_protocol() -> _Http:
            return _Http(None, state, robots_latency, page_latency)

        servers.append(await loop.create_server(named_protocol, sock=sock))
    for index in range(0 if named else origins):
        host = origin_host(index)
        sock = _listen(host, port)
        port = port or sock.getsockname()[1]
        targets.append((host, sock.getsockname()[1]))

        def protocol(index: int = index) -> _Http:
            return _Http(index, state, robots_latency, page_latency)

        servers.append(await loop.create_server(protocol, sock=sock))
    control.send(targets)
    stopped = loop.create_future()

    def command() -> None:
        try:
            message = control.recv()
        except EOFError:  # the benchmark was killed: stop, not spin on a closed pipe
            message = "stop"
            loop.remove_reader(control.fileno())
        if message == "report":
            control.send(state.report())
        elif message == "reset":
            state.reset()
            control.send("ok")
        elif not stopped.done():
            stopped.set_result(None)

    loop.add_reader(control.fileno(), command)
    await stopped
    for server in servers:
        server.close()


# --- one crawl (in its own process) ------------------------------------------------------


def crawl_settings(mode: str, options: dict[str, Any], store: Path) -> dict[str, Any]:
    """The settings of a crawl in ``mode``; ``store``: a new folder for its SQLite file."""
    concurrency: int = options["concurrency"]
    settings: dict[str, Any] = {
        "LOG_LEVEL": options["log_level"],
        "TELNETCONSOLE_ENABLED": False,
        "USER_AGENT": USER_AGENT,
        "ROBOTSTXT_USER_AGENT": ROBOTSTXT_USER_AGENT,
        "ROBOTSTXT_OBEY": mode != "none",
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.DownloaderAwarePriorityQueue",
        "DOWNLOAD_DELAY": 0,
        # Scrapy 2.19 starts CONCURRENT_ITEMS asyncio tasks per callback result,
        # even an empty one: at the default 100 that alone caps a local crawl.
        "CONCURRENT_ITEMS": 1,
    }
    if mode in ("rep", "rep-sqlite", "rep-sqlite-log"):
        settings["ADDONS"] = {"scrapy_rep.Addon": 0}
    if mode == "rep":
        settings["REP_STORAGE"] = "memory"
    if mode.startswith("rep-sqlite"):  # the default store, in a file nobody has used before
        settings["REP_STORAGE_PATH"] = str(store / "robotstxt.sqlite3")
    if mode == "rep-sqlite-log":  # docs/versions.md, "The decision log"
        settings["REP_DECISION_LOG"] = str(store / "decisions.jsonl")
    if mode.startswith("rep") and options.get("memory_max_origins"):
        settings["REP_MEMORY_MAX_ORIGINS"] = options["memory_max_origins"]
    if mode.startswith("rep"):  # a store of the caller's (report_scale.py: one a report reads)
        settings.update(options.get("store_settings") or {})
    if options.get("reactorless"):
        settings["TWISTED_REACTOR_ENABLED"] = False
    if options.get("named_hosts") and options.get("reactorless"):
        settings["DOWNLOAD_HANDLERS"] = {"http": "__main__.LoopbackAiohttpHandler"}
    elif options.get("named_hosts"):
        from scrapy.settings import default_settings

        name = "TWISTED_DNS_RESOLVER"  # Scrapy 2.14+; DNS_RESOLVER before
        settings[name if hasattr(default_settings, name) else "DNS_RESOLVER"] = (
            "__main__.LoopbackNames"
        )
    return settings


def crawl(mode: str, options: dict[str, Any]) -> dict[str, Any]:
    """Run one crawl in this process and return what it did."""
    sys.path.insert(0, str(ROOT))
    from scrapy import Request, Spider, signals
    from scrapy.crawler import AsyncCrawlerProcess, CrawlerProcess
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http import Response
    from twisted.python.failure import Failure

    targets: list[list[Any]] = options["targets"]
    pages_per_origin: int = options["pages_per_origin"]
    every: int = options["disallowed_every"]
    result: dict[str, Any] = {"mode": mode, "fetched": 0, "dropped": 0, "failed": 0}
    drops: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    clock: dict[str, float] = {}

    class BroadSpider(Spider):
        name = "broad"

        async def start(self) -> AsyncIterator[Request]:
            for number in range(pages_per_origin):  # page 0 of every origin, then page 1...
                path = page_path(number, every)
                for host, port in targets:
                    yield Request(
                        f"http://{host}:{port}{path}", callback=self.page, errback=self.error
                    )

        def page(self, response: Response) -> None:
            result["fetched"] += 1
            clock["last"] = time.perf_counter()

        def error(self, failure: Failure) -> None:
            name = type(failure.value).__name__
            if isinstance(failure.value, IgnoreRequest):
                result["dropped"] += 1
                drops[name] += 1
            else:
                result["failed"] += 1
                failures[name] += 1
            clock["last"] = time.perf_counter()

    store = tempfile.TemporaryDirectory(prefix="broad-crawl-")
    settings = crawl_settings(mode, options, Path(store.name))
    if options.get("reactorless"):
        globals()["LoopbackAiohttpHandler"] = _loopback_aiohttp_handler()
    process = (AsyncCrawlerProcess if options.get("reactorless") else CrawlerProcess)(settings)
    crawler = process.create_crawler(BroadSpider)

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def started() -> None:
        clock["start"], clock["cpu_start"] = time.perf_counter(), cpu()

    def closed() -> None:
        clock["stop"], clock["cpu_stop"] = time.perf_counter(), cpu()
        clock["tracked"] = len(gc.get_objects())  # the live objects as the crawl ends

    crawler.signals.connect(started, signal=signals.engine_started)
    crawler.signals.connect(closed, signal=signals.spider_closed)
    pauses = _GcPauses()
    profile = None
    if options.get("profile"):
        import cProfile

        profile = cProfile.Profile()
        profile.enable()
    gc.callbacks.append(pauses)
    process.crawl(crawler)
    process.start()
    gc.callbacks.remove(pauses)
    if profile is not None:
        profile.disable()
        profile.dump_stats(str(Path(options["profile"]) / f"{mode}.prof"))
    store.cleanup()
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    result["seconds"] = clock["stop"] - clock["start"]
    result["start"] = clock["start"]  # CLOCK_MONOTONIC: the server's clock too (--timeline)
    result["last_done"] = clock.get("last", clock["stop"]) - clock["start"]
    result["cpu_seconds"] = clock["cpu_stop"] - clock["cpu_start"]
    result["max_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["gc"] = pauses.report()
    result["gc"]["tracked"] = clock["tracked"]
    result["drops"] = dict(drops)
    result["failures"] = dict(failures)
    result["stats"] = {
        key: value
        for key, value in stats.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool)
    }
    result["finish_reason"] = str(stats.get("finish_reason"))
    return result


class _GcPauses:
    """A ``gc.callbacks`` entry: collections and the CPU spent in them, per generation.

    CPU of the collecting thread (``thread_time``), not wall time: on a shared
    machine a collection descheduled halfway would count the other processes' turn.
    """

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.longest = 0.0
        self.started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.thread_time()
            return
        took = time.thread_time() - self.started
        generation = info["generation"]
        self.count[generation] += 1
        self.seconds[generation] += took
        if generation == 2:
            self.longest = max(self.longest, took)

    def report(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "seconds": self.seconds,
            "longest_full": self.longest,
        }


def run_child(
    mode: str, options: dict[str, Any], cpu: int | None, tree: Path = ROOT
) -> dict[str, Any]:
    """One crawl in a new process, with the scrapy_rep of checkout ``tree``."""
    command = [sys.executable, str(tree / "benchmarks" / "broad_crawl.py"), "--child", mode]
    if cpu is not None:
        command += ["--cpu", str(cpu)]
    with tempfile.TemporaryDirectory(prefix="broad-crawl-cwd-") as cwd:  # no .scrapy/ left here
        done = subprocess.run(
            command,
            input=json.dumps(options),
            capture_output=True,
            text=True,
            check=False,
            cwd=cwd,
        )
    if done.returncode != 0:
        sys.exit(f"the {mode} crawl failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["log"] = _log_summary(done.stderr)
    return result


_LOG_LINE = re.compile(r"^\S+ \S+ \[([^\]]+)\] (DEBUG|INFO|WARNING|ERROR|CRITICAL): (.*)$")


def _log_summary(stderr: str) -> dict[str, Any]:
    """Log lines by level and logger, and the distinct WARNING+ messages (digits as #)."""
    levels: Counter[str] = Counter()
    notable: Counter[str] = Counter()
    for line in stderr.splitlines():
        match = _LOG_LINE.match(line)
        if match is None:
            continue
        logger, level, message = match.groups()
        levels[f"{level} {logger}"] += 1
        if level in ("WARNING", "ERROR", "CRITICAL"):
            notable[f"{level} [{logger}] {re.sub(r'[0-9]+', '#', message)[:160]}"] += 1
    return {"levels": dict(levels), "notable": dict(notable)}


# --- the report ------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), default="latency")
    parser.add_argument("--origins", type=int, help="distinct hosts 127.1.x.y")
    parser.add_argument("--pages-per-origin", type=int)
    parser.add_argument("--disallowed-every", type=int, help="page k is disallowed if k%%N==N-1")
    parser.add_argument("--robots-latency", type=float, help="seconds before robots.txt answers")
    parser.add_argument("--page-latency", type=float, help="seconds before a page answers")
    parser.add_argument("--concurrency", type=int, help="CONCURRENT_REQUESTS (and per domain)")
    parser.add_argument("--runs", type=int, default=1, help="crawls per mode, interleaved")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated, of: %(default)s")
    parser.add_argument("--log-level", default="WARNING", choices=("INFO", "WARNING"))
    parser.add_argument(
        "--memory-max-origins",
        type=int,
        help="REP_MEMORY_MAX_ORIGINS for the rep modes (default: the setting's, 100,000)",
    )
    parser.add_argument(
        "--named-hosts",
        action=argparse.BooleanOptionalAction,
        help="origins o<N>.broad.test on one 127.0.0.1 socket (default: on in the scale preset)",
    )
    parser.add_argument(
        "--timeline",
        type=float,
        metavar="SECONDS",
        help="after each crawl, the mean robots.txt and page requests in flight at the "
        "server per SECONDS of the crawl (where the places went)",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="write a cProfile of each crawl to DIR/<mode>.prof (slows every mode)",
    )
    parser.add_argument(
        "--reactorless",
        action="store_true",
        help="every crawl in Scrapy's reactorless mode (TWISTED_REACTOR_ENABLED = False, "
        "aiohttp downloads)",
    )
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.cpu is not None:
            os.sched_setaffinity(0, {args.cpu})
        raise_file_limit()
        print(json.dumps(crawl(args.child, json.loads(sys.stdin.read()))))
        return
    for name, value in PRESETS[args.preset].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    modes = tuple(mode.strip() for mode in args.modes.split(",") if mode.strip())
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown or not modes:
        parser.error(f"--modes: unknown {unknown}; accepted: {', '.join(MODES)}")
    most = 10_000_000 if args.named_hosts else 256 * _PER_OCTET
    if args.origins < 1 or args.origins > most or args.pages_per_origin < 1:
        parser.error(f"--origins must be 1 to {most}, --pages-per-origin >= 1")
    # server: a listening socket and up to a few connections per origin; crawler: the connections
    limit = raise_file_limit()
    if not args.named_hosts and args.origins * 4 + 200 > limit:
        parser.error(f"--origins {args.origins} needs more file descriptors than {limit}")
    sys.exit(benchmark(args, modes))


def benchmark(args: argparse.Namespace, modes: tuple[str, ...]) -> int:
    cpus = sorted(os.sched_getaffinity(0))
    server_cpu, crawler_cpu = (cpus[-1], cpus[0]) if len(cpus) >= 2 else (None, None)
    control, remote = multiprocessing.Pipe()
    server = multiprocessing.get_context("spawn").Process(
        target=serve,
        args=(
            args.origins,
            args.robots_latency,
            args.page_latency,
            remote,
            server_cpu,
            args.named_hosts,
        ),
        daemon=True,
    )
    server.start()
    targets: list[tuple[str, int]] = control.recv()
    layout = _layout(args)
    options = crawl_options(args, targets)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    print(
        f"preset {args.preset}: {args.origins} origins ({origin_host(0, args.named_hosts)} to "
        f"{origin_host(args.origins - 1, args.named_hosts)}) x {args.pages_per_origin} pages "
        f"= {layout['pages']} "
        f"pages, {layout['disallowed']} disallowed (1 in {args.disallowed_every}); latency "
        f"robots.txt {args.robots_latency} s, pages {args.page_latency} s; "
        f"CONCURRENT_REQUESTS(_PER_DOMAIN) {args.concurrency}; {args.runs} run(s) per mode, "
        f"interleaved; CPUs: server {server_cpu}, crawler {crawler_cpu}; LOG_LEVEL "
        f"{args.log_level}; RETRY_ENABLED default (True)",
        flush=True,
    )
    results: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    violations: list[str] = []
    print(
        f"{'run':>3} {'mode':<21}{'seconds':>8}{'last':>7}{'fetched':>8}{'dropped':>8}"
        f"{'failed':>7}{'robots':>7}{'served':>7}{'disal':>6}{'lost':>5}{'dup':>5}"
        f"{'conns':>6}{'peak':>6}{'CPU s':>7}{'RSS':>6}  checks"
    )
    for run in range(1, args.runs + 1):
        for mode in modes if run % 2 else tuple(reversed(modes)):
            control.send("reset")
            control.recv()
            result = run_child(mode, options, crawler_cpu)
            control.send("report")
            served = control.recv()
            result.update(_served(served, args, layout))
            problems = _check(result, args, layout)
            result["problems"] = problems
            violations += [f"run {run} {mode}: {problem}" for problem in problems]
            results[mode].append(result)
            print(f"{run:>3} {_row(result)}", flush=True)
            if args.timeline:
                print(_timeline(served["events"], result, args.timeline, args.concurrency))
    control.send("stop")
    server.join(5)
    print()
    _table(results, args, layout)
    _logs(results)
    if violations:
        print("\nCORRECTNESS VIOLATIONS:")
        for violation in violations:
            print(f"    {violation}")
        return 1
    print("\nall checks passed")
    return 0


def crawl_options(args: argparse.Namespace, targets: list[tuple[str, int]]) -> dict[str, Any]:
    """What a crawler child is told: its server's targets and the crawl's settings."""
    return {
        "targets": targets,
        "pages_per_origin": args.pages_per_origin,
        "disallowed_every": args.disallowed_every,
        "concurrency": args.concurrency,
        "log_level": args.log_level,
        "named_hosts": args.named_hosts,
        "reactorless": getattr(args, "reactorless", False),
        "memory_max_origins": args.memory_max_origins,
        "profile": str(Path(args.profile).resolve()) if args.profile else None,
    }


def _layout(args: argparse.Namespace) -> dict[str, Any]:
    """Which paths every origin has, and how many pages are allowed or not."""
    paths = [page_path(n, args.disallowed_every) for n in range(args.pages_per_origin)]
    disallowed = sum(is_disallowed(path) for path in paths) * args.origins
    pages = len(paths) * args.origins
    return {"paths": paths, "pages": pages, "disallowed": disallowed, "allowed": pages - disallowed}


def _served(
    served: dict[str, Any], args: argparse.Namespace, layout: dict[str, Any]
) -> dict[str, Any]:
    counts = {(origin, path): n for origin, path, n in served["pages"]}
    allowed = [
        counts.get((origin, path), 0)
        for origin in range(args.origins)
        for path in layout["paths"]
        if not is_disallowed(path)
    ]
    robots: list[int] = served["robots"]
    return {
        "robots_total": sum(robots),
        "robots_min": min(robots),
        "robots_max": max(robots),
        "served_pages": sum(counts.values()),
        "disallowed_fetched": sum(n for (_, path), n in counts.items() if is_disallowed(path)),
        "allowed_lost": sum(n == 0 for n in allowed),
        "allowed_dup": sum(n > 1 for n in allowed),
        "connections": served["connections"],
        "peak_in_flight": served["peak_in_flight"],
    }


def _timeline(
    events: list[tuple[float, bool, int]], result: dict[str, Any], width: float, places: int
) -> str:
    """Mean robots.txt and page requests in flight at the server, per ``width`` seconds."""
    start, end = result["start"], result["start"] + result["seconds"]
    buckets = max(1, int((end - start) / width + 0.999))
    busy = [[0.0, 0.0] for _ in range(buckets)]
    level = [0, 0]
    last = start
    for at, robots, step in [*sorted(events), (end, False, 0)]:
        at = min(max(at, start), end)
        while last < at:  # spread the level since ``last`` over the buckets it covers
            index = int((last - start) / width)
            if start + (index + 1) * width <= last:  # rounding put it a bucket early
                index += 1
            index = min(index, buckets - 1)
            upto = at if index == buckets - 1 else min(at, start + (index + 1) * width)
            for kind in (0, 1):
                busy[index][kind] += level[kind] * (upto - last)
            last = upto
        level[0 if robots else 1] += step
    lines = [f"      {'from s':>7}{'robots':>8}{'pages':>8}{'idle':>6}"]
    for index, (robots, pages) in enumerate(busy):
        robots, pages = robots / width, pages / width
        bar = "R" * round(robots * 40 / places) + "p" * round(pages * 40 / places)
        idle = places - robots - pages
        lines.append(f"      {index * width:>7.2f}{robots:>8.1f}{pages:>8.1f}{idle:>6.0f}  {bar}")
    return "\n".join(lines)


def _check(r: dict[str, Any], args: argparse.Namespace, layout: dict[str, Any]) -> list[str]:
    problems = []
    obey = r["mode"] != "none"
    if obey and r["disallowed_fetched"]:
        problems.append(f"{r['disallowed_fetched']} disallowed pages fetched")
    if r["allowed_lost"] or r["allowed_dup"]:
        problems.append(
            f"allowed pages: {r['allowed_lost']} never fetched, {r['allowed_dup']} fetched twice+"
        )
    want = 1 if obey else 0
    if r["robots_min"] != want or r["robots_max"] != want:
        problems.append(
            f"robots.txt requests per origin {r['robots_min']}..{r['robots_max']}, not {want}"
        )
    if r["failed"]:
        problems.append(f"{r['failed']} requests failed: {r['failures']}")
    expect_fetched = layout["allowed"] if obey else layout["pages"]
    if r["fetched"] != expect_fetched or r["dropped"] != layout["pages"] - expect_fetched:
        problems.append(
            f"crawl counted {r['fetched']} fetched / {r['dropped']} dropped, expected "
            f"{expect_fetched} / {layout['pages'] - expect_fetched} ({r['drops']})"
        )
    if r["finish_reason"] != "finished":
        problems.append(f"finish_reason {r['finish_reason']}")
    return problems


def _row(r: dict[str, Any]) -> str:
    return (
        f"{LABELS[r['mode']]:<21}{r['seconds']:>8.2f}{r['last_done']:>7.2f}{r['fetched']:>8}"
        f"{r['dropped']:>8}{r['failed']:>7}{r['robots_total']:>7}{r['served_pages']:>7}"
        f"{r['disallowed_fetched']:>6}{r['allowed_lost']:>5}{r['allowed_dup']:>5}"
        f"{r['connections']:>6}{r['peak_in_flight']:>6}{r['cpu_seconds']:>7.2f}"
        f"{r['max_rss_mib']:>5.0f}M  {'; '.join(r['problems']) or 'ok'}"
    )


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median wall time (a real run, not a blend; the lower middle if even)."""
    return sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]


def _table(
    results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, layout: dict[str, Any]
) -> None:
    runs = len(next(iter(results.values())))
    summary = {mode: _median(rs) for mode, rs in results.items()}
    none = summary.get("none")
    print(f"median of {runs} run(s) per mode (by wall time, engine start to spider closed):")
    print(
        f"    {'mode':<21}{'seconds':>8}{'x none':>8}{'proc/s':>8}{'robots':>7}{'fetched':>8}"
        f"{'disal':>6}{'in-flight':>10}{'peak':>6}{'CPU us/req':>11}{'peak RSS':>9}"
        f"{'spread (s)':>14}"
    )
    for mode, r in summary.items():
        processed = r["fetched"] + r["dropped"]
        ratio = f"{r['seconds'] / none['seconds']:.3f}" if none else "-"
        busy = r["robots_total"] * args.robots_latency + r["served_pages"] * args.page_latency
        times = sorted(x["seconds"] for x in results[mode])
        spread = f"{times[0]:.2f}-{times[-1]:.2f}"
        print(
            f"    {LABELS[mode]:<21}{r['seconds']:>8.2f}{ratio:>8}{processed / r['seconds']:>8.0f}"
            f"{r['robots_total']:>7}{r['fetched']:>8}{r['disallowed_fetched']:>6}"
            f"{busy / r['seconds']:>10.1f}{r['peak_in_flight']:>6}"
            f"{r['cpu_seconds'] / processed * 1e6:>11.0f}{r['max_rss_mib']:>8.0f}M{spread:>14}"
        )
    _cpu_table(results)
    c = args.concurrency
    latency_only = layout["pages"] * args.page_latency / c
    robots_part = args.origins * args.robots_latency / c
    print(
        f"    latency-only time  P x page_latency / C = {layout['pages']} x "
        f"{args.page_latency} / {c} = {latency_only:.2f} s"
        + (
            f"  (none took {none['seconds']:.2f} s = {none['seconds'] / latency_only:.2f} x: "
            f"{'latency-bound' if none['seconds'] <= 1.25 * latency_only else 'NOT latency-bound'})"
            if none and latency_only > 0
            else ""
        )
    )
    if args.robots_latency > 0 or args.page_latency > 0:
        allowed_only = layout["allowed"] * args.page_latency / c + robots_part
        print(
            f"    ideal (obeying)    (P x page_latency + O x robots_latency) / C = "
            f"{latency_only:.2f} + {robots_part:.2f} = {latency_only + robots_part:.2f} s; "
            f"with P' = {layout['allowed']} allowed pages only: {allowed_only:.2f} s"
        )
        held = allowed_only + robots_part
        print(
            f"    held-place bound   (P' x page_latency + 2 x O x robots_latency) / C = "
            f"{held:.2f} s (the built-in's: the triggering request waits in a place of its own)"
        )
        for mode, r in summary.items():
            if mode != "none":
                print(
                    f"        {LABELS[mode]}: {r['seconds'] / (latency_only + robots_part):.2f} x "
                    f"ideal, {r['seconds'] / allowed_only:.2f} x the allowed-only ideal, "
                    f"{r['seconds'] / held:.2f} x the held-place bound"
                )


def collector(r: dict[str, Any]) -> tuple[float, int, float]:
    """A crawl's collector: seconds in all generations, full collections, their seconds."""
    figures = r.get("gc", {})
    seconds = figures.get("seconds", [0.0, 0.0, 0.0])
    return sum(seconds), figures.get("count", [0, 0, 0])[2], seconds[2]


def cpu_per_request(r: dict[str, Any]) -> float:
    """A crawl's CPU per request, in microseconds (every page, fetched or dropped)."""
    return float(r["cpu_seconds"]) / (r["fetched"] + r["dropped"]) * 1e6


def _cpu_table(results: dict[str, list[dict[str, Any]]]) -> None:
    """CPU per request by mode (median of the runs by CPU time): the figure a
    shared machine distorts least, as ratios to the none and builtin crawls of
    the same run; and the garbage collector's share of it."""
    summary = {
        mode: sorted(rs, key=lambda r: r["cpu_seconds"])[(len(rs) - 1) // 2]
        for mode, rs in results.items()
    }
    none, builtin = summary.get("none"), summary.get("builtin")
    print("CPU per request by mode (crawler process, median of the runs by CPU time):")
    print(
        f"    {'mode':<21}{'CPU us/req':>11}{'x none':>8}{'x builtin':>10}{'gc s':>7}"
        f"{'gc2 n':>7}{'gc2 s':>7}{'longest':>9}{'live objects':>13}"
    )
    for mode, r in summary.items():
        us = cpu_per_request(r)
        vs_none = f"{us / cpu_per_request(none):.3f}" if none else "-"
        vs_builtin = f"{us / cpu_per_request(builtin):.3f}" if builtin else "-"
        gc_stats = r.get("gc", {})
        gc_seconds, full, full_seconds = collector(r)
        print(
            f"    {LABELS[mode]:<21}{us:>11.0f}{vs_none:>8}{vs_builtin:>10}{gc_seconds:>7.2f}"
            f"{full:>7}{full_seconds:>7.2f}"
            f"{gc_stats.get('longest_full', 0.0) * 1000:>7.0f}ms"
            f"{gc_stats.get('tracked', 0):>13,}"
        )


def _logs(results: dict[str, list[dict[str, Any]]]) -> None:
    lines = []
    for mode, runs in results.items():
        notable: Counter[str] = Counter()
        for r in runs:
            notable.update(r["log"]["notable"])
        stats: Counter[str] = Counter()
        for r in runs:
            stats.update({k: v for k, v in r["stats"].items() if k.startswith(_STATS)})
        if stats:
            shown = ", ".join(f"{k}={v / len(runs):g}" for k, v in sorted(stats.items()))
            lines.append(f"    {LABELS[mode]} (mean of stats): {shown}")
        for message, count in notable.most_common(8):
            lines.append(f"    {LABELS[mode]}: {count} x {message}")
    if lines:
        print("\nstats and log lines (WARNING and above, digits shown as #):")
        print("\n".join(lines))


_STATS = ("retry/", "robotstxt/", "downloader/exception_count", "scheduler/dequeued/memory")


if __name__ == "__main__":
    main()
