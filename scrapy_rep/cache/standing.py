"""Where an origin stands now, read from its record: one classification for
``scrapy-rep report``, the Tester's report page and the crawl's gauges
(docs/cli.md, "scrapy-rep report"; docs/stats-signals.md, "Gauges").

Pure: a record, the time and the policy in, a ``Standing`` out. The state is
what the policy applies to the origin's requests now (``decide_settled``,
as a crawl answers with the record it holds, on a record trusted as a crawl
trusts one it loads), named for people; the times say since when, and until
when time alone keeps it so (docs/spec.md §2.2, §3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Final

from scrapy_rep.cache.outcome import AccessState
from scrapy_rep.cache.policy import decide_settled, loaded_record
from scrapy_rep.cache.policy_config import PolicyConfig
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.engine.lines import ALLOW
from scrapy_rep.engine.robotstxt import RobotsTxt, group_rules

__all__ = [
    "IN_OUTAGE",
    "OUTAGE",
    "RULED",
    "Standing",
    "State",
    "forbids_everything",
    "pace_of",
    "standing",
]


class State(str, Enum):
    """What applies to an origin's requests now (docs/cli.md). The values are
    the words of every place a state shows: the report, the Tester, the
    stats (``robotstxt/origins_now/<state>``, ``robotstxt/requests_in_outage/<state>``)
    and the docs (CONTRIBUTING.md, "One name for one idea")."""

    RULES = "rules"  # a 2xx answer: its rules decide
    ALLOW_ALL = "allow-all"  # a 4xx (or too many redirects, a loop): everything allowed
    CLOSED = "closed"  # an outage (429, 5xx, network): every request dropped
    LAST_COPY = "last-copy"  # an outage: the last good copy's rules decide
    OUTAGE_ALLOW = "outage-allow"  # an outage: everything allowed (no 2xx copy, or the
    # site's pages answered after 30 days)


#: The states of an outage (an outage of unreachable fetches).
OUTAGE: Final = frozenset({State.CLOSED, State.LAST_COPY, State.OUTAGE_ALLOW})
#: The states in which a file's rules decide.
RULED: Final = frozenset({State.RULES, State.LAST_COPY})

#: What an access means in an outage: the state of the origin's requests then.
IN_OUTAGE: Final = {
    AccessState.RULES: State.LAST_COPY,
    AccessState.CLOSED: State.CLOSED,
    AccessState.ALLOW_ALL: State.OUTAGE_ALLOW,
}


@dataclass(frozen=True, slots=True)
class Standing:
    """An origin's state now, with its times and what else its record says."""

    state: State
    #: Since when: the outage's first failed fetch, else the good answer's time.
    since: float
    #: Until when time alone keeps the state (a fetch may end it sooner): the
    #: end of a closure, of the last copy's use, of a copy's life; None when
    #: no time changes it (closed 30 days into an outage, until a fetch
    #: succeeds or a page of the site answers; a copy kept for good).
    until: float | None
    #: Outages only: "429", "5xx", "network" (no answer), or "other" (an
    #: invalid answer: a proxy's, a 3xx without Location, a body that does
    #: not decode).
    cause: str | None
    #: Not in an outage, and past its life: the next request fetches again.
    expired: bool
    #: Why, as the crawl logs it (the policy's reason).
    reason: str


def standing(record: OriginRecord, now: float, config: PolicyConfig) -> Standing | None:
    """Where the record's origin stands at ``now``; None for a record a crawl
    ignores (fetched in the future: it fetches again)."""
    trusted = loaded_record(record, now, config)
    if trusted is None:
        return None
    decision = decide_settled(trusted, now, config)
    access = decision.state
    if trusted.outage_started_at is None:
        since = trusted.good_at if trusted.good_at is not None else trusted.fetched_at
        state = State.RULES if access is AccessState.RULES else State.ALLOW_ALL
        expired = now >= trusted.expires_at
        return Standing(state, since, trusted.expires_at, None, expired, decision.reason)
    state = IN_OUTAGE[access or AccessState.CLOSED]
    since = trusted.outage_started_at
    return Standing(state, since, decision.until, _cause(trusted.status), False, decision.reason)


def _cause(status: int | None) -> str:
    if status is None:
        return "network"
    if status == 429:
        return "429"
    if status >= 500:
        return "5xx"
    return "other"


def forbids_everything(robots: RobotsTxt, tokens: str | Sequence[str]) -> bool:
    """Does the group these tokens select forbid every URL (docs/cli.md)?

    True when that group has a ``Disallow`` rule matching every path (``/``
    or ``*``, with or without trailing ``*``) and no ``Allow`` rule at all:
    then only robots.txt itself may be fetched. A group with any allow rule
    is not counted, whatever its disallows; nor is a file where no group
    applies (everything is allowed).
    """
    _, rules = group_rules(robots, tokens)
    everything = False
    for rule in rules:
        if rule.kind == ALLOW:
            return False
        if rule.pattern.rstrip("*") in ("/", ""):
            everything = True
    return everything


def pace_of(robots: RobotsTxt, tokens: str | Sequence[str]) -> float | None:
    """The seconds between two requests the group these tokens select asks
    for: the longer of its ``crawl-delay`` and ``request-rate`` interval; None
    when it states neither (docs/crawl-delay.md). A crawl waits so only with
    ``REP_CRAWL_DELAY = "obey"``, cut to ``REP_CRAWL_DELAY_MAX``."""
    found = [v for v in (robots.crawl_delay(tokens), robots.request_rate(tokens)) if v is not None]
    return max(found) if found else None
