"""What is remembered of an origin across runs and processes, and its bytes (docs/spec.md §2.3).

A record is written by the policy (``policy.record_outcome``) and read back
from any store, perhaps tampered with or foreign: ``from_bytes`` checks every
field, so a bad row reads as absent (fetched again), never a crash.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from scrapy_rep.cache.outcome import FetchKind
from scrapy_rep.cache.versions import Version

__all__ = ["CLOCK_SKEW", "OriginRecord"]


@dataclass(frozen=True, slots=True)
class OriginRecord:
    """What is remembered per origin, across runs and processes (docs/spec.md §2.3)."""

    kind: FetchKind  # the last fetch's outcome
    status: int | None  # its HTTP status; None for network errors
    reason: str  # its reason for people: "HTTP 503", "timeout", ...
    fetched_at: float  # when the last fetch ended
    expires_at: float  # end of life of the last good (2xx/4xx) answer
    good_body: bytes | None = None  # the last 2xx body; None after a 4xx or never
    good_at: float | None = None  # when the last good answer (2xx or 4xx) came
    good_status: int | None = None  # its status
    outage_started_at: float | None = None  # first unreachable fetch of the outage
    next_retry_at: float | None = None  # when the next retry is due, in an outage
    failures: int = 0  # unreachable fetches in the outage
    site_reachable_at: float | None = None  # last time other pages answered, in an outage
    no_store: bool = False  # the good body must not be persisted (Cache-Control)
    #: Where the last fetch's redirects ended, when not at the origin's own
    #: /robots.txt (the report's "redirected elsewhere", docs/cli.md).
    final_url: str | None = None
    #: The good body was cut at the size cap (docs/spec.md §4.3): the file is longer.
    truncated: bool = False
    #: When the current good answer first came (an equal refetch keeps it);
    #: None: at ``good_at``.
    good_since: float | None = None
    #: The good answers before the current one that differed, newest first
    #: (``cache.versions``, docs/versions.md).
    earlier: tuple[Version, ...] = ()

    @property
    def in_outage(self) -> bool:
        return self.outage_started_at is not None

    def to_bytes(self) -> bytes:
        """A compact form for sqlite and redis: one JSON line, then the raw body.

        A ``no-store`` body is left out (docs/spec.md §3.2): another process sees the
        record without its body and fetches again.
        """
        body = None if self.no_store else self.good_body
        header: dict[str, Any] = {
            "v": 1,
            "k": self.kind.value,
            "s": self.status,
            "r": self.reason,
            "f": self.fetched_at,
            "e": self.expires_at,
            "g": self.good_at,
            "gs": self.good_status,
            "st": self.outage_started_at,
            "n": self.next_retry_at,
            "c": self.failures,
            "sr": self.site_reachable_at,
            "ns": self.no_store,
            "b": body is not None,
        }
        # Written only when set: a record without them is byte for byte what
        # earlier versions write, and reads with the defaults in any version.
        if self.final_url is not None:
            header["u"] = self.final_url
        if self.truncated:
            header["t"] = True
        if self.good_since is not None and self.good_since != self.good_at:
            header["gf"] = self.good_since
        tail = b""
        if self.earlier:
            # Version 2: the earlier bodies follow the current one. An earlier
            # release reads it as not its own (fetched again), never as rules.
            header["v"] = 2
            header["bl"] = len(body or b"")
            header["vs"] = [_version_head(version) for version in self.earlier]
            tail = b"".join(version.body or b"" for version in self.earlier)
        head = json.dumps(header, separators=(",", ":")).encode()
        return head + b"\n" + (body or b"") + tail

    @classmethod
    def from_bytes(cls, data: bytes) -> OriginRecord:
        """The inverse of ``to_bytes``; raises ``ValueError`` on anything else.

        A store row may be tampered with or foreign (docs/storage.md, "When
        a store fails"): every field is checked for its type, finiteness and
        range, so that a bad row is absent (fetched again), never a crash or
        an origin open forever.
        """
        head, sep, body = data.partition(b"\n")
        try:
            header = _DECODE(head.decode())
            if not sep or not isinstance(header, dict) or header.get("v") not in (1, 2):
                raise ValueError("not a version-1 or version-2 record")
            body, earlier = _earlier(header, body) if header["v"] == 2 else (body, ())
            if not isinstance(header["b"], bool) or not isinstance(header["ns"], bool):
                raise ValueError("flags are not booleans")
            if header["b"] is False and body:
                raise ValueError("a body where none was recorded")
            record = cls(
                kind=_KINDS[header["k"]],
                status=_status(header["s"]),
                reason=_text(header["r"]),
                fetched_at=_time(header["f"]),
                expires_at=_time(header["e"]),
                good_body=bytes(body) if header["b"] else None,
                good_at=_time(header["g"], optional=True),
                good_status=_status(header["gs"]),
                outage_started_at=_time(header["st"], optional=True),
                next_retry_at=_time(header["n"], optional=True),
                failures=_count(header["c"]),
                site_reachable_at=_time(header["sr"], optional=True),
                no_store=header["ns"],
                final_url=_url(header.get("u")),
                truncated=_flag(header.get("t", False)),
                good_since=_time(header.get("gf"), optional=True),
                earlier=earlier,
            )
        except (KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed origin record: {exc!r}") from exc
        return _consistent(record)


def _version_head(version: Version) -> list[object]:
    size = None if version.body is None else len(version.body)
    return [version.status, version.first_seen, version.last_seen, size]


#: The most earlier versions a record may hold (``REP_VERSIONS_KEPT``'s bound).
MAX_EARLIER = 100


def _earlier(header: dict[str, Any], data: bytes) -> tuple[bytes, tuple[Version, ...]]:
    """A version-2 record's current body and its earlier versions, checked."""
    heads = header["vs"]
    current = header["bl"]
    if not isinstance(heads, list) or not 0 < len(heads) <= MAX_EARLIER:
        raise ValueError(f"not a list of earlier versions: {heads!r}")
    if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current <= len(data):
        raise ValueError(f"not a body length: {current!r}")
    earlier: list[Version] = []
    at = current
    for head in heads:
        if not isinstance(head, list) or len(head) != 4:
            raise ValueError(f"not an earlier version: {head!r}")
        status, first, last, size = head
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            raise ValueError(f"not a body length: {size!r}")
        body = None if size is None else bytes(data[at : at + size])
        at += size or 0
        code = _status(status)
        if code is None or (body is None) != (code >= 300):
            raise ValueError(f"an earlier version's status and body disagree: {head!r}")
        earlier.append(Version(code, body, _time(first), _time(last)))
    if at != len(data):
        raise ValueError("the earlier bodies and their lengths disagree")
    return data[:current], tuple(earlier)


_KINDS = {kind.value: kind for kind in FetchKind}
#: ``json.loads`` without its look for an encoding: a store reads many
#: records (a report reads every one).
_DECODE = json.JSONDecoder().decode

#: Timestamps a record may hold, finite and from 1970 to about the year
#: 5000 (anything else is not ours); how far an expiry may reach is the
#: policy's to cap when a record is loaded (``loaded_record``).
_TIMES = (0.0, 1e11)


def _time(value: object, optional: bool = False) -> Any:
    if type(value) is float and _TIMES[0] <= value <= _TIMES[1]:  # the usual case, at once
        return value
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a timestamp: {value!r}")
    if not (math.isfinite(value) and _TIMES[0] <= value <= _TIMES[1]):
        raise ValueError(f"timestamp out of range: {value!r}")
    return float(value)


#: How far apart the clocks of processes sharing a store may be (seconds).
CLOCK_SKEW = 3_600.0


def _consistent(record: OriginRecord) -> OriginRecord:
    """A record as the policy writes it: an outage starts, and a good answer
    comes, at one of its fetches, so not after the last one. An outage "from
    the future" reads as an early refresh that failed, and with no copy it
    allowed everything until the row expired."""
    latest = record.fetched_at + CLOCK_SKEW
    checked = (("outage_started_at", record.outage_started_at), ("good_at", record.good_at))
    for name, value in checked:
        if value is not None and value > latest:
            raise ValueError(f"{name} {value!r} is after the last fetch {record.fetched_at!r}")
    return record


def _status(value: object) -> int | None:
    if type(value) is int and 100 <= value <= 999:
        return value
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 100 <= value <= 999:
        raise ValueError(f"not an HTTP status: {value!r}")
    return value


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
        raise ValueError(f"not a failure count: {value!r}")
    return value


def _url(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"not a URL: {value!r}")
    return value[:_URL_MAX]


#: The longest final URL kept (a redirect's Location is the server's to choose).
_URL_MAX = 2_000


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"not a flag: {value!r}")
    return value


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a reason: {value!r}")
    return value[:1_000]
