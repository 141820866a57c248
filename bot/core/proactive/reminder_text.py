"""Explicit reminders: "remind me on Thursday at 3pm to call the dentist" → a due time in UTC.

The wall-clock reading is the person's, in their zone; the due time is its UTC instant, so a
reminder across a daylight-saving change still rings at 15:00 local. "In 20 minutes" and "in 2
hours" are spans of real time; "in 3 days" keeps the time of day on the wall clock. "Next Friday"
means the coming Friday. Anything that cannot be scheduled sensibly (10,000 years ahead, "every
second", 31 February, no task, a time that has passed) is a `ReminderRefusal` whose reason can be
shown as it is, and nothing is scheduled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.proactive.local_time import wall_to_utc, zone
from bot.core.proactive.reminder_words import (
    MONTHS,
    Day,
    Found,
    Refused,
    add_months,
    find_day,
    find_every,
    find_in,
    find_time,
)

MAX_AHEAD = timedelta(days=5 * 366)  # farther than this is a typo or a test, not a plan
MIN_REPEAT = timedelta(hours=1)  # a reminder repeating faster than this is noise, not help
DEFAULT_TIME = time(9, 0)  # "remind me on Friday to …": in the morning
TONIGHT = time(20, 0)
TOO_FAR = "That is too far ahead: I keep reminders for at most five years."
ASK_LIKE_THIS = 'Ask me like this: "remind me on Thursday at 3pm to call the dentist".'
_ASK = re.compile(r"^\s*(?:please\s+)?(?:(?:can|could|would|will) you\s+)?remind me\b[\s,:]*", re.IGNORECASE)
_LEAD = re.compile(r"^(?:to|that|about|of)\b\s*", re.IGNORECASE)
_REAL_TIME = {"second": 1, "minute": 60, "hour": 3600}


@dataclass(frozen=True, slots=True)
class ReminderRequest:
    """A reminder that can be scheduled: its task, its first due time (UTC), its zone, its repeat."""

    text: str
    due: datetime
    timezone: str
    every: timedelta | None = None


@dataclass(frozen=True, slots=True)
class ReminderRefusal:
    """Why a reminder was not scheduled, in words that can be shown to the person as they are."""

    reason: str


def is_reminder_request(text: str) -> bool:
    """Whether a message asks for a reminder ("remind me …", "can you remind me …")."""
    return _ASK.match(text) is not None


def parse_reminder(text: str, now: datetime, tz: str) -> ReminderRequest | ReminderRefusal:
    """Read one reminder request said at `now` (aware) by a person in zone `tz` (an IANA name)."""
    where = zone(tz)
    if where is None:
        return ReminderRefusal(f"I don't know the time zone {tz!r}; tell me yours (e.g. Europe/London).")
    asked = _ASK.match(text)
    if asked is None:
        return ReminderRefusal(ASK_LIKE_THIS)
    try:
        return _parse(text[asked.end() :], now.astimezone(UTC), where, tz)
    except Refused as refused:
        return ReminderRefusal(refused.reason)


def _parse(rest: str, now: datetime, tz: ZoneInfo, tz_name: str) -> ReminderRequest:
    spans: list[Found] = []
    every = find_every(rest, spans)
    span = find_in(rest, spans)
    day = find_day(rest, spans)
    at = find_time(rest, spans)
    if every is not None and every < MIN_REPEAT:
        raise Refused(
            f"That is too often: I repeat a reminder at most once an hour, not every {_span(every)}."
        )
    local_now = now.astimezone(tz)
    if span is not None:
        due = _after(span, at, now, local_now, tz)
    elif day is not None:
        due = _on(day, at, local_now, tz)
    elif at is not None:
        due = wall_to_utc(local_now.date(), at, tz)
        if due <= now:  # a bare clock time that has passed today means its next reading
            due = wall_to_utc(local_now.date() + timedelta(days=1), at, tz)
    elif every is not None:
        due = now + every
    else:
        raise Refused('When should I remind you? For example "in 20 minutes" or "on Friday at 9".')
    if due <= now:
        raise Refused(
            f"{due.astimezone(tz):%A %-d %B %Y at %H:%M} has already passed; give me a time still to come."
        )
    if due - now > MAX_AHEAD:
        raise Refused(TOO_FAR)
    task = _task(rest, spans)
    if not task:
        raise Refused('What should I remind you of? For example "remind me in 20 minutes to stretch".')
    return ReminderRequest(text=task, due=due, timezone=tz_name, every=every)


def _after(
    span: tuple[int, str], at: time | None, now: datetime, local_now: datetime, tz: ZoneInfo
) -> datetime:
    count, unit = span
    if count < 1:
        raise Refused("Give me a span that is still to come, like “in 20 minutes”.")
    if unit in _REAL_TIME:
        if at is not None:
            raise Refused("Give me either a span (in 2 hours) or a clock time (at 3pm), not both.")
        if count * _REAL_TIME[unit] > MAX_AHEAD.total_seconds():
            raise Refused(TOO_FAR)
        return now + timedelta(seconds=count * _REAL_TIME[unit])
    days = {"day": 1, "week": 7}.get(unit)
    if (days or 31) * count > MAX_AHEAD.days or (unit == "year" and count * 366 > MAX_AHEAD.days):
        raise Refused(TOO_FAR)  # before any calendar arithmetic on an absurd count
    if days is not None:
        target = local_now.date() + timedelta(days=days * count)
    else:
        target = add_months(local_now.date(), count * (12 if unit == "year" else 1))
    return wall_to_utc(target, at or local_now.time().replace(second=0, microsecond=0), tz)


def _on(day: Day, at: time | None, local_now: datetime, tz: ZoneInfo) -> datetime:
    kind, first, second, year = day
    today = local_now.date()
    if kind == "relative":  # first: days from today; second: 1 for "tonight"
        return wall_to_utc(today + timedelta(days=first), at or (TONIGHT if second else DEFAULT_TIME), tz)
    when = at or DEFAULT_TIME
    if kind == "weekday":
        target = today + timedelta(days=(first - today.weekday()) % 7)
        due = wall_to_utc(target, when, tz)
        return due if due > local_now else wall_to_utc(target + timedelta(days=7), when, tz)
    due = wall_to_utc(_date(year or today.year, first, second), when, tz)
    if due <= local_now and year is None:  # "on 12 March" said on 13 March: next year's
        due = wall_to_utc(_date(today.year + 1, first, second), when, tz)
    return due


def _date(year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        leap = f" in {year}" if (month, day) == (2, 29) else ""  # only 29 February depends on the year
        raise Refused(f"There is no {day} {MONTHS[month - 1].capitalize()}{leap}.") from None


def _task(rest: str, spans: list[Found]) -> str:
    kept = list(rest)
    for start, end in spans:
        kept[start:end] = " " * (end - start)
    task = re.sub(r"\s+", " ", "".join(kept)).strip(" ,.;:!")
    while (lead := _LEAD.match(task)) is not None:
        task = task[lead.end() :].strip(" ,.;:!")
    return task


def _span(every: timedelta) -> str:
    seconds = int(every.total_seconds())
    if seconds < 60:
        return "second" if seconds == 1 else f"{seconds} seconds"
    return every_words(every)


def confirmation(request: ReminderRequest) -> str:
    """What Kindred answers once the reminder is stored: the parsed time, on the person's clock."""
    tz = zone(request.timezone) or ZoneInfo("UTC")
    local = request.due.astimezone(tz)
    repeat = f", and again every {every_words(request.every)}" if request.every else ""
    when = f"{local:%A %-d %B %Y at %H:%M} ({request.timezone})"
    return f"Okay: on {when}{repeat}, I'll remind you to {request.text}."


def every_words(every: timedelta) -> str:
    """A repeat in words: "day", "2 weeks", "3 hours"."""
    for unit, length in (
        ("week", timedelta(days=7)),
        ("day", timedelta(days=1)),
        ("hour", timedelta(hours=1)),
    ):
        if every % length == timedelta(0):
            count = every // length
            return unit if count == 1 else f"{count} {unit}s"
    return f"{int(every.total_seconds() // 60)} minutes"
