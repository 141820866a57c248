"""Explicit reminders as occasions: each stored reminder that is due, not cancelled, not yet sent.

A reminder is asked for, so it needs no opt-in and carries no "don't suggest this again"; it is
never composed by a model either: its text is the person's own words. A repeating reminder has one
occasion per reading (the key names the due time), and `next_due` gives the store its next reading
on the person's wall clock, so "every day at 9" stays at 9 across a daylight-saving change.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta

from bot.core.proactive.local_time import wall_to_utc, zone
from bot.core.proactive.models import Occasion, ScheduledReminder, TriggerName
from bot.core.proactive.occasions import occasion_key

TRIGGER: TriggerName = "reminder"


def occasions(
    user_id: str, reminders: Sequence[ScheduledReminder], now: datetime, sent_keys: Collection[str] = ()
) -> list[Occasion]:
    """The occasions of `user_id`'s reminders that are due at `now` and were not sent yet."""
    found = []
    for reminder in sorted(reminders, key=lambda reminder: reminder.due):
        if reminder.user_id != user_id or reminder.cancelled or reminder.due > now:
            continue
        key = occasion_key(user_id, TRIGGER, f"{reminder.id}@{reminder.due.isoformat()}")
        if key not in sent_keys:
            found.append(_occasion(reminder, key))
    return found


def _occasion(reminder: ScheduledReminder, key: str) -> Occasion:
    return Occasion(
        user_id=reminder.user_id,
        trigger=TRIGGER,
        key=key,
        why="You asked me to remind you.",
        text=f"Reminder: {reminder.text}",
        due=reminder.due,
        details={"reminder_id": str(reminder.id)},
    )


def next_due(reminder: ScheduledReminder, timezone: str | None, after: datetime) -> datetime | None:
    """A repeating reminder's first reading later than `after`, or None when it does not repeat.

    Repeats of whole days keep the wall-clock time in the person's zone; shorter ones are real time.
    """
    if reminder.every is None or reminder.every <= timedelta(0):
        return None
    tz = zone(timezone)
    due = reminder.due
    whole_days = reminder.every % timedelta(days=1) == timedelta(0)
    while due <= after:
        if whole_days and tz is not None:
            local = due.astimezone(tz)
            due = wall_to_utc(local.date() + reminder.every, local.time(), tz)
        else:
            due += reminder.every
    return due
