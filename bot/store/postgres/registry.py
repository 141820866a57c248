"""AdapterRegistry on PostgreSQL: adapter versions and training runs.

Many processes write at once here (the bot, workers, the CLI). A promotion and a run's start each
take a transaction-scoped advisory lock first, so that concurrent callers take turns instead of
meeting the partial unique indexes of schema 0008 (one serving version per scope, one running run)
as errors; the indexes still hold against any writer that skips the lock.
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
from bot.store.postgres.pool import Connection, PostgresPool
from bot.store.postgres.rows import POSTGRES, jsonb, to_utc
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

# Advisory lock keys: (class, key). Any fixed int4 pair that no other Kindred lock uses.
_REGISTRY_LOCK = 0x4B4C5247  # "KLRG"
_SCOPE_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))"
_RUNS_LOCK_SQL = "SELECT pg_advisory_xact_lock(%s::int4, 0)"
_LOG_STEP_SQL = """
UPDATE training_runs SET steps = steps || jsonb_build_array(%s::jsonb), heartbeat_at = %s
WHERE id = %s AND status = 'running'
"""
_ADD_SQL = POSTGRES.sql(statements.ADD_ADAPTER)
_GET_SQL = POSTGRES.sql(statements.GET_ADAPTER)
_LIST_SQL = POSTGRES.sql(statements.LIST_ADAPTERS)
_SERVING_SQL = POSTGRES.sql(statements.SERVING_ADAPTER)
_SET_STATUS_SQL = POSTGRES.sql(statements.SET_ADAPTER_STATUS)
_RETIRE_SQL = POSTGRES.sql(statements.RETIRE_SERVING)
_SERVE_SQL = POSTGRES.sql(statements.SERVE_ADAPTER)
_FAIL_SAME_JOB_SQL = POSTGRES.sql(statements.FAIL_SAME_JOB)
_FAIL_STALE_SQL = POSTGRES.sql(statements.FAIL_STALE)
_START_SQL = POSTGRES.sql(statements.START_RUN)
_FINISH_SQL = POSTGRES.sql(statements.FINISH_RUN)
_GET_RUN_SQL = POSTGRES.sql(statements.GET_RUN)
_LIST_RUNS_SQL = POSTGRES.sql(statements.LIST_RUNS)


class PostgresRegistry:
    """AdapterRegistry over the pool."""

    def __init__(self, pool: PostgresPool) -> None:
        self._pool = pool

    async def add_adapter(self, adapter: NewAdapter) -> AdapterRecord:
        check_new_adapter(adapter)
        params = statements.adapter_params(adapter, datetime.now(UTC), POSTGRES)
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_ADD_SQL, params)).fetchone()
        assert row is not None  # RETURNING of a plain insert
        return adapter_from_row(row, POSTGRES)

    async def get_adapter(self, version: int) -> AdapterRecord | None:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_GET_SQL, (version,))).fetchone()
        return adapter_from_row(row, POSTGRES) if row else None

    async def list_adapters(self, scope: str = GLOBAL_SCOPE) -> list[AdapterRecord]:
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(_LIST_SQL, (scope,))).fetchall()
        return [adapter_from_row(row, POSTGRES) for row in rows]

    async def serving_adapter(self, scope: str = GLOBAL_SCOPE) -> AdapterRecord | None:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_SERVING_SQL, (scope,))).fetchone()
        return adapter_from_row(row, POSTGRES) if row else None

    async def set_adapter_status(
        self, version: int, status: AdapterStatus, *, gate: JSONObject | None = None
    ) -> bool:
        check_status_change(status)
        report = None if gate is None else jsonb(gate)
        async with self._pool.connection() as conn:
            cursor = await conn.execute(_SET_STATUS_SQL, (status, report, version))
            return cursor.rowcount > 0

    async def promote_adapter(self, version: int, at: datetime) -> AdapterRecord | None:
        async with self._pool.connection() as conn, conn.transaction():
            target = check_promotable(version, await _adapter(conn, version))
            await conn.execute(_SCOPE_LOCK_SQL, (_REGISTRY_LOCK, target.scope))
            # Read again under the lock: a concurrent call may have changed it meanwhile.
            target = check_promotable(version, await _adapter(conn, version))
            if target.status == "serving":
                return None  # promoting what serves changes nothing
            retired = await (await conn.execute(_RETIRE_SQL, (target.scope,))).fetchone()
            await conn.execute(_SERVE_SQL, (to_utc(at), version))
        return adapter_from_row(retired, POSTGRES) if retired else None

    async def serve_base(self, scope: str, at: datetime) -> AdapterRecord | None:
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(_SCOPE_LOCK_SQL, (_REGISTRY_LOCK, scope))
            retired = await (await conn.execute(_RETIRE_SQL, (scope,))).fetchone()
        return adapter_from_row(retired, POSTGRES) if retired else None

    async def start_run(self, job_key: str, at: datetime, stale_after: timedelta) -> TrainingRun | None:
        now = to_utc(at)
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute(_RUNS_LOCK_SQL, (_REGISTRY_LOCK,))
            await conn.execute(_FAIL_SAME_JOB_SQL, (now, redelivered_message(job_key), job_key))
            await conn.execute(_FAIL_STALE_SQL, (now, stale_message(stale_after), now - stale_after))
            row = await (await conn.execute(_START_SQL, (job_key, now, now))).fetchone()
        return run_from_row(row, POSTGRES) if row else None

    async def log_run_step(self, run_id: int, step: JSONObject, at: datetime) -> None:
        async with self._pool.connection() as conn:
            await conn.execute(_LOG_STEP_SQL, (jsonb(step), to_utc(at), run_id))

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
        now = to_utc(at)
        report = None if result is None else jsonb(result)
        async with self._pool.connection() as conn:
            await conn.execute(_FINISH_SQL, (status, message, now, now, adapter_version, report, run_id))

    async def get_run(self, run_id: int) -> TrainingRun | None:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_GET_RUN_SQL, (run_id,))).fetchone()
        return run_from_row(row, POSTGRES) if row else None

    async def list_runs(self, limit: int) -> list[TrainingRun]:
        if limit <= 0:
            return []
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(_LIST_RUNS_SQL, (limit,))).fetchall()
        return [run_from_row(row, POSTGRES) for row in rows]


async def _adapter(conn: Connection, version: int) -> AdapterRecord | None:
    row = await (await conn.execute(_GET_SQL, (version,))).fetchone()
    return adapter_from_row(row, POSTGRES) if row else None
