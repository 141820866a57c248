"""The Trials role ([canary]: reward models and canaries) on either database: one implementation over
the SQL both dialects share, on the mini-apps' runners (statements in one transaction, rows by
column name).

A canary's decision and what it serves change in one transaction (`decide_canary`): a worker killed
between them would otherwise leave a variant half-served. The unique indexes of 0012_canary.sql keep
one canary running and one reward model serving whatever callers race to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bot.core.errors import InvalidInput
from bot.core.learning.models import (
    GLOBAL_SCOPE,
    Canary,
    CanaryEntry,
    CanaryStatus,
    NewCanary,
    NewRewardModel,
    RewardModelRecord,
    RewardModelStatus,
    TrialReply,
    Variant,
    VariantStats,
)
from bot.core.models import JSONObject
from bot.store.sql.miniapps import Runner, Transaction
from bot.store.sql.rows import NamedRow

_RM_COLUMNS = "version, embedder, status, model, report, run_id, created_at, promoted_at"
_ADD_RM = f"""
INSERT INTO reward_models (embedder, status, model, report, run_id, created_at)
VALUES (?, ?, ?, ?, ?, ?) RETURNING {_RM_COLUMNS}
"""
_GET_RM = f"SELECT {_RM_COLUMNS} FROM reward_models WHERE version = ?"
_SERVING_RM = f"SELECT {_RM_COLUMNS} FROM reward_models WHERE status = 'serving'"
_LIST_RM = f"SELECT {_RM_COLUMNS} FROM reward_models ORDER BY version DESC LIMIT ?"
_SET_RM = "UPDATE reward_models SET status = ? WHERE version = ? RETURNING version"
_RETIRE_RM = "UPDATE reward_models SET status = 'retired' WHERE status = 'serving'"
_SERVE_RM = (
    "UPDATE reward_models SET status = 'serving', promoted_at = ? WHERE version = ? AND status <> 'failed'"
)
_FAIL_RM = "UPDATE reward_models SET status = 'failed' WHERE version = ? AND status = 'candidate'"

_CANARY_COLUMNS = (
    "id, status, base_model, adapter_version, reward_model_version, n, serving_adapter_version, "
    "serving_reward_model, serving_n, share, seed, policy, test, history, reason, run_id, started_at, "
    "decided_at"
)
_START = f"""
INSERT INTO canaries (status, base_model, adapter_version, reward_model_version, n, serving_adapter_version,
                      serving_reward_model, serving_n, share, seed, policy, run_id, started_at)
