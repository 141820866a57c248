"""The ProactiveStore on either database: one implementation over the SQL both dialects share.

It runs on the mini-apps' runners (`sqlite_apps`, `pg_apps`: statements in one transaction, rows
by column name). Lists (disabled triggers, declined keys) are JSON text in both schemas.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, time, timedelta
from typing import Any, Protocol, cast

from bot.core.proactive.models import (
    Activity,
    Claim,
    Delivery,
    LedgerRow,
    NewReminder,
    Outcome,
    ProactiveSettings,
    Reminder,
    ReminderStatus,
    SendStatus,
    TriggerRate,
)
from bot.store.sql.rows import Dialect, NamedRow

_SETTINGS = "SELECT * FROM proactive_settings WHERE user_id = ?"
_ACTIVE = "SELECT active FROM users WHERE id = ?"
_SAVE_SETTINGS = """
INSERT INTO proactive_settings
    (user_id, enabled, timezone, quiet_start, quiet_end, disabled, declined, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (user_id) DO UPDATE SET enabled = excluded.enabled, timezone = excluded.timezone,
    quiet_start = excluded.quiet_start, quiet_end = excluded.quiet_end, disabled = excluded.disabled,
    declined = excluded.declined, updated_at = excluded.updated_at
"""
_PEOPLE = """
SELECT id FROM (
    SELECT user_id AS id FROM proactive_settings WHERE enabled = ?
    UNION
    SELECT user_id AS id FROM reminders WHERE status = 'scheduled' AND due_at <= ?
) AS wanted
WHERE id > ? AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = wanted.id AND NOT u.active)
ORDER BY id LIMIT ?
"""
_ACTIVITY = """
SELECT created_at, text, chat_id FROM turns
WHERE user_id = ? AND role = 'user' AND created_at >= ? ORDER BY created_at DESC, id DESC LIMIT ?
"""
_REMINDER_COLUMNS = "id, user_id, chat_id, text, due_at, timezone, every_s, status, created_at"
_ADD_REMINDER = f"""
INSERT INTO reminders (user_id, chat_id, text, due_at, timezone, every_s, status, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, 'scheduled', ?, ?) RETURNING {_REMINDER_COLUMNS}
"""
_REMINDERS = f"""
SELECT {_REMINDER_COLUMNS} FROM reminders WHERE user_id = ? AND status = 'scheduled' AND due_at <= ?
ORDER BY due_at, id
"""
_CANCEL = """
UPDATE reminders SET status = 'cancelled', updated_at = ?
WHERE id = ? AND user_id = ? AND status = 'scheduled' RETURNING id
"""
_TAKE_REMINDER = """
UPDATE reminders SET status = 'sent', updated_at = ? WHERE id = ? AND user_id = ? AND status = 'scheduled'
RETURNING id
"""
_REPEAT_REMINDER = """
UPDATE reminders SET due_at = ?, updated_at = ? WHERE id = ? AND user_id = ? AND status = 'scheduled'
RETURNING id
"""
_CLAIM = """
INSERT INTO proactive_sent (key, user_id, trigger_name, status, claimed_at) VALUES (?, ?, ?, 'claimed', ?)
ON CONFLICT (key) DO NOTHING RETURNING key
"""
_SETTLE = """
UPDATE proactive_sent SET status = ?, sent_at = ?, chat_id = ?, turn_id = ?, message_id = ?
WHERE key = ? AND status = 'claimed'
"""
_LEDGER_COLUMNS = (
    "key, user_id, trigger_name, status, claimed_at, chat_id, sent_at, turn_id, message_id, outcome"
)
_SENT = f"""
SELECT {_LEDGER_COLUMNS} FROM proactive_sent WHERE user_id = ? AND claimed_at >= ? ORDER BY claimed_at, key
"""
_AWAITING = f"""
SELECT {_LEDGER_COLUMNS} FROM proactive_sent
WHERE user_id = ? AND chat_id = ? AND status = 'sent' AND outcome IS NULL AND sent_at >= ?
ORDER BY sent_at DESC LIMIT 1
"""
_BY_TURN = f"SELECT {_LEDGER_COLUMNS} FROM proactive_sent WHERE turn_id = ? LIMIT 1"
_OUTCOME = """
UPDATE proactive_sent SET outcome = ?, outcome_at = ? WHERE key = ? AND outcome IS NULL RETURNING key
"""
_RATES = """
SELECT trigger_name, count(*) AS sent,
       sum(CASE WHEN outcome = 'accepted' THEN 1 ELSE 0 END) AS accepted,
       sum(CASE WHEN outcome = 'dismissed' THEN 1 ELSE 0 END) AS dismissed
