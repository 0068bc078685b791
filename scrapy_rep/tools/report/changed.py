"""The origins whose rules changed for the crawler: ``scrapy-rep report --changed``
(docs/versions.md, "What changed, for this crawler").

Each record's current version (``cache.versions``) is compared with the one
before it, or with ``--since AGE`` with the one that was current AGE ago
(the oldest kept, if that one is no longer kept), as the crawl's tokens read
them (``engine.changes.change_for``): a body that changed only in what
other crawlers are told is no change here. Each distinct file is parsed
once, and each pair of files compared once, within a bounded memo. No
Scrapy here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.storage.scanned import Scanned
from scrapy_rep.cache.versions import Version, current_version
from scrapy_rep.engine.changes import Change, change_for
from scrapy_rep.engine.robotstxt import RobotsTxt

__all__ = ["ChangeReader", "changed_rows", "compared_versions"]

#: Distinct files parsed, and pairs compared, that are remembered.
_MEMO: Final = 10_000


def compared_versions(
    record: OriginRecord, now: float, since: float | None
) -> tuple[Version, Version] | None:
    """(before, after) to compare for ``record``: None when it keeps no
    earlier version, or (``since``) its current one came before ``now - since``."""
    current = current_version(record)
    if current is None or not record.earlier:
        return None
    if since is None:
        return record.earlier[0], current
    cutoff = now - since
    if current.first_seen < cutoff:
        return None
    before = next((v for v in record.earlier if v.first_seen <= cutoff), record.earlier[-1])
    return before, current


class ChangeReader:
    """``change_for`` with the crawl's tokens, once per pair of distinct files."""

    def __init__(self, tokens: tuple[str, ...], google_quirks: bool = False) -> None:
        self.tokens = tokens
        self.google_quirks = google_quirks
        self._parsed: dict[str, RobotsTxt] = {}
        self._changes: dict[tuple[str | None, str | None], Change] = {}

    def change(self, before: Version, after: Version) -> Change:
        pair = (before.digest, after.digest)
        known = self._changes.get(pair)
        if known is None:
            known = change_for(self._robots(before), self._robots(after), self.tokens)
            if len(self._changes) >= _MEMO:
                self._changes.clear()
            self._changes[pair] = known
        return known

    def _robots(self, version: Version) -> RobotsTxt | None:
        digest = version.digest
        if digest is None or version.body is None:
            return None  # a 4xx: no rules, everything allowed
        robots = self._parsed.get(digest)
        if robots is None:
            robots = RobotsTxt.parse(version.body, google_quirks=self.google_quirks)
            if len(self._parsed) >= _MEMO:
                self._parsed.clear()
            self._parsed[digest] = robots
        return robots


def _version_columns(prefix: str, version: Version) -> dict[str, Any]:
    return {
        f"{prefix}_digest": version.digest,
        f"{prefix}_status": version.status,
        f"{prefix}_first_seen": version.first_seen,
        f"{prefix}_last_seen": version.last_seen,
    }


def changed_rows(
    scanned: Iterable[Scanned],
    now: float,
    reader: ChangeReader,
    *,
    since: float | None = None,
    host: Callable[[str], bool] | None = None,
) -> Iterator[dict[str, Any]]:
    """A row per origin whose rules changed for ``reader``'s tokens, in the
    store's order: the origin, when it changed, the two versions, and the
    ``Change`` (its ``as_dict``). ``scanned`` must carry the bodies.
    ``host``: a predicate on the origin, or None for every origin."""
    for key, record, _ in scanned:
        if record is None or (host is not None and not host(key)):
            continue
        pair = compared_versions(record, now, since)
        if pair is None:
            continue
        before, after = pair
        change = reader.change(before, after)
        if change:
            yield {
                "origin": key,
                "changed_at": after.first_seen,
                **_version_columns("before", before),
                **_version_columns("after", after),
                "change": change,
            }