VALUES ('running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING RETURNING {_CANARY_COLUMNS}
"""
_RUNNING = f"SELECT {_CANARY_COLUMNS} FROM canaries WHERE status = 'running'"
_GET_CANARY = f"SELECT {_CANARY_COLUMNS} FROM canaries WHERE id = ?"
_LIST_CANARIES = f"SELECT {_CANARY_COLUMNS} FROM canaries ORDER BY id DESC LIMIT ?"
_PENDING = """
SELECT t.id, t.user_id, t.created_at, g.arm, g.adapter_version, g.reward_model_version, g.n
FROM generations g JOIN turns t ON t.id = g.turn_id
WHERE g.canary_id = ? AND t.created_at < ?
  AND NOT EXISTS (SELECT 1 FROM canary_entries e WHERE e.canary_id = g.canary_id AND e.turn_id = t.id)
ORDER BY t.created_at, t.id LIMIT ?
"""
_COUNTED = """
SELECT count(*) AS n FROM canary_entries
WHERE canary_id = ? AND user_id = ? AND arm = ? AND day = ? AND counted = ?
"""
_PEOPLE = """
SELECT arm, count(DISTINCT user_id) AS people FROM canary_entries WHERE canary_id = ? AND counted = ?
GROUP BY arm
"""
_ENTER = """
INSERT INTO canary_entries (canary_id, turn_id, arm, user_id, day, reward, counted, note, entered_at)
SELECT ?, t.id, ?, ?, ?, ?, ?, ?, ? FROM turns t WHERE t.id = ?
ON CONFLICT DO NOTHING
"""
# Compare and set: a pass writes its test only over the state it started from, so two passes at
# once cannot both count their entries (the row lock makes the second see the first's state).
_SAVE_TEST = """
UPDATE canaries SET test = ? WHERE id = ? AND status = 'running' AND test = ? RETURNING history
"""
_SAVE_HISTORY = "UPDATE canaries SET history = ? WHERE id = ?"
_ENTRIES = """
SELECT turn_id, arm, user_id, day, reward, counted, note FROM canary_entries
WHERE canary_id = ? ORDER BY turn_id
"""
_DECIDE = f"""
UPDATE canaries SET status = ?, reason = ?, decided_at = ? WHERE id = ? AND status = 'running'
RETURNING {_CANARY_COLUMNS}
"""
_RETIRE_ADAPTER = "UPDATE adapters SET status = 'retired' WHERE scope = ? AND status = 'serving'"
_SERVE_ADAPTER = (
    "UPDATE adapters SET status = 'serving', promoted_at = ? WHERE version = ? AND status <> 'failed'"
)
_FAIL_ADAPTER = "UPDATE adapters SET status = 'failed' WHERE version = ? AND status = 'candidate'"
# Per variant, base model and arm. r: the reply's mean current reaction (0 with none) plus α per
# tool use and γ per proactive success.
_VARIANT_STATS = """
SELECT adapter_version, reward_model_version, n, base_model, arm, count(*) AS replies,
       count(mean) AS rated, sum(CASE WHEN mean > 0 THEN 1 ELSE 0 END) AS positive,
       sum(CASE WHEN mean < 0 THEN 1 ELSE 0 END) AS negative, sum(r) AS r_sum, sum(r * r) AS r_squares
FROM (
    SELECT g.adapter_version, g.reward_model_version, g.n, g.base_model, g.arm, mean,
           COALESCE(mean, 0) + ? * tools + ? * successes AS r
    FROM (
        SELECT g.turn_id,
               (SELECT avg(f.value) FROM feedback f WHERE f.turn_id = g.turn_id) AS mean,
               (SELECT count(*) FROM reply_signals s
                WHERE s.turn_id = g.turn_id AND s.signal = 'tool_use') AS tools,
               (SELECT count(*) FROM reply_signals s
                WHERE s.turn_id = g.turn_id AND s.signal = 'proactive_success') AS successes
        FROM generations g JOIN turns t ON t.id = g.turn_id WHERE t.created_at >= ?
    ) per_reply JOIN generations g ON g.turn_id = per_reply.turn_id
) rows
GROUP BY adapter_version, reward_model_version, n, base_model, arm
ORDER BY adapter_version IS NOT NULL, adapter_version, reward_model_version IS NOT NULL,
         reward_model_version, n, base_model, arm
"""


class SqlTrials:
    """Trials over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[NamedRow]:
        async with self._runner.transaction() as run:
            return await run(self._d.sql(sql), params)

    # -- reward models ------------------------------------------------------------------------

    async def add_reward_model(self, new: NewRewardModel, at: datetime) -> RewardModelRecord:
        if new.status not in ("candidate", "failed"):
            raise InvalidInput(f"a new reward model is a candidate or failed, not {new.status!r}")
        json = self._d.json_param
        params = (
            new.embedder,
            new.status,
            json(new.model),
            json(new.report),
            new.run_id,
            self._d.moment_param(at),
        )
        return self._reward_model(await self._rows(_ADD_RM, params))

    async def get_reward_model(self, version: int) -> RewardModelRecord | None:
        rows = await self._rows(_GET_RM, (version,))
        return self._reward_model(rows) if rows else None

    async def serving_reward_model(self) -> RewardModelRecord | None:
        rows = await self._rows(_SERVING_RM, ())
        return self._reward_model(rows) if rows else None

    async def list_reward_models(self, limit: int) -> list[RewardModelRecord]:
        return [self._reward_model([row]) for row in await self._rows(_LIST_RM, (limit,))]

    async def set_reward_model_status(self, version: int, status: RewardModelStatus) -> bool:
        if status == "serving":
            raise InvalidInput("a reward model serves through a canary's promotion")
        return bool(await self._rows(_SET_RM, (status, version)))

    def _reward_model(self, rows: list[NamedRow]) -> RewardModelRecord:
        row, d = rows[0], self._d
        return RewardModelRecord(
            version=int(row["version"]),
            embedder=row["embedder"],
            status=row["status"],
            model=d.json_object(row["model"]),
            report=d.json_object(row["report"]),
            created_at=d.moment(row["created_at"]),
            run_id=row["run_id"],
            promoted_at=None if row["promoted_at"] is None else d.moment(row["promoted_at"]),
        )

    # -- canaries -----------------------------------------------------------------------------

    async def start_canary(self, new: NewCanary, at: datetime) -> Canary | None:
        if not 0.0 < new.share < 1.0:
            raise InvalidInput(f"a canary's share of replies is between 0 and 1, not {new.share}")
        c, s = new.candidate, new.serving
        params = (
            new.base_model, c.adapter_version, c.reward_model_version, c.n, s.adapter_version,
            s.reward_model_version, s.n, new.share, new.seed, self._d.json_param(new.policy), new.run_id,
            self._d.moment_param(at),
        )  # fmt: skip
        rows = await self._rows(_START, params)
        return self._canary(rows[0]) if rows else None

    async def running_canary(self) -> Canary | None:
        rows = await self._rows(_RUNNING, ())
        return self._canary(rows[0]) if rows else None

    async def get_canary(self, canary_id: int) -> Canary | None:
        rows = await self._rows(_GET_CANARY, (canary_id,))
        return self._canary(rows[0]) if rows else None

    async def list_canaries(self, limit: int) -> list[Canary]:
        return [self._canary(row) for row in await self._rows(_LIST_CANARIES, (limit,))]

    async def pending_replies(self, canary_id: int, written_before: datetime, limit: int) -> list[TrialReply]:
        rows = await self._rows(_PENDING, (canary_id, self._d.moment_param(written_before), limit))
        return [
            TrialReply(
                turn_id=int(row["id"]),
                user_id=row["user_id"],
                created_at=self._d.moment(row["created_at"]),
                arm="canary" if row["arm"] == "canary" else "serving",
                variant=Variant(row["adapter_version"], row["reward_model_version"], int(row["n"])),
            )
            for row in rows
        ]

    async def counted(self, canary_id: int, user_id: str, arm: str, day: str) -> int:
        rows = await self._rows(_COUNTED, (canary_id, user_id, arm, day, True))
        return int(rows[0]["n"])

    async def people(self, canary_id: int) -> dict[str, int]:
        rows = await self._rows(_PEOPLE, (canary_id, True))
        return {row["arm"]: int(row["people"]) for row in rows}

    async def enter(
        self,
        canary_id: int,
        entries: Sequence[CanaryEntry],
        test: JSONObject,
        history: Sequence[JSONObject],
        *,
        before: JSONObject,
    ) -> bool:
        now = self._d.moment_param(datetime.now(UTC))
        json = self._d.json_param
        async with self._runner.transaction() as run:
            saved = await run(self._d.sql(_SAVE_TEST), (json(test), canary_id, json(before)))
            if not saved:
                return False
            points = [*self._list(saved[0]["history"]), *history]
            await run(self._d.sql(_SAVE_HISTORY), (self._json_list(points), canary_id))
            for e in entries:
                params = (canary_id, e.arm, e.user_id, e.day, e.reward, e.counted, e.note, now, e.turn_id)
                await run(self._d.sql(_ENTER), params)
        return True

    async def entries(self, canary_id: int) -> list[CanaryEntry]:
        return [
            CanaryEntry(
                turn_id=int(row["turn_id"]),
                arm="canary" if row["arm"] == "canary" else "serving",
                user_id=row["user_id"],
                day=row["day"],
                reward=float(row["reward"]),
                counted=bool(row["counted"]),
                note=row["note"],
            )
            for row in await self._rows(_ENTRIES, (canary_id,))
        ]

    async def decide_canary(
        self, canary_id: int, status: CanaryStatus, reason: str, at: datetime, *, scope: str = GLOBAL_SCOPE
    ) -> Canary | None:
        if status == "running":
            raise InvalidInput("a canary is decided as promoted, harm, expired or stopped, not running")
        moment = self._d.moment_param(at)
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(_DECIDE), (status, reason, moment, canary_id))
            if not rows:
                return None
            decided = self._canary(rows[0])
            await _apply(run, self._d.sql, decided, status, moment, scope)
        return decided

    async def variant_stats(self, since: datetime, alpha: float, gamma: float) -> list[VariantStats]:
        rows = await self._rows(_VARIANT_STATS, (alpha, gamma, self._d.moment_param(since)))
        return [
            VariantStats(
                variant=Variant(row["adapter_version"], row["reward_model_version"], int(row["n"])),
                base_model=row["base_model"],
                arm="canary" if row["arm"] == "canary" else "serving",
                replies=int(row["replies"]),
                rated=int(row["rated"]),
                positive=int(row["positive"] or 0),
                negative=int(row["negative"] or 0),
                reward_sum=float(row["r_sum"] or 0.0),
                reward_squares=float(row["r_squares"] or 0.0),
            )
            for row in rows
        ]

    def _json_list(self, items: list[Any]) -> Any:
        return self._d.json_param(items)

    def _list(self, column: Any) -> list[Any]:
        """A JSON array column (TEXT on SQLite, JSONB on PostgreSQL) as a list."""
        value: Any = self._d.json_object(column)
        return list(value or [])

    def _canary(self, row: NamedRow) -> Canary:
        d = self._d
        return Canary(
            id=int(row["id"]),
            status=row["status"],
            base_model=row["base_model"],
            candidate=Variant(row["adapter_version"], row["reward_model_version"], int(row["n"])),
            serving=Variant(
                row["serving_adapter_version"], row["serving_reward_model"], int(row["serving_n"])
            ),
            share=float(row["share"]),
            seed=int(row["seed"]),
            policy=d.json_object(row["policy"]),
            test=d.json_object(row["test"]),
            history=tuple(self._list(row["history"])),
            reason=row["reason"],
            started_at=d.moment(row["started_at"]),
            decided_at=None if row["decided_at"] is None else d.moment(row["decided_at"]),
            run_id=row["run_id"],
        )


async def _apply(
    run: Transaction, sql: Any, canary: Canary, status: CanaryStatus, moment: Any, scope: str
) -> None:
    """What a decision serves, in the decision's transaction."""
    new = canary.candidate
    if status == "promoted":
        if new.adapter_version != canary.serving.adapter_version or new.adapter_version is None:
            await run(sql(_RETIRE_ADAPTER), (scope,))
            if new.adapter_version is not None:
                await run(sql(_SERVE_ADAPTER), (moment, new.adapter_version))
        if (
            new.reward_model_version != canary.serving.reward_model_version
            or new.reward_model_version is None
        ):
            await run(sql(_RETIRE_RM), ())
            if new.reward_model_version is not None:
                await run(sql(_SERVE_RM), (moment, new.reward_model_version))
    elif status == "harm":
        if new.adapter_version is not None and new.adapter_version != canary.serving.adapter_version:
            await run(sql(_FAIL_ADAPTER), (new.adapter_version,))
        if (
            new.reward_model_version is not None
            and new.reward_model_version != canary.serving.reward_model_version
        ):
            await run(sql(_FAIL_RM), (new.reward_model_version,))
