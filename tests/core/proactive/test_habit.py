"""Habit: >= 80 % of >= 5 occurrences in one 2-hour window, or on one weekday → one offer, ever."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from bot.core.proactive import habit
from bot.core.proactive.models import Activity, SentRecord
from bot.core.proactive.policy import DEFAULT
from tests.core.proactive.support import T0, person

NOW = T0 + timedelta(days=50)


def runs(
    hours: list[float], text: str = "just back from my run", first: datetime = T0, every: int = 9
) -> list[Activity]:
    """A log every `every` days from `first` (9: the weekday moves on), at these hours (UTC = London)."""
    midnight = first - timedelta(hours=first.hour)
    return [
        Activity(at=midnight + timedelta(days=every * i, hours=hour), text=text)
        for i, hour in enumerate(hours)
    ]


def test_five_of_five_runs_between_six_and_eight_offer_a_morning_routine() -> None:
    found = habit.occasions(person(runs([6.2, 6.5, 7.0, 6.8, 7.5])), NOW, DEFAULT)
    assert [o.key for o in found] == ["u1:habit:run"]
    assert "between 6:00 and 8:00" in found[0].text and "routine" in found[0].text
    assert "5 times" in found[0].why


def test_four_occurrences_are_too_few_however_regular() -> None:
    assert habit.occasions(person(runs([6.5, 6.5, 6.5, 6.5])), NOW, DEFAULT) == []


@pytest.mark.parametrize(
    ("inside", "outside", "fires"), [(8, 2, True), (4, 1, True), (79, 21, False), (3, 2, False)]
)
def test_eighty_percent_in_one_window_is_the_line(inside: int, outside: int, fires: bool) -> None:
    hours = [6.5] * inside + [13.0 + (i % 6) for i in range(outside)]  # the rest spread over the afternoon
    # 100 occurrences nine days apart need a 900-day lookback.
    policy = replace(DEFAULT, habit_lookback=timedelta(days=1000))
    view = person(runs(hours, first=T0 - timedelta(days=9 * len(hours))))
    assert bool(habit.occasions(view, T0, policy)) is fires


def test_a_window_may_wrap_midnight() -> None:
    view = person(runs([23.2, 23.7, 24.3, 24.6, 23.9], text="went for a walk"))
    found = habit.occasions(view, NOW, DEFAULT)
    assert [o.key for o in found] == ["u1:habit:walk"] and "between 23:00 and 1:00" in found[0].text


def test_one_weekday_concentrates_without_a_time_window() -> None:
    thursdays = [
        T0 + timedelta(days=3 + 7 * week, hours=hour) for week, hour in enumerate([0, 4, 7, 2, 6, 5])
    ]
    view = person([Activity(at=at, text="had my focus block, no meetings") for at in thursdays])
    # "no meetings" holds a "no": not read as a log. The same days, plainly logged:
    assert habit.occasions(view, NOW, DEFAULT) == []
    view = person([Activity(at=at, text="had my focus block") for at in thursdays])
    found = habit.occasions(view, NOW, DEFAULT)
    assert [o.details.get("weekday") for o in found] == ["Thursday"] and "on Thursdays" in found[0].text


def test_mentions_that_log_nothing_are_not_occurrences() -> None:
    for text in ("I hate running", "skipped my run again", "I should go for a run"):
        assert habit.activity_kind(text) is None, text
    assert habit.activity_kind("ran 5k this morning") == "run"


def test_several_logs_on_one_day_count_once_at_the_first() -> None:
    four_days = runs([6.5] * 4)
    again = [
        Activity(at=a.at + timedelta(minutes=m), text="my run was great") for a in four_days for m in (20, 40)
    ]
    assert habit.occasions(person(four_days + again), NOW, DEFAULT) == []


def test_offered_once_and_never_again_when_declined_or_already_sent() -> None:
    activity = runs([6.5] * 6)
    offered = SentRecord(key="u1:habit:run", trigger="habit", at=NOW - timedelta(days=30), accepted=None)
    assert habit.occasions(person(activity, sent=[offered]), NOW, DEFAULT) == []
    assert habit.occasions(person(activity, declined=frozenset({"u1:habit:run"})), NOW, DEFAULT) == []


def test_occurrences_within_five_weeks_are_not_yet_a_habit() -> None:
    assert DEFAULT.habit_min_span == timedelta(days=35)
    assert habit.occasions(person(runs([6.5] * 5, every=3)), NOW, DEFAULT) == []  # 12 days
    assert habit.occasions(person(runs([6.5] * 5, every=8)), NOW, DEFAULT) == []  # 32 days
    assert habit.occasions(person(runs([6.5] * 5, every=9)), NOW, DEFAULT), "36 days"


def test_a_week_between_two_habit_offers() -> None:
    activity = runs([6.5] * 6) + runs([18.5] * 6, text="yoga done", first=T0 + timedelta(hours=1))
    just_offered = SentRecord(key="u1:habit:run", trigger="habit", at=NOW - timedelta(days=2))
    assert habit.occasions(person(activity, sent=[just_offered]), NOW, DEFAULT) == []
    offered_long_ago = SentRecord(key="u1:habit:run", trigger="habit", at=NOW - timedelta(days=8))
    assert [o.key for o in habit.occasions(person(activity, sent=[offered_long_ago]), NOW, DEFAULT)] == [
        "u1:habit:yoga"
    ]


def test_occurrences_are_read_on_the_persons_clock() -> None:
    # 14:30 UTC is 06:30 in Los Angeles (PST in November): a morning habit there, an afternoon one in UTC.
    activity = runs([14.5] * 5, text="did yoga")
    found = habit.occasions(person(activity, timezone="America/Los_Angeles"), NOW, DEFAULT)
    assert "between 6:30 and 8:30" in found[0].text
    assert habit.occasions(person(activity, timezone=None), NOW, DEFAULT) == [], "no zone, no habit read"
