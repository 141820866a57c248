"""Synthetic people for bench/proactive_sim.py: months of activity with planted truth, and noise.

Each person draws, independently: long work sessions (3.3–5 h, messages every 5–25 min) with
near-misses (2–2.8 h, or 4 h broken by a 35–50 min gap); a habit (a logged activity in one 2-hour
window or on one weekday, 90–100 % concentrated), a near-miss habit (50–65 % concentrated, or only
4 occurrences) or scattered logs with no pattern; dated events in memory ("my exam is on Friday")
beside dated memories that are no event ("my exam was on Friday", "I run on Fridays"); everyday
chatter that keeps clear of the sessions; and a few explicit reminders. The truth is what was
planted, not what any rule would say of the result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.proactive.models import Activity, ProactiveSettings, RememberedFact, ScheduledReminder
from bot.core.proactive.reminder_text import ReminderRequest, parse_reminder

START = datetime(2027, 2, 22, tzinfo=UTC)  # a Monday: the run crosses the March DST changes
ZONES = (
    "Europe/London",
    "Europe/Berlin",
    "America/New_York",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "Australia/Sydney",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")  # fmt: skip
LOGS = {
    "run": ("just back from my run", "ran 5k this morning", "finished my run, legs are dead"),
    "yoga": ("did yoga before work", "yoga done", "just finished yoga"),
    "gym": ("back from the gym", "just had a good workout", "gym done for today"),
    "swim": ("just swam 20 lengths", "back from the pool"),
    "meditate": ("meditated for 15 minutes", "just finished meditating"),
    "focus": ("had my focus block", "started my focus block"),
    "practice": ("just practised piano for an hour", "did my guitar practice"),
}
CHATTER = (
    "what do you think about this article?", "can you help me word an email?", "ugh, long day",
    "any ideas for dinner?", "I'm reading a book about bees", "how do I convert cups to grams?",
    "tell me something interesting", "my cat knocked over the plant again", "what's a good film tonight?",
    "I hate running, honestly", "I should go to the gym more", "thinking about a holiday",
)  # fmt: skip
EVENTS = ("exam", "job interview", "driving test", "dentist appointment", "presentation", "sister's wedding")
NOT_EVENTS = (
    "my exam was on {weekday}", "I run on {weekday}s", "I like {weekday}s", "we met on a {weekday}",
    "my usual café is Bean There", "I love green tea", "I moved here in {month}", "my birthday was last week",
)  # fmt: skip
TASKS = ("call the dentist", "stretch", "water the plants", "pay the rent", "take the bins out")


@dataclass
class Truth:
    sessions: list[tuple[datetime, datetime]] = field(default_factory=list)
    habit: str | None = None
    events: set[int] = field(default_factory=set)


@dataclass
class SimPerson:
    user_id: str
    settings: ProactiveSettings
    activity: list[Activity]
    memories: list[RememberedFact]
    reminders: list[ScheduledReminder]
    truth: Truth


def make_person(rng: random.Random, index: int, days: int) -> SimPerson:
    tz = ZoneInfo(rng.choice(ZONES))
    user = f"p{index}"
    settings = ProactiveSettings(enabled=rng.random() < 0.85, timezone=str(tz))
    truth, busy, activity = Truth(), set[date](), list[Activity]()
    if rng.random() < 0.35:
        activity += _sessions(rng, tz, days, truth, busy)
    activity += _habit(rng, tz, days, truth)
    memories = _memories(rng, tz, days, truth)
    activity += _chatter(rng, tz, days, busy)
    reminders = _reminders(rng, user, tz, days)
    activity.sort(key=lambda a: a.at)
    return SimPerson(user, settings, activity, memories, reminders, truth)


def _local(day: int, clock: float, tz: ZoneInfo) -> datetime:
    """UTC of local day `day` after START at `clock` hours (fractional)."""
    when = (START + timedelta(days=day)).date()
    hour, minutes = int(clock), round((clock % 1) * 60)
    local = datetime.combine(when, time(hour % 24, min(minutes, 59)), tzinfo=tz)
    return local.astimezone(UTC) + timedelta(days=hour // 24)


def _sessions(rng: random.Random, tz: ZoneInfo, days: int, truth: Truth, busy: set[date]) -> list[Activity]:
    found = []
    for day in range(days):
        if (START + timedelta(days=day)).weekday() >= 5 or rng.random() > 0.35:
            continue
        start = _local(day, rng.uniform(8.5, 13.0), tz)
        kind = rng.random()
        if kind < 0.55:  # planted: longer than 3 h, every gap under 30 min
            length = timedelta(hours=rng.uniform(3.3, 5.0))
            found += _stream(rng, start, length, (5, 25))
            truth.sessions.append((start, found[-1].at))
        elif kind < 0.8:  # near-miss: not long enough
            found += _stream(rng, start, timedelta(hours=rng.uniform(2.0, 2.8)), (5, 25))
        else:  # near-miss: long, but a 35–50 min pause splits it into two short ones
            first = _stream(rng, start, timedelta(hours=rng.uniform(1.6, 2.0)), (5, 25))
            pause = first[-1].at + timedelta(minutes=rng.uniform(35, 50))
            found += first + _stream(rng, pause, timedelta(hours=rng.uniform(1.6, 2.0)), (5, 25))
        busy.add((START + timedelta(days=day)).date())
    return found


def _stream(rng: random.Random, start: datetime, length: timedelta, gaps: tuple[int, int]) -> list[Activity]:
    at, found = start, [Activity(start, "starting on the report")]
    while at - start < length:
        at += timedelta(minutes=rng.uniform(*gaps))
        found.append(
            Activity(at, rng.choice(("ok next section", "can you check this paragraph?", "still at it")))
        )
    return found


def _habit(rng: random.Random, tz: ZoneInfo, days: int, truth: Truth) -> list[Activity]:
    draw = rng.random()
    kind = rng.choice(sorted(LOGS))
    if draw < 0.30:
        share = rng.uniform(0.9, 1.0)
        truth.habit = kind
    elif draw < 0.45:
        share = rng.uniform(0.5, 0.65)
    elif draw < 0.52:
        return _logs(rng, tz, kind, [(d, rng.uniform(6.5, 7.5)) for d in rng.sample(range(days), 4)])
    elif draw < 0.70:
        share = 0.0  # scattered: no window, no weekday
    else:
        return []
    by_weekday = rng.random() < 0.4
    window_start, weekday = rng.uniform(6.0, 19.0), rng.randrange(7)
    times = []
    for day in range(days):
        on_day = (START + timedelta(days=day)).weekday() == weekday
        if (by_weekday and not on_day) or (not by_weekday and rng.random() > 0.45):
            if rng.random() < (0.01 if by_weekday else 0.03) and share < 1.0:  # out of the pattern
                times.append((day, _outside(rng, window_start, by_weekday)))
            continue
        if rng.random() < share:
            times.append((day, rng.uniform(8.0, 20.0) if by_weekday else window_start + rng.uniform(0, 1.8)))
        elif share > 0 or rng.random() < 0.5:
            times.append(
                (day + (rng.randrange(1, 7) if by_weekday else 0), _outside(rng, window_start, by_weekday))
            )
    return _logs(rng, tz, kind, [(d, h) for d, h in times if d < days])


def _outside(rng: random.Random, window_start: float, by_weekday: bool) -> float:
    if by_weekday:
        return rng.uniform(7.0, 21.0)
    while True:
        hour = rng.uniform(6.0, 22.5)
        if not window_start - 1.5 <= hour <= window_start + 3.5:
            return hour


def _logs(rng: random.Random, tz: ZoneInfo, kind: str, times: list[tuple[int, float]]) -> list[Activity]:
    return [Activity(_local(day, hour, tz), rng.choice(LOGS[kind])) for day, hour in times]


def _memories(rng: random.Random, tz: ZoneInfo, days: int, truth: Truth) -> list[RememberedFact]:
    memories = []
    for number in range(rng.choice((0, 0, 1, 2))):
        said = _local(rng.randrange(0, days - 25), rng.uniform(9, 21), tz)
        memories.append(RememberedFact(number + 1, _event_text(rng, said.astimezone(tz).date()), said))
        truth.events.add(number + 1)
    for number in range(rng.randrange(0, 3)):
        said = _local(rng.randrange(0, days - 1), rng.uniform(9, 21), tz)
        text = rng.choice(NOT_EVENTS).format(weekday=rng.choice(WEEKDAYS), month=rng.choice(MONTHS))
        memories.append(RememberedFact(100 + number, text, said))
    return memories


def _event_text(rng: random.Random, said: date) -> str:
    event = rng.choice(EVENTS)
    form = rng.randrange(4)
    if form == 0:
        return f"my {event} is on {rng.choice(WEEKDAYS)}"
    if form == 1:
        return f"I have a {event} next {rng.choice(WEEKDAYS)}"
    if form == 2:
        return f"my {event} is tomorrow"
    when = said + timedelta(days=rng.randrange(2, 20))
    return f"my {event} is on {when.day} {MONTHS[when.month - 1]}"


def _chatter(rng: random.Random, tz: ZoneInfo, days: int, busy: set[date]) -> list[Activity]:
    found = []
    for day in range(days):
        if (START + timedelta(days=day)).date() in busy or rng.random() > 0.7:
            continue
        at = _local(day, rng.uniform(8.0, 22.0), tz)
        for _ in range(rng.randrange(1, 7)):
            found.append(Activity(at, rng.choice(CHATTER)))
            at += timedelta(minutes=rng.uniform(1, 20))
    return found


def _reminders(rng: random.Random, user: str, tz: ZoneInfo, days: int) -> list[ScheduledReminder]:
    found = []
    for number in range(rng.choice((0, 0, 1, 2))):
        said = _local(rng.randrange(0, days - 3), rng.uniform(9, 20), tz)
        text = rng.choice(
            (
                "remind me in 2 hours to {}",
                "remind me tomorrow at 9 to {}",
                "remind me on Friday at 3pm to {}",
            )
        )
        request = parse_reminder(text.format(rng.choice(TASKS)), said, str(tz))
        if isinstance(request, ReminderRequest):
            found.append(ScheduledReminder(number + 1, user, request.text, request.due))
    return found
