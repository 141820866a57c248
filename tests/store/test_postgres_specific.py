"""What only the PostgreSQL store has: migrations under concurrency, the two dense-search paths at
scale, tsquery safety, and surviving a server that goes away and comes back."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bot.core.errors import StoreError, StoreUnavailable
from bot.core.models import Feedback, NewMemory, NewTurn, Vector
from bot.store import migrations
from bot.store.postgres.pool import PostgresPool
from bot.store.postgres.search import walks_index
from bot.store.postgres.store import PostgresStore
from tests.support.pg import PgServer, drop_database, fresh_database, pg_dsn, pg_server

__all__ = ["pg_dsn", "pg_server"]  # fixtures, imported for pytest to find
pytestmark = pytest.mark.pg

DIM = 384
MODEL = "test/seeded-random"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CROWD_USERS = 200
CROWD_EACH = 30
PASSWORD = "secret123"


def embed(text: str) -> Vector:
    """A unit vector seeded by the text: the same text always gets the same vector."""
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
    vec = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return vec / np.linalg.norm(vec)


def memory(user: str, text: str) -> NewMemory:
    return NewMemory(user, text, "user", T0, embed(text), MODEL, "fact", {})


def turn(user: str, text: str, *, key: str | None = None, at: datetime = T0) -> NewTurn:
    return NewTurn(user, "c1", "user", text, embed(text), MODEL, at, idempotency_key=key)


def brute_force(rows: dict[int, Vector], query: Vector, k: int) -> list[int]:
    ids = list(rows)
    sims = np.stack([rows[i] for i in ids]) @ query
    order = sorted(range(len(ids)), key=lambda j: (-float(sims[j]), ids[j]))
    return [ids[j] for j in order[:k]]


@pytest.fixture
async def store(pg_dsn: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresStore.open(pg_dsn)
    yield opened
    await opened.close()


@dataclass(repr=False)  # something in the fixture machinery reprs it: 6000 arrays take seconds
class Crowd:
    store: PostgresStore
    vectors: dict[str, dict[int, Vector]]  # user -> memory id -> embedding


@pytest.fixture(scope="module")
async def crowd(pg_server: PgServer) -> AsyncIterator[Crowd]:
    """200 people with 30 memories each, and "tiny" with 2: everyone's share is small."""
    dsn = await fresh_database(pg_server)
    opened = await PostgresStore.open(dsn)
    vectors: dict[str, dict[int, Vector]] = {}
    people = [(f"user{n:03d}", CROWD_EACH) for n in range(CROWD_USERS)] + [("tiny", 2)]
    # Building the HNSW index once is ~8x quicker than 6000 inserts into it (2 CI cores).
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'"
        )
        hnsw = await cursor.fetchall()
        for name, _ in hnsw:
            await conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        for user, count in people:
            batch = [memory(user, f"{user} remembers thing {i}") for i in range(count)]
            ids = await opened.memories.add_memories(batch)
            vectors[user] = {mid: m.embedding for mid, m in zip(ids, batch, strict=True)}
        for _, definition in hnsw:
            await conn.execute(definition)
        await conn.execute("ANALYZE memories")
    assert hnsw, "the schema has no HNSW index to test"
    yield Crowd(opened, vectors)
    await opened.close()
    await drop_database(pg_server, dsn)


async def scalar(dsn: str, query: str, *params: object) -> object:
    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cursor = await conn.execute(query, params)
        row = await cursor.fetchone()
        return row[0] if row else None


# -- migrations ----------------------------------------------------------------------------


async def test_migrations_are_recorded_once_and_a_second_run_applies_nothing(pg_dsn: str) -> None:
    shipped = [m.version for m in migrations.available("postgres")]
    opened = await PostgresStore.open(pg_dsn)
    try:
        assert await opened.applied_versions() == shipped
        assert await opened.migrate() == []
        assert await opened.applied_versions() == shipped
    finally:
        await opened.close()
    again = await PostgresStore.open(pg_dsn)
    await again.close()
    assert await scalar(pg_dsn, "SELECT count(*) FROM schema_version") == len(shipped)
    assert await scalar(pg_dsn, "SELECT extversion FROM pg_extension WHERE extname = 'vector'")


