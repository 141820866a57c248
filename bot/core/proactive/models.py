"""What the proactive check-ins ([proactive]) pass around, defined once.

The triggers (one module each in this package) read a `PersonView`, a snapshot of one person's
stored activity, memories and settings, and return the `Occasion`s on which Kindred could speak
first. Deciding costs no model call: a trigger is plain arithmetic over what was stored. The
manners (`manners.py`: opt-in, quiet hours, the daily cap, "don't suggest this again", back-off)
then choose which occasions are sent; only composing a message that will be sent may use the model.

An occasion's `key` is its idempotency key, (person, trigger, occasion), stable across
re-evaluations: a retried job or a beat that fires twice computes the same key, and a key recorded
once is never sent again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Literal

TriggerName = Literal["long_session", "habit", "reminder", "follow_up"]
TRIGGERS: tuple[TriggerName, ...] = ("long_session", "habit", "reminder", "follow_up")
# Shown under every proactive message (a button or a command, as the platform allows); choosing it
# adds the message's trigger to `ProactiveSettings.disabled`. Asked-for reminders carry no footer.
DONT_SUGGEST_AGAIN = "Don't suggest this again"


@dataclass(frozen=True, slots=True)
class Activity:
    """One message the person sent (a stored user turn), in UTC."""

    at: datetime
    text: str
    platform: str = ""
    chat_id: str = ""


@dataclass(frozen=True, slots=True)
class RememberedFact:
    """One of the person's memories (their own words, never the bot's), with when it was said."""

    id: int
    text: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ProactiveSettings:
    """One person's choices. Proactive messages are opt-in; explicit reminders are always allowed."""

    enabled: bool = False
    timezone: str | None = None  # an IANA name; None: not known yet (asked for, or inferred)
    quiet_start: time = time(22, 0)  # local time; quiet hours may wrap midnight
    quiet_end: time = time(8, 0)
    disabled: frozenset[str] = frozenset()  # triggers the person said "don't suggest this again" to
    declined: frozenset[str] = frozenset()  # occasion keys the person declined (a habit never offered again)
    inactive: bool = False  # the person blocked the bot: nothing more is sent


@dataclass(frozen=True, slots=True)
class PersonView:
    """What the triggers read of one person, loaded by the beat job from the store."""

    user_id: str
    settings: ProactiveSettings
    activity: tuple[Activity, ...] = ()  # oldest first
    memories: tuple[RememberedFact, ...] = ()
    sent: tuple[SentRecord, ...] = ()  # proactive messages already sent, oldest first


@dataclass(frozen=True, slots=True)
class SentRecord:
    """A proactive message that was sent (or is being sent: recorded before sending)."""

    key: str
    trigger: str
    at: datetime
    accepted: bool | None = None  # None: no outcome yet


@dataclass(frozen=True, slots=True)
class Occasion:
    """A moment on which Kindred could speak first."""

    user_id: str
    trigger: TriggerName
    key: str  # idempotency key: f"{user_id}:{trigger}:{occasion id}", the same on every evaluation
    why: str  # shown with the message: why it was sent, in plain words
    text: str  # the template text: complete without any model
    due: datetime  # UTC: not before this
    details: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScheduledReminder:
    """A reminder the person asked for, as the store keeps it. `due` is UTC; `every` repeats it."""

    id: int
    user_id: str
    text: str  # what to remind of, in the person's words ("call the dentist")
    due: datetime
    every: timedelta | None = None
    cancelled: bool = False


# What the proactive store keeps: reminders, and the sent ledger's rows.
# The ledger is keyed by an occasion's idempotency key and written before anything is sent, so a
# key that is there is never sent again. A row goes `claimed` → `sent` (the platform took it) or
# `failed` (the platform refused it: the person blocked the bot). A row left `claimed` means a worker
# stopped between deciding and sending; it is never retried, since nothing can tell whether the
# platform got the message, and two messages are worse than one lost.

ReminderStatus = Literal["scheduled", "cancelled", "sent"]
SendStatus = Literal["claimed", "sent", "failed"]
Outcome = Literal["accepted", "dismissed"]


@dataclass(frozen=True, slots=True)
class NewReminder:
    """A reminder to schedule: `due` in UTC, `timezone` the person's (shown back in local time),
    `every` its repeat (None: once)."""

    user_id: str
    chat_id: str
    text: str
    due: datetime
    timezone: str
    created_at: datetime
    every: timedelta | None = None


@dataclass(frozen=True, slots=True)
class Reminder:
    id: int
    user_id: str
    chat_id: str
    text: str
    due: datetime
    timezone: str
    status: ReminderStatus
    created_at: datetime
    every: timedelta | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A decision to send, recorded before sending. `reminder_id`: the reminder it sends, which
    leaves the schedule in the same transaction (a cancelled one cannot be claimed), or, when it
    repeats, moves on to `next_due`."""

    key: str
    user_id: str
    trigger: str
    at: datetime
    reminder_id: int | None = None
    next_due: datetime | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    """How a claimed message ended: sent (with where, its turn and platform message) or failed."""

    status: Literal["sent", "failed"]
    at: datetime
    chat_id: str | None = None
    turn_id: int | None = None
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class LedgerRow:
    key: str
    user_id: str
    trigger: str
    status: SendStatus
    claimed_at: datetime
    chat_id: str | None = None
    sent_at: datetime | None = None
    turn_id: int | None = None
    message_id: str | None = None
    outcome: Outcome | None = None


@dataclass(frozen=True, slots=True)
class TriggerRate:
    """One trigger's sent messages since some time, and how people took them."""

    trigger: str
    sent: int
    accepted: int
    dismissed: int

    @property
    def success_rate(self) -> float | None:
        """Accepted over sent; None before anything was sent."""
        return self.accepted / self.sent if self.sent else None
