"""Habit: a recurring activity concentrated in a time window → offer a reminder or a routine, once.

An occurrence is a day on which the person logged the activity ("just back from my run"), at the
local time of that day's first such message. The rule: at least 80 % of at least 5 occurrences in
the lookback fall in one 2-hour window of the day, or on one weekday. Each activity is offered once
ever (the key names the activity, not the window), so a declined offer is never made again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from bot.core.proactive.local_time import settings_zone
from bot.core.proactive.models import Activity, Occasion, PersonView, TriggerName
from bot.core.proactive.occasions import occasion_key
from bot.core.proactive.policy import ProactivePolicy

TRIGGER: TriggerName = "habit"
DAY_MINUTES = 24 * 60
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
# Each activity: what logging it looks like, and how an offer names it.
ACTIVITIES: dict[str, tuple[re.Pattern[str], str]] = {
    "run": (re.compile(r"\b(?:ran|run|runs|running|jog|jogged|jogging)\b"), "run"),
    "gym": (re.compile(r"\b(?:gym|workout|lifting|weights)\b"), "go to the gym"),
    "yoga": (re.compile(r"\byoga\b"), "do yoga"),
    "swim": (re.compile(r"\b(?:swim|swam|swimming|pool)\b"), "swim"),
    "walk": (re.compile(r"\b(?:walk|walked|walking|hike|hiked)\b"), "go for a walk"),
    "ride": (re.compile(r"\b(?:cycled|cycling|bike ride|rode my bike)\b"), "ride your bike"),
    "meditate": (re.compile(r"\b(?:meditat\w*)\b"), "meditate"),
    "study": (re.compile(r"\b(?:studied|studying|revision|revising)\b"), "study"),
    "practice": (re.compile(r"\b(?:piano|guitar|violin|practised|practiced)\b"), "practise"),
    "focus": (re.compile(r"\b(?:focus block|deep work|focus time)\b"), "keep a focus block"),
}
# A log says it happened or is happening; a plan, a wish or a refusal is not an occurrence.
_LOGGED = re.compile(
    r"\b(?:just|finished|done|back from|went|did|had|heading|off to|started|starting|my|today)\b"
    r"|\b(?:ran|swam|jogged|walked|hiked|cycled|studied|practised|practiced|meditated)\b"
)
_NOT = re.compile(r"\b(?:didn't|did not|skipped|no|not|never|hate|won't|can't|couldn't|should)\b")


@lru_cache(maxsize=65536)
def activity_kind(text: str) -> str | None:
    """The activity a message logs, or None ("skipped my run" and "I hate running" log nothing)."""
    lowered = text.lower()
    if not _LOGGED.search(lowered) or _NOT.search(lowered):
        return None
    for kind, (pattern, _) in ACTIVITIES.items():
        if pattern.search(lowered):
            return kind
    return None


@dataclass(frozen=True, slots=True)
class Habit:
    occurrences: int
    start_minute: int | None  # the window's start, minutes after local midnight; None: no window
    weekday: int | None  # 0 = Monday; None: no weekday


def occurrences(activity: Sequence[Activity], tz: ZoneInfo, since: datetime) -> dict[str, list[datetime]]:
    """Per activity, the local time of each day's first log of it, since `since`."""
    found: dict[str, dict[date, datetime]] = {}
    for item in activity:
        if item.at < since:
            continue
        kind = activity_kind(item.text)
        if kind is not None:
            local = item.at.astimezone(tz)
            found.setdefault(kind, {}).setdefault(local.date(), local)
    return {kind: sorted(days.values()) for kind, days in found.items()}


def concentration(times: Sequence[datetime], policy: ProactivePolicy) -> Habit | None:
    """The habit in these occurrences by the policy's rule, if they hold one."""
    if len(times) < policy.habit_min_occurrences or times[-1] - times[0] < policy.habit_min_span:
        return None
    needed = policy.habit_share * len(times)
    start, in_window = _best_window(times, int(policy.habit_window.total_seconds() // 60))
    weekday, on_day = Counter(t.weekday() for t in times).most_common(1)[0]
    window_holds, weekday_holds = in_window >= needed, on_day >= needed
    if not (window_holds or weekday_holds):
        return None
    return Habit(len(times), start if window_holds else None, weekday if weekday_holds else None)


def _best_window(times: Sequence[datetime], width: int) -> tuple[int, int]:
    """The window start (minute of day) holding the most occurrences, and how many; it may wrap midnight."""
    minutes = sorted(t.hour * 60 + t.minute for t in times)
    best = (minutes[0], 0)
    for first in minutes:
        count = sum(1 for m in minutes if (m - first) % DAY_MINUTES < width)
        if count > best[1]:
            best = (first, count)
    return best


def occasions(view: PersonView, now: datetime, policy: ProactivePolicy) -> list[Occasion]:
    tz = settings_zone(view.settings)
    if tz is None or _cooling_down(view, now, policy):
        return []
    offered = {sent.key for sent in view.sent} | view.settings.declined
    for kind, times in sorted(occurrences(view.activity, tz, now - policy.habit_lookback).items()):
        key = occasion_key(view.user_id, TRIGGER, kind)
        habit = None if key in offered else concentration(times, policy)
        if habit is not None:
            return [_offer(view.user_id, key, kind, habit, now)]
    return []


def _offer(user_id: str, key: str, kind: str, habit: Habit, now: datetime) -> Occasion:
    verb = ACTIVITIES[kind][1]
    when = []
    if habit.weekday is not None:
        when.append(f"on {WEEKDAYS[habit.weekday]}s")
    if habit.start_minute is not None:
        start = habit.start_minute - habit.start_minute % 30  # a clock reading people use
        when.append(f"between {_clock(start)} and {_clock(start + 120)}")
    window = " ".join(when)
    details = {"activity": kind}
    if habit.start_minute is not None:
        details["start_minute"] = str(habit.start_minute)
    if habit.weekday is not None:
        details["weekday"] = WEEKDAYS[habit.weekday]
    return Occasion(
        user_id=user_id,
        trigger=TRIGGER,
        key=key,
        why=f"You mentioned it {habit.occurrences} times lately, nearly always {window}.",
        text=f"You usually {verb} {window}. Would you like a reminder or a routine for it?",
        due=now,
        details=details,
    )


def _clock(minute: int) -> str:
    minute %= DAY_MINUTES
    return f"{minute // 60}:{minute % 60:02d}"


def _cooling_down(view: PersonView, now: datetime, policy: ProactivePolicy) -> bool:
    return any(sent.trigger == TRIGGER and now - sent.at < policy.habit_cooldown for sent in view.sent)
