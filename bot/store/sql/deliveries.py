"""The DeliveryLog on either database: one implementation over the SQL both dialects share, on
the runners the mini-apps and proactive stores use (bot/store/sqlite/miniapps.py, postgres/…)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import DeliveryDoubt, DoubtStatus
from bot.store.sql.proactive import Runner

_RECORD = """
INSERT INTO delivery_doubts (platform, chat_id, turn_id, user_id, status, created_at)
VALUES (?, ?, ?, ?, 'unknown', ?) ON CONFLICT (platform, chat_id, turn_id) DO NOTHING
"""
_WAITING = """
SELECT d.platform, d.chat_id, d.turn_id, d.user_id, d.status, t.text
FROM delivery_doubts d JOIN turns t ON t.id = d.turn_id
WHERE d.platform = ? AND d.chat_id = ? AND d.status IN ('unknown', 'told')
ORDER BY d.turn_id
"""
_SETTLE = """
UPDATE delivery_doubts SET status = ?, settled_at = ?
WHERE platform = ? AND chat_id = ? AND turn_id = ? AND status IN (?, ?)
RETURNING turn_id
"""
# What each status may be reached from: "told" only once, and nothing after delivered or resent.
_FROM: dict[DoubtStatus, tuple[str, str]] = {
    "told": ("unknown", "unknown"),
    "delivered": ("unknown", "told"),
    "resent": ("unknown", "told"),
}


class SqlDeliveries:
    """DeliveryLog over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect

    async def record(self, doubt: DeliveryDoubt) -> None:
        params = (doubt.platform, doubt.chat_id, doubt.turn_id, doubt.user_id, self._now())
        async with self._runner.transaction() as run:
            await run(self._d.sql(_RECORD), params)

    async def waiting(self, platform: str, chat_id: str) -> list[DeliveryDoubt]:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(_WAITING), (platform, chat_id))
        return [
            DeliveryDoubt(r["platform"], r["chat_id"], r["turn_id"], r["user_id"], r["text"], r["status"])
            for r in rows
        ]

    async def settle(self, platform: str, chat_id: str, turn_id: int, status: DoubtStatus) -> bool:
        if status not in _FROM:
            raise ValueError(f"a reply's delivery cannot become {status!r}")
        params = (status, self._now(), platform, chat_id, turn_id, *_FROM[status])
        async with self._runner.transaction() as run:
            return bool(await run(self._d.sql(_SETTLE), params))

    def _now(self) -> object:
        return self._d.moment_param(datetime.now(UTC))
