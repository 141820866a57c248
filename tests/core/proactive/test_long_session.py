"""Long session: more than 3 h of activity with gaps under 30 min, still going, suggests a break."""

from __future__ import annotations

from datetime import timedelta

from bot.core.proactive import long_session
from bot.core.proactive.models import RememberedFact, SentRecord
from bot.core.proactive.policy import DEFAULT
from tests.core.proactive.support import T0, Clock, messages_every, person

EVERY_20 = timedelta(minutes=20)


def test_more_than_three_hours_with_short_gaps_suggests_a_break_once_per_session() -> None:
    clock = Clock()
    activity = messages_every(T0, EVERY_20, 11)  # 09:00 … 12:20: 3 h 20 min
    clock.now = activity[-1].at + timedelta(minutes=5)
    found = long_session.occasions(person(activity), clock.now, DEFAULT)
    assert [o.key for o in found] == [f"u1:long_session:{T0.isoformat()}"]
    assert "3 hours" in found[0].text and "break" in found[0].text
    assert found[0].why and found[0].due == clock.now
    clock.advance(minutes=10)  # the same session a beat later: the same key
    assert [o.key for o in long_session.occasions(person(activity), clock.now, DEFAULT)] == [found[0].key]


def test_three_hours_exactly_is_not_longer_than_three_hours() -> None:
    activity = messages_every(T0, EVERY_20, 10)  # 09:00 … 12:00: exactly 3 h
    assert long_session.occasions(person(activity), activity[-1].at, DEFAULT) == []


def test_a_31_minute_gap_breaks_the_session_and_a_29_minute_gap_does_not() -> None:
    before = messages_every(T0, EVERY_20, 6)  # 09:00 … 10:40
    for gap, fires in ((timedelta(minutes=31), False), (timedelta(minutes=29), True)):
        after = messages_every(before[-1].at + gap, EVERY_20, 6)  # 1 h 40 min more
        view = person(before + after)
        assert bool(long_session.occasions(view, after[-1].at, DEFAULT)) is fires, gap


def test_a_session_that_ended_gets_no_late_suggestion() -> None:
    activity = messages_every(T0, EVERY_20, 12)
    assert long_session.occasions(person(activity), activity[-1].at + timedelta(minutes=29), DEFAULT)
    assert not long_session.occasions(person(activity), activity[-1].at + timedelta(minutes=30), DEFAULT)


def test_the_cooldown_holds_back_a_second_suggestion_the_same_day() -> None:
    activity = messages_every(T0, EVERY_20, 30)  # a ten-hour day
    now = activity[-1].at
    earlier = SentRecord(key="u1:long_session:other", trigger="long_session", at=now - timedelta(hours=6))
    assert long_session.occasions(person(activity, sent=[earlier]), now, DEFAULT) == []
    older = SentRecord(key="u1:long_session:other", trigger="long_session", at=now - timedelta(hours=13))
    assert long_session.occasions(person(activity, sent=[older]), now, DEFAULT)


def test_the_break_names_a_remembered_cafe_or_drink() -> None:
    activity = messages_every(T0, EVERY_20, 11)
    now = activity[-1].at
    cafe = RememberedFact(1, "My usual café is Bean There, near the office", T0 - timedelta(days=9))
    drink = RememberedFact(2, "I love a matcha latte in the afternoon", T0 - timedelta(days=2))
    hate = RememberedFact(3, "I don't like coffee at all", T0 - timedelta(days=1))
    assert "Bean There" in long_session.occasions(person(activity, [cafe]), now, DEFAULT)[0].text
    assert "matcha" in long_session.occasions(person(activity, [cafe, drink]), now, DEFAULT)[0].text
    plain = long_session.occasions(person(activity, [hate]), now, DEFAULT)[0].text
    assert "coffee" not in plain and "stretch" in plain
