"""Many origins asking for a crawl-delay, and slow pages elsewhere that hold
a crawl's places in CONCURRENT_REQUESTS: the site of the gap tests
(tests/crawler/extras/test_pace_gaps.py, tests/distributed/test_pace.py).

Every page request of a paced origin is stamped when the site reads it (the
site's own clock); ``gaps`` are the seconds between two pages of one origin.
"""

from __future__ import annotations

import threading
import time
from itertools import pairwise
from typing import Final

from many_hosts import ManyHosts

#: How long each slow page holds a place, unless said otherwise.
HOG: Final = 0.9
#: Hosts of the slow pages: Scrapy gives each host 8 places of its own.
HOG_HOSTS: Final = 8


class PacedSite:
    """``origins`` hosts with ``Crawl-delay: delay``, then ``HOG_HOSTS`` without
    one whose ``/slow<n>`` pages take ``hog`` seconds to answer."""

    def __init__(self, origins: int, delay: float, hog: float = HOG) -> None:
        self.origins = origins
        self.delay = delay
        self.hog = hog
        self.stamps: list[tuple[str, float]] = []
        self._lock = threading.Lock()
        self.hosts = ManyHosts(origins + HOG_HOSTS, self._route, self._delay)
        self._paced = set(self.hosts.hosts[:origins])

    def __enter__(self) -> PacedSite:
        self.hosts.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.hosts.__exit__(*exc)

    def _route(self, host: str, path: str) -> tuple[int, bytes]:
        if host not in self._paced:
            return 200, b"User-agent: *\nDisallow:\n" if path == "/robots.txt" else b"page"
        if path == "/robots.txt":
            return 200, f"User-agent: *\nCrawl-delay: {self.delay}\n".encode()
        with self._lock:
            self.stamps.append((host, time.monotonic()))
        return 200, b"<html>page</html>"

    def _delay(self, host: str, path: str) -> float:
        return self.hog if path.startswith("/slow") else 0.0  # the site is slow there

    def pages(self, count: int) -> list[str]:
        """``/p<n>`` of every paced origin, the first page of each first."""
        return [self.hosts.url(i, f"/p{n}") for n in range(count) for i in range(self.origins)]

    def warm(self, places: int) -> list[str]:
        """A page of each slow host that ``slow(places)`` uses: their robots.txt
        in first, so that the slow pages take the places the moment they come."""
        return [self.hosts.url(self.origins + n, "/") for n in range(min(places, HOG_HOSTS))]

    def slow(self, count: int) -> list[str]:
        """Slow pages spread over the slow hosts."""
        return [self.hosts.url(self.origins + n % HOG_HOSTS, f"/slow{n}") for n in range(count)]

    def gaps(self) -> list[float]:
        """Seconds between two pages of one origin, for every paced origin."""
        with self._lock:
            stamps = list(self.stamps)
        found: list[float] = []
        for host in {h for h, _ in stamps}:
            found += [b - a for a, b in pairwise(at for h, at in stamps if h == host)]
        return found
