"""Follow-up: a remembered event with a date brings one "how did it go?" the morning after."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from bot.core.proactive import follow_up
from bot.core.proactive.local_time import zone
from bot.core.proactive.models import RememberedFact, SentRecord
from bot.core.proactive.policy import DEFAULT
from tests.core.proactive.support import person

TUESDAY = datetime(2026, 11, 3, 18, 0, tzinfo=UTC)  # Tuesday 3 November 2026
LONDON = zone("Europe/London")


def fact(text: str, said: datetime = TUESDAY, id_: int = 7) -> RememberedFact:
    return RememberedFact(id=id_, text=text, created_at=said)


@pytest.mark.parametrize(
    ("text", "event", "day"),
    [
        ("my exam is on Friday", "exam", date(2026, 11, 6)),
        ("I have a job interview next Monday", "job interview", date(2026, 11, 9)),
        ("my driving test is tomorrow", "driving test", date(2026, 11, 4)),
        ("My sister's wedding is on 12 December", "sister's wedding", date(2026, 12, 12)),
        ("the dentist appointment is on March 3rd", "dentist appointment", date(2027, 3, 3)),
        ("my exam is on Tuesday", "exam", date(2026, 11, 10)),  # said on a Tuesday: next week's
        ("My flight to Rome is on Sunday", "flight to Rome", date(2026, 11, 8)),
    ],
)
def test_a_dated_event_is_read_against_when_it_was_said(text: str, event: str, day: date) -> None:
    assert LONDON is not None
    assert follow_up.dated_event(fact(text), LONDON) == (event, day)


@pytest.mark.parametrize(
    "text",
    [
        "my exam was on Friday",  # past: nothing to look forward to
        "I run on Fridays",  # a routine, not an event
        "my day is on Friday",
        "the party is on 31 February",  # no such day
        "I like Fridays",
    ],
)
def test_no_event_no_follow_up(text: str) -> None:
    assert LONDON is not None
    assert follow_up.dated_event(fact(text), LONDON) is None


def test_asked_the_morning_after_once_and_not_once_stale() -> None:
    view = person(memories=[fact("my exam is on Friday")])
    friday_evening = datetime(2026, 11, 6, 20, 0, tzinfo=UTC)
    saturday_morning = datetime(2026, 11, 7, 10, 0, tzinfo=UTC)
    assert follow_up.occasions(view, friday_evening, DEFAULT) == []
    found = follow_up.occasions(view, saturday_morning, DEFAULT)
    assert [o.key for o in found] == ["u1:follow_up:7"] and found[0].text == "How did your exam go?"
    assert "Friday 6 November" in found[0].why
    asked = SentRecord(key="u1:follow_up:7", trigger="follow_up", at=saturday_morning)
    later = saturday_morning + timedelta(hours=3)
    assert follow_up.occasions(person(memories=view.memories, sent=[asked]), later, DEFAULT) == []
    stale = saturday_morning + DEFAULT.follow_up_stale
    assert follow_up.occasions(view, stale, DEFAULT) == []


def test_the_day_is_the_persons_local_day() -> None:
    # Said at 23:30 on Tuesday in Tokyo, which is 14:30 UTC on Tuesday: "tomorrow" is Wednesday there.
    said = datetime(2026, 11, 3, 14, 30, tzinfo=UTC)
    tokyo = zone("Asia/Tokyo")
    assert tokyo is not None
    assert follow_up.dated_event(fact("my exam is tomorrow", said), tokyo) == ("exam", date(2026, 11, 4))
    said_after_midnight = datetime(2026, 11, 3, 15, 30, tzinfo=UTC)  # 00:30 Wednesday in Tokyo
    assert follow_up.dated_event(fact("my exam is tomorrow", said_after_midnight), tokyo) == (
        "exam", date(2026, 11, 5),
    )  # fmt: skip
    view = person(memories=[fact("my exam is tomorrow", said)], timezone="Asia/Tokyo")
    assert follow_up.occasions(view, datetime(2026, 11, 5, 1, 0, tzinfo=UTC), DEFAULT), "10:00 in Tokyo"
