"""`remember_turn` (core/memory/remember.py) on a real store, SQLite and PostgreSQL + pgvector, with the real
MiniLM embedder: near-duplicates are a matter of its similarities, so a hashed one would not do."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np

from bot.core.errors import InferenceTimeout
from bot.core.memory.consolidation import consolidate
from bot.core.memory.kinds import classify
from bot.core.memory.remember import DUPLICATE_SIMILARITY, remember_turn
from bot.core.models import Memory, NewTurn, Turn
from bot.core.store import Store
from bot.core.text import query_terms
from bot.inference.embedders.sentence import SentenceTransformerEmbedder
from tests.support.fakes import ScriptedInference

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
USER = "ann"


class Chat:
    """One person's turns stored as the conversation stores them, then remembered as the job does."""

    def __init__(self, store: Store, embedder: SentenceTransformerEmbedder) -> None:
        self.store = store
        self.embedder = embedder

    async def turn(
        self, text: str, at: datetime, *, role: Literal["user", "assistant"] = "user", user: str = USER
    ) -> Turn:
        [vector] = await self.embedder.embed([text])
        kind = classify(text) if role == "user" else "turn"
        new = NewTurn(
            user, "c1", role, text, vector, self.embedder.model_name, at,
            meta={"chat_id": "c1"}, memory_kind=kind,
        )  # fmt: skip
        return await self.store.turns.add_turn(new)

    async def say(self, text: str, at: datetime, **model: ScriptedInference) -> Turn:
        turn = await self.turn(text, at)
        await remember_turn(self.store, self.embedder, USER, turn.memory_id, at, **model)
        return turn

    async def memory(self, memory_id: int) -> Memory:
        [found] = await self.store.curation.get_memories(USER, [memory_id])
        return found

    async def all(self) -> list[Memory]:
        return await self.store.memories.list_memories(USER, 1000)

    async def dense(self, query: str, k: int = 20) -> list[Memory]:
        [vector] = await self.embedder.embed([query])
        return [hit.memory for hit in await self.store.memories.dense_search(USER, vector, k)]

    async def lexical(self, query: str, k: int = 20) -> list[Memory]:
        return [hit.memory for hit in await self.store.memories.lexical_search(USER, query_terms(query), k)]

    async def similarity(self, one: str, other: str) -> float:
        a, b = await self.embedder.embed([one, other])
        return float(np.dot(a, b))


