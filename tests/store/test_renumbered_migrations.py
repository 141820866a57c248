"""One numbering for both dialects: databases that earlier Kindreds migrated under each dialect's
own numbers upgrade without running a step twice or passing one over.

tests/store/legacy_schema/ is a frozen copy of schema/ as it shipped before the numbering was
shared (SQLite's 0007 was `vector_version`, PostgreSQL's `learning`). A database is built from it
the way that Kindred's runner built one (each file, then its (version, name) row in
schema_version), given a few rows, and opened with today's code. Its schema must then equal a
fresh database's, its rows must be as they were, and only the steps it lacked may run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from bot.store import migrations
from bot.store.postgres.store import PostgresStore
from bot.store.sqlite.store import SqliteStore
from tests.support.pg import PgServer, drop_database, fresh_database

LEGACY = Path(__file__).parent / "legacy_schema"
RECORD = "INSERT INTO schema_version (version, name, applied_at) VALUES ({0}, {0}, {0})"
NOW = datetime(2026, 12, 1, tzinfo=UTC)

# Legacy version reached -> what today's code must apply: the steps the database lacks, and the
# other dialect's step that is a no-op here. 6: before the dialects' numbers parted.
LATER = [12, 13, 14, 15, 16, 17, 18, 19]
SQLITE_UPGRADES = {6: [7, 8, 9, 10, 11, *LATER], 8: [9, 10, 11, *LATER], 10: [9, *LATER]}
POSTGRES_UPGRADES = {6: [7, 8, 9, 10, 11, *LATER], 8: [7, 10, 11, *LATER], 10: [7, *LATER]}


def legacy(dialect: str, upto: int) -> list[tuple[int, str, str]]:
    found = []
    for path in sorted((LEGACY / dialect).glob("*.sql")):
        version, name = path.stem.split("_", 1)
        if int(version) <= upto:
            found.append((int(version), name, path.read_text(encoding="utf-8")))
    return found


def test_both_dialects_ship_the_same_steps_under_the_same_numbers() -> None:
    sqlite = [(m.version, m.name) for m in migrations.available("sqlite")]
    assert sqlite == [(m.version, m.name) for m in migrations.available("postgres")]
    numbers = [version for version, _ in sqlite]
    assert numbers == list(range(1, numbers[-1] + 1))


def test_a_step_recorded_under_a_name_not_shipped_keeps_its_number() -> None:
    recorded = [(7, "learning"), (12, "from_a_newer_kindred"), (1, "initial")]
    assert migrations.renumbering("postgres", recorded) == {7: 8}
    assert migrations.current_versions("postgres", recorded) == [1, 8, 12]


# SQLite ---------------------------------------------------------------------------------------


def build_sqlite(path: Path, upto: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute(migrations.VERSION_TABLE_DDL)
        for version, name, sql in legacy("sqlite", upto):
            db.executescript(f"BEGIN;\n{sql}\nCOMMIT;")
            db.execute(RECORD.format("?"), (version, name, NOW.isoformat()))
        db.execute("INSERT INTO users (id, created_at) VALUES ('ann', 1.0), ('bob', 2.0)")
        db.execute("INSERT INTO turns (user_id, chat_id, role, text, created_at) VALUES"
                   " ('ann', 'c1', 'user', 'I moved to Leeds', 3.0),"
                   " ('ann', 'c1', 'assistant', 'How is Leeds?', 4.0)")  # fmt: skip
        db.execute(
            "INSERT INTO memories (user_id, kind, text, created_at, embedding, embedding_model, user_tag,"
            " source_turn_id) VALUES ('ann', 'message', 'I moved to Leeds', 3.0, ?, 'hash', 'u_ann', 1)",
            (bytes(4 * 384),),
        )


def sqlite_dump(path: Path) -> tuple[list[tuple[object, ...]], dict[str, list[tuple[object, ...]]]]:
    with sqlite3.connect(path) as db:
        schema = db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        tables = [row[1] for row in schema if row[0] == "table" and row[1] != "schema_version"]
        return schema, {table: sorted(db.execute(f'SELECT * FROM "{table}"'), key=repr) for table in tables}


def recorded(path: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()


@pytest.mark.parametrize("upto", sorted(SQLITE_UPGRADES))
async def test_a_sqlite_database_numbered_apart_upgrades_to_a_fresh_ones_schema(
    tmp_path: Path, upto: int
) -> None:
    fresh, old = tmp_path / "fresh.db", tmp_path / "old.db"
    await (await SqliteStore.open(fresh)).close()
    build_sqlite(old, upto)
    _, rows_before = sqlite_dump(old)
    assert sum(map(len, rows_before.values())) > 0

    store = await SqliteStore.open(old, migrate=False)
    try:
        assert await store.migrate() == SQLITE_UPGRADES[upto]
        assert await store.migrate() == []
        assert await store.applied_versions() == [m.version for m in migrations.available("sqlite")]
    finally:
        await store.close()

    schema_after, rows_after = sqlite_dump(old)
    assert schema_after == sqlite_dump(fresh)[0]
    for table, rows in rows_before.items():
        # Columns added since come after the old ones: those must hold what they held.
        width = len(rows[0]) if rows else 0
        assert sorted((row[:width] for row in rows_after[table]), key=repr) == rows, table
    assert recorded(old) == recorded(fresh)


# PostgreSQL -----------------------------------------------------------------------------------

PG_SCHEMA = {
    "columns": "SELECT table_name, column_name, ordinal_position, data_type, udt_name, column_default,"
    " is_nullable, generation_expression FROM information_schema.columns WHERE table_schema = 'public'",
    "indexes": "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(c.oid)"
    " FROM pg_constraint c WHERE connamespace = 'public'::regnamespace",
    "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger"
    " WHERE NOT tgisinternal",
    # Kindred's own functions, not pgvector's (those belong to the extension).
    "functions": "SELECT proname, pg_get_functiondef(p.oid) FROM pg_proc p WHERE pronamespace ="
    " 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid"
    " AND d.deptype = 'e')",
}


async def build_postgres(dsn: str, upto: int) -> None:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await conn.execute(migrations.VERSION_TABLE_DDL)
        for version, name, sql in legacy("postgres", upto):
            async with conn.transaction():
                await conn.execute(sql)  # without parameters: several statements, one query
                await conn.execute(RECORD.format("%s"), (version, name, NOW.isoformat()))
        await conn.execute("INSERT INTO users (id, created_at) VALUES ('ann', %s), ('bob', %s)", (NOW, NOW))
        await conn.execute("INSERT INTO turns (user_id, chat_id, role, text, created_at) VALUES"
                           " ('ann', 'c1', 'user', 'I moved to Leeds', %s),"
                           " ('ann', 'c1', 'assistant', 'How is Leeds?', %s)", (NOW, NOW))  # fmt: skip
        await conn.execute(
            "INSERT INTO memories (user_id, kind, text, created_at, embedding, embedding_model,"
            " source_turn_id) VALUES ('ann', 'message', 'I moved to Leeds', %s, %s::vector, 'hash', 1)",
            (NOW, json.dumps([0.5] * 384)),
        )


async def pg_dump(dsn: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        schema = {}
        for what, query in PG_SCHEMA.items():
            schema[what] = sorted(repr(row) for row in await (await conn.execute(query)).fetchall())
        tables = [row[0] for row in await (await conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_version'"
        )).fetchall()]  # fmt: skip
        rows = {}
        for table in tables:
            found = await (await conn.execute(f'SELECT to_jsonb(t)::text FROM "{table}" t')).fetchall()
            rows[table] = sorted(row[0] for row in found)
        return schema, rows


async def pg_recorded(dsn: str) -> list[tuple[int, str]]:
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cursor = await conn.execute("SELECT version, name FROM schema_version ORDER BY version")
        return [(row[0], row[1]) for row in await cursor.fetchall()]


def kept(before: Sequence[str], after: Sequence[str]) -> bool:
    """Each old row is still there with its old values; columns added since may sit beside them."""
    if len(before) != len(after):
        return False
    old = sorted((json.loads(row) for row in before), key=repr)
    new = [{k: v for k, v in json.loads(row).items() if k in old[0]} for row in after] if old else []
    return sorted(new, key=repr) == old


@pytest.mark.pg
@pytest.mark.parametrize("upto", sorted(POSTGRES_UPGRADES))
async def test_a_postgres_database_numbered_apart_upgrades_to_a_fresh_ones_schema(
    pg_server: PgServer, upto: int
) -> None:
    fresh, old = await fresh_database(pg_server), await fresh_database(pg_server)
    try:
        await (await PostgresStore.open(fresh, min_size=1, max_size=1)).close()
        await build_postgres(old, upto)
        _, rows_before = await pg_dump(old)

        store = await PostgresStore.open(old, min_size=1, max_size=1, migrate=False)
        try:
            assert await store.migrate() == POSTGRES_UPGRADES[upto]
            assert await store.migrate() == []
            assert await store.applied_versions() == [m.version for m in migrations.available("postgres")]
        finally:
            await store.close()

        schema_after, rows_after = await pg_dump(old)
        assert schema_after == (await pg_dump(fresh))[0]
        assert all(kept(rows, rows_after[table]) for table, rows in rows_before.items())
        assert sum(map(len, rows_before.values())) > 0
        assert await pg_recorded(old) == await pg_recorded(fresh)
    finally:
        await drop_database(pg_server, old)
        await drop_database(pg_server, fresh)
