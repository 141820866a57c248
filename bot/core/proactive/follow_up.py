"""Follow-up: a remembered event with a date ("my exam is on Friday") → ask how it went, once.

The date is read by plain rules and resolved against when the memory was said, in the person's
zone: "on Friday" said on a Tuesday is that week's Friday. The question comes the morning after the
event and not at all once it is stale. One question per memory, ever (the key is the memory's id).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.proactive.local_time import settings_zone, wall_to_utc
from bot.core.proactive.models import Occasion, PersonView, RememberedFact, TriggerName
from bot.core.proactive.occasions import occasion_key
from bot.core.proactive.policy import ProactivePolicy
from bot.core.proactive.reminder_words import MONTHS, WEEKDAYS

TRIGGER: TriggerName = "follow_up"
_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_MONTH = "(" + "|".join(MONTHS) + ")"
# The event: "my exam", "my sister's wedding", "a job interview", "the dentist appointment".
_WORD = r"(?!(?:was|were|is|are|will|be|on|this|next|tomorrow|had|has|went)\b)[a-z']+"
_EVENT = rf"(?:my|a|an|the|our)\s+((?:{_WORD}\s+){{0,2}}?{_WORD})"
# What comes between the event and its date, in the future tense only: "was on Friday" is not asked.
_LINK = r"\s+(?:is|are|will be|'s|starts|happens)?\s*"
_HAVE = r"\b(?:i have|i've got|i've|i got|there's|i'm having|we have)\s+"
_WHEN = (
    rf"(?:on\s+|this\s+|next\s+)?{_WEEKDAY}(?!s)"  # on Friday (not "on Fridays": a routine)
    rf"|tomorrow"
    rf"|on\s+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTH}"  # on 12 March
    rf"|on\s+{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?"  # on March 12
)
_RULES = (
    re.compile(rf"\b{_EVENT}{_LINK}(?:{_WHEN})\b"),
    re.compile(rf"{_HAVE}{_EVENT}\s+(?:{_WHEN})\b"),
)
_NOT_EVENTS = {"day", "week", "weekend", "favourite day"}  # "my day is on Friday": nothing to ask about


def dated_event(fact: RememberedFact, tz: ZoneInfo) -> tuple[str, date] | None:
    """The event a memory names and its local date, resolved against when it was said."""
    said = fact.created_at.astimezone(tz).date()
    lowered = fact.text.lower()
    # "İ" lowers to two characters: offsets into `lowered` then no longer point into the text.
    as_written = fact.text if len(lowered) == len(fact.text) else lowered
    for rule in _RULES:
        found = rule.search(lowered)
        if found is None:
            continue
        event, weekday, day, month, month2, day2 = found.groups()
        if event in _NOT_EVENTS:
            return None
        when = _resolve(said, found.group(0), weekday, day or day2, month or month2)
        named = as_written[found.start(1) : found.end(1)]  # as they wrote it: "flight to Rome"
        return (named, when) if when is not None and when >= said else None
    return None


def _resolve(said: date, text: str, weekday: str | None, day: str | None, month: str | None) -> date | None:
    if weekday is not None:
        ahead = (WEEKDAYS.index(weekday) - said.weekday()) % 7
        return said + timedelta(days=ahead or 7)  # "on Friday" said on a Friday: the next one
    if "tomorrow" in text:
        return said + timedelta(days=1)
    if day is None or month is None:
        return None
    for year in (said.year, said.year + 1):  # "on 12 March" said in December: next year's
        try:
            when = date(year, MONTHS.index(month) + 1, int(day))
        except ValueError:  # 31 February: no such day, no follow-up
            return None
        if when >= said:
            return when
    return None


def occasions(view: PersonView, now: datetime, policy: ProactivePolicy) -> list[Occasion]:
    tz = settings_zone(view.settings)
    if tz is None:
        return []
    asked = {sent.key for sent in view.sent} | view.settings.declined
    found = []
    for fact in view.memories:
        if now - fact.created_at > policy.follow_up_lookback or fact.created_at > now:
            continue
        key = occasion_key(view.user_id, TRIGGER, str(fact.id))
        event = None if key in asked else dated_event(fact, tz)
        if event is None:
            continue
        due = wall_to_utc(event[1] + timedelta(days=1), policy.follow_up_at, tz)
        if due <= now < due + policy.follow_up_stale:
            found.append(_question(view.user_id, key, fact, event, due))
    return found


def _question(
    user_id: str, key: str, fact: RememberedFact, event: tuple[str, date], due: datetime
) -> Occasion:
    name, when = event
    return Occasion(
        user_id=user_id,
        trigger=TRIGGER,
        key=key,
        why=f"You told me your {name} was on {when:%A %-d %B}.",
        text=f"How did your {name} go?",
        due=due,
        details={"memory_id": str(fact.id), "event": name, "date": when.isoformat()},
    )
