"""Earlier good answers kept in an origin's record (docs/versions.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import PolicyConfig, record_outcome
from scrapy_rep.cache.record import OriginRecord
from scrapy_rep.cache.versions import Version, body_digest, versions

T0 = 1_700_000_000.0
HOUR = 3600.0
DAY = 24 * HOUR
URL = "http://example.com/robots.txt"
OLD = b"User-agent: *\nDisallow: /private\n"
NEW = b"User-agent: *\nDisallow: /private\nDisallow: /drafts\n"
CONFIG = PolicyConfig()


def answer(status: int, body: bytes | None = None, no_store: bool = False) -> FetchOutcome:
    kind = FetchKind.SUCCESS if status < 300 else FetchKind.UNAVAILABLE
    if status >= 500:
        kind = FetchKind.UNREACHABLE
    control = "no-store" if no_store else None
    return FetchOutcome(kind, URL, T0, status, body, f"HTTP {status}", cache_control=control)


def walk(*steps: tuple[float, FetchOutcome], config: PolicyConfig = CONFIG) -> OriginRecord:
    record: OriginRecord | None = None
    for at, outcome in steps:
        record = record_outcome(record, outcome, at, config, random=lambda: 0.0)
    assert record is not None
    return record


def round_trip(record: OriginRecord) -> OriginRecord:
    return OriginRecord.from_bytes(record.to_bytes())


def test_a_changed_body_keeps_the_one_before_with_when_it_was_seen() -> None:
    record = walk(
        (T0, answer(200, OLD)), (T0 + DAY, answer(200, OLD)), (T0 + 2 * DAY, answer(200, NEW))
    )
    current, before = versions(record)
    assert (current.body, current.first_seen, current.last_seen) == (
        NEW,
        T0 + 2 * DAY,
        T0 + 2 * DAY,
    )
    assert (before.body, before.first_seen, before.last_seen) == (OLD, T0, T0 + DAY)
    assert before.digest == body_digest(OLD) != current.digest
    assert round_trip(record) == record


def test_the_same_answer_again_is_one_version_first_seen_at_its_first_fetch() -> None:
    record = walk((T0, answer(200, OLD)), (T0 + DAY, answer(200, OLD)))
    assert versions(record) == (Version(200, OLD, T0, T0 + DAY),)
    assert round_trip(record) == record


def test_an_outage_keeps_the_versions_as_they_were() -> None:
    changed = walk((T0, answer(200, OLD)), (T0 + DAY, answer(200, NEW)))
    failed = record_outcome(changed, answer(503), T0 + 2 * DAY, CONFIG, random=lambda: 0.0)
    assert versions(failed) == versions(changed)
    assert round_trip(failed) == failed


def test_a_4xx_is_a_version_without_rules_and_any_two_4xx_are_one() -> None:
    record = walk((T0, answer(200, OLD)), (T0 + DAY, answer(404)), (T0 + 2 * DAY, answer(410)))
    current, before = versions(record)
    assert (current.status, current.body, current.first_seen) == (410, None, T0 + DAY)
    assert current.digest is None and not current.has_rules
    assert before.body == OLD
    assert round_trip(record) == record


def test_versions_kept_and_their_bytes_are_bounded_oldest_out() -> None:
    bodies = [b"User-agent: *\nDisallow: /%d\n" % n for n in range(6)]
    steps = [(T0 + n * DAY, answer(200, body)) for n, body in enumerate(bodies)]
    three = walk(*steps, config=PolicyConfig(versions_kept=3))
    assert [v.body for v in versions(three)] == bodies[::-1][:4]
    small = walk(
        *steps, config=PolicyConfig(versions_kept=3, versions_max_bytes=2 * len(bodies[0]))
    )
    assert [v.body for v in versions(small)] == bodies[::-1][:3]
    none = walk(*steps, config=PolicyConfig(versions_kept=0))
    assert versions(none) == (Version(200, bodies[-1], T0 + 5 * DAY, T0 + 5 * DAY),)
    assert round_trip(three) == three


def test_a_no_store_answer_is_never_kept_as_an_earlier_version() -> None:
    record = walk((T0, answer(200, OLD, no_store=True)), (T0 + DAY, answer(200, NEW)))
    assert [v.body for v in versions(record)] == [NEW]


def test_a_record_of_the_earlier_format_reads_with_no_earlier_version() -> None:
    earlier_format = (
        b'{"v":1,"k":"success","s":200,"r":"HTTP 200","f":1700000000.0,"e":1700086400.0,'
        b'"g":1700000000.0,"gs":200,"st":null,"n":null,"c":0,"sr":null,"ns":false,"b":true}\n' + OLD
    )
    record = OriginRecord.from_bytes(earlier_format)
    assert versions(record) == (Version(200, OLD, T0, T0),)
    assert record.earlier == ()


def test_a_record_without_earlier_versions_is_written_in_the_earlier_format() -> None:
    record = walk((T0, answer(200, OLD)), (T0 + DAY, answer(200, OLD)))
    head = record.to_bytes().partition(b"\n")[0]
    assert head.startswith(b'{"v":1,')


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data.replace(b'"bl":', b'"bl":9999', 1),
        lambda data: data[:-3],
        lambda data: data + b"more",
        lambda data: data.replace(b'"vs":[[200,', b'"vs":[[404,', 1),
        lambda data: data.replace(b'"vs":[', b'"vs":["x",', 1),
    ],
)
def test_a_damaged_version_2_record_reads_as_absent_never_as_rules(damage: object) -> None:
    record = walk((T0, answer(200, OLD)), (T0 + DAY, answer(200, NEW)))
    data = record.to_bytes()
    assert b'"v":2' in data
    with pytest.raises(ValueError):
        OriginRecord.from_bytes(damage(data))  # type: ignore[operator]


def test_good_since_survives_a_round_trip_when_it_differs_from_good_at() -> None:
    record = replace(walk((T0, answer(200, OLD))), good_since=T0 - HOUR)
    assert round_trip(record).good_since == T0 - HOUR
