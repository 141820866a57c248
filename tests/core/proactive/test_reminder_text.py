"""Reminder requests read into a due time in UTC, in the person's zone; hostile ones refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.proactive.reminder_text import ReminderRefusal, ReminderRequest, confirmation, parse_reminder

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)  # Tuesday 1 December 2026, 10:00 in London


def parsed(text: str, now: datetime = NOW, tz: str = "Europe/London") -> ReminderRequest:
    result = parse_reminder(text, now, tz)
    assert isinstance(result, ReminderRequest), result
    return result


@pytest.mark.parametrize(
    ("text", "task", "due"),
    [
        (
            "remind me on Thursday at 3pm to call the dentist",
            "call the dentist",
            datetime(2026, 12, 3, 15, 0),
        ),
        ("remind me in 20 minutes to stretch", "stretch", datetime(2026, 12, 1, 10, 20)),
        ("remind me tomorrow at 9 to water the plants", "water the plants", datetime(2026, 12, 2, 9, 0)),
        (
            "remind me on 12 March at 10:00 to renew my passport",
            "renew my passport",
            datetime(2027, 3, 12, 10),
        ),
        ("Remind me to call mum on Friday", "call mum", datetime(2026, 12, 4, 9, 0)),
        ("remind me in half an hour to check the oven", "check the oven", datetime(2026, 12, 1, 10, 30)),
        ("remind me at 9:30 to stand up", "stand up", datetime(2026, 12, 2, 9, 30)),  # 9:30 passed today
        ("remind me tonight to take the bins out", "take the bins out", datetime(2026, 12, 1, 20, 0)),
        (
            "remind me to decide on the budget on December 24th",
            "decide on the budget",
            datetime(2026, 12, 24, 9),
        ),
        ("can you remind me in 2 days to pay rent", "pay rent", datetime(2026, 12, 3, 10, 0)),
        ("remind me tomorrow to look at 3 houses", "look at 3 houses", datetime(2026, 12, 2, 9, 0)),
        ("remind me at 8 pm to call Ann", "call Ann", datetime(2026, 12, 1, 20, 0)),
        ("remind me at 7.45 tomorrow to leave", "leave", datetime(2026, 12, 2, 7, 45)),
    ],
)
def test_a_request_becomes_a_task_and_a_due_time(text: str, task: str, due: datetime) -> None:
    request = parsed(text)
    assert request.text == task
    assert request.due == due.replace(tzinfo=UTC)  # London is on UTC in winter
    assert request.every is None


def test_the_confirmation_says_the_parsed_time_on_the_persons_clock() -> None:
    request = parsed("remind me on Thursday at 3pm to call the dentist", tz="America/New_York")
    assert request.due == datetime(2026, 12, 3, 20, 0, tzinfo=UTC)  # 15:00 EST
    assert confirmation(request) == (
        "Okay: on Thursday 3 December 2026 at 15:00 (America/New_York), I'll remind you to call the dentist."
    )


def test_a_wall_clock_time_holds_across_the_spring_daylight_saving_change() -> None:
    # Friday 26 March 2027; London moves to BST on Sunday 28 March (the last Sunday of March).
    friday = datetime(2027, 3, 26, 12, 0, tzinfo=UTC)
    monday = parsed("remind me on Monday at 9am to send the report", now=friday)
    assert monday.due == datetime(2027, 3, 29, 8, 0, tzinfo=UTC)  # 09:00 BST
    in_three_days = parsed("remind me in 3 days to call the bank", now=friday)
    assert in_three_days.due == datetime(2027, 3, 29, 11, 0, tzinfo=UTC), "12:00 on the wall clock, now BST"
    in_72_hours = parsed("remind me in 72 hours to call the bank", now=friday)
    assert in_72_hours.due == friday + timedelta(hours=72), "hours are real time"
    gap = parsed("remind me on Sunday at 1:30 to check the clocks", now=friday)
    assert gap.due == datetime(2027, 3, 28, 1, 30, tzinfo=UTC), "01:30 does not exist that night: 02:30 BST"


def test_a_repeat_at_least_an_hour_apart_is_kept() -> None:
    daily = parsed("remind me every day at 9 to take my pills")
    assert (daily.text, daily.every, daily.due) == (
        "take my pills",
        timedelta(days=1),
        datetime(2026, 12, 2, 9, 0, tzinfo=UTC),
    )
    weekly = parsed("remind me every Monday at 8am to plan the week")
    assert weekly.every == timedelta(days=7) and weekly.due == datetime(2026, 12, 7, 8, 0, tzinfo=UTC)
    assert "again every week" in confirmation(weekly)
    assert parsed("remind me every 2 hours to drink water").every == timedelta(hours=2)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("remind me in 10,000 years to check on this", "too far ahead"),
        ("remind me in 99999999999999999999 seconds to blink", "too far ahead"),
        ("remind me every second to breathe", "too often"),
        ("remind me every 5 minutes to drink water", "too often"),
        ("remind me on 31 February to pay rent", "There is no 31 February"),
        ("remind me on 29 February 2027 to pay rent", "There is no 29 February in 2027"),
        ("remind me", "When should I remind you"),
        ("remind me in 20 minutes", "What should I remind you of"),
        ("remind me tomorrow at 9", "What should I remind you of"),
        ("remind me today at 9 to stretch", "has already passed"),
        ("remind me on 1 March 2020 to renew", "has already passed"),
        ("remind me yesterday to call", "already passed"),
        ("remind me at 25:00 to sleep", "not a time of day"),
        ("remind me at 13pm to eat", "not a time of day"),
        ("remind me every month to pay rent", "not months"),
        ("what's the weather", "Ask me like this"),
    ],
)
def test_a_hostile_request_is_refused_with_a_reason_and_nothing_to_schedule(text: str, why: str) -> None:
    result = parse_reminder(text, NOW, "Europe/London")
    assert isinstance(result, ReminderRefusal), result
    assert why in result.reason
    assert not hasattr(result, "due")


def test_an_unknown_zone_is_refused() -> None:
    result = parse_reminder("remind me in 20 minutes to stretch", NOW, "Mars/Olympus")
    assert isinstance(result, ReminderRefusal) and "time zone" in result.reason
