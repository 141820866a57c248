"""One contract for every store. Each test runs on SQLite and on Postgres + pgvector."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from bot.core.models import Feedback, MessageLink, NewMemory, NewTurn, Revision
from bot.core.store import Store
from tests.support.fakes import HashEmbedder

EMB = HashEmbedder()
T0 = datetime(2026, 8, 1, 9, 30, tzinfo=UTC)


def memory(user: str, text: str, *, at: datetime = T0, meta: dict[str, object] | None = None) -> NewMemory:
    return NewMemory(user, text, "user", at, EMB.vector(text), EMB.model_name, "imported", meta or {})


def turn(
    user: str,
    text: str,
    *,
    chat: str = "c1",
    role: str = "user",
    key: str | None = None,
    at: datetime = T0,
    used: tuple[int, ...] = (),
) -> NewTurn:
    return NewTurn(
        user,
        chat,
        role,
        text,
        EMB.vector(text),
        EMB.model_name,
        at,  # type: ignore[arg-type]
        used_memory_ids=used,
        idempotency_key=key,
    )


async def test_empty_store_answers_with_nothing(store: Store) -> None:
    assert await store.memories.dense_search("nobody", EMB.vector("anything"), 10) == []
    assert await store.memories.lexical_search("nobody", ["anything"], 10) == []
    assert await store.memories.list_memories("nobody", 10) == []
    assert await store.turns.recent_turns("nobody", "c1", 5) == []
    stats = await store.stats()
    assert (stats.users, stats.turns, stats.memories, stats.feedback_events) == (0, 0, 0, 0)
    assert stats.backend == store.backend


async def test_turn_is_stored_as_a_recallable_memory(store: Store) -> None:
    stored = await store.turns.add_turn(turn("ann", "I sleep badly when I drink coffee late"))
    assert stored.id > 0 and stored.memory_id > 0
    hits = await store.memories.dense_search("ann", EMB.vector("coffee sleep"), 5)
    assert [hit.memory.id for hit in hits] == [stored.memory_id]
    assert hits[0].memory.source_turn_id == stored.id
    assert hits[0].memory.speaker == "user"
    assert hits[0].memory.embedding_model == EMB.model_name


async def test_recent_turns_are_oldest_first_and_per_chat(store: Store) -> None:
    for index in range(6):
        await store.turns.add_turn(turn("ann", f"message {index}", at=T0 + timedelta(minutes=index)))
    await store.turns.add_turn(turn("ann", "other chat", chat="c2"))
    recent = await store.turns.recent_turns("ann", "c1", 3)
    assert [t.text for t in recent] == ["message 3", "message 4", "message 5"]
    assert [t.text for t in await store.turns.recent_turns("ann", "c2", 10)] == ["other chat"]


async def test_reply_keeps_the_memories_its_prompt_used(store: Store) -> None:
    question = await store.turns.add_turn(turn("ann", "what do I drink?"))
    reply = await store.turns.add_turn(
        NewTurn(
            "ann",
            "c1",
            "assistant",
            "Tea, I think.",
            EMB.vector("tea"),
            EMB.model_name,
            T0,
            used_memory_ids=(7, 3, 11),
            reply_to=question.id,
        )
    )
    [_, again] = await store.turns.recent_turns("ann", "c1", 2)
    assert again.id == reply.id
    assert again.used_memory_ids == (7, 3, 11)
    assert again.reply_to == question.id
    assert again.role == "assistant"


async def test_a_repeated_idempotency_key_stores_nothing_twice(store: Store) -> None:
    first = await store.turns.add_turn(turn("ann", "hello", key="tg:42:1001"))
    second = await store.turns.add_turn(turn("ann", "hello", key="tg:42:1001"))
    assert second.id == first.id and second.memory_id == first.memory_id
    stats = await store.stats()
    assert (stats.turns, stats.memories) == (1, 1)


async def test_memories_round_trip_text_time_and_meta(store: Store) -> None:
    meta = {"source": "diary", "tags": ["café", "日本"], "nested": {"n": 1, "ok": True, "none": None}}
    at = datetime(2025, 12, 31, 23, 59, 58, 123000, tzinfo=UTC)
    [mid] = await store.memories.add_memories([memory("ann", "Éclair at the café 🍰", at=at, meta=meta)])
    [stored] = await store.memories.list_memories("ann", 10)
    assert stored.id == mid
    assert stored.text == "Éclair at the café 🍰"
    assert stored.meta == meta
    assert stored.created_at.tzinfo is not None
    assert abs(stored.created_at - at) < timedelta(milliseconds=1)
    assert stored.kind == "imported"


async def test_add_memories_returns_ids_in_input_order(store: Store) -> None:
    texts = [f"memory number {i}" for i in range(20)]
    ids = await store.memories.add_memories([memory("ann", text) for text in texts])
    assert len(set(ids)) == 20
    listed = await store.memories.list_memories("ann", 100)
    assert [m.id for m in listed] == ids
    assert [m.text for m in listed] == texts
    assert await store.memories.add_memories([]) == []


async def test_dense_search_is_exact_and_full_for_every_user(store: Store) -> None:
    rng = np.random.default_rng(7)
    users = [f"user{u}" for u in range(40)]
    vectors: dict[str, list[tuple[int, np.ndarray]]] = {}
    for user in users:
        count = 3 if user == "user0" else 25
        batch = []
        for _ in range(count):
            vec = rng.normal(size=384).astype(np.float32)
            batch.append(NewMemory(user, "x", None, T0, vec / np.linalg.norm(vec), "m"))
        ids = await store.memories.add_memories(batch)
        vectors[user] = [(mid, m.embedding) for mid, m in zip(ids, batch, strict=True)]
    query = rng.normal(size=384).astype(np.float32)
    query /= np.linalg.norm(query)
    for user in ("user0", "user17", "user39"):
        expected = sorted(vectors[user], key=lambda pair: -float(pair[1] @ query))[:10]
        # More than ten repetitions: a store that switches plans after a few must still be exact.
        for _ in range(12):
            hits = await store.memories.dense_search(user, query, 10)
            assert [hit.memory.id for hit in hits] == [mid for mid, _ in expected]
            assert all(hit.memory.user_id == user for hit in hits)
        assert hits[0].score == pytest.approx(float(expected[0][1] @ query), abs=1e-4)
        assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


async def test_lexical_search_stems_ranks_and_stays_per_user(store: Store) -> None:
    await store.memories.add_memories(
        [
            memory("ann", "I was sleeping badly all week"),
            memory("ann", "The restaurant on Main street closed"),
            memory("ann", "Sleep sleep sleep: I need more sleep"),
            memory("bob", "I sleep like a baby"),
        ]
    )
    hits = await store.memories.lexical_search("ann", ["sleep"], 10)
    assert next(h.memory.text for h in hits) == "Sleep sleep sleep: I need more sleep"
    assert {h.memory.text for h in hits} == {
        "I was sleeping badly all week",
        "Sleep sleep sleep: I need more sleep",
    }
    assert all(h.memory.user_id == "ann" for h in hits)
    [only] = await store.memories.lexical_search("ann", ["restaurant", "zebra"], 1)
    assert only.memory.text == "The restaurant on Main street closed"
    assert await store.memories.lexical_search("ann", [], 10) == []


async def test_lexical_search_is_bm25_over_all_words(store: Store) -> None:
    # A word few memories hold outweighs one many hold, on both stores alike.
    fillers = [memory("ann", f"had a good rest and a show {i}") for i in range(10)]
    [key, *_] = await store.memories.add_memories(
        [memory("ann", "Dr. Okonkwo said to rest my knee"), *fillers]
    )
    hits = await store.memories.lexical_search("ann", ["okonkwo", "rest", "show"], 20)
    assert hits[0].memory.id == key and len(hits) == 11
    assert all(a.score >= b.score > 0 for a, b in itertools.pairwise(hits))


async def test_lexical_search_finds_words_of_the_context_below_the_text(store: Store) -> None:
    said = NewMemory(
        "ann",
        "I painted a sunrise by the lake",
        "Melanie",
        T0,
        EMB.vector("x"),
        EMB.model_name,
        "imported",
        context="Melanie",
    )
    told = NewMemory(
        "ann",
        "Melanie told me she painted it",
        "Caroline",
        T0,
        EMB.vector("y"),
        EMB.model_name,
        "imported",
        context="Caroline",
    )
    said_id, told_id = await store.memories.add_memories([said, told])
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["caroline"], 5)] == [told_id]
    # "melanie" is in one's text and the other's context: the text weighs more.
    assert [h.memory.id for h in await store.memories.lexical_search("ann", ["melanie"], 5)] == [
        told_id,
        said_id,
    ]
    [got, *_] = await store.memories.lexical_search("ann", ["melanie", "sunrise"], 5)
    assert got.memory.id == said_id and got.memory.text == said.text  # the context is never shown


@pytest.mark.parametrize(
    "terms",
    [
        ['"'],
        ["AND"],
        ["or", "not"],
        ["NEAR"],
        ["*"],
        ["a'b"],
        ["user_tag"],
        ["text:sleep"],
        ["(", ")"],
        ["日本語"],
        ["\\"],
        ["-sleep"],
        [":"],
        ["^"],
        ["  "],
    ],
)
async def test_lexical_search_never_treats_words_as_syntax(store: Store, terms: list[str]) -> None:
    await store.memories.add_memories([memory("ann", "I sleep well"), memory("eve", "NEAR AND OR")])
    hits = await store.memories.lexical_search("ann", terms, 5)
    assert all(h.memory.user_id == "ann" for h in hits)


async def test_forget_deletes_only_the_owners_memory(store: Store) -> None:
    [mine] = await store.memories.add_memories([memory("ann", "my secret")])
    [theirs] = await store.memories.add_memories([memory("bob", "bob's secret")])
    assert await store.memories.forget("bob", mine) is False
    assert await store.memories.forget("ann", 999_999) is False
    assert await store.memories.forget("ann", mine) is True
    assert await store.memories.forget("ann", mine) is False
    assert await store.memories.list_memories("ann", 10) == []
    assert [m.id for m in await store.memories.list_memories("bob", 10)] == [theirs]
    assert await store.memories.dense_search("ann", EMB.vector("my secret"), 5) == []
    assert await store.memories.lexical_search("ann", ["secret"], 5) == []


async def test_forget_all_removes_a_persons_turns_memories_and_reactions(store: Store) -> None:
    reply = await store.turns.add_turn(turn("ann", "hi", role="assistant"))
    await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", 1.0, T0))
    await store.memories.add_memories([memory("ann", "likes tea")])
    await store.turns.add_turn(turn("bob", "hello"))
    assert await store.memories.forget_all("ann") == 2
    assert await store.memories.list_memories("ann", 10) == []
    assert await store.turns.recent_turns("ann", "c1", 10) == []
    stats = await store.stats()
    assert (stats.turns, stats.memories, stats.feedback_events) == (1, 1, 0)


async def test_a_changed_reaction_replaces_and_a_removed_one_goes(store: Store) -> None:
    reply = await store.turns.add_turn(turn("ann", "a reply", role="assistant"))
    await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", 1.0, T0))
    await store.turns.record_feedback(Feedback(reply.id, "ann", "👎", -1.0, T0 + timedelta(seconds=5)))
    assert (await store.stats()).feedback_events == 1
    await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", 1.0, T0, source="button"))
    assert (await store.stats()).feedback_events == 2
    await store.turns.remove_feedback(reply.id, "ann", "reaction")
    await store.turns.remove_feedback(reply.id, "ann", "reaction")  # missing: a no-op
    await store.turns.remove_feedback(123_456, "nobody", "reaction")
    assert (await store.stats()).feedback_events == 1


async def test_list_memories_pages_oldest_first(store: Store) -> None:
    ids = await store.memories.add_memories([memory("ann", f"m{i}") for i in range(7)])
    first = await store.memories.list_memories("ann", 3)
    second = await store.memories.list_memories("ann", 3, offset=3)
    third = await store.memories.list_memories("ann", 3, offset=6)
    assert [m.id for m in first + second + third] == ids


async def test_stats_count_users_turns_memories_and_feedback(store: Store) -> None:
    reply = await store.turns.add_turn(turn("ann", "one", role="assistant"))
    await store.turns.add_turn(turn("bob", "two"))
    await store.memories.add_memories([memory("cat", "three")])
    await store.turns.record_feedback(Feedback(reply.id, "ann", "🔥", 1.0, T0))
    stats = await store.stats()
    assert (stats.users, stats.turns, stats.memories, stats.feedback_events) == (3, 2, 3, 1)


async def test_rare_terms_are_those_few_of_a_persons_memories_hold(store: Store) -> None:
    await store.memories.add_memories(
        [memory("ann", f"coffee with friends, round {i}") for i in range(6)]
        + [memory("ann", "lisinopril for blood pressure"), memory("bob", "okonkwo okonkwo")]
    )
    terms = ["okonkwo", "coffee", "lisinopril", "friends", "unknown", '"', "-x"]
    assert await store.memories.rare_terms("ann", terms, share=0.0, floor=3) == ["lisinopril"]
    assert await store.memories.rare_terms("ann", terms, share=1.0, floor=0) == [
        "coffee",
        "lisinopril",
        "friends",
    ]
    assert await store.memories.rare_terms("ann", [], share=0.5, floor=3) == []
    assert await store.memories.rare_terms("nobody", ["coffee"], share=0.5, floor=3) == []


async def test_a_platform_message_finds_its_reply_turn(store: Store) -> None:
    reply = await store.turns.add_turn(turn("ann", "a long reply", role="assistant"))
    for part in ("501", "502"):  # a reply split over two messages
        await store.turns.link_message(MessageLink("telegram", "chat-9", part, reply.id, "ann"))
    await store.turns.link_message(MessageLink("telegram", "chat-9", "501", reply.id, "ann"))  # again: no-op
    found = await store.turns.find_message("telegram", "chat-9", "502")
    assert found == MessageLink("telegram", "chat-9", "502", reply.id, "ann")
    assert await store.turns.find_message("discord", "chat-9", "502") is None
    assert await store.turns.find_message("telegram", "chat-1", "502") is None


async def test_forget_all_drops_a_persons_message_links(store: Store) -> None:
    reply = await store.turns.add_turn(turn("ann", "hello there", role="assistant"))
    await store.turns.link_message(MessageLink("discord", "d1", "77", reply.id, "ann"))
    await store.memories.forget_all("ann")
    assert await store.turns.find_message("discord", "d1", "77") is None


async def test_a_person_marked_inactive_is_active_again_after_writing(store: Store) -> None:
    assert await store.turns.is_user_active("stranger")
    await store.turns.add_turn(turn("ann", "hi"))
    await store.turns.set_user_active("ann", False)
    assert not await store.turns.is_user_active("ann")
    await store.turns.add_turn(turn("ann", "a reply to ann", role="assistant"))
    assert not await store.turns.is_user_active("ann"), "the bot's own turn must not revive a blocked person"
    await store.turns.add_turn(turn("ann", "I'm back"))
    assert await store.turns.is_user_active("ann")
    await store.turns.set_user_active("bob", False)  # a person never seen before
    assert not await store.turns.is_user_active("bob")


async def test_files_are_deleted_unless_the_person_asked_to_keep_them(store: Store) -> None:
    assert not await store.turns.keeps_files("stranger")
    await store.turns.add_turn(turn("ann", "hi"))
    assert not await store.turns.keeps_files("ann"), "the default deletes files"
    await store.turns.set_keep_files("ann", True)
    await store.turns.set_keep_files("bob", True)  # a person never seen before
    assert await store.turns.keeps_files("ann") and await store.turns.keeps_files("bob")
    await store.turns.set_keep_files("ann", False)
    assert not await store.turns.keeps_files("ann")
    await store.memories.forget_all("bob")
    assert not await store.turns.keeps_files("bob"), "forgetting everything forgets the choice too"


async def test_spoken_replies_are_off_until_the_person_turns_them_on(store: Store) -> None:
    assert not await store.turns.speaks_replies("stranger")
    await store.turns.add_turn(turn("ann", "hi"))
    assert not await store.turns.speaks_replies("ann"), "spoken replies are off by default"
    await store.turns.set_spoken_replies("ann", True)
    await store.turns.set_spoken_replies("bob", True)  # a person never seen before
    assert await store.turns.speaks_replies("ann") and await store.turns.speaks_replies("bob")
    await store.turns.set_spoken_replies("ann", False)
    assert not await store.turns.speaks_replies("ann")
    await store.memories.forget_all("bob")
    assert not await store.turns.speaks_replies("bob"), "forgetting everything forgets the choice too"


async def test_memory_count_follows_adds_and_forgets(store: Store) -> None:
    assert await store.memories.memory_count("ann") == 0
    ids = await store.memories.add_memories([memory("ann", f"fact {n}") for n in range(3)])
    await store.turns.add_turn(turn("ann", "a turn is a memory too"))
    await store.memories.add_memories([memory("bob", "bob's own")])
    assert await store.memories.memory_count("ann") == 4
    await store.memories.forget("ann", ids[0])
    assert await store.memories.memory_count("ann") == 3
    await store.memories.forget_all("ann")
    assert await store.memories.memory_count("ann") == 0
    assert await store.memories.memory_count("bob") == 1


async def test_concurrent_tasks_write_and_read_without_tripping_over_each_other(store: Store) -> None:
    import asyncio

    first = await store.turns.add_turn(turn("ann", "the first"))

    async def person(n: int) -> None:
        user = f"user{n}"
        await store.turns.add_turn(turn(user, f"hello from {n}", key=f"k{n}"))
        await store.turns.set_user_active(user, n % 2 == 0)
        await store.turns.record_feedback(Feedback(first.id, user, "👍", 1.0, T0))
        await store.turns.link_message(MessageLink("telegram", "c", str(n), first.id, "ann"))
        assert await store.turns.recent_turns(user, "c1", 5)

    await asyncio.gather(*(person(n) for n in range(20)))
    stats = await store.stats()
    assert (stats.turns, stats.feedback_events) == (21, 20)
    assert [await store.turns.is_user_active(f"user{n}") for n in range(4)] == [True, False, True, False]
    assert await store.turns.find_message("telegram", "c", "19") is not None


async def test_daily_activity_counts_each_utc_day_of_the_window(store: Store) -> None:
    now = datetime.now(UTC)
    today = now.date()
    reply = await store.turns.add_turn(turn("ann", "hello back", role="assistant", at=now))
    await store.turns.add_turn(turn("ann", "hello", at=now))
    await store.turns.add_turn(turn("bob", "hi", at=now))
    await store.turns.add_turn(turn("ann", "two days ago", at=now - timedelta(days=2)))
    await store.turns.add_turn(turn("ann", "long ago", at=now - timedelta(days=30)))
    await store.memories.add_memories([memory("cat", "imported today", at=now)])
    await store.turns.record_feedback(Feedback(reply.id, "ann", "👍", 1.0, now))
    await store.turns.record_feedback(Feedback(reply.id, "bob", "👎", -1.0, now))

    days = await store.daily_activity(7)

    assert [d.day for d in days] == [today - timedelta(days=back) for back in range(6, -1, -1)]
    last, two_ago = days[-1], days[-3]
    assert (last.users, last.turns, last.memories, last.reactions) == (2, 3, 4, 2)
    assert last.reward == pytest.approx(0.0)
    assert (two_ago.users, two_ago.turns, two_ago.memories, two_ago.reactions) == (1, 1, 1, 0)
    assert two_ago.reward is None
    assert sum(d.turns for d in days) == 4  # the turn 30 days ago is outside the window
    assert await store.daily_activity(0) == []


async def test_maintain_runs_on_a_used_store_and_says_what_it_did(store: Store) -> None:
    await store.turns.add_turn(turn("ann", "something to analyse"))
    done = await store.maintain()
    assert done and all(isinstance(step, str) for step in done)
    assert (await store.stats()).turns == 1


async def test_a_forgotten_turn_leaves_the_chat_history_too(store: Store) -> None:
    secret = await store.turns.add_turn(turn("ann", "my PIN is 4711", key="a"))
    await store.turns.add_turn(turn("ann", "what a day", key="b"))
    assert await store.memories.forget("ann", secret.memory_id)
    assert [t.text for t in await store.turns.recent_turns("ann", "c1", 10)] == ["what a day"]


async def test_listing_and_counting_can_leave_kinds_out_or_count_only_some(store: Store) -> None:
    said = await store.turns.add_turn(turn("ann", "I adopted a dog called Biscuit"))
    reply = await store.turns.add_turn(turn("ann", "Your cat Bella is lovely", role="assistant"))
    await store.curation.revise_memory("ann", reply.memory_id, Revision(kind="reply"))
    [imported] = await store.memories.add_memories([memory("ann", "I like tea")])
    kept = await store.turns.add_turn(turn("ann", "Biscuit sleeps all day"))

    listed = await store.memories.list_memories("ann", 10, without_kinds=("reply",))
    assert [m.id for m in listed] == [said.memory_id, imported, kept.memory_id]
    assert [
        m.id for m in await store.memories.list_memories("ann", 2, offset=1, without_kinds=("reply",))
    ] == [
        imported,
        kept.memory_id,
    ], "the offset counts only what is listed"
    assert len(await store.memories.list_memories("ann", 10)) == 4, "nothing left out unless asked"
    assert await store.memories.memory_count("ann", without_kinds=("reply",)) == 3
    assert await store.memories.memory_count("ann", without_kinds=("reply", "imported")) == 2
    assert await store.memories.memory_count("ann") == 4
    assert await store.memories.memory_count("nobody", without_kinds=("reply",)) == 0
    assert await store.memories.memory_count("ann", only_kinds=("imported",)) == 1
    both = await store.memories.memory_count("ann", only_kinds=("imported", "reply"), without_kinds=["reply"])
    assert both == 1
    assert await store.memories.memory_count("nobody", only_kinds=("imported",)) == 0


async def test_search_leaves_the_bots_replies_and_the_persons_questions_out(store: Store) -> None:
    texts = {
        "reply": "your dog Biscuit is lovely",
        "question": "what is my dog Biscuit called",
        "turn": "my dog Biscuit",
    }
    ids = {}
    for kind, text in texts.items():
        stored = await store.turns.add_turn(
            turn("ann", text, role="assistant" if kind == "reply" else "user")
        )
        await store.curation.revise_memory("ann", stored.memory_id, Revision(kind=kind))
        ids[kind] = stored.memory_id
    dense = await store.memories.dense_search("ann", EMB.vector("dog Biscuit"), 10)
    lexical = await store.memories.lexical_search("ann", ["biscuit"], 10)
    assert [hit.memory.id for hit in dense] == [ids["turn"]]
    assert [hit.memory.id for hit in lexical] == [ids["turn"]]
    assert await store.memories.rare_terms("ann", ["biscuit", "lovely", "called"], share=0.0, floor=1) == [
        "biscuit"
    ]
    assert {m.kind for m in await store.memories.list_memories("ann", 10)} == set(texts), "kept and listed"
