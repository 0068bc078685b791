"""Issue 13 §1 in the policy: no header value makes ``record_outcome`` raise.

The crawl tests (tests/faults/test_headers.py) send odd header values over
the wire; here any Latin-1 text goes through the policy directly, and a
header reader that fails anyway (a bug nobody foresaw) costs the header, never
the answer: the defaults apply, and it is said once.
"""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_rep.cache import policy
from scrapy_rep.cache.outcome import FetchKind, FetchOutcome
from scrapy_rep.cache.policy import PolicyConfig, record_outcome

T0 = 1_700_000_000.0
URL = "http://example.com/robots.txt"
CONFIG = PolicyConfig()
#: What a header value decoded as Latin-1 may hold, digits and separators favoured.
LATIN_1 = st.text(
    st.one_of(
        st.sampled_from('0123456789=,;-.e"² max-age s-maxage'), st.characters(max_codepoint=255)
    ),
    max_size=60,
)


def answer(
    kind: FetchKind, status: int, cache_control: str | None, retry_after: str | None
) -> FetchOutcome:
    return FetchOutcome(
        kind, URL, T0, status, b"User-agent: *\nDisallow: /x\n" if status == 200 else b"",
        f"HTTP {status}", cache_control=cache_control, retry_after=retry_after,
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(cache_control=LATIN_1, retry_after=LATIN_1)
def test_scrapy_any_latin_1_header_value_is_recorded(cache_control: str, retry_after: str) -> None:
    good = record_outcome(
        None, answer(FetchKind.SUCCESS, 200, cache_control, retry_after), T0, CONFIG
    )
    assert CONFIG.cache_min_ttl <= good.expires_at - T0 <= CONFIG.cache_max_ttl
    failed = record_outcome(
        good, answer(FetchKind.UNREACHABLE, 503, cache_control, retry_after), T0, CONFIG
    )
    assert failed.next_retry_at is not None
    assert 0 < failed.next_retry_at - T0 <= max(CONFIG.retry_busy_max, CONFIG.retry_after_max)


def test_scrapy_a_header_reader_that_fails_costs_the_header_not_the_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(value: str | None) -> float | None:
        raise RuntimeError("a header nobody foresaw")

    monkeypatch.setattr(policy, "_delta_seconds", broken)
    monkeypatch.setattr(policy, "_UNREADABLE_HEADERS", set())  # said once per process
    with caplog.at_level(logging.WARNING, logger="scrapy_rep"):
        records = [
            record_outcome(None, answer(FetchKind.SUCCESS, 200, "max-age=60", None), T0, CONFIG)
            for _ in range(3)
        ]
        busy = answer(FetchKind.UNREACHABLE, 503, None, "120")
        failed = [record_outcome(None, busy, T0, CONFIG, random=lambda: 0.0) for _ in range(3)]
    assert {r.expires_at for r in records} == {T0 + CONFIG.cache_ttl}  # the default life
    assert records[0].good_body is not None and records[0].kind is FetchKind.SUCCESS
    assert {r.next_retry_at for r in failed} == {T0 + CONFIG.retry_busy_initial}  # the back-off
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings  # once per header, not per answer
    assert all("a header nobody foresaw" in w for w in warnings)
