"""The [memory] scenarios, end to end through the conversation core with the real MiniLM embedder and
a simulated clock (each message carries its own time), on SQLite and on PostgreSQL + pgvector.

The model is the scripted one: these tests are about which memories reach the prompt, in what
order, and why, so they read the prompts it was given."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.prompt import memory_lines
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.operations import import_items
from bot.core.memory.recall import Recalled, hybrid_search
from bot.core.memory.remember import remember_turn
from bot.core.models import Turn
from bot.core.store import Store
from bot.inference.embedders.sentence import SentenceTransformerEmbedder
from tests.support.fakes import ScriptedInference

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
USER = "ann"


class Person:
    """One person talking to Kindred through the core, at times the test chooses."""

    def __init__(self, store: Store, embedder: SentenceTransformerEmbedder, **policy: object) -> None:
        self.store = store
        self.embedder = embedder
        self.model = ScriptedInference("Nice to hear from you.")
        self.stored: list[Turn] = []
        self.now = T0
        self.conversation = Conversation(
            store,
            embedder,
            self.model,
            ConversationPolicy(persona="You are a test companion.", reactions=DEFAULT_REACTIONS, **policy),  # type: ignore[arg-type]
            after_turn=self.stored.append,
            clock=lambda: self.now,  # the reply is written when the message is: simulated time
        )

    async def say(self, text: str, at: datetime) -> ReplyDone:
        """Say `text` at `at`, then run the extraction job for it as a worker would (rules only:
        these scenarios must hold with the 135M model's candidates all rejected)."""
        self.now = at
        events = [e async for e in self.conversation.handle_message(UserMessage(USER, "c1", text, at))]
        assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
        for turn in self.stored:
            await remember_turn(self.store, self.embedder, USER, turn.memory_id, at)
        self.stored.clear()
        return events[-1]

    async def react(self, done: ReplyDone, emoji: str, at: datetime) -> None:
        reaction = Reaction(USER, done.turn_id or 0, emoji, at)
        assert await self.conversation.handle_reaction(reaction) is not None

    def recalled_lines(self) -> list[str]:
        """The memory lines of the last prompt, in the order recall ranked them."""
        system = self.model.prompts[-1][0].content
        return memory_lines(system)

    async def search(self, query: str, k: int, at: datetime) -> list[Recalled]:
        [vector] = await self.embedder.embed([query])
        policy = self.conversation.policy
        return await hybrid_search(self.store, USER, query, vector, k, scoring=policy.scoring, now=at)


def position(found: list[Recalled], fragment: str) -> int:
    return next(i for i, item in enumerate(found) if fragment in item.memory.text)


FILLERS = [
    "Work was busy today, lots of meetings",
    "I watched a documentary about whales",
    "My brother visits in June",
    "I started reading a novel about sailors",
    "The bus was late again",
    "I repainted the kitchen shelf",
    "We played board games with friends",
    "I tried a new bread recipe",
]


async def test_a_cue_months_later_recalls_the_caffeine_note_first(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    person = Person(any_store, minilm, recent_turns=2)
    await person.say("I'm sensitive to caffeine, coffee after 2pm keeps me up", T0)
    # An episode that matches the cue more closely than the note does, two months before the cue.
    await person.say("I slept great last night", T0 + timedelta(days=30))
    for day, text in enumerate(FILLERS):
        await person.say(text, T0 + timedelta(days=35 + 6 * day))

    await person.say("I've been sleeping badly lately", T0 + timedelta(days=91))

    lines = person.recalled_lines()
    assert "sensitive to caffeine" in lines[0], lines
    found = await person.search("I've been sleeping badly lately", 5, T0 + timedelta(days=91))
    caffeine, episode = found[position(found, "caffeine")], found[position(found, "slept great")]
    assert caffeine.memory.kind == "fact" and episode.memory.kind == "event"
    assert caffeine.why is not None and episode.why is not None
    # The episode is the closer match; what puts the stable fact first is the episode's decay.
    assert episode.why.relevance > caffeine.why.relevance
    assert caffeine.why.decay == 1.0 and episode.why.decay < 0.2


async def test_a_recommendation_rated_five_times_comes_ahead_of_an_equally_relevant_one_rated_down(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    await import_items(
        any_store.memories,
        minilm,
        USER,
        [
            ImportItem(1, "You recommended the Thai restaurant Baan on Elm Street", None, T0),
            ImportItem(2, "You recommended the Greek taverna Olympia on Oak Street", None, T0),
        ],
    )
    # One memory per prompt, and every earlier turn in the history, so each reply uses one of them.
    single = Person(any_store, minilm, memory_top_k=1, recent_turns=40)
    for day in range(5):
        done = await single.say("Greek food for dinner?", T0 + timedelta(days=day + 1))
        assert "Greek taverna" in single.recalled_lines()[0]
        await single.react(done, "❤️", T0 + timedelta(days=day + 1, minutes=2))
    done = await single.say("Thai food for dinner?", T0 + timedelta(days=7))
    assert "Thai restaurant" in single.recalled_lines()[0]
    await single.react(done, "👎", T0 + timedelta(days=7, minutes=2))

    later = T0 + timedelta(days=10)
    query = "where should we eat out tonight?"
    [vector] = await minilm.embed([query])
    unweighed = recommendations(await hybrid_search(any_store, USER, query, vector, 20, scoring=None))
    assert "Thai" in unweighed[0].memory.text, "by relevance alone the Thai one leads"
    assert unweighed[1].score / unweighed[0].score > 0.95, "equally relevant, near enough"

    both = Person(any_store, minilm, memory_top_k=2, recent_turns=40)
    await both.say(query, later)
    lines = both.recalled_lines()
    assert "Greek taverna" in lines[0] and "Thai restaurant" in lines[1], lines
    greek, thai = (item.why for item in recommendations(await both.search(query, 20, later)))
    assert greek is not None and thai is not None
    assert greek.favoured and greek.reward == pytest.approx(5.0) and thai.reward == pytest.approx(-1.0)
    assert abs(greek.relevance - thai.relevance) / thai.relevance < 0.05


def recommendations(found: list[Recalled]) -> list[Recalled]:
    return [item for item in found if item.memory.text.startswith("You recommended")]


async def test_an_event_from_90_days_ago_drops_below_a_preference_from_the_same_day(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    person = Person(any_store, minilm, recent_turns=0)
    await person.say("I love Italian cooking", T0)
    await person.say("Yesterday we cooked Italian food at home", T0 + timedelta(minutes=1))
    query = "any dinner ideas for this weekend?"

    fresh = told(await person.search(query, 5, T0 + timedelta(days=1)))
    assert [item.memory.kind for item in fresh] == ["event", "preference"], "fresh, the event leads"

    await person.say(query, T0 + timedelta(days=90))
    lines = [line for line in person.recalled_lines() if "Italian" in line]
    assert "I love Italian cooking" in lines[0] and "Yesterday we cooked" in lines[1], lines
    aged = told(await person.search(query, 5, T0 + timedelta(days=90)))
    assert [item.memory.kind for item in aged] == ["preference", "event"]
    preference, event = aged[0].why, aged[1].why
    assert preference is not None and event is not None
    assert event.relevance > preference.relevance, "the event is still the closer match"
    assert preference.decay == 1.0 and event.decay < 0.06


def told(found: list[Recalled]) -> list[Recalled]:
    """The two statements, without the questions and replies around them."""
    return [item for item in found if "Italian" in item.memory.text]


async def test_forget_removes_a_memory_from_both_search_paths_and_the_prompt(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    person = Person(any_store, minilm, recent_turns=0)
    await person.say("my locker code is 4471", T0)
    await person.say("I like rainy mornings", T0 + timedelta(minutes=1))
    [memory] = [m for m in await any_store.memories.list_memories(USER, 20) if "4471" in m.text]
    [vector] = await minilm.embed(["what is my locker code 4471"])
    assert memory.id in [hit.memory.id for hit in await any_store.memories.dense_search(USER, vector, 5)]
    assert memory.id in [hit.memory.id for hit in await any_store.memories.lexical_search(USER, ["4471"], 5)]

    assert await any_store.memories.forget(USER, memory.id)

    assert memory.id not in [hit.memory.id for hit in await any_store.memories.dense_search(USER, vector, 50)]
    assert await any_store.memories.lexical_search(USER, ["4471", "locker"], 50) == []
    await person.say("what is my locker code 4471", T0 + timedelta(days=1))
    assert not any("4471" in line for line in person.recalled_lines())


async def test_luigis_closed_down_and_is_no_longer_suggested(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    person = Person(any_store, minilm, recent_turns=0)
    await person.say("Let's meet at Luigi's, my favourite", T0)
    person.model.reply = "Luigi's sounds perfect, enjoy the pasta!"
    await person.say("We had dinner at Luigi's on the corner, the pasta was great", T0 + timedelta(days=3))
    person.model.reply = "Nice to hear from you."
    await person.say("Where should we go for dinner on Friday?", T0 + timedelta(days=20))
    assert any("Luigi" in line for line in person.recalled_lines()), "before: Luigi's is a suggestion"

    await person.say("Luigi's closed down last month", T0 + timedelta(days=120))
    await person.say("Where should we go for dinner on Friday?", T0 + timedelta(days=121))

    lines = person.recalled_lines()
    suggestions = [line for line in lines if "Luigi" in line and "closed" not in line]
    assert suggestions == [], lines
    [vector] = await minilm.embed(["dinner at Luigi's"])
    dense = [hit.memory for hit in await any_store.memories.dense_search(USER, vector, 50)]
    lexical = [hit.memory for hit in await any_store.memories.lexical_search(USER, ["luigi"], 50)]
    assert all("closed" in m.text for m in dense + lexical if "Luigi" in m.text), "only the news remains"
    old = [
        m
        for m in await any_store.memories.list_memories(USER, 100)
        if "Luigi" in m.text and "closed" not in m.text
    ]
    news = next(m for m in await any_store.memories.list_memories(USER, 100) if "closed down" in m.text)
    said = [m for m in old if m.speaker == "user"]
    assert len(said) == 2 and {m.status for m in said} == {"superseded"}, "both statements"
    assert {m.superseded_by for m in said} == {news.id}, "each links to what replaced it"
    # The reply is no evidence: never searched at all, so there is nothing for the news to replace.
    [reply] = [m for m in old if m.speaker == "assistant"]
    assert reply.kind == "reply" and not reply.recallable


async def test_a_near_duplicate_statement_updates_the_old_memory_instead_of_adding_a_twin(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    person = Person(any_store, minilm, recent_turns=0)
    await person.say("I'm allergic to peanuts", T0)
    await person.say("Work was busy today, lots of meetings", T0 + timedelta(days=1))
    await person.say("I am allergic to peanuts.", T0 + timedelta(days=40))

    statements = [m for m in await any_store.memories.list_memories(USER, 100) if "allergic" in m.text]
    recallable = [m for m in statements if m.recallable]
    assert len(recallable) == 1, statements
    kept = recallable[0]
    assert kept.text == "I am allergic to peanuts." and kept.kind == "fact", "the newer wording"
    twin = next(m for m in statements if m.id != kept.id)
    assert twin.status == "merged" and twin.superseded_by == kept.id
    assert len(await any_store.curation.memory_sources(kept.id)) == 2, "both turns are its sources"
    [vector] = await minilm.embed(["do I have any food allergies?"])
    found = [hit.memory.id for hit in await any_store.memories.dense_search(USER, vector, 10)]
    assert kept.id in found and twin.id not in found


async def test_the_same_words_said_in_several_chats_fill_one_line_of_the_prompt(
    any_store: Store, minilm: SentenceTransformerEmbedder
) -> None:
    """Before the upkeep job has merged them (or where it never does: raw turns), the same words
    are several memories; the prompt shows them once, and the room goes to other memories."""
    person = Person(any_store, minilm, recent_turns=0)
    await person.say("I walked by the river this morning", T0)
    for chat in ("c2", "c3", "c4"):
        message = UserMessage(USER, chat, "Good night, talk tomorrow", T0 + timedelta(hours=23))
        assert [e async for e in person.conversation.handle_message(message)]
    assert len([m for m in await any_store.memories.list_memories(USER, 100) if "Good night" in m.text]) == 3

    await person.say("good night!", T0 + timedelta(days=1, hours=23))

    lines = person.recalled_lines()
    copies = [line for line in lines if "Good night, talk tomorrow" in line]
    assert len(copies) == 1, lines
    assert any("river" in line for line in lines), lines
