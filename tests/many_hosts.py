"""One HTTP server answering on many loopback addresses: thousands of origins.

``127.0.0.0/8`` all reaches the loopback interface on Linux, so binding one
listening socket per address ``127.2.x.y`` gives each origin its own host (and
Scrapy its own download slot), without touching anything beyond loopback.
The server runs an asyncio loop in a thread, answers from a routing function,
and counts every request by (host, path).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import Callable
from typing import Final

#: (status, body) for a host and a path.
Route = Callable[[str, str], tuple[int, bytes]]
#: Seconds before answering, for every request or per host and path.
Delay = float | Callable[[str, str], float]

_PER_OCTET: Final = 250
#: Ports tried before giving up, should others take each free one first.
_BIND_TRIES: Final = 5


def host(index: int) -> str:
    """The ``index``-th loopback host, 127.2.0.1 onwards."""
    return f"127.2.{index // _PER_OCTET}.{index % _PER_OCTET + 1}"


class ManyHosts:
    """``with ManyHosts(n, route) as server: server.url(i, "/x")``."""

    def __init__(self, count: int, route: Route, delay: Delay = 0.0) -> None:
        self.hosts = [host(i) for i in range(count)]
        self.hits: Counter[tuple[str, str]] = Counter()
        self.in_flight = 0
        self.peak = 0  # the most requests the server held at once
        self.port = 0
        self._route = route
        self._delay = delay
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> ManyHosts:
        self._thread.start()
        if not self._ready.wait(30) or self._server is None:
            raise RuntimeError("the many-hosts server did not start")
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _stop(self) -> None:
        """Close the listeners and every connection while the loop still runs."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await asyncio.sleep(0)

    def url(self, index: int, path: str) -> str:
        return f"http://{self.hosts[index]}:{self.port}{path}"

    def count(self, path: str) -> int:
        """Requests for ``path`` over all hosts."""
        with self._lock:
            return sum(n for (_, p), n in self.hits.items() if p == path)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(self._start())
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _start(self) -> asyncio.Server:
        # One port for every address: take a free one on the first, then bind all.
        # Another process may take that port between the two (tests run side by
        # side, tests/mutation/run.py --jobs): then take another.
        for _ in range(_BIND_TRIES - 1):
            with contextlib.suppress(OSError):
                return await asyncio.start_server(
                    self._handle, self.hosts, await self._free_port(), backlog=1024
                )
        return await asyncio.start_server(
            self._handle, self.hosts, await self._free_port(), backlog=1024
        )

    async def _free_port(self) -> int:
        probe = await asyncio.start_server(self._handle, self.hosts[0], 0)
        port: int = probe.sockets[0].getsockname()[1]
        probe.close()
        await probe.wait_closed()
        return port

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode("latin-1")
                name = writer.get_extra_info("sockname")[0]
                with self._lock:
                    self.hits[(name, path)] += 1
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                try:
                    delay = self._delay(name, path) if callable(self._delay) else self._delay
                    if delay:
                        await asyncio.sleep(delay)
                    status, body = self._route(name, path)
                    writer.write(
                        b"HTTP/1.1 %d X\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                        % (status, len(body))
                        + body
                    )
                finally:
                    with self._lock:
                        self.in_flight -= 1
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
