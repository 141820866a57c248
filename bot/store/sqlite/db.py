"""The SQLite store's connection: opening the file, WAL, migrations, one lock, and error mapping.

Every role of the store (sqlite_turns, sqlite_memories, sqlite_curation, sqlite_reward) shares one
`SqliteDatabase` and goes through its `read` and `write`. Rows come back as `sqlite3.Row`, read by
column name.

SQLite errors become Kindred's errors here and nowhere else: a file that is read-only, locked,
cannot be opened or sits on a full disk is `StoreUnavailable`, anything else `StoreError`.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

import aiosqlite

from bot.core.errors import StoreError, StoreUnavailable
from bot.store import migrations

_UNAVAILABLE_HINTS = ("locked", "readonly", "read-only", "unable to open", "disk i/o", "busy")


def map_error(exc: sqlite3.Error, path: Path) -> StoreError:
    message = str(exc)
    if _full(exc):
        # A full disk empties again (logs rotated, space freed): callers keep the write and retry.
        # The transaction was rolled back whole, so nothing of it is stored (tests/store).
        return StoreUnavailable(f"SQLite database {path} cannot grow: the disk is full ({message})")
    if _read_only(path):
        return StoreUnavailable(f"SQLite database {path} is read-only ({message})")
    if isinstance(exc, sqlite3.OperationalError) and any(
        hint in message.lower() for hint in _UNAVAILABLE_HINTS
    ):
        return StoreUnavailable(f"SQLite database {path} is unavailable: {message}")
    return StoreError(f"SQLite database {path}: {message}")


def _full(exc: sqlite3.Error) -> bool:
    """SQLITE_FULL: the disk is full (ENOSPC), or the file reached its max_page_count."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == sqlite3.SQLITE_FULL


def _read_only(path: Path) -> bool:
    """True when the file, or the folder its journal lives in, cannot be written (EROFS too)."""
    target = path if path.exists() else path.parent
    return target.exists() and not (os.access(target, os.W_OK) and os.access(path.parent, os.W_OK))


class SqliteDatabase:
    """One aiosqlite connection shared by every task, with `write` and `read` to use it safely."""

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db = db
        self._path = path
        # One connection serves every task: a transaction must not interleave with another task's
        # statements (SQLite: "cannot start a transaction within a transaction"), and a read must
        # not see another task's write half done.
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: Path, *, busy_timeout_ms: int = 5000, migrate: bool = True) -> Self:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = await aiosqlite.connect(path, timeout=busy_timeout_ms / 1000)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open SQLite database {path}: {exc}") from None
        db.row_factory = sqlite3.Row
        store = cls(db, path)
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            await db.execute("PRAGMA foreign_keys = ON")
            # What is deleted is overwritten, not just unlinked: a forgotten memory must not stay
            # readable in freed pages of the file (see checkpoint for the WAL).
            await db.execute("PRAGMA secure_delete = ON")
            # WAL lets readers (the CLI, a benchmark) run while the bot writes.
            await store._try_wal()
            if migrate:
                await store.migrate()
        except sqlite3.Error as exc:
            await db.close()
            raise map_error(exc, path) from None
        return store

    async def _try_wal(self) -> None:
        try:
            await self._db.execute("PRAGMA journal_mode = WAL")
            await self._db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.OperationalError:
            pass  # A read-only or locked file keeps its journal mode; writes will say why.

    async def applied_versions(self) -> list[int]:
        await self._db.execute(migrations.VERSION_TABLE_DDL)
        return migrations.current_versions("sqlite", await self._recorded())

    async def migrate(self) -> list[int]:
        """Apply pending migrations, each in its own transaction. Returns the versions applied."""
        try:
            recorded = await self._recorded()
        except sqlite3.OperationalError:
            recorded = []
        if migrations.renumbering("sqlite", recorded):
            recorded = await self._renumber()
        todo = migrations.pending("sqlite", {version for version, _ in recorded})
        for step in todo:
            try:
                # executescript runs the DDL inside our BEGIN; the record goes in parameterised.
                await self._db.executescript(f"BEGIN IMMEDIATE;\n{migrations.VERSION_TABLE_DDL};\n{step.sql}")
                await self._db.execute(
                    "INSERT INTO schema_version(version, name, applied_at) VALUES (?, ?, ?)",
                    (step.version, step.name, datetime.now(UTC).isoformat()),
                )
                await self._db.commit()
            except sqlite3.Error:
                if self._db.in_transaction:
                    await self._db.rollback()
                raise
        return [step.version for step in todo]

    async def _recorded(self) -> list[tuple[int, str]]:
        async with self._db.execute("SELECT version, name FROM schema_version") as cur:
            return [(row["version"], row["name"]) for row in await cur.fetchall()]

    async def _renumber(self) -> list[tuple[int, str]]:
        """Move steps recorded under the dialect's old numbers to today's (migrations.renumbering),
        and return the rows as they are then. Read again under the write lock: another process may
        have moved them since."""
        try:
            await self._db.execute("BEGIN IMMEDIATE")
            moved = migrations.renumbering("sqlite", await self._recorded())
            await self._db.executemany(
                "UPDATE schema_version SET version = ? WHERE version = ?", migrations.renumber_updates(moved)
            )
            recorded = await self._recorded()
            await self._db.commit()
            return recorded
        except sqlite3.Error:
            if self._db.in_transaction:
                await self._db.rollback()
            raise

    @asynccontextmanager
    async def write(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            try:
                await self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    await self._db.rollback()
                    raise
                await self._db.commit()
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    await self._db.rollback()
                raise map_error(exc, self._path) from None

    async def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._lock:
            try:
                # One hop to the connection's thread, not three (execute, fetch, close).
                return list(await self._db.execute_fetchall(sql, params))
            except sqlite3.Error as exc:
                raise map_error(exc, self._path) from None

    async def maintain(self) -> list[str]:
        """Refresh the planner's statistics, then fold the WAL back into the database file so that
        it does not grow without bound under a long-running bot. Returns what it ran."""
        done = ["PRAGMA optimize", "PRAGMA wal_checkpoint(TRUNCATE)"]
        async with self._lock:
            try:
                for pragma in done:
                    await self._db.execute(pragma)
            except sqlite3.Error as exc:
                raise map_error(exc, self._path) from None
        return done

    async def checkpoint(self) -> None:
        """Copy the WAL into the database file and empty it, after a forget: until then the WAL
        holds the pages as they were, forgotten words included. Best effort: a reader on another
        connection can hold the WAL back, and the next checkpoint (upkeep) empties it."""
        async with self._lock:
            try:
                await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise map_error(exc, self._path) from None

    async def close(self) -> None:
        await self._db.close()
