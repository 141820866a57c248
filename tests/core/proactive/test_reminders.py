"""Stored reminders become occasions when due: in the person's zone, across DST, never when cancelled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.proactive import reminder
from bot.core.proactive.evaluate import evaluate
from bot.core.proactive.models import ScheduledReminder, SentRecord
from bot.core.proactive.policy import DEFAULT
from bot.core.proactive.reminder_text import ReminderRequest, parse_reminder
from tests.core.proactive.support import Clock, person


def stored(request: ReminderRequest | object, id_: int = 1, user_id: str = "u1") -> ScheduledReminder:
    assert isinstance(request, ReminderRequest), request
    return ScheduledReminder(id=id_, user_id=user_id, text=request.text, due=request.due, every=request.every)


def beats(
    clock: Clock, until: datetime, reminders: list[ScheduledReminder], tz: str
) -> list[tuple[datetime, str]]:
    """Run evaluate every 5 simulated minutes until `until`; record each occasion once, as sent."""
    sent: list[SentRecord] = []
    found = []
    while clock.now < until:
        clock.advance(minutes=5)
        view = person(sent=sent, timezone=tz, enabled=False)
        for occasion in evaluate(view, clock.now, DEFAULT, reminders):
            sent.append(SentRecord(key=occasion.key, trigger=occasion.trigger, at=clock.now))
            found.append((clock.now, occasion.text))
    return found


def test_a_reminder_in_tokyo_rings_at_tokyo_time_once() -> None:
    clock = Clock(datetime(2026, 12, 1, 0, 0, tzinfo=UTC))  # 09:00 in Tokyo
    request = parse_reminder("remind me tomorrow at 8am to call the dentist", clock.now, "Asia/Tokyo")
    rung = beats(clock, datetime(2026, 12, 3, tzinfo=UTC), [stored(request)], "Asia/Tokyo")
    assert rung == [(datetime(2026, 12, 1, 23, 0, tzinfo=UTC), "Reminder: call the dentist")]  # 08:00 JST


def test_a_reminder_across_the_london_spring_change_rings_at_the_wall_clock_time() -> None:
    clock = Clock(datetime(2027, 3, 27, 12, 0, tzinfo=UTC))  # Saturday; clocks go forward on Sunday
    request = parse_reminder("remind me on Monday at 9:00 to file the report", clock.now, "Europe/London")
    rung = beats(clock, datetime(2027, 3, 30, tzinfo=UTC), [stored(request)], "Europe/London")
    assert rung == [(datetime(2027, 3, 29, 8, 0, tzinfo=UTC), "Reminder: file the report")]  # 09:00 BST


def test_a_cancelled_reminder_never_becomes_an_occasion() -> None:
    due = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    kept = ScheduledReminder(1, "u1", "stretch", due)
    cancelled = ScheduledReminder(2, "u1", "call the dentist", due, cancelled=True)
    found = reminder.occasions("u1", [kept, cancelled], due + timedelta(days=3))
    assert [o.details["reminder_id"] for o in found] == ["1"]


def test_only_due_unsent_reminders_of_this_person() -> None:
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    mine = ScheduledReminder(1, "u1", "stretch", now - timedelta(minutes=1))
    later = ScheduledReminder(2, "u1", "stretch again", now + timedelta(minutes=1))
    theirs = ScheduledReminder(3, "u2", "not yours", now - timedelta(minutes=1))
    found = reminder.occasions("u1", [mine, later, theirs], now)
    assert [o.key for o in found] == [f"u1:reminder:1@{mine.due.isoformat()}"]
    assert reminder.occasions("u1", [mine], now, {found[0].key}) == []
    assert found[0].why == "You asked me to remind you."


def test_a_daily_repeat_keeps_its_wall_clock_time_across_the_autumn_change() -> None:
    saturday_9 = datetime(2027, 10, 30, 8, 0, tzinfo=UTC)  # 09:00 BST; clocks go back on Sunday
    daily = ScheduledReminder(1, "u1", "take my pills", saturday_9, every=timedelta(days=1))
    sunday = reminder.next_due(daily, "Europe/London", saturday_9)
    assert sunday == datetime(2027, 10, 31, 9, 0, tzinfo=UTC)  # 09:00 GMT
    hourly = ScheduledReminder(2, "u1", "stand up", saturday_9, every=timedelta(hours=2))
    assert reminder.next_due(
        hourly, "Europe/London", saturday_9 + timedelta(hours=3)
    ) == saturday_9 + timedelta(hours=4)
    assert (
        reminder.next_due(ScheduledReminder(3, "u1", "once", saturday_9), "Europe/London", saturday_9) is None
    )
