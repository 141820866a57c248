"""One person's memories never reach another person: a property test over random interleaved
operations by several people (say, in a DM or a shared group; remember; react, also to someone
else's reply; extract; consolidate; build an app; schedule a reminder and list them; build the
night's training set; export; forget; forget all), on SQLite and on PostgreSQL + pgvector.

Every statement carries a secret word of its teller, and every person's messages share the other
words, so a search that leaked across people would find the others' statements. Whenever something
is returned (a prompt, an export, an app, a training example) and after each program: it holds no
other person's secret, nor a secret its owner had forgotten (apps aside: a single /forget leaves an
app that quoted the memory, forget all takes the apps), and searches return only the searcher's own
memories. After each program a proactive beat runs, late enough for every reminder to be due, and
each message it sends holds only its recipient's secrets, none that forget all took away."""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import Reaction, ReplyDone, UserMessage
from bot.core.learning.dataset import DatasetPolicy, build_dataset
from bot.core.learning.reward import DEFAULT_REACTIONS, RewardWeights
from bot.core.memory.consolidation import ConsolidationPolicy, consolidate
from bot.core.memory.controls import Controls
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.kinds import NOT_EVIDENCE
from bot.core.memory.operations import import_items
from bot.core.memory.recall import hybrid_search
from bot.core.memory.remember import remember_turn
from bot.core.miniapps.build import BuildRequest, build_app
from bot.core.proactive.beat import ProactiveBeat
from bot.core.proactive.commands import ProactiveCommands
from bot.core.proactive.models import ProactiveSettings
from bot.core.store import Store
from bot.web.miniapps.render import TemplateRenderer
from bot.wiring.miniapp_jobs import MEMORIES_READ
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.places import open_place

PEOPLE = 3
PLATFORM = "sim"
T0 = datetime(2026, 8, 1, tzinfo=UTC)
SHARED = "my favourite colour and secret code word is"
SAID = ("turn", "imported", "question")  # memories of what was said, not derived from it

say = st.tuples(st.just("say"), st.integers(0, PEOPLE - 1), st.booleans())
remember = st.tuples(st.just("remember"), st.integers(0, PEOPLE - 1), st.just(False))
react = st.tuples(st.just("react"), st.integers(0, PEOPLE - 1), st.integers(0, PEOPLE - 1))
forget = st.tuples(st.just("forget"), st.integers(0, PEOPLE - 1), st.integers(0, 50))
forget_all = st.tuples(st.just("forget_all"), st.integers(0, PEOPLE - 1), st.just(0))
remind = st.tuples(st.just("remind"), st.integers(0, PEOPLE - 1), st.booleans())
# What the workers and commands do with a person's memories, each returning something to check.
derived = st.tuples(st.sampled_from(["extract", "consolidate", "app", "dataset", "export", "reminders"]),
                    st.integers(0, PEOPLE - 1), st.just(0))  # fmt: skip
programs = st.lists(
    st.one_of(say, say, remember, react, remind, forget, forget_all, derived, derived),
    min_size=1,
    max_size=25,
)


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
    # The secrets in each person's reminders; forget all cancels them with everything else.
    reminded: dict[int, set[str]] = field(default_factory=dict)

    def person(self, index: int) -> str:
        # A platform prefix, as every real person id has: beat finds the messenger by it.
        return f"{PLATFORM}:p{index}-{self.run}"

    def index_of(self, user_id: str) -> int | None:
        found = re.fullmatch(rf"{PLATFORM}:p(\d+)-{self.run}", user_id)
        return None if found is None else int(found.group(1))

    def secret(self, index: int) -> str:
        self.count += 1
        return f"s{index}x{self.run}x{self.count}"

    def secrets_in(self, text: str) -> set[str]:
        words = text.lower().replace('"', " ").replace(":", " ").split()
        return {word for word in words if word.startswith("s") and f"x{self.run}x" in word}

    def when(self) -> datetime:
        return T0 + timedelta(minutes=self.count)

    def check(self, owner: int, text: str, what: str, *, forgotten_too: bool = True) -> None:
        """`text`, returned for `owner`, holds no other person's secret (nor a forgotten one of theirs)."""
        others = [f"s{other}x{self.run}x" for other in range(PEOPLE) if other != owner]
        lowered = text.lower()
        assert not any(mark in lowered for mark in others), f"another person's secret in p{owner}'s {what}"
        if forgotten_too:
            held = self.secrets_in(text)
            assert not held & self.forgotten.get(owner, set()), f"a forgotten secret in p{owner}'s {what}"


