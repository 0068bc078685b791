"""The pace's pure steps (``scrapy_rep.cache.pace``, docs/politeness.md) at the
edges a mutation run (tests/mutation/run.py) found untested: intervals under a
second or below zero, ``not_before``, a short pause, a crawl-delay that grows,
and the stand-in's times (``follow``) that carry a process through an outage
of the shared store. The clock is an argument: every time is NOW plus the
seconds a test gives."""

from __future__ import annotations

import pytest

from scrapy_rep.cache.pace import Times, Turn, follow, going, pause, reserve

NOW = 1_700_000_000.0
AHEAD = 3600.0
EMPTY = Times()


def test_pace_an_interval_under_a_second_spaces_turns_by_itself() -> None:
    """``Crawl-delay: 0.25``: turns 0.25 s apart, not a second."""
    first = reserve(EMPTY, NOW, 0.25, AHEAD)
    second = reserve(first.times, NOW, 0.25, AHEAD)
    assert first == Turn(0.0, Times(NOW + 0.25, NOW, NOW))
    assert second.wait == pytest.approx(0.25)
    assert second.times.next_at == pytest.approx(NOW + 0.5)
    # A request that waited, asking 0.1 s after the last one went.
    assert going(first.times, NOW + 0.1, 0.25, AHEAD).wait == pytest.approx(0.15)


@pytest.mark.parametrize(
    "stored",
    [
        EMPTY,
        Times(NOW + 2.0, None, NOW - 0.5),  # a turn handed out ahead
        Times(NOW + 2.0, NOW + 3.0, NOW - 0.5),  # and a pause beyond it
        Times(None, None, NOW - 0.2),  # only the last request known
    ],
)
def test_pace_a_negative_interval_is_no_interval(stored: Times) -> None:
    """A negative interval never moves a turn earlier than one of none would."""
    assert reserve(stored, NOW, -1.0, AHEAD) == reserve(stored, NOW, 0.0, AHEAD)
    assert going(stored, NOW, -1.0, AHEAD) == going(stored, NOW, 0.0, AHEAD)
    held = reserve(stored, NOW, -1.0, AHEAD, not_before=3.0)
    assert held.times.next_at == NOW + 3.0  # the next turn is not before this one
    assert reserve(held.times, NOW, 0.0, AHEAD).wait == 3.0


def test_pace_a_crawl_delay_that_grows_counts_from_the_last_request() -> None:
    """robots.txt fetched again with a longer crawl-delay: the next turn is the
    new delay after the request that went, not the old one."""
    first = reserve(EMPTY, NOW, 1.0, AHEAD)
    later = reserve(first.times, NOW + 2.0, 5.0, AHEAD)
    assert later.wait == pytest.approx(3.0)
    assert later.times.next_at == pytest.approx(NOW + 10.0)
    # A delay longer than a stored time is trusted ahead: no more than max_ahead.
    assert reserve(first.times, NOW + 1.0, 10.0, 4.0).wait == pytest.approx(4.0)


def test_pace_not_before_holds_the_turn_and_the_request_has_not_gone() -> None:
    """This process knows more than the store (its own robots.txt download, a
    pause it saw): the turn is ``not_before`` seconds away at the earliest."""
    held = reserve(EMPTY, NOW, 1.0, AHEAD, not_before=2.0)
    assert held == Turn(2.0, Times(NOW + 3.0, NOW, None))
    later = reserve(Times(NOW + 5.0, None, NOW - 1.0), NOW, 1.0, AHEAD, not_before=2.0)
    assert later.wait == 5.0  # a later turn in the store still wins
    assert reserve(EMPTY, NOW, 1.0, AHEAD, not_before=-5.0) == reserve(EMPTY, NOW, 1.0, AHEAD)
    assert reserve(EMPTY, NOW, 1.0, AHEAD, not_before=10 * AHEAD).wait == AHEAD


def test_pace_a_pause_shorter_than_a_second_is_that_long() -> None:
    assert pause(EMPTY, NOW, 0.5, AHEAD) == Turn(0.5, Times(NOW + 0.5, NOW + 0.5, None))
    assert pause(EMPTY, NOW, -3.0, AHEAD).wait == 0.0


def test_pace_a_pause_never_moves_turns_already_given_earlier() -> None:
    """Turns handed out up to NOW+2, then a 0.5 s pause: the next turn is
    still NOW+3, after them, not when the pause ends."""
    times = EMPTY
    for _ in range(3):
        times = reserve(times, NOW, 1.0, AHEAD).times
    paused = pause(times, NOW, 0.5, AHEAD)
    assert paused.times.next_at == NOW + 3.0
    assert reserve(paused.times, NOW, 1.0, AHEAD).wait == 3.0


def test_pace_a_turn_given_now_that_waited_holds_only_for_a_later_request() -> None:
    """Worker A's turn is now (the store counts it as gone), then it waits for
    its download slot or a place. Asked with the seconds since (at most the
    interval, as ``Pace`` asks), it goes at once if no one went meanwhile; if
    worker B's turn (the next one) went, an interval after B, not right
    behind it as when asked with 0 (docs/politeness.md)."""
    interval = 1.0
    a = reserve(EMPTY, NOW, interval, AHEAD)
    assert a.wait == 0.0
    assert going(a.times, NOW + 0.3, min(interval, 0.3), AHEAD).wait == 0.0  # no one went
    b = reserve(a.times, NOW + 0.1, interval, AHEAD)  # B reserves during A's wait
    assert b.wait == pytest.approx(0.9)
    gone = going(b.times, NOW + interval, interval, AHEAD)  # B's turn came: it goes
    assert gone.wait == 0.0
    for waited, left in ((1.5, 0.5), (4.0, 0.0)):
        asked = min(interval, waited)
        assert going(gone.times, NOW + waited, asked, AHEAD).wait == pytest.approx(left)
    assert going(gone.times, NOW + 1.5, 0.0, AHEAD).wait == 0.0  # 0.5 s after B, before


# --- follow: the local stand-in's times while the shared store answers --------------


def test_pace_follow_a_turn_given_now_is_a_request_gone_now() -> None:
    assert follow(EMPTY, NOW, 0.0, 1.0, AHEAD) == Times(NOW + 1.0, None, NOW)
    assert follow(EMPTY, NOW, -1.0, 1.0, AHEAD) == Times(NOW + 1.0, None, NOW)


@pytest.mark.parametrize("wait", [0.5, 2.0])
def test_pace_follow_a_turn_ahead_is_kept_and_the_next_is_an_interval_after_it(
    wait: float,
) -> None:
    """The shared store gave a turn ``wait`` s ahead: the stand-in's next turn
    is one interval (0.5 s) after it, and nothing has gone yet."""
    stored = Times(NOW - 3.0, NOW - 4.0, NOW - 3.5)
    kept = follow(stored, NOW, wait, 0.5, AHEAD)
    assert kept == Times(NOW + wait + 0.5, NOW - 4.0, NOW - 3.5)


def test_pace_follow_never_moves_the_stand_ins_turns_earlier() -> None:
    later = Times(NOW + 10.0, None, NOW - 1.0)
    assert follow(later, NOW, 1.0, 1.0, AHEAD).next_at == NOW + 10.0
    assert follow(EMPTY, NOW, 10 * AHEAD, 1.0, AHEAD).next_at == NOW + AHEAD + 1.0
    assert follow(EMPTY, NOW, 1.0, -1.0, AHEAD).next_at == NOW + 1.0
