"""PostgreSQL keeps each person's count of searched memories and their total length (schema 0009)
for BM25: every writer keeps them equal to a recount by the store's own recallable() rule."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest

from bot.core.models import NewMemory, NewTurn, Revision
from bot.store.postgres.store import PostgresStore
from bot.store.sql.rows import recallable
from tests.support.fakes import HashEmbedder
from tests.support.pg import PgServer, fresh_database

pytestmark = pytest.mark.pg

EMB = HashEmbedder()
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
_KEPT = "SELECT id, lexical_docs, lexical_length FROM users ORDER BY id"
_RECOUNT = f"""
SELECT u.id, count(m.id) AS lexical_docs, coalesce(sum(length(m.tsv)), 0) AS lexical_length
FROM users u LEFT JOIN memories m ON m.user_id = u.id AND {recallable("m.status")}
GROUP BY u.id ORDER BY u.id
"""


@pytest.fixture
async def dsn(pg_server: PgServer) -> str:
    return await fresh_database(pg_server)


@pytest.fixture
async def store(dsn: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresStore.open(dsn)
    yield opened
    await opened.close()


async def rows(dsn: str, query: str) -> list[tuple[object, ...]]:
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        return await (await conn.execute(query)).fetchall()


async def assert_kept(dsn: str) -> None:
    assert await rows(dsn, _KEPT) == await rows(dsn, _RECOUNT)


def new(user: str, text: str, kind: str = "fact", speaker: str = "user") -> NewMemory:
    return NewMemory(user, text, speaker, T0, EMB.vector(text), EMB.model_name, kind, context="Ann")


async def test_every_writer_keeps_the_statistics_equal_to_a_recount(store: PostgresStore, dsn: str) -> None:
    ids = await store.memories.add_memories([
        new("ann", "I live in Glasgow with two cats"), new("ann", "What is my job?", "question"),
        new("ann", "Your cat Bella is sweet", "reply", "assistant"), new("bob", "I work nights"),
        new("ann", "we went camping by the lake in July"),
    ])  # fmt: skip
    await store.turns.add_turn(NewTurn("ann", "c1", "user", "my sister lives in Lyon", EMB.vector("s"),
                                 EMB.model_name, T0, memory_kind="fact"))  # fmt: skip
    await assert_kept(dsn)
    assert (await rows(dsn, _KEPT))[0][1] == 3, "Ann's question and the bot's reply are not searched"

    glasgow, question, _, _, camping = ids
    new_text = "I live in Edinburgh now, in a flat by the sea with my two cats"
    await store.curation.revise_memory(
        "ann", glasgow, Revision(text=new_text, embedding=EMB.vector(new_text))
    )
    await assert_kept(dsn)
    await store.curation.revise_memory("ann", camping, Revision(status="superseded", superseded_by=glasgow))
    await store.curation.revise_memory("ann", question, Revision(kind="fact"))
    await assert_kept(dsn)
    await store.curation.revise_memory("ann", camping, Revision(status="active"))
    await store.curation.revise_memory("ann", glasgow, Revision(verification=1.0, weight=0.5))
    await assert_kept(dsn)
    assert await store.memories.forget("ann", camping)
    await assert_kept(dsn)
    await store.memories.forget_all("bob")
    await assert_kept(dsn)
    assert [row[0] for row in await rows(dsn, _KEPT)] == ["ann"]  # bob's row went with him


def bm25(n: int, avgdl: float, matches: list[tuple[int, int, int]]) -> float:
    """Okapi BM25 (k1 1.2, b 0.75) of one memory: `matches` are (df, tf, dl) of each query lexeme."""
    total = 0.0
    for df, tf, dl in matches:
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        total += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))
    return total


async def test_bm25_scores_come_from_the_persons_own_memories(store: PostgresStore) -> None:
    texts = ["the lake was cold", "camping by the lake", "camping camping in the rain by a lake",
             "dinner with my sister", "lake lake lake"]  # fmt: skip
    await store.memories.add_memories([new("ann", text) for text in texts])
    await store.memories.add_memories([new("bob", f"camping trip number {n}") for n in range(30)])
    found = {
        hit.memory.text: hit.score
        for hit in await store.memories.lexical_search("ann", ["camping", "lake"], 10)
    }
    # Ann's lexemes, with the context's "ann" in each: 3, 3, 4, 3 and 2 of them (average 3); "camp"
    # is in 2 of her 5 memories, "lake" in 4. Bob's thirty memories change neither.
    assert found == pytest.approx(
        {
            texts[2]: bm25(5, 3.0, [(2, 2, 4), (4, 1, 4)]),
            texts[1]: bm25(5, 3.0, [(2, 1, 3), (4, 1, 3)]),
            texts[4]: bm25(5, 3.0, [(4, 3, 2)]),
            texts[0]: bm25(5, 3.0, [(4, 1, 3)]),
        }
    )


async def test_0009_counts_the_memories_stored_before_it(store: PostgresStore, dsn: str) -> None:
    said = [new("ann", "I live in Glasgow"), new("ann", "Is it raining?", "question")]
    await store.memories.add_memories([*said, new("bob", "I work nights"), new("bob", "we went camping")])
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("DROP TRIGGER memories_lexical_stats ON memories")
        await conn.execute("DROP FUNCTION memories_lexical_stats(), memory_is_searched(TEXT, TEXT)")
        await conn.execute("ALTER TABLE users DROP COLUMN lexical_docs, DROP COLUMN lexical_length")
        await conn.execute("DELETE FROM schema_version WHERE version = 9")
    assert await store.migrate() == [9]
    await assert_kept(dsn)
    assert [row[1] for row in await rows(dsn, _KEPT)] == [1, 2]