async def play(world: World, program: list[tuple[str, int, object]]) -> None:
    policy = ConversationPolicy(persona="p", recent_turns=0, memory_top_k=8, reactions=DEFAULT_REACTIONS)
    conv = Conversation(world.store, HashEmbedder(), world.model, policy, clock=world.when)
    for op, who, arg in program:
        user = world.person(who)
        if op in DERIVED:
            await DERIVED[op](world, who)
        elif op == "say":
            group = bool(arg)
            text = f"{SHARED} {world.secret(who)}"
            chat = "group" if group else f"dm-{who}"
            message = UserMessage(user, chat, text, world.when(), private=not group)
            events = [event async for event in conv.handle_message(message)]
            assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
            world.last_reply[who] = events[-1].turn_id
            world.prompts.append((who, frozenset(world.forgotten.get(who, set()))))
        elif op == "remember":
            secret = world.secret(who)
            # The pet is what a packing list's rules take from memories (core/miniapps/facts.py).
            text = f"{SHARED} {secret} and my cat is called {secret.capitalize()}"
            item = ImportItem(1, text, "user", world.when())
            await import_items(world.store.memories, HashEmbedder(), user, [item])
        elif op == "react" and isinstance(arg, int) and arg in world.last_reply:
            await conv.handle_reaction(Reaction(user, world.last_reply[arg], "❤️", world.when()))
        elif op == "forget" and isinstance(arg, int):
            memories = await world.store.memories.list_memories(user, 100)
            if memories:
                gone = memories[arg % len(memories)]
                assert await world.store.memories.forget(user, gone.id)
                # Forgetting what was said takes every copy made of it; forgetting a copy (a
                # statement, a summary) leaves what was said, so its words are not gone.
                if gone.kind in SAID:
                    world.forgotten.setdefault(who, set()).update(world.secrets_in(gone.text))
        elif op == "remind":
            await _remind(world, who, in_group=bool(arg))
        elif op == "forget_all":
            for memory in await world.store.memories.list_memories(user, 1000):
                world.forgotten.setdefault(who, set()).update(world.secrets_in(memory.text))
            world.forgotten.setdefault(who, set()).update(world.reminded.pop(who, set()))
            await world.store.memories.forget_all(user)
            world.last_reply.pop(who, None)


async def _remind(world: World, who: int, *, in_group: bool) -> None:
    """ "remind me in 2 hours to …" with a secret of the person's own, as a chat message asks it."""
    user = world.person(who)
    await world.store.proactive.save_proactive_settings(user, ProactiveSettings(timezone="UTC"), world.when())
    secret = world.secret(who)
    chat = "group" if in_group else f"dm-{who}"
    answer = await ProactiveCommands(world.store.proactive, clock=world.when).remind(
        user, chat, f"remind me in 2 hours to call {secret}"
    )
    assert f"call {secret}" in answer, answer
    world.reminded.setdefault(who, set()).add(secret)


async def _extract(world: World, who: int) -> None:
    user = world.person(who)
    for memory in await world.store.memories.list_memories(user, 1000):
        if memory.speaker == "user" and memory.kind == "turn":
            await remember_turn(world.store, HashEmbedder(), user, memory.id, world.when())


async def _consolidate(world: World, who: int) -> None:
    policy = ConsolidationPolicy(older_than=timedelta(0), session_gap=timedelta(minutes=30))
    later = world.when() + timedelta(days=1)
    done = await consolidate(world.store, HashEmbedder(), world.person(who), later, policy)
    event(f"consolidation made a summary: {done.summaries > 0}")


async def _app(world: World, who: int) -> None:
    """A build as the job runs it (bot/wiring/miniapp_jobs.py), asked with the person's own secret."""
    user = world.person(who)
    memories = await world.store.memories.list_memories(
        user, MEMORIES_READ, without_kinds=sorted(NOT_EVIDENCE)
    )
    request = BuildRequest(uuid.uuid4().hex, user, f"dm-{who}", f"a packing list for {world.secret(who)}")
    texts = [memory.text for memory in memories]
    built = await build_app(world.store.miniapps, TemplateRenderer(), request, texts, world.when())
    await _check_app(world, who, built.app.id, built.app.version)


async def _check_app(world: World, who: int, app_id: int, version: int) -> None:
    found = await world.store.miniapps.get_version(app_id, version)
    assert found is not None
    shown = f"{found.body.spec} {found.body.rendered.html} {found.body.request}"
    world.check(who, shown, "app", forgotten_too=False)