async def test_two_processes_starting_at_once_migrate_once(pg_dsn: str) -> None:
    first, second = await asyncio.gather(PostgresStore.open(pg_dsn), PostgresStore.open(pg_dsn))
    try:
        shipped = [m.version for m in migrations.available("postgres")]
        assert await first.applied_versions() == shipped
        assert await scalar(pg_dsn, "SELECT count(*) FROM schema_version") == len(shipped)
    finally:
        await first.close()
        await second.close()


async def test_concurrent_migrate_calls_split_the_work_and_both_stores_work_after(
    pg_dsn: str,
) -> None:
    a = await PostgresStore.open(pg_dsn, migrate=False)
    b = await PostgresStore.open(pg_dsn, migrate=False)
    try:
        assert await a.applied_versions() == []
        results = await asyncio.gather(a.migrate(), b.migrate())
        shipped = [m.version for m in migrations.available("postgres")]
        # Each migration is applied once, by whichever call took the lock for it first.
        assert sorted(results[0] + results[1]) == shipped
        # Both pools now know the vector type, though it did not exist when they connected.
        [mid] = await a.memories.add_memories([memory("ann", "tea in the morning")])
        hits = await b.memories.dense_search("ann", embed("tea in the morning"), 3)
        assert [h.memory.id for h in hits] == [mid]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    finally:
        await a.close()
        await b.close()


# -- dense search ----------------------------------------------------------------------------


@pytest.mark.parametrize("user", ["tiny", "user000", "user123", "user199"])
async def test_dense_search_is_full_and_exact_on_every_repetition(crowd: Crowd, user: str) -> None:
    rows = crowd.vectors[user]
    for k in (10, 50):
        query = embed(f"what does {user} like, k={k}")
        expected = brute_force(rows, query, k)
        assert len(expected) == min(k, len(rows))
        # Far more than the 5 runs after which psycopg would prepare the statement by default.
        for _ in range(15):
            hits = await crowd.store.memories.dense_search(user, query, k)
            assert [h.memory.id for h in hits] == expected
            assert all(h.memory.user_id == user for h in hits)
        for hit in hits:
            assert hit.score == pytest.approx(float(rows[hit.memory.id] @ query), abs=1e-5)
        exact = await crowd.store.dense_search_exact(user, query, k)
        assert [h.memory.id for h in exact] == expected


@pytest.mark.parametrize("user", ["tiny", "user042", "user150"])
async def test_hnsw_path_fills_k_for_a_person_with_a_tiny_share(crowd: Crowd, user: str) -> None:
    rows = crowd.vectors[user]
    assert len(rows) / sum(len(v) for v in crowd.vectors.values()) < 0.01
    for k in (10, CROWD_EACH):
        query = embed(f"index query for {user}, k={k}")
        for _ in range(12):
            hits = await crowd.store.dense_search_index(user, query, k)
            assert len(hits) == min(k, len(rows))
            assert {h.memory.id for h in hits} <= set(rows)
            scores = [h.score for h in hits]
            assert scores == sorted(scores, reverse=True)
            assert len({h.memory.id for h in hits}) == len(hits)
    assert await crowd.store.dense_search_index("nobody", embed("x"), 10) == []
    everything = await crowd.store.dense_search_index("user042", embed("all"), 5_000)
    assert len(everything) == CROWD_EACH


def test_the_index_is_walked_only_for_a_big_share_of_a_big_person() -> None:
    assert not walks_index(500, 1_000, 10, exact_scan_max=10_000)  # few rows: always exact
    assert walks_index(50_000, 100_000, 10, exact_scan_max=10_000)  # half the table
    # 20k of 100M rows: a filtered walk would visit ~50k rows; reading hers is cheaper.
    assert not walks_index(20_000, 100_000_000, 10, exact_scan_max=10_000)
    assert walks_index(300, 0, 10, exact_scan_max=10)  # stale statistics: never analysed


