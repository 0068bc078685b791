"""Every duration and choice of docs/spec.md §2.2 and §3, in one frozen value.

Read from the settings once (``crawler/config/settings.py``, as
``Config.policy``); the policy and the lifecycle take it as an argument. Each
field is filled by the setting whose entry in ``crawler/config/table.py``
names it (``REP_CACHE_TTL``: ``cache_ttl``), and its default here is that
setting's: a new setting of the policy is a field here and an entry there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, Literal

__all__ = [
    "DAY",
    "HOUR",
    "LONG_OUTAGE_VALUES",
    "ORDERED",
    "LongOutage",
    "PolicyConfig",
    "out_of_order",
]

HOUR = 3600.0
DAY = 24 * HOUR

LongOutage = Literal["site", "cached"]
LONG_OUTAGE_VALUES: tuple[LongOutage, ...] = ("site", "cached")
#: Bounds that come in pairs: the first may not exceed the second.
ORDERED: Final = (
    ("cache_min_ttl", "cache_max_ttl"),
    ("retry_after_min", "retry_after_max"),
    ("retry_initial", "retry_max"),
    ("retry_busy_initial", "retry_busy_max"),
)


def out_of_order(values: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first pair of ``ORDERED`` whose low bound exceeds its high one: the
    one check of them, for ``PolicyConfig`` and for the settings (``Config``)."""
    for low, high in ORDERED:
        if values[low] > values[high]:
            return low, high
    return None


@dataclass(frozen=True)
class PolicyConfig:
    """Every duration of docs/spec.md §2.2 and §3, in seconds.

    The defaults are Google's current rule: 12 h closed, then the last good
    copy until 30 days of outage, then allow-all if the site's pages answer
    (else closed). ``PolicyConfig.older_google()`` gives the older edition.
    ``unreachable_disallow=0`` goes to the last copy at once (docs/spec.md §3.3).
    """

    #: Closed for this long from the start of an outage.
    unreachable_disallow: float = 12 * HOUR
    #: The last good copy applies until the outage is this old.
    unreachable_max_age: float = 30 * DAY
    #: After ``unreachable_max_age``: "site" = allow if the site's pages answered
    #: within ``site_reachable_window``, else closed; "cached" = the last good
    #: copy, or allow-all if there is none.
    long_outage: LongOutage = "site"
    site_reachable_window: float = DAY
    #: Cache life of a 2xx/4xx answer without Cache-Control, and its bounds.
    cache_ttl: float = DAY
    cache_min_ttl: float = 60.0
    cache_max_ttl: float = DAY
    #: Back-off between retries of an unreachable robots.txt: starts at
    #: ``retry_initial``, multiplied by ``retry_factor`` per failure, capped.
    retry_initial: float = 5.0
    retry_max: float = HOUR
    #: The same for 503 and 429, which say "come back soon".
    retry_busy_initial: float = 2.0
    retry_busy_max: float = 600.0
    retry_factor: float = 2.0
    #: Each delay is shortened by up to this fraction, at random.
    retry_jitter: float = 0.25
    #: A ``Retry-After`` header replaces the back-off, clamped to these.
    retry_after_min: float = 1.0
    retry_after_max: float = HOUR
    #: How long requests wait for quick retries during an origin's first
    #: failing fetch before they are dropped as unreachable.
    unreachable_wait: float = 10.0
    #: How long a record is kept in storage after its last update (the last
    #: good copy must outlive an outage).
    cache_keep: float = 31 * DAY
    #: Earlier good answers kept per origin beside the current one, and the
    #: most bytes their bodies may take (docs/versions.md).
    versions_kept: int = 1
    versions_max_bytes: int = 512_000

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, float | int) and (math.isnan(value) or value < 0):
                raise ValueError(f"PolicyConfig.{item.name} must be >= 0, got {value!r}")
        if self.long_outage not in LONG_OUTAGE_VALUES:
            raise ValueError(
                f"PolicyConfig.long_outage must be one of {LONG_OUTAGE_VALUES}, "
                f"got {self.long_outage!r}"
            )
        wrong = out_of_order(vars(self))
        if wrong is not None:
            low, high = wrong
            raise ValueError(f"{low} ({vars(self)[low]}) exceeds {high} ({vars(self)[high]})")
        if self.retry_jitter > 1:
            raise ValueError(f"retry_jitter must be within 0..1, got {self.retry_jitter!r}")

    @classmethod
    def older_google(cls, **overrides: Any) -> PolicyConfig:
        """The older edition of Google's text (before RFC 9309).

        "5xx: full disallow until a retry succeeds; after 30 days the last
        cached copy is used, or no restrictions if there is none." That is
        ``unreachable_disallow = unreachable_max_age = 30 days`` and
        ``long_outage = "cached"``; as settings: ``REP_UNREACHABLE_DISALLOW =
        2592000`` and ``REP_LONG_OUTAGE = "cached"``.
        """
        base: dict[str, Any] = {
            "unreachable_disallow": 30 * DAY,
            "unreachable_max_age": 30 * DAY,
            "long_outage": "cached",
        }
        return cls(**{**base, **overrides})