FROM proactive_sent WHERE status = 'sent' AND claimed_at >= ? GROUP BY trigger_name ORDER BY trigger_name
"""
# Later than any reminder can be due (reminder_text refuses years ahead): "every scheduled one".
_NEVER = datetime(9999, 1, 1, tzinfo=UTC)


class Transaction(Protocol):
    async def __call__(self, sql: str, params: Sequence[Any] = ()) -> list[NamedRow]: ...


class Runner(Protocol):
    dialect: Dialect

    def transaction(self) -> AbstractAsyncContextManager[Transaction]: ...


class SqlProactive:
    """ProactiveStore over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[NamedRow]:
        async with self._runner.transaction() as run:
            return await run(self._d.sql(sql), params)

    # -- settings ---------------------------------------------------------------------------

    async def proactive_settings(self, user_id: str) -> ProactiveSettings:
        async with self._runner.transaction() as run:
            found = await run(self._d.sql(_SETTINGS), (user_id,))
            active = await run(self._d.sql(_ACTIVE), (user_id,))
        inactive = bool(active) and not active[0]["active"]
        if not found:
            return ProactiveSettings(inactive=inactive)
        row = found[0]
        return ProactiveSettings(
            enabled=bool(row["enabled"]),
            timezone=row["timezone"],
            quiet_start=_clock_time(row["quiet_start"]),
            quiet_end=_clock_time(row["quiet_end"]),
            disabled=frozenset(json.loads(row["disabled"])),
            declined=frozenset(json.loads(row["declined"])),
            inactive=inactive,
        )

    async def save_proactive_settings(self, user_id: str, settings: ProactiveSettings, at: datetime) -> None:
        params = (
            user_id,
            settings.enabled,
            settings.timezone,
            _minutes(settings.quiet_start),
            _minutes(settings.quiet_end),
            json.dumps(sorted(settings.disabled)),
            json.dumps(sorted(settings.declined)),
            self._d.moment_param(at),
        )
        await self._rows(_SAVE_SETTINGS, params)

    async def proactive_people(self, now: datetime, after: str, limit: int) -> list[str]:
        rows = await self._rows(_PEOPLE, (True, self._d.moment_param(now), after, limit))
        return [str(row["id"]) for row in rows]

    async def activity(self, user_id: str, since: datetime, limit: int) -> list[Activity]:
        rows = await self._rows(_ACTIVITY, (user_id, self._d.moment_param(since), limit))
        return [
            Activity(
                self._d.moment(row["created_at"]),
                row["text"],
                platform=str(row["chat_id"]).partition(":")[0],
                chat_id=row["chat_id"],
            )
            for row in reversed(rows)
        ]

    # -- reminders --------------------------------------------------------------------------

    async def add_reminder(self, reminder: NewReminder) -> Reminder:
        created = self._d.moment_param(reminder.created_at)
        params = (
            reminder.user_id,
            reminder.chat_id,
            reminder.text,
            self._d.moment_param(reminder.due),
            reminder.timezone,
            None if reminder.every is None else int(reminder.every.total_seconds()),
            created,
            created,
        )
        return self._reminder((await self._rows(_ADD_REMINDER, params))[0])

    async def reminders(self, user_id: str, *, due_by: datetime | None = None) -> list[Reminder]:
        rows = await self._rows(_REMINDERS, (user_id, self._d.moment_param(due_by or _NEVER)))
        return [self._reminder(row) for row in rows]

    async def cancel_reminder(self, user_id: str, reminder_id: int, at: datetime) -> bool:
        return bool(await self._rows(_CANCEL, (self._d.moment_param(at), reminder_id, user_id)))

    def _reminder(self, row: NamedRow) -> Reminder:
        return Reminder(
            id=int(row["id"]),
            user_id=row["user_id"],
            chat_id=row["chat_id"],
            text=row["text"],
            due=self._d.moment(row["due_at"]),
            timezone=row["timezone"],
            status=cast(ReminderStatus, row["status"]),
            created_at=self._d.moment(row["created_at"]),
            every=None if row["every_s"] is None else timedelta(seconds=int(row["every_s"])),
        )

    # -- the sent ledger --------------------------------------------------------------------

    async def claim(self, claim: Claim) -> bool:
        at = self._d.moment_param(claim.at)
        async with self._runner.transaction() as run:
            if claim.reminder_id is not None:
                taken = await run(*self._take(claim))
                if not taken:
                    return False
            # A reminder's key is claimed in the same transaction that takes it off the schedule, so
            # a reminder still scheduled has no ledger row yet.
            claimed = await run(self._d.sql(_CLAIM), (claim.key, claim.user_id, claim.trigger, at))
        return bool(claimed)

    def _take(self, claim: Claim) -> tuple[str, Sequence[Any]]:
        """The statement that moves the claimed reminder off its due time: sent, or the next one."""
        at = self._d.moment_param(claim.at)
        if claim.next_due is None:
            return self._d.sql(_TAKE_REMINDER), (at, claim.reminder_id, claim.user_id)
        params = (self._d.moment_param(claim.next_due), at, claim.reminder_id, claim.user_id)
        return self._d.sql(_REPEAT_REMINDER), params

    async def settle(self, key: str, delivery: Delivery) -> None:
        at = self._d.moment_param(delivery.at)
        params = (delivery.status, at, delivery.chat_id, delivery.turn_id, delivery.message_id, key)
        await self._rows(_SETTLE, params)

    async def sent_messages(self, user_id: str, since: datetime) -> list[LedgerRow]:
        rows = await self._rows(_SENT, (user_id, self._d.moment_param(since)))
        return [self._ledger(row) for row in rows]

    async def awaiting_outcome(self, user_id: str, chat_id: str, since: datetime) -> LedgerRow | None:
        rows = await self._rows(_AWAITING, (user_id, chat_id, self._d.moment_param(since)))
        return self._ledger(rows[0]) if rows else None

    async def ledger_row(self, turn_id: int) -> LedgerRow | None:
        rows = await self._rows(_BY_TURN, (turn_id,))
        return self._ledger(rows[0]) if rows else None

    async def record_outcome(self, key: str, outcome: Outcome, at: datetime) -> bool:
        return bool(await self._rows(_OUTCOME, (outcome, self._d.moment_param(at), key)))

    async def trigger_rates(self, since: datetime) -> list[TriggerRate]:
        rows = await self._rows(_RATES, (self._d.moment_param(since),))
        return [
            TriggerRate(row["trigger_name"], int(row["sent"]), int(row["accepted"]), int(row["dismissed"]))
            for row in rows
        ]

    def _ledger(self, row: NamedRow) -> LedgerRow:
        sent_at = row["sent_at"]
        return LedgerRow(
            key=row["key"],
            user_id=row["user_id"],
            trigger=row["trigger_name"],
            status=cast(SendStatus, row["status"]),
            claimed_at=self._d.moment(row["claimed_at"]),
            chat_id=row["chat_id"],
            sent_at=None if sent_at is None else self._d.moment(sent_at),
            turn_id=None if row["turn_id"] is None else int(row["turn_id"]),
            message_id=row["message_id"],
            outcome=cast("Outcome | None", row["outcome"]),
        )


def _minutes(moment: time) -> int:
    return moment.hour * 60 + moment.minute


def _clock_time(minutes: int) -> time:
    return time(int(minutes) // 60 % 24, int(minutes) % 60)
