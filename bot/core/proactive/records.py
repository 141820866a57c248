"""What the proactive store keeps ([proactive]): reminders, and the sent ledger's rows.

The ledger is keyed by an occasion's idempotency key and written before anything is sent, so a
key that is there is never sent again. A row goes `claimed` → `sent` (the platform took it) or
`failed` (the platform refused it: the person blocked the bot). A row left `claimed` means a worker
stopped between deciding and sending; it is never retried, since nothing can tell whether the
platform got the message, and two messages are worse than one lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

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
