"""`any_store`: a core test that takes it runs once on SQLite and once on Postgres + pgvector."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.ports import Store
from bot.store.sqlite import SqliteStore


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    opened: Store
    if request.param == "sqlite":
        opened = await SqliteStore.open(tmp_path / "kindred.db")
    else:
        from bot.store.postgres import PostgresStore
        from tests.support.pg import fresh_database

        opened = await PostgresStore.open(await fresh_database(request.getfixturevalue("pg_server")))
    try:
        yield opened
    finally:
        await opened.close()