async def test_a_heavy_user_is_served_through_the_index_in_full(pg_dsn: str) -> None:
    opened = await PostgresStore.open(pg_dsn, exact_scan_max=50)
    try:
        await opened.memories.add_memories([memory("big", f"big note {i}") for i in range(300)])
        await opened.memories.add_memories([memory(f"p{i}", f"small note {i}") for i in range(30)])
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as conn:
            await conn.execute("ANALYZE memories")
        for i in range(12):
            hits = await opened.memories.dense_search("big", embed(f"query {i}"), 10)
            assert len(hits) == 10 and all(h.memory.user_id == "big" for h in hits)
        [only] = await opened.memories.dense_search("p3", embed("small note 3"), 10)
        assert only.memory.text == "small note 3"
    finally:
        await opened.close()


# -- lexical search --------------------------------------------------------------------------


SYNTAX = [
    "'",
    '"',
    "''",
    "\"'",
    "a'b",
    "-sleep",
    "!sleep",
    "sleep:*",
    "sleep & well",
    "sleep | x",
    "<->",
    "<2>",
    "((",
    "))",
    "\\",
    "%s",
    "%(user_id)s",
    "or",
    "and",
    "not",
    "'); DROP TABLE x;--",
    "日本語",
    "\x00",
    "ß",
    "😴",
]


async def test_lexical_search_takes_any_characters_as_words(store: PostgresStore) -> None:
    await store.memories.add_memories([memory("ann", "I sleep well"), memory("eve", "or and not sleep")])
    for term in SYNTAX:
        hits = await store.memories.lexical_search("ann", [term], 5)
        assert all(h.memory.user_id == "ann" for h in hits), term
    hits = await store.memories.lexical_search("ann", SYNTAX, 5)
    assert [h.memory.text for h in hits] == ["I sleep well"]
    # A leading minus is a word here, not "everything without sleep".
    [hit] = await store.memories.lexical_search("ann", ["-sleep"], 5)
    assert hit.memory.text == "I sleep well"
    assert await store.memories.lexical_search("ann", ["the", "a"], 5) == []  # stop words only
    assert (await store.stats()).memories == 2


# -- bookkeeping -----------------------------------------------------------------------------


async def test_memory_count_follows_every_insert_and_delete(store: PostgresStore, pg_dsn: str) -> None:
    async def counted() -> tuple[object, object]:
        kept = await scalar(pg_dsn, "SELECT memory_count FROM users WHERE id = 'ann'")
        real = await scalar(pg_dsn, "SELECT count(*) FROM memories WHERE user_id = 'ann'")
        return kept, real

    await store.turns.add_turn(turn("ann", "hello"))
    ids = await store.memories.add_memories([memory("ann", f"fact {i}") for i in range(4)])
    await store.memories.add_memories([memory("bob", "bob fact")])
    assert await counted() == (5, 5)
    assert await store.memories.forget("ann", ids[0])
    assert not await store.memories.forget("bob", ids[1])
    assert await counted() == (4, 4)
    assert await store.memories.forget_all("ann") == 4
    assert await counted() == (None, 0)  # the person's row went with them
    assert await scalar(pg_dsn, "SELECT memory_count FROM users WHERE id = 'bob'") == 1


async def test_concurrent_retries_of_one_turn_store_it_once(store: PostgresStore) -> None:
    results = await asyncio.gather(*(store.turns.add_turn(turn("ann", "hi", key="k1")) for _ in range(8)))
    assert len({(t.id, t.memory_id) for t in results}) == 1
    stats = await store.stats()
    assert (stats.users, stats.turns, stats.memories) == (1, 1, 1)


