"""Fusion and hybrid search on a real SQLite store with the hashed test embedder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.memory.recall import (
    Recalled,
    distinct,
    fit_budget,
    fuse,
    fuse_scores,
    hybrid_search,
    memory_line,
)
from bot.core.memory.scoring import Why
from bot.core.models import Memory, MemoryHit, NewMemory
from bot.core.text import query_terms
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder

T0 = datetime(2026, 8, 1, tzinfo=UTC)
EMB = HashEmbedder()


def hit(mid: int, text: str = "x", score: float = 0.0) -> MemoryHit:
    return MemoryHit(Memory(mid, "ann", "turn", text, "user", T0, "m"), score)


def test_fusion_rewards_agreement_and_breaks_ties_by_recency() -> None:
    fused = fuse([[hit(1), hit(2), hit(3)], [hit(3), hit(4)]], 10)
    assert [r.memory.id for r in fused] == [3, 1, 4, 2]
    assert [r.memory.id for r in fuse([[hit(5)], [hit(9)]], 10)] == [9, 5]
    assert len(fuse([[hit(i) for i in range(20)]], 4)) == 4


def test_score_fusion_keeps_a_clear_winner_and_rewards_agreement() -> None:
    dense = [hit(1, score=0.9), hit(2, score=0.31), hit(3, score=0.30), hit(4, score=0.29)]
    words = [hit(3, score=2.0), hit(5, score=1.9)]
    fused = fuse_scores(dense, words, 10)
    # Rank fusion would put 3 (in both lists) first; by score, 1 is far ahead in its list.
    assert fuse([dense, words], 10)[0].memory.id == 3
    assert [r.memory.id for r in fused][:2] == [1, 3]
    assert {r.memory.id for r in fused} == {1, 2, 3, 4, 5}
    assert all(0.0 < r.score < 1.0 for r in fused)
    assert [r.memory.id for r in fuse_scores([hit(7, score=0.5)], [], 10)] == [7]
    assert fuse_scores([], [], 10) == []


def test_a_weak_word_match_lifts_nothing_and_pulls_nothing_down() -> None:
    # 2 and 3 are equally close in meaning; only 3 shares words with the question, and fewer than
    # the average match does: it stays level with 2. 4, far in meaning, has the strongest match.
    dense = [hit(1, score=0.6), hit(2, score=0.5), hit(3, score=0.5), hit(4, score=0.2)]
    words = [hit(4, score=3.0), hit(5, score=2.0), hit(3, score=1.5), hit(6, score=1.0)]
    fused = {r.memory.id: r.score for r in fuse_scores(dense, words, 10, lexical_weight=2.0)}
    assert fused[3] == pytest.approx(fused[2])
    assert fused[4] > fused[2] > fused[5] > fused[6]


def test_query_terms_are_plain_distinct_content_words() -> None:
    assert query_terms("What's the NAME of my dog? Dog!! name") == ["name", "dog"]
    assert query_terms("the and of") == []
    assert query_terms('"; DROP TABLE memories; --') == ["drop", "table", "memories"]


def test_the_memory_budget_keeps_the_best_that_fit() -> None:
    items = fuse([[hit(1, "a" * 401), hit(2, "short"), hit(3, "also short")]], 3)
    chosen = fit_budget(items, 30, lambda text: len(text) // 4)
    assert [r.memory.id for r in chosen] == [2, 3]
    assert memory_line(items[0].memory).endswith('…"')  # cut, then quoted


def test_the_same_words_are_recalled_once_and_a_favoured_copy_keeps_its_place() -> None:
    rated = Why(1.0, 1.0, 3.0, 0.9, 1.0, 0.0, 0.9, favoured=True)
    items = [
        Recalled(hit(1, "Good night").memory, 0.9),
        Recalled(hit(2, "I like tea").memory, 0.8),
        Recalled(hit(3, " good   NIGHT").memory, 0.7, rated),
        Recalled(hit(4, "Good night").memory, 0.6),
    ]
    assert [r.memory.id for r in distinct(items)] == [3, 2]
    said_by_the_bot = Recalled(Memory(5, "ann", "turn", "Good night", "assistant", T0, "m"), 0.5)
    assert [r.memory.id for r in distinct([items[0], said_by_the_bot])] == [1, 5], "who said it counts"


async def add(store: SqliteStore, *texts: str) -> list[int]:
    return await store.memories.add_memories(
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


async def test_the_whole_lexical_list_joins_the_fusion(store: SqliteStore) -> None:
    # Every memory has the same vector, so meaning cannot choose: the words must, all ten of them.
    texts = [f"zebra number {i}" for i in range(10)] + [f"nothing striped here {i}" for i in range(20)]
    same = EMB.vector("the same for all")
    ids = await store.memories.add_memories(
        [NewMemory("ann", t, "user", T0, same, EMB.model_name) for t in texts]
    )
    found = await hybrid_search(store, "ann", "zebra", same, 10)
    assert {r.memory.id for r in found} == set(ids[:10])


async def test_a_rare_word_outweighs_common_ones(store: SqliteStore) -> None:
    fillers = [f"had a good rest and a show {i}" for i in range(10)]
    [key, *_] = await add(store, "Dr. Okonkwo said to rest my knee", *fillers)
    query = "what did Okonkwo say about rest"
    assert await store.memories.rare_terms("ann", ["okonkwo", "rest", "absent"], share=0.005, floor=3) == [
        "okonkwo"
    ]
    [first, *_] = await store.memories.lexical_search("ann", query_terms(query), 10)
    assert first.memory.id == key
    found = await hybrid_search(store, "ann", query, EMB.vector("unrelated"), 1)
    assert [r.memory.id for r in found] == [key]


async def test_rank_fusion_stays_available_for_comparison(store: SqliteStore) -> None:
    ids = await add(store, "coffee keeps me up", "tea at night")
    found = await hybrid_search(store, "ann", "coffee", EMB.vector("coffee"), 5, fusion="rrf")
    assert found[0].memory.id == ids[0]


async def test_excluded_memories_never_come_back(store: SqliteStore) -> None:
    ids = await add(store, "coffee keeps me up", "coffee in the morning", "tea at night")
    query = "coffee"
    found = await hybrid_search(store, "ann", query, EMB.vector(query), 5, exclude={ids[0]})
    assert ids[0] not in [r.memory.id for r in found] and len(found) == 2


async def test_a_question_naming_a_period_favours_memories_from_then(store: SqliteStore) -> None:
    # The same words and vector at three times: only the date can choose.
    same = EMB.vector("the same for all")
    times = [datetime(2023, month, day, tzinfo=UTC) for month, day in ((6, 20), (7, 9), (8, 2))]
    ids = await store.memories.add_memories(
        [NewMemory("ann", "we went camping by the lake", "user", at, same, EMB.model_name) for at in times]
    )
    query = "where did we go camping in July 2023?"
    found = await hybrid_search(store, "ann", query, same, 3, scoring=None)
    assert found[0].memory.id == ids[1] and found[0].score > found[1].score
    undated = await hybrid_search(store, "ann", query, same, 3, scoring=None, date_weight=0.0)
    assert undated[0].score == undated[1].score
