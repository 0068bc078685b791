"""The demo's local sites: one origin on 127.0.0.1 per behaviour (``demo``).

Each serves a robots.txt that shows one thing scrapy_rep does (rules per
agent, a 404, a 503, a redirect chain across hosts, a body over 500 KiB,
sitemaps, usage preferences), and the pages the example project's spiders
ask for. Standard library only: the servers run in threads beside the crawl.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    pass

__all__ = ["USAGE_SITE", "Big", "Reply", "Site", "serving"]

#: The site whose robots.txt refuses AI training on part of it.
USAGE_SITE: Final = "usage"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    location: str | None = None


@dataclass(frozen=True)
class Big:
    """``size`` bytes: ``head``, comment lines, and ``tail`` at offset ``tail_at``.

    Generated while it is sent, so the server never holds it; the crawler is
    expected to hang up after 512,000 bytes.
    """

    size: int
    head: bytes
    tail_at: int
    tail: bytes


Answer = Reply | Big


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Answer]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a crawler hanging up on the big robots.txt is expected


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        answer = self.server.routes.get(path) or Reply(
            200, f"<html><body>{path}</body></html>".encode(), "text/html; charset=utf-8"
        )
        if isinstance(answer, Big):
            self._send_big(answer)
            return
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        if answer.location:
            self.send_header("Location", answer.location)
        self.end_headers()
        self.wfile.write(answer.body)

    def _send_big(self, big: Big) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(big.size))
        self.end_headers()
        filler = b"# filler: the rules that matter are at the top\n" * 1024
        with suppress(OSError):
            sent = self._write(big.head)
            while sent < big.size:
                if sent == big.tail_at:
                    sent += self._write(big.tail)
                    continue
                stop = big.tail_at if sent < big.tail_at else big.size
                sent += self._write(filler[: min(len(filler), stop - sent)])
        self.close_connection = True

    def _write(self, data: bytes) -> int:
        self.wfile.write(data)
        return len(data)

    def finish(self) -> None:
        with suppress(OSError):
            super().finish()


@dataclass
class Site:
    """One origin on 127.0.0.1 showing one behaviour."""

    name: str
    shows: str
    crawled: bool = True
    server: _Server = field(init=False)

    def __post_init__(self) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.routes = {}

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _sites() -> list[Site]:
    return [
        Site("agents", "rules for different agents"),
        Site("missing", "404: everything allowed"),
        Site("down", "503: unreachable, requests dropped"),
        Site("redirect", "redirect chain, 3 hops, across hosts"),
        Site("huge", "robots.txt over 500 KiB: the rest ignored"),
        Site("sitemaps", "sitemaps handed to the spider"),
        Site(USAGE_SITE, "crawling allowed, train-ai refused on part of the site"),
        Site("cdn", "where the redirect chain ends", crawled=False),
    ]


AGENTS_ROBOTS: Final = b"""\
# Each crawler obeys the one group that names it (RFC 9309 2.2.1).
User-agent: examplebot-news
Disallow: /private/

User-agent: examplebot
Disallow: /private/
Disallow: /articles/

User-agent: catalogbot
Allow: /$
Disallow: /

User-agent: *
Disallow: /
"""

#: draft-ietf-aipref-attach-05 and Cloudflare's Content Signals: every path may
#: be crawled; what may be used to train generative AI differs by path.
USAGE_ROBOTS: Final = b"""\
User-agent: *
Allow: /
Content-Usage: train-ai=y
Content-Usage: /articles/ train-ai=n, search=y
Content-Signal: /private/ search=yes, ai-train=no
"""

REDIRECTED_ROBOTS: Final = b"User-agent: *\nDisallow: /private/\n"
HUGE_SIZE: Final = 2_000_000
HUGE_TAIL_AT: Final = 520_000  # beyond 512,000 bytes: never parsed


def _urlset(base: str, paths: Sequence[str]) -> bytes:
    urls = "".join(f"<url><loc>{base}{path}</loc></url>" for path in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    ).encode()


def _route(sites: dict[str, Site]) -> None:
    """What each site answers; some answers name another site's port."""
    sites["agents"].server.routes = {"/robots.txt": Reply(200, AGENTS_ROBOTS)}
    sites["missing"].server.routes = {
        "/robots.txt": Reply(404, b"<html>Not found</html>", "text/html")
    }
    sites["down"].server.routes = {"/robots.txt": Reply(503, b"Down for maintenance")}
    cdn = sites["cdn"].url
    sites["redirect"].server.routes = {
        "/robots.txt": Reply(301, location="/robots-2024.txt"),
        "/robots-2024.txt": Reply(302, location=f"{cdn}/redirect/robots.txt"),
    }
    sites["cdn"].server.routes = {
        "/redirect/robots.txt": Reply(307, location="/rules/redirect.txt"),
        "/rules/redirect.txt": Reply(200, REDIRECTED_ROBOTS),
        "/robots.txt": Reply(200, b"User-agent: *\nDisallow: /\n"),
    }
    sites["huge"].server.routes = {
        "/robots.txt": Big(
            HUGE_SIZE,
            b"User-agent: *\nDisallow: /early/\n",
            HUGE_TAIL_AT,
            b"\nDisallow: /late/\n",
        )
    }
    sites[USAGE_SITE].server.routes = {"/robots.txt": Reply(200, USAGE_ROBOTS)}
    base = sites["sitemaps"].url
    sites["sitemaps"].server.routes = {
        "/robots.txt": Reply(200, _sitemaps_robots(base)),
        "/sitemaps/pages.xml": Reply(
            200, _urlset(base, ["/catalog/1", "/catalog/2", "/private/listed"]), "text/xml"
        ),
        "/sitemaps/news.xml": Reply(200, _urlset(base, ["/news/today"]), "text/xml"),
    }


def _sitemaps_robots(base: str) -> bytes:
    return (
        f"Sitemap: {base}/sitemaps/pages.xml\n"
        f"Sitemap: {base}/sitemaps/news.xml\n\n"
        "User-agent: *\nDisallow: /private/\n"
    ).encode()


@contextmanager
def serving() -> Iterator[list[Site]]:
    """Every site, listening, each in its own thread; stopped on exit."""
    sites = _sites()
    _route({site.name: site for site in sites})
    with ExitStack() as stack:
        for site in sites:
            thread = threading.Thread(
                target=site.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
            )
            thread.start()
            stack.callback(site.server.server_close)
            stack.callback(site.server.shutdown)
        yield sites
