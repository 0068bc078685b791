"""A record as a scan of a whole store reads it (``sqlite.once.scan_records``,
``redis.scan.scan_records``): for ``scrapy-rep report``, docs/cli.md."""

from __future__ import annotations

from scrapy_rep.cache.record import OriginRecord

__all__ = ["Scanned", "read_scanned"]

#: A record read by a scan: its key, the record (None: one a crawl cannot
#: read, and treats as absent) and the bytes of its body (0 without one). A
#: scan that reads no bodies reads the header line only: a record that kept a
#: body then has ``good_body == b""``, and its size is the third item.
Scanned = tuple[str, OriginRecord | None, int]


def read_scanned(data: bytes, size: int) -> tuple[OriginRecord | None, int]:
    """The record of ``data`` (a whole value, or its header line) and the body's size."""
    try:
        return OriginRecord.from_bytes(data), max(size, 0)
    except ValueError:
        return None, max(size, 0)
