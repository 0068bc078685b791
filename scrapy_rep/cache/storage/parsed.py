"""One parsed ``RobotsTxt`` per distinct body, shared by every origin serving it.

The policy hands back bodies, not parsed rules, so that parsing happens here
once per body: thousands of origins with the same robots.txt (hosting
platforms, parked domains, CMS defaults) share one parse and its compiled
groups. Bounded, least recently used out.
"""

from __future__ import annotations

from collections import OrderedDict

from scrapy_rep.engine.document import RobotsTxt

__all__ = ["ParsedBodies"]


class ParsedBodies:
    """``parse(body)`` with memory: equal bodies give the same ``RobotsTxt``."""

    def __init__(self, max_bodies: int = 2_000, *, google_quirks: bool = False) -> None:
        self.max_bodies = max_bodies
        self.google_quirks = google_quirks
        self._parsed: OrderedDict[bytes, RobotsTxt] = OrderedDict()
        self.parses = 0  # how many bodies were actually parsed

    def __len__(self) -> int:
        return len(self._parsed)

    def __call__(self, body: bytes) -> RobotsTxt:
        robots = self._parsed.get(body)
        if robots is not None:
            self._parsed.move_to_end(body)
            return robots
        robots = RobotsTxt.parse(body, google_quirks=self.google_quirks)
        self.parses += 1
        self._parsed[body] = robots
        if len(self._parsed) > self.max_bodies:
            self._parsed.popitem(last=False)
        return robots
