"""The proactive room's boundaries: each person's check-in settings, reminders and the sent ledger."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from bot.core.proactive.models import (
    Activity,
    Claim,
    Delivery,
    LedgerRow,
    NewReminder,
    Outcome,
    ProactiveSettings,
    Reminder,
    TriggerRate,
)


class ProactiveSettingsLog(Protocol):
    """Each person's proactive choices, and what beat reads of them."""

    async def proactive_settings(self, user_id: str) -> ProactiveSettings:
        """The person's settings (the defaults when never set); `inactive` when they blocked the bot."""
        ...

    async def save_proactive_settings(self, user_id: str, settings: ProactiveSettings, at: datetime) -> None:
        """Replace the person's settings (`inactive` is not a setting: it is users.active)."""
        ...

    async def proactive_people(self, now: datetime, after: str, limit: int) -> list[str]:
        """People beat looks at, by id after `after`: those who turned proactive messages on, and
        those with a reminder due by `now`; never one marked inactive. Nobody else is loaded."""
        ...

    async def activity(self, user_id: str, since: datetime, limit: int) -> list[Activity]:
        """The person's own messages since `since`, oldest first, the latest `limit` at most."""
        ...


class ReminderBook(Protocol):
    async def add_reminder(self, reminder: NewReminder) -> Reminder: ...

    async def reminders(self, user_id: str, *, due_by: datetime | None = None) -> list[Reminder]:
        """The person's scheduled reminders, soonest first; with `due_by`, only those due by then."""
        ...

    async def cancel_reminder(self, user_id: str, reminder_id: int, at: datetime) -> bool:
        """Cancel one of the person's scheduled reminders. False: none such (or not theirs)."""
        ...


class SentLedger(Protocol):
    async def claim(self, claim: Claim) -> bool:
        """Record the decision to send, before sending. False: the key is already there (sent, or
        being sent), or its reminder is no longer scheduled: send nothing."""
        ...

    async def settle(self, key: str, delivery: Delivery) -> None:
        """How a claimed message ended."""
        ...

    async def sent_messages(self, user_id: str, since: datetime) -> list[LedgerRow]:
        """The person's ledger rows claimed since `since`, oldest first."""
        ...

    async def awaiting_outcome(self, user_id: str, chat_id: str, since: datetime) -> LedgerRow | None:
        """The latest message sent in this chat since `since` that has no outcome yet."""
        ...

    async def ledger_row(self, turn_id: int) -> LedgerRow | None:
        """The ledger row of the proactive message stored as `turn_id`, if it is one."""
        ...

    async def record_outcome(self, key: str, outcome: Outcome, at: datetime) -> bool:
        """Set the message's outcome once. False: it already had one (nothing changes)."""
        ...

    async def trigger_rates(self, since: datetime) -> list[TriggerRate]:
        """Per trigger, the messages sent since `since` and their outcomes, by trigger name."""
        ...


class ProactiveStore(ProactiveSettingsLog, ReminderBook, SentLedger, Protocol):
    """The proactive check-ins' part of the store ([proactive])."""
