"""The soak's store read from outside the bot, as the checks read it: PostgreSQL through psycopg,
or the one SQLite file (a place ending in `.db`, as tests/support/places.py names them) through
the standard library's sqlite3. Each query is written once, with psycopg's `%s` placeholders; for
SQLite they become `?`. Nothing here writes."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any

import psycopg

BUSY_S = 30.0  # the bot, the worker and beat write the same file meanwhile


def is_sqlite(place: str) -> bool:
    return place.endswith(".db")


async def fetch(place: str, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
    """Every row of one query, from PostgreSQL (a DSN) or the SQLite file (a path)."""
    if is_sqlite(place):
        return await asyncio.to_thread(_sqlite_rows, place, query.replace("%s", "?"), params)
    async with await psycopg.AsyncConnection.connect(place, autocommit=True) as conn:
        return list(await (await conn.execute(query, params)).fetchall())


def _sqlite_rows(path: str, query: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path, timeout=BUSY_S)) as db:
        return db.execute(query, tuple(params)).fetchall()
