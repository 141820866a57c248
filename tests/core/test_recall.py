"""Fusion and hybrid search on a real SQLite store with the hashed test embedder."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import Memory, MemoryHit, NewMemory
from bot.core.recall import LEXICAL_DEPTH, fit_budget, fuse, hybrid_search, memory_line
from bot.core.text import query_terms
from bot.store.sqlite import SqliteStore
from tests.support.fakes import HashEmbedder

T0 = datetime(2026, 8, 1, tzinfo=UTC)
EMB = HashEmbedder()


def hit(mid: int, text: str = "x") -> MemoryHit:
    return MemoryHit(Memory(mid, "ann", "turn", text, "user", T0, "m"), 0.0)


def test_fusion_rewards_agreement_and_breaks_ties_by_recency() -> None:
    fused = fuse([[hit(1), hit(2), hit(3)], [hit(3), hit(4)]], 10)
    assert [r.memory.id for r in fused] == [3, 1, 4, 2]
    assert [r.memory.id for r in fuse([[hit(5)], [hit(9)]], 10)] == [9, 5]
    assert len(fuse([[hit(i) for i in range(20)]], 4)) == 4


def test_query_terms_are_plain_distinct_content_words() -> None:
    assert query_terms("What's the NAME of my dog? Dog!! name") == ["name", "dog"]
    assert query_terms("the and of") == []
    assert query_terms('"; DROP TABLE memories; --') == ["drop", "table", "memories"]


def test_the_memory_budget_keeps_the_best_that_fit() -> None:
    items = fuse([[hit(1, "a" * 401), hit(2, "short"), hit(3, "also short")]], 3)
    chosen = fit_budget(items, 30, lambda text: len(text) // 4)
    assert [r.memory.id for r in chosen] == [2, 3]
    assert memory_line(items[0].memory).endswith("…")


async def add(store: SqliteStore, *texts: str) -> list[int]:
    return await store.add_memories(
        [NewMemory("ann", text, "user", T0, EMB.vector(text), EMB.model_name) for text in texts]
    )


async def test_a_rare_word_brings_its_memory_in_even_when_meaning_ranks_it_low(store: SqliteStore) -> None:
    fillers = [f"we talked about the weather and work and dinner plans {i}" for i in range(30)]
    [key, *_] = await add(store, "the wifi password is tangerine42", *fillers)
    query = "what did we say about weather work dinner tangerine42"
    dense_only = await hybrid_search(store, "ann", query, EMB.vector(query), 5, lexical=False)
    hybrid = await hybrid_search(store, "ann", query, EMB.vector(query), 5)
    assert key not in [r.memory.id for r in dense_only]
    assert key in [r.memory.id for r in hybrid]


async def test_only_the_head_of_the_lexical_list_joins_the_fusion(store: SqliteStore) -> None:
    ids = await add(store, *[f"zebra number {i}" for i in range(10)])
    query = "zebra"
    vector = EMB.vector("unrelated words only")
    # A floor of 100 lets the ten-fold word through as rare.
    found = await hybrid_search(store, "ann", query, vector, 10, lexical=True, rare_floor=100)
    assert len(found) == 10  # dense still fills k
    lexical_only_score = 1.0 / 61
    boosted = [r for r in found if r.score > lexical_only_score + 1e-9]
    assert len(boosted) <= LEXICAL_DEPTH
    assert set(ids) == {r.memory.id for r in found}


async def test_common_words_stay_out_of_the_lexical_search(store: SqliteStore) -> None:
    fillers = [f"had a good rest and a show {i}" for i in range(10)]
    [key, *_] = await add(store, "Dr. Okonkwo said to rest my knee", *fillers)
    query = "what did Okonkwo say about rest"
    assert await store.rare_terms("ann", ["okonkwo", "rest", "absent"], share=0.005, floor=3) == ["okonkwo"]
    found = await hybrid_search(store, "ann", query, EMB.vector("unrelated"), 1)
    assert [r.memory.id for r in found] == [key]


async def test_excluded_memories_never_come_back(store: SqliteStore) -> None:
    ids = await add(store, "coffee keeps me up", "coffee in the morning", "tea at night")
    query = "coffee"
    found = await hybrid_search(store, "ann", query, EMB.vector(query), 5, exclude={ids[0]})
    assert ids[0] not in [r.memory.id for r in found] and len(found) == 2