async def _dataset(world: World, who: int) -> None:
    del who  # the night's set is everyone's: each example is checked against its own person
    policy = DatasetPolicy(min_per_label=1)
    dataset = await build_dataset(world.store, policy, RewardWeights(), world.when() + timedelta(minutes=1))
    owners = {snapshot.turn_id: snapshot.user_id for snapshot in dataset.snapshots}
    event(f"the training set has examples: {bool(owners)}")
    for one in dataset.train + dataset.heldout:
        owner = world.index_of(owners[one.turn_id])
        if owner is None:
            continue  # an earlier example's person: checked in its own world
        text = "\n".join(message.content for message in one.prompt) + one.completion
        world.check(owner, text, "training example")


async def _export(world: World, who: int) -> None:
    exported = await Controls(world.store, "p", embedder=HashEmbedder()).export_jsonl(world.person(who))
    world.check(who, exported.decode(), "export")


async def _reminders(world: World, who: int) -> None:
    listed = await ProactiveCommands(world.store.proactive, clock=world.when).reminders(world.person(who), "")
    world.check(who, listed, "/reminders")


DERIVED = {"extract": _extract, "consolidate": _consolidate, "app": _app, "dataset": _dataset,
           "export": _export, "reminders": _reminders}  # fmt: skip


@dataclass
class Recipients:
    """A Messenger that writes nowhere: it keeps each message under the person it was for."""

    platform: str = PLATFORM
    sent: dict[str, list[str]] = field(default_factory=dict)

    async def private_chat(self, user_id: str) -> str:
        return user_id

    def reaction_chat(self, chat_id: str) -> str:
        return chat_id

    async def send(self, chat_id: str, text: str, *, never_again: bool = False) -> str:
        self.sent.setdefault(chat_id, []).append(text)
        return str(sum(map(len, self.sent.values())))

    async def close(self) -> None:
        pass


async def check_beat(world: World) -> None:
    """Every reminder is due by 10:00 (two hours on, held past the night's quiet hours)."""
    recipients = Recipients()
    beat = ProactiveBeat(world.store, {PLATFORM: recipients}, HashEmbedder)
    await beat.run(T0 + timedelta(hours=10))
    for user_id, texts in recipients.sent.items():
        who = world.index_of(user_id)
        if who is None:
            continue  # an earlier example's person, in the same database: its world checks it
        for text in texts:
            world.check(who, text, "proactive message")
    for who, secrets in world.reminded.items():
        texts = " ".join(recipients.sent.get(world.person(who), []))
        assert secrets <= world.secrets_in(texts), f"p{who}'s reminders did not all ring"


def check_prompts(world: World) -> None:
    assert len(world.prompts) == len(world.model.prompts)
    for (who, forgotten), prompt in zip(world.prompts, world.model.prompts, strict=True):
        text = "\n".join(message.content for message in prompt)
        world.check(who, text, "prompt", forgotten_too=False)
        assert not forgotten & world.secrets_in(text), f"a forgotten memory came back: {text}"


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
                assert await world.store.memories.lexical_search(user, secrets, 50) == []
                assert all(
                    hit.memory.user_id == user
                    for hit in await world.store.memories.dense_search(
                        user, embedder.vector(" ".join(secrets)), 50
                    )
                )


async def run_program(store: Store, program: list[tuple[str, int, object]]) -> None:
    world = World(store)
    await play(world, program)
    check_prompts(world)
    await check_searches(world)
    await check_beat(world)
    for who in range(PEOPLE):
        user = world.person(who)
        for item in await store.memories.list_memories(user, 1000):
            assert not world.secrets_in(item.text) & world.forgotten.get(who, set()), "forgotten, yet back"
        for app in await store.miniapps.list_apps(user, 100):
            await _check_app(world, who, app.id, app.version)
        await _export(world, who)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs)
# Every derived operation at least once on rated replies of two people, before and after a forget.
@example(program=[("remember", 0, False), ("remember", 1, False), ("say", 0, False), ("react", 0, 0),
                  ("say", 1, True), ("react", 1, 1), ("say", 0, True),
                  ("react", 1, 0), ("extract", 0, 0), ("consolidate", 0, 0), ("app", 1, 0), ("app", 0, 0),
                  ("dataset", 0, 0), ("export", 0, 0), ("remind", 0, False), ("remind", 1, True),
                  ("reminders", 0, 0), ("forget", 0, 0), ("dataset", 0, 0), ("export", 1, 0),
                  ("remind", 2, False), ("forget_all", 1, 0), ("dataset", 0, 0),
                  ("reminders", 1, 0)])  # fmt: skip
def test_no_person_ever_sees_another_persons_memories(
    place: str, program: list[tuple[str, int, object]]
) -> None:
    async def one() -> None:
        store = await open_place(place)
        try:
            await run_program(store, program)
        finally:
            await store.close()

    asyncio.run(one())
