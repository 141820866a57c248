"""The zero-setup store: one SQLite file, FTS5 for words, exact cosine search for meaning.

`SqliteStore` composes six roles that share one connection (`sqlite_db.SqliteDatabase`), one per
Protocol of the rooms' `ports.py`: TurnLog (`sqlite_turns`), MemoryIndex (`sqlite_memories`),
MemoryCuration (`sqlite_curation`), RewardLog (`sqlite_reward`), LearningLog (`sqlite_learning`) and
AdapterRegistry (`sqlite_registry`). This module opens the file and
answers what belongs to the whole database: migrations, stats, daily activity and upkeep.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from bot.core.models import DayStats, Stats
from bot.store.roles import StoreRoles
from bot.store.sql import statements
from bot.store.sql.chat_choices import SqlChatChoices
from bot.store.sql.deliveries import SqlDeliveries
from bot.store.sql.proactive import SqlProactive
from bot.store.sql.rows import activity_window, day_stats, to_epoch
from bot.store.sql.trials import SqlTrials
from bot.store.sql.usage import SqlUsage
from bot.store.sqlite.curation import SqliteCuration
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.learning import SqliteLearning
from bot.store.sqlite.memories import SqliteMemories
from bot.store.sqlite.miniapps import SqliteRunner, sqlite_apps
from bot.store.sqlite.registry import SqliteRegistry
from bot.store.sqlite.reward import SqliteRewards
from bot.store.sqlite.turns import SqliteTurns

# (kind, UTC day, n, extra) per day since the bound time; see rows.day_stats.
_ACTIVITY_SQL = """
SELECT 't' AS kind, date(created_at, 'unixepoch') AS day, count(*) AS n,
       count(DISTINCT CASE WHEN role = 'user' THEN user_id END) AS extra
  FROM turns WHERE created_at >= ? GROUP BY 2
UNION ALL
SELECT 'm', date(created_at, 'unixepoch'), count(*), NULL
  FROM memories WHERE created_at >= ? GROUP BY 2
UNION ALL
SELECT 'f', date(created_at, 'unixepoch'), count(*), avg(value)
  FROM feedback WHERE created_at >= ? GROUP BY 2
"""


# float32 vectors: 4 bytes a component (rows.py).
_EMBEDDER_SQL = (
    "SELECT embedding_model AS model, length(embedding) / 4 AS dim FROM memories ORDER BY id DESC LIMIT 1"
)


class SqliteStore(StoreRoles):
    """Kindred's Store on one SQLite file. Build it with `await SqliteStore.open(path)`."""

    backend = "sqlite"

    def __init__(self, db: SqliteDatabase, dim: int) -> None:
        super().__init__(
            SqliteTurns(db),
            SqliteMemories(db, dim),
            SqliteCuration(db),
            SqliteRewards(db),
            SqliteLearning(db),
            SqliteRegistry(db),
        )
        self._db = db
        self.vector_dim = dim
        self.miniapps = sqlite_apps(db)
        self.proactive = SqlProactive(SqliteRunner(db))
        self.deliveries = SqlDeliveries(SqliteRunner(db))
        self.usage = SqlUsage(SqliteRunner(db))
        self.personas = SqlChatChoices(SqliteRunner(db), "persona")
        self.models = SqlChatChoices(SqliteRunner(db), "model")
        self.trials = SqlTrials(SqliteRunner(db))

    @classmethod
    async def open(
        cls, path: Path, *, busy_timeout_ms: int = 5000, dim: int = 384, migrate: bool = True
    ) -> Self:
        """Open (or create) the file, in WAL mode, and apply pending migrations unless told not to.

        Raises StoreUnavailable for a file that cannot be opened, is read-only or is locked.
        """
        db = await SqliteDatabase.open(path, busy_timeout_ms=busy_timeout_ms, migrate=migrate)
        return cls(db, dim)

    async def migrate(self) -> list[int]:
        """Apply pending migrations, each in its own transaction. Returns the versions applied."""
        return await self._db.migrate()

    async def applied_versions(self) -> list[int]:
        return await self._db.applied_versions()

    async def memories_embedder(self) -> tuple[str, int] | None:
        """The model and size of the newest memory's vector (every memory records its embedder);
        None while there is no memory."""
        rows = await self._db.read(_EMBEDDER_SQL)
        return (str(rows[0]["model"]), int(rows[0]["dim"])) if rows else None

    async def stats(self) -> Stats:
        rows = await self._db.read(statements.STATS)
        row = rows[0]
        return Stats(self.backend, row["users"], row["turns"], row["memories"], row["feedback"])

    async def daily_activity(self, days: int) -> list[DayStats]:
        window = activity_window(days)
        if not window:
            return []
        since = to_epoch(datetime.combine(window[0], datetime.min.time(), UTC))
        return day_stats(window, await self._db.read(_ACTIVITY_SQL, (since, since, since)))

    async def maintain(self) -> list[str]:
        return await self._db.maintain()

    async def close(self) -> None:
        await self._db.close()
