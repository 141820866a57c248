"""One person, one moment: every trigger that may run, and the occasions they find.

Off means off: when the person has not opted in, only their due reminders are looked at (they
asked for those); no proactive trigger reads their activity or memories, so nothing is decided,
composed or queued for them. A trigger the person said "don't suggest this again" to is not run at
all. Deciding is arithmetic over the view: no model is called here. Which occasions are sent is
manners.choose's business.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from bot.core.proactive import follow_up, habit, long_session, reminder
from bot.core.proactive.models import Occasion, PersonView, ScheduledReminder, TriggerName
from bot.core.proactive.occasions import speakable
from bot.core.proactive.policy import ProactivePolicy

Trigger = Callable[[PersonView, datetime, ProactivePolicy], list[Occasion]]
# The opt-in triggers, in the order their occasions are listed.
PROACTIVE_TRIGGERS: Mapping[TriggerName, Trigger] = {
    "long_session": long_session.occasions,
    "follow_up": follow_up.occasions,
    "habit": habit.occasions,
}


def evaluate(
    view: PersonView, now: datetime, policy: ProactivePolicy, reminders: Sequence[ScheduledReminder] = ()
) -> list[Occasion]:
    """The occasions on which Kindred could speak first to `view`'s person at `now` (aware, UTC)."""
    if view.settings.inactive:
        return []
    found = reminder.occasions(view.user_id, reminders, now, {sent.key for sent in view.sent})
    if view.settings.enabled:
        for name, trigger in PROACTIVE_TRIGGERS.items():
            if name not in view.settings.disabled:
                found.extend(trigger(view, now, policy))
    return [_spoken(occasion) for occasion in found]


def _spoken(occasion: Occasion) -> Occasion:
    """The occasion with no control word in what is shown (a memory or reminder could carry one)."""
    return dataclasses.replace(occasion, text=speakable(occasion.text), why=speakable(occasion.why))
