"""The Tester's view of an origin's robots.txt versions: ``GET /api/versions``
(docs/versions.md, "In the Tester"; docs/tester.md).

For a stored origin: each version the record keeps (``cache.versions``),
the current one first, and, for each crawler the Tester is asked about, what
changed for its tokens between the current version and the one before
(``engine.changes``, read as ``scrapy-rep report --changed`` reads it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Final

from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.versions import Version, current_version, versions
from scrapy_rep.tools.report.changed import ChangeReader
from scrapy_rep.tools.store.view import StoreName

__all__ = ["MAX_CRAWLERS", "versions_answer"]

#: Crawlers one answer compares the versions for (each is a parse at most).
MAX_CRAWLERS: Final = 20


def _version(version: Version, current: bool) -> dict[str, Any]:
    return {
        "digest": version.digest,
        "status": version.status,
        "first_seen": version.first_seen,
        "last_seen": version.last_seen,
        "bytes": None if version.body is None else len(version.body),
        "current": current,
    }


def _tokens(agent: str) -> tuple[str, ...]:
    """A crawler as the Tester names it: ``"a,b"``, its tokens in order."""
    return tuple(part.strip() for part in agent.split(",") if part.strip()) or ("*",)


def versions_answer(
    store: StoreName,
    key: str,
    record: OriginRecord | None,
    agents: Sequence[str],
    google_quirks: bool = False,
) -> dict[str, Any]:
    """The versions ``record`` keeps and, per crawler of ``agents``, the
    change between the current one and the one before (None with fewer
    than two versions)."""
    kept = versions(record) if record is not None else ()
    # None: no current good answer (none yet, or a no-store one): nothing to compare.
    has_current = record is not None and current_version(record) is not None
    changes = []
    for agent in list(agents)[:MAX_CRAWLERS]:
        tokens = _tokens(agent)
        change = None
        if has_current and len(kept) >= 2:
            found = ChangeReader(tokens, google_quirks).change(kept[1], kept[0])
            change = {**found.as_dict(), "changed": bool(found)}
        changes.append({"agent": agent, "tokens": list(tokens), "change": change})
    return {
        "origin": key,
        "store": store.shown(),
        "now": time.time(),
        "kept": record is not None,
        "versions": [
            _version(version, has_current and index == 0) for index, version in enumerate(kept)
        ],
        "changes": changes,
    }
