"""Where bench/soak.py keeps the store (`--store`), made ready before any process opens it.

- `postgres`: a fresh database on a PostgreSQL + pgvector server (the embedded one unless one is
  named), dropped afterwards.
- `sqlite`: one SQLite file on a size-limited tmpfs of the soak's own (bench/parts/soak/disk.py),
  which every bot replica, the Celery worker and beat open through the same DATABASE_URL, as one
  host's deployment would; unmounted afterwards.

`place` is what the checks read (bench/parts/soak/rows.py): the database's DSN, or the file's path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.parts.common import fresh_database, postgres_server
from bench.parts.soak.disk import tmpfs
from bench.parts.soak.rows import is_sqlite
from tests.support.pg import as_url

if TYPE_CHECKING:
    from bot.store.postgres.store import PostgresStore
    from bot.store.sqlite.store import SqliteStore

STORES = ("postgres", "sqlite")
# The faults that only one store has.
ONLY_ON = {"postgres_terminate": "postgres", "sqlite_disk_full": "sqlite"}


@dataclass(frozen=True, slots=True)
class Place:
    place: str  # a DSN, or the SQLite file's path
    url: str  # the DATABASE_URL every process gets
    label: str  # for the report
    sqlite: Path | None = None

    @property
    def dsn(self) -> str | None:
        """PostgreSQL's DSN, for what only a server has (its sessions, counted); None on SQLite."""
        return None if self.sqlite else self.place


@asynccontextmanager
async def soak_store(
    store: str, folder: Path, *, database_url: str | None, disk_mb: int
) -> AsyncIterator[Place]:
    if store == "sqlite":
        with tmpfs(folder / "disk", disk_mb) as disk:
            path = disk / "kindred.db"
            await migrate_sqlite(path)
            yield Place(str(path), f"sqlite:///{path}", f"SQLite (WAL) on a {disk_mb} MiB tmpfs, one file"
                        " for every bot replica, the worker and beat", sqlite=path)  # fmt: skip
        return
    async with postgres_server(database_url) as server, fresh_database(server) as dsn:
        await migrate_postgres(dsn)
        yield Place(dsn, as_url(dsn), "PostgreSQL + pgvector (embedded server, fsync on)")


async def open_at(place: str) -> SqliteStore | PostgresStore:
    """The soak's store opened from outside the bot (as a check reads it), without migrating."""
    from bot.store.postgres.store import PostgresStore
    from bot.store.sqlite.store import SqliteStore

    if is_sqlite(place):
        return await SqliteStore.open(Path(place), migrate=False)
    return await PostgresStore.open(place, min_size=1, max_size=1, migrate=False)


def for_store(names: Iterable[str], store: str) -> list[str]:
    """The faults of `names` this store has."""
    return [name for name in names if ONLY_ON.get(name, store) == store]


def elsewhere(names: Iterable[str], store: str) -> str:
    """What is wrong with asking for `names` on this store, or ""."""
    wrong = [f"{name} needs --store {ONLY_ON[name]}" for name in names if not for_store([name], store)]
    return f"with --store {store}: {'; '.join(wrong)}" if wrong else ""


async def migrate_postgres(dsn: str) -> None:
    """Once, before the bot and the worker open the store at the same moment."""
    from bot.store.postgres.store import PostgresStore

    await (await PostgresStore.open(dsn, min_size=1, max_size=1)).close()


async def migrate_sqlite(path: Path) -> None:
    from bot.store.sqlite.store import SqliteStore

    await (await SqliteStore.open(path)).close()
