"""The crawl's gauges (``crawler.gauges``, docs/stats-signals.md, "Gauges"):
kept by the resolver's transitions, up and down, on real lifecycles and the
resolver's own ``KnownOrigins`` (an LRU that evicts), on an injected clock."""

from __future__ import annotations

from scrapy_rep.cache.lifecycle import LifecycleRules, OriginLifecycle, shared_parsed_bodies
from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import DAY, HOUR, OriginRecord, PolicyConfig, record_outcome
from scrapy_rep.crawler.access.known_origins import KnownOrigins
from scrapy_rep.crawler.gauges import OriginGauges
from scrapy_rep.engine.origin import Origin, origin_of

T0 = 1_700_000_000.0
POLICY = PolicyConfig()
OPEN = b"User-agent: *\nDisallow: /private\n"
SHUT = b"User-agent: mybot\nDisallow: /\n\nUser-agent: *\nDisallow:\n"


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def origin(name: str) -> Origin:
    found = origin_of(f"https://{name}.example/")
    assert found is not None
    return found


def fetched(status: int | None, body: bytes = OPEN) -> FetchOutcome:
    kind = FetchKind.SUCCESS if status == 200 else FetchKind.UNREACHABLE
    return FetchOutcome(kind, "x", T0, status, body if status == 200 else b"", f"HTTP {status}")


def record(*steps: tuple[float, FetchOutcome]) -> OriginRecord:
    found: OriginRecord | None = None
    for at, outcome in steps:
        found = record_outcome(found, outcome, at, POLICY, random=lambda: 0.0)
    assert found is not None
    return found


def settled(item: OriginRecord | None, now: float) -> OriginLifecycle:
    """A lifecycle that loaded ``item`` and settled its access, as a flight does."""
    lifecycle = LifecycleRules(POLICY, shared_parsed_bodies()).new()
    lifecycle.loaded(item, now)
    return lifecycle


def values(gauges: OriginGauges) -> tuple[int, int, int, int]:
    found = gauges.values()
    return (
        found["robotstxt/origins_now/known"],
        found["robotstxt/origins_now/closed"],
        found["robotstxt/origins_now/last-copy"],
        found["robotstxt/origins_now/forbids-all"],
    )


def test_gauges_follow_an_outage_from_closed_to_the_last_copy_and_back() -> None:
    clock = Clock()
    gauges = OriginGauges(POLICY, clock, lambda: ("mybot",))
    down = record((T0 - 2 * DAY, fetched(200)), (T0, fetched(503)))
    lifecycle = LifecycleRules(POLICY, shared_parsed_bodies()).new()
    gauges.watch(origin("a"), lifecycle)  # held, its access not known yet
    assert values(gauges) == (0, 0, 0, 0)
    lifecycle.loaded(down, T0)
    assert lifecycle.access is not None
    gauges.resolved(origin("a"), lifecycle.access)
    assert values(gauges) == (1, 1, 0, 0)  # closed for the first 12 hours

    clock.now = T0 + 13 * HOUR  # the next request settles a new access: the last copy
    answer = lifecycle.asked(clock.now)
    assert lifecycle.access is not None and answer is not None
    gauges.resolved(origin("a"), lifecycle.access)
    assert values(gauges) == (1, 0, 1, 0)

    back = record((T0 + 14 * HOUR, fetched(200, SHUT)))  # robots.txt answers again
    clock.now = T0 + 14 * HOUR
    lifecycle.loaded(back, clock.now)
    assert lifecycle.access is not None
    gauges.resolved(origin("a"), lifecycle.access)
    assert values(gauges) == (1, 0, 0, 1)  # its rules forbid mybot everything


def test_gauges_count_what_the_resolver_holds_through_its_evictions() -> None:
    """``KnownOrigins`` tells the gauges what it holds: an evicted origin is no
    longer counted, one held again is counted as it stands."""
    clock = Clock()
    gauges = OriginGauges(POLICY, clock, lambda: ("mybot",))
    states = KnownOrigins(limit=2, watch=gauges.watch)
    closed = settled(record((T0, fetched(None))), T0)
    shut = settled(record((T0, fetched(200, SHUT))), T0)
    plain = settled(record((T0, fetched(200))), T0)
    states.keep(origin("closed"), closed)
    states.keep(origin("shut"), shut)
    assert values(gauges) == (2, 1, 0, 1)
    states.keep(origin("plain"), plain)  # the least recently used goes: "closed"
    assert values(gauges) == (2, 0, 0, 1)
    states.keep(origin("plain"), plain)  # kept again: no change
    assert values(gauges) == (2, 0, 0, 1)
    states.drop(origin("shut"))  # forgotten (cache forget)
    assert values(gauges) == (1, 0, 0, 0)
    states.keep(origin("closed"), closed)  # held again, as it stands
    assert values(gauges) == (2, 1, 0, 0)
    gauges.resolved(origin("shut"), shut.access)  # type: ignore[arg-type]  # not held
    assert values(gauges) == (2, 1, 0, 0)


def test_gauges_call_their_batch_every_hundred_changes() -> None:
    gauges = OriginGauges(POLICY, Clock(), lambda: ())
    calls: list[int] = []
    gauges.on_batch = lambda: calls.append(gauges.changes)
    lifecycle = settled(record((T0, fetched(200))), T0)
    for n in range(250):
        gauges.watch(origin(f"o{n}"), lifecycle)
    assert calls[:1] == [100] and len(calls) >= 2
