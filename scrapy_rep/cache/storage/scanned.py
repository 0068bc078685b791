"""A record as a scan of a whole store reads it (``sqlite.once.scan_records``,
``redis.scan.scan_records``): for ``scrapy-rep report``, docs/cli.md."""

from __future__ import annotations

import json

from scrapy_rep.cache.record import OriginRecord

__all__ = ["Scanned", "read_scanned"]

#: A record read by a scan: its key, the record (None: one a crawl cannot
#: read, and treats as absent) and the bytes of its current body (0 without
#: one). A scan that reads no bodies reads the header line only: a record
#: that kept a body then has ``good_body == b""``, its size the third item,
#: and no earlier versions (docs/versions.md; their bodies were not read).
Scanned = tuple[str, OriginRecord | None, int]


def read_scanned(data: bytes, size: int) -> tuple[OriginRecord | None, int]:
    """The record of ``data`` (a whole value, or its header line) and its
    current body's size (``size``: the bytes after the header line)."""
    try:
        record = OriginRecord.from_bytes(data)
    except ValueError:
        return _head_of_version_2(data, size)
    if record.earlier:  # read whole: the bytes after the header hold the earlier bodies too
        return record, len(record.good_body or b"")
    return record, max(size, 0)


def _head_of_version_2(data: bytes, size: int) -> tuple[OriginRecord | None, int]:
    """The header line alone of a record with earlier versions: read as the
    same record without them (their bodies are past the line), its current
    body's size from the header. Anything else is unreadable."""
    head, sep, rest = data.partition(b"\n")
    try:
        header = json.loads(head)
        if rest or not sep or not isinstance(header, dict) or header.get("v") != 2:
            return None, max(size, 0)
        current = header.pop("bl")
        header.pop("vs")
        header["v"] = 1
        record = OriginRecord.from_bytes(json.dumps(header).encode() + b"\n")
    except (ValueError, KeyError, TypeError, RecursionError):
        return None, max(size, 0)
    if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current <= size:
        return None, max(size, 0)
    return record, current
