"""The UsageLog on either database: one implementation over the SQL both dialects share, on the
runners the deliveries, mini-apps and proactive stores use."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date
from typing import Any

from bot.core.usage import USAGE_KINDS, Spent, UsageDay, UsageKind, UsageRecord
from bot.core.usage.periods import month_of
from bot.store.sql.proactive import Runner
from bot.store.sql.rows import NamedRow

_RECORD = """
INSERT INTO usage_records (user_id, group_id, kind, tokens_in, tokens_out, amount, day, created_at,
                           model, cost, group_day)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# A person's rows on their own days and, apart, each group chat's (the rows of its people) on UTC
# days, per day and kind.
_SUMS = """
SELECT 0 AS is_group, user_id AS who, day, kind, SUM(tokens_in) AS tokens_in,
       SUM(tokens_out) AS tokens_out, SUM(amount) AS amount, SUM(cost) AS cost, COUNT(*) AS uses
FROM usage_records WHERE day >= ? AND day <= ? {person}
GROUP BY user_id, day, kind
UNION ALL
SELECT 1 AS is_group, group_id AS who, group_day AS day, kind, SUM(tokens_in) AS tokens_in,
       SUM(tokens_out) AS tokens_out, SUM(amount) AS amount, SUM(cost) AS cost, COUNT(*) AS uses
FROM usage_records WHERE group_id IS NOT NULL AND group_day >= ? AND group_day <= ? {group}
GROUP BY group_id, group_day, kind
"""
# One day's and its month's tokens and cost, for a budget: {who} and {day} name the person's
# columns or the group chat's.
_SPENT = """
SELECT COALESCE(SUM(CASE WHEN {day} = ? THEN tokens_in + tokens_out ELSE 0 END), 0) AS day_tokens,
       COALESCE(SUM(CASE WHEN {day} = ? THEN cost ELSE 0 END), 0) AS day_cost,
       COALESCE(SUM(tokens_in + tokens_out), 0) AS month_tokens,
       COALESCE(SUM(cost), 0) AS month_cost
FROM usage_records WHERE {who} = ? AND {day} >= ? AND {day} <= ?
"""
_RECORDS = """
SELECT user_id, group_id, kind, tokens_in, tokens_out, amount, created_at, model, cost, day
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
        utc_day = record.at.astimezone(UTC).date().isoformat()
        day = record.day.isoformat() if record.day is not None else utc_day
        group_day = utc_day if record.group_id is not None else None
        params = (record.user_id, record.group_id, record.kind, record.tokens_in, record.tokens_out,
                  float(record.amount), day, self._d.moment_param(record.at), record.model,
                  float(record.cost), group_day)  # fmt: skip
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

    async def spent(self, who: str, day: date, *, group: bool = False) -> tuple[Spent, Spent]:
        if group:
            sql = _SPENT.format(who="group_id", day="group_day")
        else:
            sql = _SPENT.format(who="user_id", day="day")
        first, last = month_of(day)
        params = (day.isoformat(), day.isoformat(), who, first.isoformat(), last.isoformat())
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(sql), params)
        r = rows[0]
        return (
            Spent(int(r["day_tokens"]), float(r["day_cost"])),
            Spent(int(r["month_tokens"]), float(r["month_cost"])),
        )

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
                r["model"],
                float(r["cost"]),
                date.fromisoformat(r["day"]),
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
        totals["cost"] = totals.get("cost", 0.0) + float(r["cost"])
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
