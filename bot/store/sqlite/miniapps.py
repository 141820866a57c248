"""The AppStore on SQLite: `apps_sql.SqlApps` over the store's one connection and its write lock.

The proactive store (`proactive_sql.SqlProactive`) runs on the same runner."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from bot.store.sql.miniapps import SqlApps, Transaction
from bot.store.sql.rows import Dialect, NamedRow
from bot.store.sqlite.db import SqliteDatabase
from bot.store.sqlite.rows import SQLITE


class SqliteRunner:
    dialect: Dialect = SQLITE

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        async with self._db.write() as db:
            yield _Statements(db)

    async def hold_owner(self, run: Transaction, owner: str) -> None:
        pass  # BEGIN IMMEDIATE already holds the whole database for this transaction


class _Statements:
    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def __call__(self, sql: str, params: Sequence[Any] = ()) -> list[NamedRow]:
        return list(await self._db.execute_fetchall(sql, params))


def sqlite_apps(db: SqliteDatabase) -> SqlApps:
    return SqlApps(SqliteRunner(db))
