"""AdapterRegistry on SQLite: adapter versions and training runs.

SQLite runs one writer at a time (every write here is BEGIN IMMEDIATE), so a promotion or a run's
start is a plain sequence of statements; the partial unique indexes of schema 0008 (one serving
version per scope, one running run) still hold against any other writer, another process included.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.learning.models import (
    GLOBAL_SCOPE,
    AdapterRecord,
    AdapterStatus,
    NewAdapter,
    RunStatus,
    TrainingRun,
)
from bot.core.models import JSONObject
from bot.store.sql import statements
from bot.store.sql.learning_rows import adapter_from_row, run_from_row
from bot.store.sql.registry_rules import (
    check_finish_status,
    check_new_adapter,
    check_promotable,
    check_status_change,
    redelivered_message,
    stale_message,
)
from bot.store.sql.rows import dump_json, to_epoch
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.rows import SQLITE

# A JSON step appended to the run's list, in the statement that is also its heartbeat.
_LOG_STEP_SQL = """
UPDATE training_runs SET steps = json_insert(steps, '$[#]', json(?)), heartbeat_at = ?
WHERE id = ? AND status = 'running'
"""


class SqliteRegistry:
    """AdapterRegistry over one SQLite file."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    async def add_adapter(self, adapter: NewAdapter) -> AdapterRecord:
        check_new_adapter(adapter)
        params = statements.adapter_params(adapter, datetime.now(UTC), SQLITE)
        async with self._db.write() as db:
            rows = list(await db.execute_fetchall(statements.ADD_ADAPTER, params))
        return adapter_from_row(rows[0], SQLITE)

    async def get_adapter(self, version: int) -> AdapterRecord | None:
        rows = await self._db.read(statements.GET_ADAPTER, (version,))
        return adapter_from_row(rows[0], SQLITE) if rows else None

    async def list_adapters(self, scope: str = GLOBAL_SCOPE) -> list[AdapterRecord]:
        rows = await self._db.read(statements.LIST_ADAPTERS, (scope,))
        return [adapter_from_row(row, SQLITE) for row in rows]

    async def serving_adapter(self, scope: str = GLOBAL_SCOPE) -> AdapterRecord | None:
        rows = await self._db.read(statements.SERVING_ADAPTER, (scope,))
        return adapter_from_row(rows[0], SQLITE) if rows else None

    async def set_adapter_status(
        self, version: int, status: AdapterStatus, *, gate: JSONObject | None = None
    ) -> bool:
        check_status_change(status)
        report = None if gate is None else dump_json(gate)
        async with self._db.write() as db:
            cur = await db.execute(statements.SET_ADAPTER_STATUS, (status, report, version))
            return cur.rowcount > 0

    async def promote_adapter(self, version: int, at: datetime) -> AdapterRecord | None:
        async with self._db.write() as db:
            rows = list(await db.execute_fetchall(statements.GET_ADAPTER, (version,)))
            target = check_promotable(version, adapter_from_row(rows[0], SQLITE) if rows else None)
            if target.status == "serving":
                return None  # promoting what serves changes nothing
            retired = list(await db.execute_fetchall(statements.RETIRE_SERVING, (target.scope,)))
            await db.execute(statements.SERVE_ADAPTER, (to_epoch(at), version))
        return adapter_from_row(retired[0], SQLITE) if retired else None

    async def serve_base(self, scope: str, at: datetime) -> AdapterRecord | None:
        async with self._db.write() as db:
            retired = list(await db.execute_fetchall(statements.RETIRE_SERVING, (scope,)))
        return adapter_from_row(retired[0], SQLITE) if retired else None

    async def start_run(self, job_key: str, at: datetime, stale_after: timedelta) -> TrainingRun | None:
        now = to_epoch(at)
        async with self._db.write() as db:
            await db.execute(statements.FAIL_SAME_JOB, (now, redelivered_message(job_key), job_key))
            await db.execute(
                statements.FAIL_STALE, (now, stale_message(stale_after), to_epoch(at - stale_after))
            )
            rows = list(await db.execute_fetchall(statements.START_RUN, (job_key, now, now)))
        return run_from_row(rows[0], SQLITE) if rows else None

    async def log_run_step(self, run_id: int, step: JSONObject, at: datetime) -> None:
        async with self._db.write() as db:
            await db.execute(_LOG_STEP_SQL, (dump_json(step), to_epoch(at), run_id))

    async def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        message: str,
        at: datetime,
        *,
        result: JSONObject | None = None,
        adapter_version: int | None = None,
    ) -> None:
        check_finish_status(status)
        now = to_epoch(at)
        report = None if result is None else dump_json(result)
        async with self._db.write() as db:
            await db.execute(
                statements.FINISH_RUN, (status, message, now, now, adapter_version, report, run_id)
            )

    async def get_run(self, run_id: int) -> TrainingRun | None:
        rows = await self._db.read(statements.GET_RUN, (run_id,))
        return run_from_row(rows[0], SQLITE) if rows else None

    async def list_runs(self, limit: int) -> list[TrainingRun]:
        if limit <= 0:
            return []
        rows = await self._db.read(statements.LIST_RUNS, (limit,))
        return [run_from_row(row, SQLITE) for row in rows]
