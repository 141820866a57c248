"""The Store on PostgreSQL with pgvector.

`PostgresStore` composes six roles that share one connection pool (`pg_pool.PostgresPool`), one
per Protocol of the rooms' `ports.py`: TurnLog (`pg_turns`), MemoryIndex (`pg_memories`, queries in
`pg_search`), MemoryCuration (`pg_curation`), RewardLog (`pg_reward`), LearningLog (`pg_learning`)
and AdapterRegistry (`pg_registry`). This module opens the pool and answers what belongs to the
whole database: migrations, stats, daily activity and upkeep.
"""

from __future__ import annotations

from typing import Self

from bot.core.models import DayStats, MemoryHit, Stats, Vector
from bot.store.postgres import search
from bot.store.postgres.curation import PostgresCuration
from bot.store.postgres.learning import PostgresLearning
from bot.store.postgres.memories import PostgresMemories
from bot.store.postgres.miniapps import PostgresRunner, pg_apps
from bot.store.postgres.pool import DEFAULT_TIMEOUT_S, PostgresPool, schema_versions
from bot.store.postgres.registry import PostgresRegistry
from bot.store.postgres.reward import PostgresRewards
from bot.store.postgres.rows import POSTGRES
from bot.store.postgres.turns import PostgresTurns
from bot.store.roles import StoreRoles
from bot.store.sql import statements
from bot.store.sql.chat_choices import SqlChatChoices
from bot.store.sql.deliveries import SqlDeliveries
from bot.store.sql.proactive import SqlProactive
from bot.store.sql.rows import activity_window, day_stats
from bot.store.sql.trials import SqlTrials
from bot.store.sql.usage import SqlUsage

__all__ = ["DEFAULT_TIMEOUT_S", "PostgresStore", "schema_versions"]

_STATS_SQL = POSTGRES.sql(statements.STATS)
# (kind, UTC day, n, extra) per day since %(since)s; see rows.day_stats.
_ACTIVITY_SQL = """
SELECT 't' AS kind, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
       count(DISTINCT user_id) FILTER (WHERE role = 'user') AS extra
  FROM turns WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
UNION ALL
SELECT 'm', (created_at AT TIME ZONE 'UTC')::date, count(*), NULL
  FROM memories WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
UNION ALL
SELECT 'f', (created_at AT TIME ZONE 'UTC')::date, count(*), avg(value)
  FROM feedback WHERE created_at >= (%(since)s::date)::timestamp AT TIME ZONE 'UTC' GROUP BY 2
"""
# Autovacuum analyses too, but only after enough rows changed; the HNSW and per-user plans depend
# on fresh statistics after a large import.
_MAINTENANCE = ("ANALYZE memories", "ANALYZE turns")


# The size schema/postgres/0001_initial.sql gives `memories.embedding` (vector(384)).
VECTOR_DIM = 384
_EMBEDDER_SQL = (
    "SELECT embedding_model AS model, vector_dims(embedding) AS dim FROM memories ORDER BY id DESC LIMIT 1"
)


class PostgresStore(StoreRoles):
    """Kindred's Store on PostgreSQL ≥ 13 with pgvector ≥ 0.8. Build it with `await open(dsn)`."""

    backend = "postgres"

    def __init__(self, pool: PostgresPool, *, exact_scan_max: int) -> None:
        memories = PostgresMemories(pool, exact_scan_max)
        super().__init__(
            PostgresTurns(pool),
            memories,
            PostgresCuration(pool),
            PostgresRewards(pool),
            PostgresLearning(pool),
            PostgresRegistry(pool),
        )
        self._pool = pool
        self.vector_dim = VECTOR_DIM
        self.miniapps = pg_apps(pool)
        self.proactive = SqlProactive(PostgresRunner(pool))
        self.deliveries = SqlDeliveries(PostgresRunner(pool))
        self.usage = SqlUsage(PostgresRunner(pool))
        self.personas = SqlChatChoices(PostgresRunner(pool), "persona")
        self.models = SqlChatChoices(PostgresRunner(pool), "model")
        self.trials = SqlTrials(PostgresRunner(pool))
        self._search = memories  # typed as itself: it has the two dense paths the Protocol lacks

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        migrate: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        exact_scan_max: int = search.EXACT_SCAN_MAX,
    ) -> Self:
        """Connect, apply pending migrations unless `migrate=False`, and fill the pool.

        `timeout_s` bounds each wait for a connection. Raises StoreUnavailable if the server cannot
        be reached within it.
        """
        pool = await PostgresPool.open(
            dsn, min_size=min_size, max_size=max_size, migrate=migrate, timeout_s=timeout_s
        )
        return cls(pool, exact_scan_max=exact_scan_max)

    async def migrate(self) -> list[int]:
        """Apply pending migrations, each in its own transaction; return the versions applied."""
        return await self._pool.migrate()

    async def applied_versions(self) -> list[int]:
        return await self._pool.applied_versions()

    async def dense_search_exact(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the exact scan: the ground truth a benchmark measures the index against."""
        return await self._search.dense_search_exact(user_id, vector, k)

    async def dense_search_index(self, user_id: str, vector: Vector, k: int) -> list[MemoryHit]:
        """Always the HNSW path with iterative scan, whatever the person's memory count."""
        return await self._search.dense_search_index(user_id, vector, k)

    async def memories_embedder(self) -> tuple[str, int] | None:
        """The model and size of the newest memory's vector (every memory records its embedder);
        None while there is no memory."""
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_EMBEDDER_SQL)).fetchone()
        return (str(row["model"]), int(row["dim"])) if row else None

    async def stats(self) -> Stats:
        async with self._pool.connection() as conn:
            row = await (await conn.execute(_STATS_SQL)).fetchone()
        if row is None:
            return Stats(self.backend, 0, 0, 0, 0)
        return Stats(self.backend, row["users"], row["turns"], row["memories"], row["feedback"])

    async def daily_activity(self, days: int) -> list[DayStats]:
        window = activity_window(days)
        if not window:
            return []
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(_ACTIVITY_SQL, {"since": window[0]})).fetchall()
        return day_stats(window, rows)

    async def maintain(self) -> list[str]:
        async with self._pool.connection() as conn:
            for statement in _MAINTENANCE:
                await conn.execute(statement)
        return list(_MAINTENANCE)

    async def close(self) -> None:
        await self._pool.close()
