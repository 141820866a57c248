"""What /proactive, /reminders and "remind me …" answer, the same on every platform.

Adapters only render these answers. Proactive check-ins are off until the person turns them on;
reminders they ask for need no opt-in. A reminder is read in the person's time zone, which they
set once (`/proactive timezone Europe/Berlin`); until then Kindred asks for it instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.proactive.local_time import quiet_until, zone
from bot.core.proactive.models import NewReminder, ProactiveSettings, Reminder
from bot.core.proactive.policy import DEFAULT, ProactivePolicy
from bot.core.proactive.ports import ProactiveStore
from bot.core.proactive.reminder_text import (
    ASK_LIKE_THIS,
    ReminderRefusal,
    confirmation,
    every_words,
    parse_reminder,
)
from bot.core.proactive.zone_guess import likely_offset, zones_at_offset

# How far back a time-zone guess reads the person's messages, and how many at most.
GUESS_WINDOW = timedelta(days=28)
GUESS_MESSAGES = 2000
# A person's scheduled reminders at most: past this, "remind me" is a loop or a flood, not a plan.
MAX_REMINDERS = 50
MAX_REMINDER_CHARS = 300
# The words people use for each trigger they can turn off or on again.
TRIGGER_WORDS = {
    "long_session": "long_session",
    "breaks": "long_session",
    "break": "long_session",
    "habit": "habit",
    "habits": "habit",
    "follow_up": "follow_up",
    "follow-up": "follow_up",
    "follow-ups": "follow_up",
}
KIND_NAMES = {"long_session": "break suggestions", "habit": "habit offers", "follow_up": "follow-ups"}
USAGE = (
    "/proactive on or off: whether I may write to you first. /proactive timezone Europe/Berlin: your "
    "time zone. /proactive quiet 22-7: your quiet hours. /proactive never habits (or breaks, "
    "follow-ups) turns one kind off; /proactive allow habits turns it back on."
)
WHAT_ON_MEANS = (
    "I may write to you first when it helps: a break after hours of work, a routine for a habit I "
    "noticed (offered once), or asking how a dated event went. At most {cap} a day, never in your "
    "quiet hours, each saying why, each with “don't suggest this again”."
)
OFF = (
    "Done: I won't write to you first. Reminders you ask for still come. /proactive on turns "
    "check-ins back on."
)
NEEDS_ZONE = (
    "I don't know your time zone yet, so I'll wait until you tell me: /proactive timezone "
    "Europe/Berlin (any IANA name)."
)
UNREACHABLE = (
    "I can't write to you first here: only on Telegram or Discord (as my admin set me up) can a "
    "reminder or a check-in reach you later. Nothing was scheduled."
)
PROACTIVE_NOT_WIRED = "Check-ins and reminders are not set up here."
REMINDERS_USAGE = "/reminders lists your reminders; /reminders cancel N cancels one."
_QUIET = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(?:-|–|to)\s*(\d{1,2})(?::(\d{2}))?$")


def clock(moment: time) -> str:
    return f"{moment:%H:%M}"


def quiet_hours(text: str) -> tuple[time, time] | None:
    """ "22-7", "22:30-6:45", "23 to 7" as (start, end); None when it is not two clock times."""
    found = _QUIET.match(text.strip())
    if found is None:
        return None
    hour1, minute1, hour2, minute2 = (int(part) if part else 0 for part in found.groups())
    if max(hour1, hour2) > 23 or max(minute1, minute2) > 59:
        return None
    return time(hour1, minute1), time(hour2, minute2)


def reminder_line(reminder: Reminder) -> str:
    tz = zone(reminder.timezone) or ZoneInfo("UTC")
    local = reminder.due.astimezone(tz)
    repeat = f" · every {every_words(reminder.every)}" if reminder.every else ""
    return f"#{reminder.id} · {local:%a %-d %b %Y %H:%M} ({reminder.timezone}){repeat} · {reminder.text}"


class ProactiveCommands:
    def __init__(
        self,
        store: ProactiveStore,
        *,
        policy: ProactivePolicy = DEFAULT,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        reachable: Callable[[str], bool] = lambda user_id: True,
    ) -> None:
        self.store = store
        self.policy = policy
        self._clock = clock
        # Whether beat can write to this person later: their platform has a messenger (the
        # terminal has none), so a reminder there would never ring.
        self.reachable = reachable

    async def proactive(self, user_id: str, argument: str) -> str:
        """/proactive [on|off|timezone NAME|quiet H-H|never KIND|allow KIND]."""
        word, _, rest = " ".join(argument.split()).partition(" ")
        word, rest = word.lower(), rest.strip()
        settings = await self.store.proactive_settings(user_id)
        if word in ("on", "off") and not rest:
            return await self._switch(user_id, settings, word == "on")
        if word in ("timezone", "tz", "zone") and rest:
            return await self._zone(user_id, settings, rest)
        if word == "quiet" and rest:
            return await self._quiet(user_id, settings, rest)
        if word in ("never", "allow") and rest:
            return await self._kind(user_id, settings, rest.lower(), allow=word == "allow")
        if word:
            return USAGE
        return self.status(settings)

    def status(self, settings: ProactiveSettings) -> str:
        state = "on" if settings.enabled else "off (the default)"
        where = settings.timezone or "not set"
        quiet = f"{clock(settings.quiet_start)}–{clock(settings.quiet_end)}"
        lines = [f"Check-ins: {state}. Time zone: {where}. Quiet hours: {quiet}."]
        if settings.disabled:
            names = ", ".join(KIND_NAMES.get(trigger, trigger) for trigger in sorted(settings.disabled))
            lines.append(f"Turned off: {names}.")
        lines.append(USAGE)
        return "\n".join(lines)

    async def _save(self, user_id: str, settings: ProactiveSettings) -> None:
        await self.store.save_proactive_settings(user_id, settings, self._clock())

    async def _switch(self, user_id: str, settings: ProactiveSettings, on: bool) -> str:
        if on and not self.reachable(user_id):
            return UNREACHABLE
        await self._save(user_id, replace(settings, enabled=on))
        if not on:
            return OFF
        answer = "Done: check-ins are on. " + WHAT_ON_MEANS.format(cap=self.policy.daily_cap)
        answer += " /proactive off stops them."
        return answer if settings.timezone else f"{answer}\n{await self.ask_zone(user_id)}"

    async def ask_zone(self, user_id: str) -> str:
        """Ask for the person's time zone, with a guess from when they write to confirm, if any."""
        now = self._clock()
        activity = await self.store.activity(user_id, now - GUESS_WINDOW, GUESS_MESSAGES)
        offset = likely_offset(activity)
        zones = [] if offset is None else zones_at_offset(offset, now)
        if offset is None or not zones:
            return NEEDS_ZONE
        hours = int(offset.total_seconds() // 3600)
        return (
            f"{NEEDS_ZONE} From when you write, you may be on UTC{hours:+d}, for example {zones[0]}: "
            f"/proactive timezone {zones[0]} confirms it."
        )

    async def _zone(self, user_id: str, settings: ProactiveSettings, name: str) -> str:
        if zone(name) is None:
            return f"I don't know the time zone {name[:60]!r}. Use an IANA name such as Europe/Berlin."
        await self._save(user_id, replace(settings, timezone=name))
        local = self._clock().astimezone(ZoneInfo(name))
        return f"Done: your time zone is {name} (it is {local:%H:%M} there now)."

    async def _quiet(self, user_id: str, settings: ProactiveSettings, text: str) -> str:
        hours = quiet_hours(text)
        if hours is None:
            return "Tell me your quiet hours as two times, for example /proactive quiet 22-7 or 22:30-6:45."
        await self._save(user_id, replace(settings, quiet_start=hours[0], quiet_end=hours[1]))
        if hours[0] == hours[1]:
            return "Done: no quiet hours (they start and end at the same time)."
        where = settings.timezone or "your time zone, once you set it"
        return f"Done: I stay quiet from {clock(hours[0])} to {clock(hours[1])} ({where})."

    async def _kind(self, user_id: str, settings: ProactiveSettings, word: str, *, allow: bool) -> str:
        trigger = TRIGGER_WORDS.get(word)
        if trigger is None:
            return "Which kind? breaks, habits or follow-ups (reminders you ask for are always yours)."
        if not allow:
            return await self.never_again(user_id, trigger)
        await self._save(user_id, replace(settings, disabled=settings.disabled - {trigger}))
        return f"Done: {KIND_NAMES[trigger]} are back on."

    async def never_again(self, user_id: str, trigger: str) -> str:
        """ "Don't suggest this again": that trigger is off for the person (a button, a command, a reply)."""
        settings = await self.store.proactive_settings(user_id)
        if trigger not in settings.disabled:
            await self._save(user_id, replace(settings, disabled=settings.disabled | {trigger}))
        name = KIND_NAMES.get(trigger, trigger)
        return f"Okay, no more {name}. /proactive allow {name.split()[0]} brings them back."

    async def reminders(self, user_id: str, argument: str) -> str:
        """/reminders, /reminders cancel N."""
        words = argument.split()
        if not words:
            found = await self.store.reminders(user_id)
            if not found:
                return f"You have no reminders. {ASK_LIKE_THIS}"
            return "\n".join(["Your reminders, soonest first:", *map(reminder_line, found), REMINDERS_USAGE])
        number = words[1].lstrip("#") if len(words) == 2 and words[0].lower() == "cancel" else ""
        if not (number.isascii() and number.isdigit() and len(number) <= 18):
            return REMINDERS_USAGE
        if await self.store.cancel_reminder(user_id, int(number), self._clock()):
            return f"Cancelled reminder #{number}."
        return f"You have no scheduled reminder #{number}. /reminders lists them."

    async def remind(self, user_id: str, chat_id: str, text: str) -> str:
        """A "remind me …" message: scheduled and confirmed with its local time, or why not."""
        if not self.reachable(user_id):
            return UNREACHABLE
        settings = await self.store.proactive_settings(user_id)
        if settings.timezone is None:
            return f"Gladly, but first: {await self.ask_zone(user_id)} Then ask me again."
        if len(text) > MAX_REMINDER_CHARS:
            return f"Please keep a reminder under {MAX_REMINDER_CHARS} characters."
        now = self._clock()
        parsed = parse_reminder(text, now, settings.timezone)
        if isinstance(parsed, ReminderRefusal):
            return parsed.reason
        if len(await self.store.reminders(user_id)) >= MAX_REMINDERS:
            return f"You already have {MAX_REMINDERS} reminders scheduled; cancel some first (/reminders)."
        reminder = NewReminder(user_id, chat_id, parsed.text, parsed.due, parsed.timezone, now, parsed.every)
        stored = await self.store.add_reminder(reminder)
        answer = f"{confirmation(parsed)} (Reminder #{stored.id}; /reminders cancel {stored.id} cancels it.)"
        tz = zone(settings.timezone)
        held = None if tz is None else quiet_until(parsed.due, settings, tz)
        if tz is not None and held is not None:  # manners hold every message in quiet hours
            answer += (
                f" That is in your quiet hours, so it comes when they end, at {held.astimezone(tz):%H:%M}."
            )
        return answer
