"""Where a test's store lives, for tests that also read the database another way (its catalog,
its raw files): a SQLite file path, or the DSN of a fresh PostgreSQL database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.core.store import Store
from bot.store.sqlite.store import SqliteStore


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file (`….db`), or a fresh PostgreSQL database (its DSN)."""
    if request.param == "sqlite":
        return str(tmp_path / "kindred.db")
    from tests.support.pg import fresh_database

    return asyncio.run(fresh_database(request.getfixturevalue("pg_server")))


def place_url(place: str) -> str:
    """The place as a DATABASE_URL, for a process that opens the store itself."""
    if place.endswith(".db"):
        return f"sqlite:///{place}"
    from tests.support.pg import as_url

    return as_url(place)


async def open_place(place: str, *, max_size: int = 2) -> Store:
    if place.endswith(".db"):
        return await SqliteStore.open(Path(place))
    from bot.store.postgres.store import PostgresStore

    return await PostgresStore.open(place, max_size=max_size)


async def every_row(place: str) -> dict[str, list[str]]:
    """Every row of every table the catalog lists, each as text (SQLite: its values joined, blobs
    decoded leniently, so a word inside the full-text index's segments shows), by table name."""
    if place.endswith(".db"):
        return _sqlite_rows(Path(place))
    import psycopg
    from psycopg import sql

    found: dict[str, list[str]] = {}
    async with await psycopg.AsyncConnection.connect(place, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
        for (name,) in await cursor.fetchall():
            query = sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(name))
            found[name] = [row[0] for row in await (await conn.execute(query)).fetchall()]
    return found


def _sqlite_rows(path: Path) -> dict[str, list[str]]:
    import sqlite3

    found: dict[str, list[str]] = {}
    with sqlite3.connect(path) as conn:
        names = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            quoted = '"' + name.replace('"', '""') + '"'
            found[name] = [" | ".join(_text(value) for value in row)
                           for row in conn.execute(f"SELECT * FROM {quoted}")]  # fmt: skip
    return found


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