async def test_each_statement_of_a_longer_message_becomes_a_memory_linked_to_the_turn(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    text = "Hi there! I love hiking. My sister's name is Ana. See you."
    turn = await chat.turn(text, T0)
    done = await remember_turn(any_store, minilm, USER, turn.memory_id, T0)

    assert len(done.added) == 2 and done.updated == [] and done.superseded == []
    added = await any_store.curation.get_memories(USER, done.added)
    assert [(m.kind, m.text, m.speaker) for m in added] == [
        ("preference", "I love hiking.", "user"),
        ("fact", "My sister's name is Ana.", "user"),
    ]
    for memory in added:
        assert await any_store.curation.memory_sources(memory.id) == [turn.id]
        assert memory.created_at == T0, "said when the turn was"
        assert memory.meta["extracted_by"] == "rule" and memory.meta["chat_id"] == "c1"
    own = await chat.memory(turn.memory_id)
    assert (own.kind, own.text, own.status) == (classify(text), text, "active"), "the turn stays as stored"
    assert added[1].id in {m.id for m in await chat.lexical("sister Ana")}
    assert added[0].id in {m.id for m in await chat.dense("I enjoy hiking")}
    assert done.as_payload() == {"added": done.added, "updated": [], "superseded": [], "revised": []}


async def test_a_single_statement_only_updates_its_own_memory(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    turn = await chat.turn("My exam is on 2026-05-14", T0)
    done = await remember_turn(any_store, minilm, USER, turn.memory_id, T0)

    assert done.updated == [turn.memory_id] and done.added == []
    own = await chat.memory(turn.memory_id)
    assert own.kind == "event" and own.text == "My exam is on 2026-05-14"
    assert own.meta == {"chat_id": "c1", "extracted_by": "rule", "event_date": "2026-05-14"}
    assert len(await chat.all()) == 1, "no copy of the message"
    assert await any_store.curation.memory_sources(own.id) == [turn.id]


async def test_remember_that_pins_the_statement(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    turn = await chat.turn("Remember that my locker code is 4411", T0)
    done = await remember_turn(any_store, minilm, USER, turn.memory_id, T0)
    [pinned] = await any_store.curation.get_memories(USER, done.added)
    assert pinned.pinned and pinned.text == "My locker code is 4411" and pinned.kind == "fact"
    assert await any_store.curation.memory_sources(pinned.id) == [turn.id]


async def test_a_restatement_merges_into_the_older_memory(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    first = await chat.say("I love green tea.", T0)
    later = T0 + timedelta(days=2)
    second = await chat.turn("I love drinking green tea.", later)
    done = await remember_turn(any_store, minilm, USER, second.memory_id, later)

    assert done.updated == [first.memory_id] and done.added == []
    older, twin = await chat.memory(first.memory_id), await chat.memory(second.memory_id)
    assert older.text == "I love drinking green tea." and older.kind == "preference" and older.recallable
    assert older.updated_at == later
    assert (twin.status, twin.superseded_by) == ("merged", first.memory_id)
    assert await any_store.curation.memory_sources(first.memory_id) == [first.id, second.id]
    dense = [m.id for m in await chat.dense("green tea") if "green tea" in m.text]
    lexical = [m.id for m in await chat.lexical("green tea")]
    assert dense == lexical == [first.memory_id], "only one of the twins is recalled"
    assert [m.text for m in await chat.lexical("drinking")] == ["I love drinking green tea."], "re-indexed"


async def test_opposite_polarity_is_no_duplicate(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    likes, dislikes = (
        "I like strong black coffee in the morning",
        "I don't like strong black coffee in the morning",
    )
    assert await chat.similarity(likes, dislikes) >= DUPLICATE_SIMILARITY, "close enough to merge by vectors"
    first = await chat.say(likes, T0)
    second = await chat.turn(dislikes, T0 + timedelta(days=1))
    done = await remember_turn(any_store, minilm, USER, second.memory_id, T0 + timedelta(days=1))

    assert done.updated == [second.memory_id], "it updated only its own memory"
    assert (await chat.memory(first.memory_id)).text == likes
    assert {m.text for m in await chat.lexical("black coffee")} == {likes, dislikes}


async def test_a_contradiction_supersedes_older_memories_in_both_searches(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    lisbon = await chat.say("I live in Lisbon", T0)
    luigi = await chat.say("I love the pizza at Luigi's", T0 + timedelta(minutes=1))
    keep = await chat.say("I like long walks by the river", T0 + timedelta(minutes=2))
    later = T0 + timedelta(days=30)

    moved = await chat.turn("I moved to Berlin", later)
    done = await remember_turn(any_store, minilm, USER, moved.memory_id, later)
    assert done.superseded == [lisbon.memory_id]
    closed = await chat.turn("Luigi's closed down", later + timedelta(minutes=1))
    done = await remember_turn(any_store, minilm, USER, closed.memory_id, later + timedelta(minutes=1))
    assert done.superseded == [luigi.memory_id]

    gone = await chat.memory(lisbon.memory_id)
    assert (gone.status, gone.superseded_by, gone.text) == ("superseded", moved.memory_id, "I live in Lisbon")
    assert (await chat.memory(luigi.memory_id)).superseded_by == closed.memory_id
    recalled = {m.id for m in await chat.dense("where do I live and eat pizza", 50)}
    recalled |= {m.id for m in await chat.lexical("Lisbon Luigi pizza live")}
    assert lisbon.memory_id not in recalled and luigi.memory_id not in recalled
    assert moved.memory_id in recalled and keep.memory_id in {m.id for m in await chat.dense("river walks")}
    assert len(await chat.all()) == 5, "superseded, not deleted: /memories and /export still show them"


async def test_news_said_again_supersedes_nothing_new(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    await chat.say("I live in Berlin", T0)
    first = await chat.say("I moved to Berlin", T0 + timedelta(days=1))
    again = await chat.turn("I moved to Berlin last year", T0 + timedelta(days=2))
    done = await remember_turn(any_store, minilm, USER, again.memory_id, T0 + timedelta(days=2))
    assert done.superseded == [] and (await chat.memory(first.memory_id)).recallable


async def test_what_is_not_a_recallable_user_turn_is_left_alone(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    reply = await chat.turn("I like tea too! Luigi's closed down, sadly.", T0, role="assistant")
    await chat.say("I love Luigi's", T0 - timedelta(days=1))
    done = await remember_turn(any_store, minilm, USER, reply.memory_id, T0)
    assert (done.added, done.updated, done.superseded) == ([], [], [])
    assert all(m.recallable for m in await chat.all())

    forgotten = await chat.turn("I like green tea. I have two cats.", T0)
    assert await any_store.memories.forget(USER, forgotten.memory_id)
    done = await remember_turn(any_store, minilm, USER, forgotten.memory_id, T0)
    assert (done.added, done.updated) == ([], [])
    mine = await chat.turn("I like green tea. I have two cats.", T0, user="bob")
    done = await remember_turn(any_store, minilm, USER, mine.memory_id, T0)
    assert (done.added, done.updated) == ([], []), "never another person's turn"
    done = await remember_turn(any_store, minilm, USER, 10**9, T0)
    assert (done.added, done.updated) == ([], [])
    assert len(await chat.all()) == 2


async def test_model_candidates_join_when_valid_and_grounded(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    lines = [
        json.dumps({"kind": "fact", "text": "adopted a cat named Miso"}),
        "Sure, here is what I found!",
        '{"kind": "fact", "text": "owns a yacht in Monaco"}',  # never said
        '{"kind": "opinion", "text": "works as a nurse at the hospital"}',  # no such kind
        '{"kind": "fact", "text": "works as a nurse", "confidence": 1}',  # outside the schema
        '{"kind": "fact", "text": "likes green',  # cut off
        json.dumps({"kind": "fact", "text": "works as a nurse at the city hospital"}),  # the rule's already
    ]
    model = ScriptedInference("\n".join(lines))
    text = "I just adopted a cat named Miso. I work as a nurse at the city hospital."
    turn = await chat.turn(text, T0)
    done = await remember_turn(any_store, minilm, USER, turn.memory_id, T0, inference=model)

    assert len(model.prompts) == 1 and model.prompts[0][-1].content == text
    found = await any_store.curation.get_memories(USER, done.added)
    assert [(m.text, m.meta["extracted_by"]) for m in found] == [
        ("I work as a nurse at the city hospital.", "rule"),
        ("adopted a cat named Miso", "model"),
    ]
    texts = " ".join(m.text for m in await chat.all())
    assert "yacht" not in texts and "likes green" not in texts
    for memory in found:
        assert await any_store.curation.memory_sources(memory.id) == [turn.id]


async def test_a_failing_model_leaves_the_rules_to_it(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    turn = await chat.turn("I like green tea. I have two cats.", T0)
    model = ScriptedInference(fail_with=InferenceTimeout("slow"))
    done = await remember_turn(any_store, minilm, USER, turn.memory_id, T0, inference=model)
    assert len(done.added) == 2


async def test_a_summary_written_before_the_news_loses_only_the_untrue_sentence(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    lived = await chat.turn("I've lived in Glasgow for six years.", T0)  # stored raw, as imported history
    await chat.turn("Lovely city!", T0 + timedelta(minutes=1), role="assistant")
    await chat.turn("I spent the weekend restoring an old oak bookshelf.", T0 + timedelta(minutes=2))
    await consolidate(any_store, minilm, USER, T0 + timedelta(days=20))
    [summary] = [m for m in await chat.all() if m.kind == "summary"]
    assert "Glasgow" in summary.text and "bookshelf" in summary.text

    later = T0 + timedelta(days=30)
    moved = await chat.turn("We just moved to Porto!", later)
    done = await remember_turn(any_store, minilm, USER, moved.memory_id, later)

    assert done.superseded == [lived.memory_id] and done.revised == [summary.id]
    revised = await chat.memory(summary.id)
    assert revised.recallable and revised.updated_at == later
    assert revised.text == f"{T0:%Y-%m-%d}: I spent the weekend restoring an old oak bookshelf."
    lived_text = "I've lived in Glasgow for six years."
    assert revised.meta["dropped"] == [{"text": lived_text, "by": moved.memory_id}]
    assert summary.id not in {m.id for m in await chat.lexical("Glasgow lived")}
    assert summary.id in {m.id for m in await chat.lexical("bookshelf")}
    assert summary.id in {m.id for m in await chat.dense("restoring an oak bookshelf", 3)}


async def test_a_summary_with_nothing_true_left_is_superseded_with_the_fact(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    await chat.turn("I've lived in Glasgow for six years.", T0)
    await chat.turn("Lovely city!", T0 + timedelta(minutes=1), role="assistant")
    await consolidate(any_store, minilm, USER, T0 + timedelta(days=20))
    [summary] = [m for m in await chat.all() if m.kind == "summary"]

    later = T0 + timedelta(days=30)
    moved = await chat.say("I moved to Porto last week.", later)

    gone = await chat.memory(summary.id)
    assert (gone.status, gone.superseded_by) == ("superseded", moved.memory_id)
    assert gone.meta["dropped"] == [{"text": "I've lived in Glasgow for six years.", "by": moved.memory_id}]
    assert summary.id not in {m.id for m in await chat.dense("which city do I live in", 20)}


async def test_hostile_phrasings_supersede_nothing_and_others_facts_stay(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    chat = Chat(any_store, minilm)
    lyon = await chat.say("I live in Lyon", T0)
    sister = await chat.say("My sister lives in Paris", T0 + timedelta(minutes=1))
    smoker = await chat.say("I'm a smoker, about ten a day.", T0 + timedelta(minutes=2))
    at = T0 + timedelta(days=1)
    said: dict[str, int] = {}
    for text in (
        "If I moved to Rome I'd learn Italian",
        "My mum thinks I moved to Rome",
        "Do I still live in Lyon?",
        "I'm not moving to Rome, I don't live in Rome",
        "My dad quit smoking last year",
        "I should quit smoking",
    ):
        at += timedelta(minutes=1)
        turn = await chat.turn(text, at)
        done = await remember_turn(any_store, minilm, USER, turn.memory_id, at)
        assert done.superseded == [] and done.revised == [], text
        said[text] = turn.memory_id
    reply = await chat.turn("You moved to Rome and quit smoking!", at, role="assistant")
    assert (await remember_turn(any_store, minilm, USER, reply.memory_id, at)).superseded == []

    moved = await chat.turn("I moved to Rome", at + timedelta(days=1))
    done = await remember_turn(any_store, minilm, USER, moved.memory_id, at + timedelta(days=1))
    # "I don't live in Rome" was true when said; it is not any more.
    assert done.superseded == [lyon.memory_id, said["I'm not moving to Rome, I don't live in Rome"]]
    quit_ = await chat.turn("I quit smoking in spring.", at + timedelta(days=2))
    done = await remember_turn(any_store, minilm, USER, quit_.memory_id, at + timedelta(days=2))
    assert done.superseded == [smoker.memory_id]
    assert (await chat.memory(sister.memory_id)).recallable, "her facts are not the person's"
