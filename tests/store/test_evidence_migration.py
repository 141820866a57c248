"""Schema 0006 on both stores: memories stored before it (replies and questions as plain turns)
follow the rule that only the person's statements are searched, exactly as new ones do."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.memory.kinds import classify
from bot.core.models import NewMemory, NewTurn
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
# Messages as people write them, each stored as the plain turn every message was before 0006.
SAID = (
    "What is my job?",
    "do you remember my dog's name?",
    "Huh? Where did I say I parked?",
    "I work night shifts as a radiographer",
    "I moved last week. Have you been to Leeds?",
    "My dog is called Biscuit! Do you like the name?",
    "Is it raining?\nI left my umbrella at home.",
    "ok",
)


@dataclass(frozen=True, slots=True)
class Opened:
    store: Store
    execute: Callable[[str], Awaitable[None]]  # one statement, outside the store's connection


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
async def opened(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opened]:
    if request.param == "sqlite":
        import aiosqlite

        from bot.store.sqlite.store import SqliteStore

        path = tmp_path / "kindred.db"
        store: Store = await SqliteStore.open(path)

        async def execute(statement: str) -> None:
            async with aiosqlite.connect(path) as db:
                await db.execute(statement)
                await db.commit()

    else:
        import psycopg

        from bot.store.postgres.store import PostgresStore
        from tests.support.pg import fresh_database

        dsn = await fresh_database(request.getfixturevalue("pg_server"))
        store = await PostgresStore.open(dsn)

        async def execute(statement: str) -> None:
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await conn.execute(statement)

    try:
        yield Opened(store, execute)
    finally:
        await store.close()


def old_turn(text: str, role: str, at_second: int) -> NewTurn:
    from datetime import UTC, datetime

    return NewTurn("ann", "c1", role, text, EMB.vector(text), EMB.model_name,  # type: ignore[arg-type]
                   datetime(2026, 1, 5, 9, 0, at_second, tzinfo=UTC))  # fmt: skip


async def test_0006_gives_stored_replies_and_questions_their_kinds(opened: Opened) -> None:
    store = opened.store
    for number, text in enumerate(SAID):
        await store.turns.add_turn(old_turn(text, "user", 2 * number))
        await store.turns.add_turn(
            old_turn(f"Invented answer {number}: your cat Bella.", "assistant", 2 * number + 1)
        )
    at = old_turn("", "user", 0).created_at
    imported = [
        NewMemory("ann", text, speaker, at, EMB.vector(text), EMB.model_name, "imported")
        for text, speaker in (("Your cat Bella is sweet.", "assistant"), ("What is my job?", "ann"))
    ]
    await store.memories.add_memories(imported)
    assert {m.kind for m in await store.memories.list_memories("ann", 100)} <= {"turn", "fact", "imported"}

    await opened.execute("DELETE FROM schema_version WHERE version = 6")
    assert await store.migrate() == [6]

    kinds = {(m.speaker, m.text): m.kind for m in await store.memories.list_memories("ann", 100)}
    for text in SAID:
        expected = "question" if classify(text) == "question" else kinds[("user", text)]
        assert kinds[("user", text)] == expected, f"the SQL rule and kinds.classify agree on {text!r}"
    assert [text for text in SAID if kinds[("user", text)] == "question"] == list(SAID[:3])
    assert {kind for (speaker, _), kind in kinds.items() if speaker == "assistant"} == {"reply"}
    assert kinds[("ann", "What is my job?")] == "question", "an imported question too, whoever asked"
    found = await store.memories.dense_search("ann", EMB.vector("what is my job your cat Bella"), 100)
    assert {hit.memory.kind for hit in found} <= {"turn", "fact", "imported"}
