"""Why a request was fetched (or dropped): ``request.meta["rep_decision"]``.

Plain data, picklable, for item pipelines and the decision log
(docs/versions.md, "Why each page was fetched"): the origin, its robots.txt
URL, the state's word (``cache/standing.py`` ``State``), the robots.txt
version that decided (its digest, status and times, or None), and what in it
decided: a rule (kind, pattern, line) and its group, or why none applied.

Cheap by construction: the per-version part (origin, URL, state, version) is
worked out once per origin's access and shared by every request it answers,
and a body's digest once per distinct body, as its parse is
(``cache/storage/parsed.py``). Per request: one ``explain`` and one small dict.
Neither memo keeps an access, a parse or a record alive: the parts hold plain
data and a weak reference to their access, the digests are bounded in bytes.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.cache.standing import IN_OUTAGE
from scrapy_rep.cache.versions import body_digest, current_version
from scrapy_rep.crawler.decision_log import PROVENANCE_META_KEY
from scrapy_rep.crawler.errors import ForbiddenByRobotsTxt
from scrapy_rep.engine.origin import robots_url
from scrapy_rep.engine.robotstxt import NO_GROUP, NO_RULE, ROBOTS_TXT, RULE

if TYPE_CHECKING:
    from scrapy.http import Request

    from scrapy_rep.cache.outcome import Access
    from scrapy_rep.cache.record import OriginRecord
    from scrapy_rep.crawler.access.tokens import RequestTokens
    from scrapy_rep.crawler.reporting import Drop
    from scrapy_rep.engine.origin import Origin

__all__ = [
    "DONT_OBEY",
    "PROVENANCE_META_KEY",
    "Provenance",
    "opted_out_meta",
]

#: ``decided_by`` of a request with ``meta["dont_obey_robotstxt"]``.
DONT_OBEY: Final = "dont_obey_robotstxt"
#: Bounds of the memos (cleared when full, as the resolver's sets are): the
#: parts of this many origins (about 700 bytes each: 7 MiB more for 10,000
#: origins of the scale preset; a crawl asks a few hundred origins at a
#: time, so a clear costs a few parts made again), and the bodies whose
#: digest is kept (their bytes; a body is shared with its parse).
_MAX_PARTS: Final = 4_096
_MAX_DIGEST_BYTES: Final = 4 * 1024 * 1024
_RULES: Final = AccessState.RULES
_CLOSED: Final = AccessState.CLOSED

Part = dict[str, Any]


def opted_out_meta() -> dict[str, Any]:
    """The meta of a request that asked not to be checked."""
    return {
        "origin": None,
        "robotstxt_url": None,
        "state": None,
        "version": None,
        "decided_by": DONT_OBEY,
        "rule": None,
        "group": None,
    }


class Provenance:
    """``meta["rep_decision"]`` for each request an origin's access answers."""

    def __init__(
        self, record_of: Callable[[Origin], OriginRecord | None], tokens: RequestTokens
    ) -> None:
        self._record_of = record_of
        self._tokens = tokens
        #: origin -> (its access, weakly; the part it shares): one per access settled.
        self._parts: dict[Origin, tuple[weakref.ref[Access], Part]] = {}
        #: body -> its digest; ``_digest_bytes`` their size.
        self._digests: dict[bytes, str | None] = {}
        self._digest_bytes = 0

    def of(self, request: Request, origin: Origin, access: Access) -> dict[str, Any]:
        """The meta of ``request``, which ``access`` answered (let through or dropped)."""
        part = self.part(origin, access)
        robots = access.robots
        if access.state is not _RULES or robots is None:
            state = part["state"]
            return {**part, "decided_by": state, "rule": None, "group": None}
        url = request.url
        verdict = robots.explain(url, self._tokens(request))
        rule = verdict.rule
        if rule is not None:
            by = RULE
            said = {"kind": rule.kind, "pattern": rule.pattern, "line": rule.line}
            return {**part, "decided_by": by, "rule": said, "group": verdict.agent}
        if verdict.agent is None:
            by = NO_GROUP
        elif "/robots.txt" in url:  # rare: read it the engine's way
            by = robots.reason(url, verdict)
        else:
            by = NO_RULE
        return {**part, "decided_by": by, "rule": None, "group": verdict.agent}

    def dropped(
        self, request: Request, origin: Origin, access: Access, drop: Drop
    ) -> dict[str, Any]:
        """The meta of a request ``drop`` drops: a rule's drop says its rule
        already (no second look at the file)."""
        error = drop.error
        if not isinstance(error, ForbiddenByRobotsTxt):
            return self.of(request, origin, access)
        rule = error.rule
        said = {"kind": rule.kind, "pattern": rule.pattern, "line": rule.line}
        part = self.part(origin, access)
        return {**part, "decided_by": RULE, "rule": said, "group": drop.agent}

    def robots_txt(self, origin: Origin, access: Access) -> dict[str, Any]:
        """The meta of a request for the origin's robots.txt itself (docs/spec.md §6.9)."""
        return {**self.part(origin, access), "decided_by": ROBOTS_TXT, "rule": None, "group": None}

    def part(self, origin: Origin, access: Access) -> Part:
        """The part every request ``access`` answers shares (do not change it)."""
        held = self._parts.get(origin)
        if held is not None and held[0]() is access:
            return held[1]
        part = self._made(origin, access)
        if len(self._parts) >= _MAX_PARTS:
            self._parts.clear()
        self._parts[origin] = (weakref.ref(access), part)
        return part

    def _made(self, origin: Origin, access: Access) -> Part:
        record = self._record_of(origin)
        in_outage = record is not None and record.in_outage
        state = IN_OUTAGE[access.state].value if in_outage else access.state.value
        return {
            "origin": str(origin),
            "robotstxt_url": robots_url(origin),
            "state": state,
            "version": self._version(record, access),
        }

    def _version(self, record: OriginRecord | None, access: Access) -> dict[str, Any] | None:
        """The version whose answer ``access`` applies: None when none does
        (closed, everything allowed in an outage with no such copy, no record)."""
        if record is None or access.state is _CLOSED:
            return None
        version = current_version(record)
        robots = access.robots
        if version is None or (robots is None) != (version.body is None):
            return None
        digest = None if version.body is None else self._digest(version.body)
        return {
            "digest": digest,
            "status": version.status,
            "first_seen": version.first_seen,
            "fetched_at": version.last_seen,
        }

    def _digest(self, body: bytes) -> str | None:
        """``body_digest(body)``, once per distinct body (its hash is already
        known: the parse cache looked it up)."""
        digest = self._digests.get(body)
        if digest is not None:
            return digest
        digest = body_digest(body)
        if self._digest_bytes + len(body) > _MAX_DIGEST_BYTES:
            self._digests.clear()
            self._digest_bytes = 0
        self._digests[body] = digest
        self._digest_bytes += len(body)
        return digest
