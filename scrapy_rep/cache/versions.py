"""The good answers an origin gave before its current one (docs/versions.md).

An origin's record keeps its current good answer (``good_body``,
``good_status``) and, newest first, the earlier ones that differed
(``OriginRecord.earlier``), bounded in number and in bytes per origin. Two
answers are one version when both are 4xx (no rules: allow-all), or both 2xx
with the same body. Pure: ``kept_versions`` is called by
``policy.record_outcome`` when a good answer comes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scrapy_rep.cache.record import OriginRecord

__all__ = [
    "Version",
    "body_digest",
    "current_version",
    "earlier_bytes",
    "kept_versions",
    "versions",
]


@dataclass(frozen=True, slots=True)
class Version:
    """One good answer of an origin's robots.txt, and when it was seen."""

    status: int  # its HTTP status: 2xx (rules) or 4xx (no rules: allow-all)
    body: bytes | None  # the 2xx body; None for a 4xx
    first_seen: float  # when this answer first came
    last_seen: float  # when it last came (a refetch that gave the same answer)

    @property
    def digest(self) -> str | None:
        """``body_digest`` of the body: None for a 4xx."""
        return body_digest(self.body)

    @property
    def has_rules(self) -> bool:
        return self.body is not None


def body_digest(body: bytes | None) -> str | None:
    """The name of a robots.txt version: ``sha256:`` and the hex digest of its
    body as fetched (cut at the size cap); None when there is no body (4xx)."""
    if body is None:
        return None
    return "sha256:" + hashlib.sha256(body).hexdigest()


def current_version(record: OriginRecord) -> Version | None:
    """The record's current good answer as a ``Version``; None before any,
    and for a ``no-store`` answer read back without its body."""
    if record.good_at is None or record.good_status is None:
        return None
    if 200 <= record.good_status < 300 and record.good_body is None:
        return None
    first = record.good_since if record.good_since is not None else record.good_at
    return Version(record.good_status, record.good_body, first, record.good_at)


def versions(record: OriginRecord) -> tuple[Version, ...]:
    """Every version the record keeps, the current one first."""
    current = current_version(record)
    return record.earlier if current is None else (current, *record.earlier)


def earlier_bytes(record: OriginRecord) -> int:
    """What the record's earlier versions' bodies take (``REP_VERSIONS_MAX_BYTES``'s count)."""
    return sum(len(version.body or b"") for version in record.earlier)


def same_answer(a: Version, b: Version) -> bool:
    """One version: both 4xx, or both 2xx with the same body."""
    if a.has_rules != b.has_rules:
        return False
    return a.body == b.body


def kept_versions(
    previous: OriginRecord | None,
    status: int,
    body: bytes | None,
    now: float,
    *,
    kept: int,
    max_bytes: int,
) -> tuple[float | None, tuple[Version, ...]]:
    """(when the new good answer was first seen, the earlier versions to keep).

    The first is None when that is ``now`` (a record's ``good_since`` then
    reads as its ``good_at``, and is not written). The same answer as the
    current one keeps its first sighting and the earlier versions as they
    are; a different one pushes the current one to the front of the earlier
    ones, then the oldest go until at most ``kept`` remain and their bodies
    sum to ``max_bytes`` at most.
    """
    if previous is None:
        return None, ()
    new = Version(status, body, now, now)  # compared only
    # A no-store answer is never kept (docs/spec.md §3.2), not even as an earlier one.
    current = None if previous.no_store else current_version(previous)
    if current is None:  # no answer before, or one whose body may not be kept
        return None, _bounded(previous.earlier, kept, max_bytes)
    if same_answer(current, new):
        return current.first_seen, previous.earlier
    return None, _bounded((current, *previous.earlier), kept, max_bytes)


def _bounded(earlier: tuple[Version, ...], kept: int, max_bytes: int) -> tuple[Version, ...]:
    chosen: list[Version] = []
    total = 0
    for version in earlier[:kept]:
        total += len(version.body or b"")
        if total > max_bytes:
            break
        chosen.append(version)
    return tuple(chosen)