async def test_times_come_back_as_utc(store: PostgresStore) -> None:
    plus_two = timezone(timedelta(hours=2))
    local = datetime(2026, 5, 1, 14, 0, tzinfo=plus_two)
    stored = await store.turns.add_turn(turn("ann", "afternoon", at=local))
    naive = await store.turns.add_turn(turn("ann", "naive", at=datetime(2026, 5, 1, 9, 0)))
    [first, second] = await store.turns.recent_turns("ann", "c1", 5)
    assert first.created_at == local and first.created_at.tzinfo == UTC
    assert stored.created_at.tzinfo == UTC
    assert second.created_at == naive.created_at == datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


async def test_refusals_are_store_errors_not_unavailability(store: PostgresStore) -> None:
    with pytest.raises(StoreError) as refused:
        await store.turns.record_feedback(Feedback(424242, "ann", "👍", 1.0, T0))
    assert not isinstance(refused.value, StoreUnavailable)
    with pytest.raises(StoreError) as wrong_size:
        await store.memories.add_memories([NewMemory("ann", "x", None, T0, np.ones(3, np.float32), MODEL)])
    assert not isinstance(wrong_size.value, StoreUnavailable)
    assert (await store.stats()).memories == 0


async def test_a_malformed_dsn_is_refused_without_echoing_it() -> None:
    with pytest.raises(StoreError) as refused:
        await PostgresStore.open(f"host=127.0.0.1 password='{PASSWORD} port=1")
    assert PASSWORD not in str(refused.value)


# -- the server goes away ----------------------------------------------------------------------


async def test_the_server_goes_away_mid_run_and_comes_back(pg_server: PgServer) -> None:
    if not pg_server.restartable:
        pytest.skip("TEST_DATABASE_URL names a server this test cannot stop and start")
    dsn = make_conninfo(await fresh_database(pg_server), password=PASSWORD)
    opened = await PostgresStore.open(dsn, timeout_s=1.0)
    try:
        kept = await opened.memories.add_memories([memory("ann", f"kept {i}") for i in range(5)])
        pg_server.stop()
        try:
            for attempt in (
                lambda: opened.memories.dense_search("ann", embed("kept 1"), 3),
                lambda: opened.turns.add_turn(turn("ann", "lost for now")),
                lambda: opened.stats(),
            ):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable) as gone:
                    await attempt()
                assert time.monotonic() - started < 4.0  # the 1 s timeout, and slack
                assert PASSWORD not in str(gone.value) and PASSWORD not in repr(gone.value)
            with pytest.raises(StoreUnavailable) as refused:
                await PostgresStore.open(dsn, timeout_s=1.0)
            assert PASSWORD not in str(refused.value)
        finally:
            pg_server.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                listed = await opened.memories.list_memories("ann", 10)
                break
            except StoreUnavailable:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        assert [m.id for m in listed] == kept
        hits = await opened.memories.dense_search("ann", embed("kept 3"), 1)
        assert hits[0].memory.text == "kept 3"
        await opened.turns.add_turn(turn("ann", "back again"))
        assert (await opened.stats()).turns == 1
    finally:
        await opened.close()


async def test_sessions_cut_all_at_once_cost_the_next_request_no_wait(pg_dsn: str) -> None:
    """pg_terminate_backend on every session (an admin, a proxy, a failover): the server is up, so
    the next request is served at once. Before CheckAllOnLoss, psycopg_pool's pause between two
    failed checks (1 s, 2 s…) met each dead idle connection in turn: a PoolTimeout after 5 s."""
    pool = await PostgresPool.open(pg_dsn, migrate=False, max_size=8, timeout_s=5.0)

    async def query() -> None:
        async with pool.connection() as conn:
            await conn.execute("SELECT pg_sleep(0.05)")

    try:
        await asyncio.gather(*(query() for _ in range(8)))  # the pool grows to eight connections
        name = str(conninfo_to_dict(pg_dsn)["dbname"])
        async with await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True) as admin:
            cursor = await admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            row = await cursor.fetchone()
        assert row is not None and row[0] >= 4, row
        started = time.monotonic()
        await query()
        assert time.monotonic() - started < 1.0
        await asyncio.gather(*(query() for _ in range(8)))
    finally:
        await pool.close()
