"""The curation part of the store contract, on SQLite and on Postgres + pgvector: revising memories
field by field, search that sees only recallable ones, the turns a memory came from, and the reads
by time and by person that curation jobs walk."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest

from bot.core.models import Memory, MemoryHit, Revision, Vector
from bot.core.store import Store
from tests.store.test_contract import EMB, T0, memory, turn

Dense = Callable[[str, Vector, int], Awaitable[list[MemoryHit]]]
LATER = datetime(2026, 8, 2, 12, 0, tzinfo=UTC)


def dense_paths(store: Store) -> list[Dense]:
    """Every dense search the store has: Postgres has an exact and an HNSW path besides the chooser."""
    extra = ("dense_search_exact", "dense_search_index")
    return [store.memories.dense_search, *(getattr(store, name) for name in extra if hasattr(store, name))]


async def one(store: Store, user: str, memory_id: int) -> Memory:
    [found] = await store.curation.get_memories(user, [memory_id])
    return found


async def test_a_new_memory_is_active_unpinned_and_unrevised(store: Store) -> None:
    (mid,) = await store.memories.add_memories([memory("ann", "I keep bees")])
    stored = await one(store, "ann", mid)
    assert (stored.status, stored.superseded_by, stored.pinned, stored.updated_at) == (
        "active",
        None,
        False,
        None,
    )
    assert (stored.verification, stored.weight) == (0.0, 1.0)
    assert stored.recallable
    listed = await store.memories.list_memories("ann", 10)
    assert listed == [stored]


async def test_each_revised_field_reads_back_and_the_rest_stay(store: Store) -> None:
    first, second = await store.memories.add_memories(
        [memory("ann", "I keep bees", meta={"source": "import"}), memory("ann", "I keep two hives")]
    )
    revision = Revision(
        kind="fact",
        status="superseded",
        superseded_by=second,
        verification=-0.5,
        weight=0.25,
        pinned=True,
        meta={"checked": True, "note": "ünïcode"},
        updated_at=LATER,
    )
    assert await store.curation.revise_memory("ann", first, revision)
    revised = await one(store, "ann", first)
    assert (revised.kind, revised.status, revised.superseded_by) == ("fact", "superseded", second)
    assert (revised.verification, revised.weight, revised.pinned) == (-0.5, 0.25, True)
    assert dict(revised.meta) == {"checked": True, "note": "ünïcode"}
    assert revised.updated_at == LATER
    assert not revised.recallable
    # Untouched by the revision:
    assert (revised.text, revised.speaker, revised.created_at) == ("I keep bees", "user", T0)
    assert revised.embedding_model == EMB.model_name
    # One field at a time leaves every other as it was.
    assert await store.curation.revise_memory("ann", first, Revision(pinned=False))
    again = await one(store, "ann", first)
    assert again.pinned is False and again.weight == 0.25 and again.status == "superseded"
    assert (await one(store, "ann", second)).status == "active"


async def test_a_revision_of_someone_elses_or_a_missing_memory_changes_nothing(store: Store) -> None:
    (mid,) = await store.memories.add_memories([memory("ann", "I keep bees")])
    before = await one(store, "ann", mid)
    assert not await store.curation.revise_memory("eve", mid, Revision(status="archived", pinned=True))
    assert not await store.curation.revise_memory(
        "eve", mid, Revision(text="mine now", embedding=EMB.vector("mine now"))
    )
    assert not await store.curation.revise_memory("ann", mid + 1000, Revision(weight=0.5))
    assert await one(store, "ann", mid) == before
    # An empty revision changes nothing and says whether the memory is there.
    assert await store.curation.revise_memory("ann", mid, Revision())
    assert not await store.curation.revise_memory("eve", mid, Revision())


async def test_a_new_text_needs_its_embedding_and_a_status_must_be_known(store: Store) -> None:
    (mid,) = await store.memories.add_memories([memory("ann", "I keep bees")])
    with pytest.raises(ValueError):
        await store.curation.revise_memory("ann", mid, Revision(text="I keep wasps"))
    with pytest.raises(ValueError):
        await store.curation.revise_memory("ann", mid, Revision(status="deleted"))
    assert (await one(store, "ann", mid)).text == "I keep bees"


@pytest.mark.parametrize("status", ["superseded", "merged", "archived"])
async def test_a_memory_that_is_not_recallable_leaves_search_but_not_the_listing(
    store: Store, status: str
) -> None:
    gone, kept = await store.memories.add_memories(
        [memory("ann", "my cat Mochi sleeps on the piano"), memory("ann", "I drink green tea")]
    )
    assert await store.curation.revise_memory("ann", gone, Revision(status=status, superseded_by=kept))
    for search in dense_paths(store):
        hits = await search("ann", EMB.vector("my cat Mochi sleeps on the piano"), 5)
        assert [hit.memory.id for hit in hits] == [kept], search.__name__
    assert await store.memories.lexical_search("ann", ["mochi", "piano"], 5) == []
    assert await store.memories.rare_terms("ann", ["mochi", "tea"], share=0.5, floor=1) == ["tea"]
    assert [m.id for m in await store.memories.list_memories("ann", 10)] == [gone, kept]
    assert await store.memories.memory_count("ann") == 2
    assert [m.status for m in await store.curation.get_memories("ann", [gone, kept])] == [status, "active"]


async def test_a_past_memory_is_still_found(store: Store) -> None:
    (mid,) = await store.memories.add_memories([memory("ann", "my exam is on Friday")])
    assert await store.curation.revise_memory("ann", mid, Revision(status="past"))
    for search in dense_paths(store):
        hits = await search("ann", EMB.vector("exam Friday"), 5)
        assert [(hit.memory.id, hit.memory.status) for hit in hits] == [(mid, "past")], search.__name__
    [hit] = await store.memories.lexical_search("ann", ["exam"], 5)
    assert hit.memory.status == "past"
    assert await store.memories.rare_terms("ann", ["exam"], share=0.5, floor=1) == ["exam"]


async def test_a_revised_text_is_found_by_its_new_words_only(store: Store) -> None:
    mid, other = await store.memories.add_memories(
        [memory("ann", "I adore marmalade"), memory("ann", "I walk the dog at dawn")]
    )
    new_text = "I cannot stand pistachios"
    assert await store.curation.revise_memory(
        "ann", mid, Revision(text=new_text, embedding=EMB.vector(new_text) * 3)
    )
    assert (await one(store, "ann", mid)).text == new_text
    assert await store.memories.lexical_search("ann", ["marmalade"], 5) == []
    [hit] = await store.memories.lexical_search("ann", ["pistachios"], 5)
    assert (hit.memory.id, hit.memory.text) == (mid, new_text)
    assert await store.memories.rare_terms("ann", ["marmalade", "pistachio"], share=0.5, floor=1) == [
        "pistachio"
    ]
    for search in dense_paths(store):
        hits = await search("ann", EMB.vector(new_text), 2)
        assert [h.memory.id for h in hits] == [mid, other], search.__name__
        # Stored at unit length, whatever length it came with: the exact match scores 1.
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    # A second revision re-indexes again (the first new words go too).
    assert await store.curation.revise_memory(
        "ann", mid, Revision(text="I like figs", embedding=EMB.vector("I like figs"))
    )
    assert await store.memories.lexical_search("ann", ["pistachios"], 5) == []
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["figs"], 5)] == [mid]


async def test_sources_are_the_own_turn_and_every_linked_one_once(store: Store) -> None:
    first = await store.turns.add_turn(turn("ann", "I moved to Lyon"))
    second = await store.turns.add_turn(turn("ann", "the flat is near the river"))
    (extracted,) = await store.memories.add_memories([memory("ann", "lives in Lyon near the river")])
    assert await store.curation.memory_sources(extracted) == []
    await store.curation.link_sources(extracted, [second.id, first.id])
    await store.curation.link_sources(extracted, [first.id, first.id])  # again, and twice in one call
    await store.curation.link_sources(extracted, [])
    assert await store.curation.memory_sources(extracted) == [first.id, second.id]
    # A turn's own memory comes from its turn, and from whatever else is linked to it.
    assert await store.curation.memory_sources(second.memory_id) == [second.id]
    await store.curation.link_sources(second.memory_id, [first.id, second.id])
    assert await store.curation.memory_sources(second.memory_id) == [first.id, second.id]
    assert await store.curation.memory_sources(extracted + 1000) == []


async def test_linking_to_a_missing_memory_is_a_no_op(store: Store) -> None:
    stored = await store.turns.add_turn(turn("ann", "hello"))
    await store.curation.link_sources(stored.memory_id + 1000, [stored.id])
    assert await store.curation.memory_sources(stored.memory_id + 1000) == []


async def test_forgetting_a_memory_forgets_its_sources(store: Store) -> None:
    first = await store.turns.add_turn(turn("ann", "I moved to Lyon"))
    one_id, all_id = await store.memories.add_memories(
        [memory("ann", "lives in Lyon"), memory("ann", "moved")]
    )
    (bobs,) = await store.memories.add_memories([memory("bob", "lives in Oslo")])
    for mid in (one_id, all_id, bobs):
        await store.curation.link_sources(mid, [first.id])
    assert await store.memories.forget("ann", one_id)
    assert await store.curation.memory_sources(one_id) == []
    assert await store.curation.memory_sources(all_id) == [first.id]
    assert await store.memories.forget_all("ann") == 2
    assert await store.curation.memory_sources(all_id) == []
    assert await store.curation.memory_sources(first.memory_id) == []
    assert await store.curation.memory_sources(bobs) == [first.id]


async def test_people_are_those_with_memories_in_pages(store: Store) -> None:
    for user in ("cat", "ann", "bob", "dan"):
        await store.memories.add_memories([memory(user, f"{user} likes tea")])
    await store.turns.add_turn(turn("eve", "hi"))  # a turn is a memory too
    await store.turns.set_user_active("fay", False)  # known, but no memory
    assert await store.memories.forget_all("dan") == 1
    assert await store.curation.people(None, 10) == ["ann", "bob", "cat", "eve"]
    assert await store.curation.people(None, 2) == ["ann", "bob"]
    assert await store.curation.people("bob", 2) == ["cat", "eve"]
    assert await store.curation.people("eve", 2) == []
    assert await store.curation.people("b", 1) == ["bob"]
    assert await store.curation.people(None, 0) == []


async def test_get_memories_gives_only_this_persons_in_id_order(store: Store) -> None:
    a, b = await store.memories.add_memories([memory("ann", "tea"), memory("ann", "hiking")])
    (e,) = await store.memories.add_memories([memory("eve", "jazz")])
    found = await store.curation.get_memories("ann", [b, e, a, b, a + 1000])
    assert [m.id for m in found] == [a, b]
    assert [m.text for m in found] == ["tea", "hiking"]
    assert await store.curation.get_memories("ann", []) == []
    assert await store.curation.get_memories("nobody", [a]) == []


async def test_forgetting_a_turn_forgets_what_was_derived_from_it(store: Store) -> None:
    """Extracted statements and summaries repeat a turn's words: they go when it goes."""
    told = await store.turns.add_turn(turn("ann", "I moved flats. My PIN is 5521."))
    other = await store.turns.add_turn(turn("ann", "Unrelated words"))
    derived = await store.memories.add_memories([memory("ann", "My PIN is 5521.")])
    await store.curation.link_sources(derived[0], [told.id])
    kept = await store.memories.add_memories([memory("ann", "Unrelated summary")])
    await store.curation.link_sources(kept[0], [other.id])
    before = await store.memories.memory_count("ann")

    assert await store.memories.forget("ann", told.memory_id)

    ids = {m.id for m in await store.memories.list_memories("ann", 50)}
    assert told.memory_id not in ids and derived[0] not in ids
    assert kept[0] in ids and other.memory_id in ids
    assert await store.memories.memory_count("ann") == before - 2
    assert await store.memories.lexical_search("ann", ["5521"], 10) == []


async def test_a_summary_revised_in_one_step_reads_back_and_searches_by_its_new_words(store: Store) -> None:
    """What revising a summary asks of the store: new text, vector and a nested meta at once."""
    old_text = "2026-02-02: I live in Glasgow / I restored an oak bookshelf"
    (summary,) = await store.memories.add_memories([memory("ann", old_text, meta={"covers": [1, 2]})])
    new_text = "2026-02-02: I restored an oak bookshelf"
    meta = {"covers": [1, 2], "dropped": [{"text": "I live in Glasgow", "by": 7}]}
    revision = Revision(text=new_text, embedding=EMB.vector(new_text), meta=meta, updated_at=LATER)
    assert await store.curation.revise_memory("ann", summary, revision)
    revised = await one(store, "ann", summary)
    assert (revised.text, dict(revised.meta), revised.updated_at) == (new_text, meta, LATER)
    assert await store.memories.lexical_search("ann", ["glasgow"], 5) == []
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["bookshelf"], 5)] == [summary]
    for search in dense_paths(store):
        [hit] = await search("ann", EMB.vector(new_text), 1)
        assert hit.memory.id == summary and hit.score == pytest.approx(1.0, abs=1e-5), search.__name__
