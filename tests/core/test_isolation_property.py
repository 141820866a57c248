"""One person's memories never reach another person's prompt: a property test over random interleaved
operations by several people (say, in a DM or a shared group; remember; react, also to someone
else's reply; forget; forget all), on SQLite and on PostgreSQL + pgvector.

Every statement carries a secret word of its teller, and every person's messages share the other
words, so a search that leaked across people would find the others' statements. After each program:
no prompt holds another person's secret, nor a secret its teller had forgotten, and searches return
only the searcher's own memories."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.conversation import Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.memory_file import ImportItem
from bot.core.memory_ops import import_items
from bot.core.ports import Store
from bot.core.recall import hybrid_search
from bot.core.reward import DEFAULT_REACTIONS
from bot.store.sqlite import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

PEOPLE = 3
T0 = datetime(2026, 8, 1, tzinfo=UTC)
SHARED = "my favourite colour and secret code word is"

say = st.tuples(st.just("say"), st.integers(0, PEOPLE - 1), st.booleans())
remember = st.tuples(st.just("remember"), st.integers(0, PEOPLE - 1), st.just(False))
react = st.tuples(st.just("react"), st.integers(0, PEOPLE - 1), st.integers(0, PEOPLE - 1))
forget = st.tuples(st.just("forget"), st.integers(0, PEOPLE - 1), st.integers(0, 50))
forget_all = st.tuples(st.just("forget_all"), st.integers(0, PEOPLE - 1), st.just(0))
programs = st.lists(st.one_of(say, say, remember, react, forget, forget_all), min_size=1, max_size=25)


@dataclass
class World:
    """One program's people (fresh ids, so every example has a store of its own in effect)."""

    store: Store
    run: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    model: ScriptedInference = field(default_factory=lambda: ScriptedInference("Tell me more."))
    count: int = 0
    last_reply: dict[int, int] = field(default_factory=dict)
    forgotten: dict[int, set[str]] = field(default_factory=dict)
    # Who spoke each prompt, and the secrets they had forgotten by then, in prompt order.
    prompts: list[tuple[int, frozenset[str]]] = field(default_factory=list)

    def person(self, index: int) -> str:
        return f"p{index}-{self.run}"

    def secret(self, index: int) -> str:
        self.count += 1
        return f"s{index}x{self.run}x{self.count}"

    def secrets_in(self, text: str) -> set[str]:
        return {word for word in text.split() if word.startswith("s") and f"x{self.run}x" in word}

    def when(self) -> datetime:
        return T0 + timedelta(minutes=self.count)


async def play(world: World, program: list[tuple[str, int, object]]) -> None:
    policy = ConversationPolicy(persona="p", recent_turns=0, memory_top_k=8, reactions=DEFAULT_REACTIONS)
    conv = Conversation(world.store, HashEmbedder(), world.model, policy)
    for op, who, arg in program:
        user = world.person(who)
        if op == "say":
            group = bool(arg)
            text = f"{SHARED} {world.secret(who)}"
            chat = "group" if group else f"dm-{who}"
            message = UserMessage(user, chat, text, world.when(), private=not group)
            events = [event async for event in conv.handle_message(message)]
            assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
            world.last_reply[who] = events[-1].turn_id
            world.prompts.append((who, frozenset(world.forgotten.get(who, set()))))
        elif op == "remember":
            item = ImportItem(1, f"{SHARED} {world.secret(who)}", "user", world.when())
            await import_items(world.store, HashEmbedder(), user, [item])
        elif op == "react" and isinstance(arg, int) and arg in world.last_reply:
            await conv.handle_reaction(Reaction(user, world.last_reply[arg], "❤️", world.when()))
        elif op == "forget" and isinstance(arg, int):
            memories = await world.store.list_memories(user, 100)
            if memories:
                gone = memories[arg % len(memories)]
                assert await world.store.forget(user, gone.id)
                world.forgotten.setdefault(who, set()).update(world.secrets_in(gone.text))
        elif op == "forget_all":
            for memory in await world.store.list_memories(user, 1000):
                world.forgotten.setdefault(who, set()).update(world.secrets_in(memory.text))
            await world.store.forget_all(user)
            world.last_reply.pop(who, None)


def check_prompts(world: World) -> None:
    assert len(world.prompts) == len(world.model.prompts)
    for (who, forgotten), prompt in zip(world.prompts, world.model.prompts, strict=True):
        text = "\n".join(message.content for message in prompt)
        others = [f"s{other}x{world.run}x" for other in range(PEOPLE) if other != who]
        assert not any(mark in text for mark in others), f"another person's secret reached p{who}: {text}"
        assert not forgotten & set(text.split()), f"a forgotten memory came back: {text}"


async def check_searches(world: World) -> None:
    embedder = HashEmbedder()
    query = f"{SHARED} " + " ".join(f"s{other}x{world.run}" for other in range(PEOPLE))
    for who in range(PEOPLE):
        user = world.person(who)
        found = await hybrid_search(world.store, user, query, embedder.vector(query), 50)
        assert all(item.memory.user_id == user for item in found)
        held = {word for item in found for word in world.secrets_in(item.memory.text)}
        assert not held & world.forgotten.get(who, set())
        for other in range(PEOPLE):
            if other != who:
                secrets = [f"s{other}x{world.run}x{n}" for n in range(1, world.count + 1)]
                assert await world.store.lexical_search(user, secrets, 50) == []
                assert all(hit.memory.user_id == user for hit in await world.store.dense_search(
                    user, embedder.vector(" ".join(secrets)), 50))


async def run_program(store: Store, program: list[tuple[str, int, object]]) -> None:
    world = World(store)
    await play(world, program)
    check_prompts(world)
    await check_searches(world)
    for who in range(PEOPLE):
        user = world.person(who)
        for item in await store.list_memories(user, 1000):
            assert not world.secrets_in(item.text) & world.forgotten.get(who, set()), "forgotten, yet back"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the store lives: a SQLite file, or a fresh PostgreSQL database (its DSN)."""
    if request.param == "sqlite":
        return str(tmp_path / "kindred.db")
    from tests.support.pg import fresh_database

    return asyncio.run(fresh_database(request.getfixturevalue("pg_server")))


async def _open(place: str) -> Store:
    if place.endswith(".db"):
        return await SqliteStore.open(Path(place))
    from bot.store.postgres import PostgresStore

    return await PostgresStore.open(place, max_size=2)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs)
def test_no_person_ever_sees_another_persons_memories(
    place: str, program: list[tuple[str, int, object]]
) -> None:
    async def one() -> None:
        store = await _open(place)
        try:
            await run_program(store, program)
        finally:
            await store.close()

    asyncio.run(one())
