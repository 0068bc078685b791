"""One parsed ``RobotsTxt`` per distinct body, shared by every origin serving it.

The policy hands back bodies, not parsed rules, so that parsing happens here
once per body: thousands of origins with the same robots.txt (hosting
platforms, parked domains, CMS defaults) share one parse and its compiled
groups. Bounded in count and in bytes (``cost``), least recently used out.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["ParsedBodies", "cost"]

#: A parsed body with its compiled groups takes a few times the body's size
#: (measured on the corpus: ~2x parsed, up to ~4x once every group compiled).
PARSED_FACTOR: Final = 4
#: What any entry costs besides its body: the objects around it.
ENTRY_OVERHEAD: Final = 2_048


def cost(body: bytes) -> int:
    """The bytes a parsed body is counted for against a budget."""
    return PARSED_FACTOR * len(body) + ENTRY_OVERHEAD


class ParsedBodies:
    """``parse(body)`` with memory: equal bodies give the same ``RobotsTxt``."""

    def __init__(
        self,
        max_bodies: int = 2_000,
        *,
        google_quirks: bool = False,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> None:
        self.max_bodies = max_bodies
        self.max_bytes = max_bytes
        self.google_quirks = google_quirks
        self._parsed: OrderedDict[bytes, RobotsTxt] = OrderedDict()
        self.bytes = 0  # the cost of what is kept
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
        self.bytes += cost(body)
        # The newest stays even alone over the budget: it is in use.
        while len(self._parsed) > 1 and (
            len(self._parsed) > self.max_bodies or self.bytes > self.max_bytes
        ):
            old, _ = self._parsed.popitem(last=False)
            self.bytes -= cost(old)
        return robots
