"""The UsageLog on either database: one implementation over the SQL both dialects share, on the
runners the deliveries, mini-apps and proactive stores use."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date
from typing import Any

from bot.core.usage import USAGE_KINDS, UsageDay, UsageKind, UsageRecord
from bot.store.sql.proactive import Runner
from bot.store.sql.rows import NamedRow

_RECORD = """
INSERT INTO usage_records (user_id, group_id, kind, tokens_in, tokens_out, amount, day, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
# A person's rows and, apart, each group chat's (the rows of its people), per day and kind.
_SUMS = """
SELECT 0 AS is_group, user_id AS who, day, kind, SUM(tokens_in) AS tokens_in,
       SUM(tokens_out) AS tokens_out, SUM(amount) AS amount, COUNT(*) AS uses
FROM usage_records WHERE day >= ? AND day <= ? {person}
GROUP BY user_id, day, kind
UNION ALL
SELECT 1 AS is_group, group_id AS who, day, kind, SUM(tokens_in) AS tokens_in,
       SUM(tokens_out) AS tokens_out, SUM(amount) AS amount, COUNT(*) AS uses
FROM usage_records WHERE group_id IS NOT NULL AND day >= ? AND day <= ? {group}
GROUP BY group_id, day, kind
"""
_RECORDS = """
SELECT user_id, group_id, kind, tokens_in, tokens_out, amount, created_at
FROM usage_records WHERE user_id = ? ORDER BY id
"""


class SqlUsage:
    """UsageLog over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect

    async def record(self, record: UsageRecord) -> None:
        if record.kind not in USAGE_KINDS:
            raise ValueError(f"no such use: {record.kind!r}")
        day = record.at.astimezone(UTC).date().isoformat()
        params = (record.user_id, record.group_id, record.kind, record.tokens_in, record.tokens_out,
                  float(record.amount), day, self._d.moment_param(record.at))  # fmt: skip
        async with self._runner.transaction() as run:
            await run(self._d.sql(_RECORD), params)

    async def days(self, first: date, last: date, who: str | None = None) -> list[UsageDay]:
        span = (first.isoformat(), last.isoformat())
        only = "" if who is None else "AND {} = ?"
        sql = _SUMS.format(person=only.format("user_id"), group=only.format("group_id"))
        params: tuple[Any, ...] = (*span, who, *span, who) if who is not None else (*span, *span)
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(sql), params)
        return _by_day(rows)

    async def records(self, user_id: str) -> list[UsageRecord]:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(_RECORDS), (user_id,))
        return [
            UsageRecord(
                r["user_id"],
                _kind(r["kind"]),
                self._d.moment(r["created_at"]),
                int(r["tokens_in"]),
                int(r["tokens_out"]),
                float(r["amount"]),
                r["group_id"],
            )
            for r in rows
        ]


def _kind(name: str) -> UsageKind:
    for kind in USAGE_KINDS:
        if kind == name:
            return kind
    raise ValueError(f"no such use: {name!r}")


def _by_day(rows: Iterable[NamedRow]) -> list[UsageDay]:
    """The rows (one per who, day and kind) folded into one UsageDay per who and day."""
    sums: dict[tuple[str, bool, str], dict[str, Any]] = {}
    for r in rows:
        totals = sums.setdefault((r["day"], bool(r["is_group"]), r["who"]), {})
        kind = r["kind"]
        totals["tokens_in"] = totals.get("tokens_in", 0) + int(r["tokens_in"])
        totals["tokens_out"] = totals.get("tokens_out", 0) + int(r["tokens_out"])
        if kind == "reply":
            totals["replies"] = int(r["uses"])
        elif kind == "voice_seconds":
            totals["voice_seconds"] = float(r["amount"])
        elif kind == "image":
            totals["images"] = int(r["amount"])
        elif kind == "proactive":
            totals["proactive"] = int(r["uses"])
        else:
            totals["app_builds"] = int(r["uses"])
    return [
        UsageDay(who, date.fromisoformat(day), group, **totals)
        for (day, group, who), totals in sorted(sums.items())
    ]
