"""Every reach into Scrapy's download slots, in one place.

A slot's ``delay`` and ``jitter`` are not a public API: Scrapy documents the
settings (``DOWNLOAD_DELAY``, ``DOWNLOAD_DELAY_JITTER``, ``DOWNLOAD_SLOTS``),
not the objects, and AutoThrottle itself writes ``slot.delay``. The helpers
here degrade to doing nothing (None) when the downloader looks different, so a
Scrapy upgrade can lose the crawl-delay but cannot break a crawl.

Facts relied on (Scrapy 2.13 to 2.19):

- ``Downloader._enqueue_request`` gets or creates the slot, stores its key in
  ``request.meta["download_slot"]`` and sends ``request_reached_downloader``
  before it queues the request and computes the wait: a delay set in a
  handler of that signal governs the request, even on a slot just created.
- ``engine.downloader.slots`` maps keys (host name, IP or the
  ``download_slot`` meta value) to slots; idle slots are dropped after a minute
  and re-created with the defaults.
- Scrapy 2.19 has ``slot.jitter`` (the wait is ``delay * (1 ± jitter)``);
  earlier versions have ``slot.randomize_delay`` (± 50 %).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request

__all__ = ["Timing", "find_slot", "read_timing", "slot_key", "write_timing"]

#: Scrapy's ``Downloader.DOWNLOAD_SLOT``.
_SLOT_META = "download_slot"
_LEGACY_JITTER = 0.5


class Timing(NamedTuple):
    """What decides the wait between two downloads from one slot."""

    delay: float
    jitter: float  # the wait varies by ± jitter × delay, floored at 0


def slot_key(request: Request) -> str | None:
    """The key of the slot the downloader put ``request`` in (None before that)."""
    key = request.meta.get(_SLOT_META)
    return key if isinstance(key, str) else None


def find_slot(crawler: Crawler, key: str) -> Any | None:
    """The live slot object for ``key``, if the downloader has one."""
    downloader = getattr(crawler.engine, "downloader", None)
    slots = getattr(downloader, "slots", None)
    return slots.get(key) if isinstance(slots, dict) else None


def read_timing(slot: Any) -> Timing | None:
    delay = getattr(slot, "delay", None)
    if not isinstance(delay, (int, float)):
        return None
    jitter = getattr(slot, "jitter", None)
    if isinstance(jitter, (int, float)):
        return Timing(float(delay), float(jitter))
    randomize = getattr(slot, "randomize_delay", None)  # Scrapy < 2.19
    if isinstance(randomize, bool):
        return Timing(float(delay), _LEGACY_JITTER if randomize else 0.0)
    return None


def write_timing(slot: Any, timing: Timing) -> None:
    slot.delay = timing.delay
    if isinstance(getattr(slot, "jitter", None), (int, float)):
        slot.jitter = timing.jitter
    else:  # Scrapy < 2.19: only ± 50 % or nothing
        slot.randomize_delay = timing.jitter >= _LEGACY_JITTER
