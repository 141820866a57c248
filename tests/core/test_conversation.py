"""The conversation core on a real SQLite store, with the scripted model and hashed embedder
standing in for the neural parts (those have tests of their own): what gets stored, recalled,
prompted and answered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.errors import InferenceTimeout
from bot.core.events import Reaction, Refusal, ReplyChunk, ReplyDone, ReplyEvent, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.jsonl_format import ImportItem
from bot.core.memory.operations import import_items
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
PERSONA = "You are a test companion."


def make(store: SqliteStore, model: ScriptedInference | None = None, **policy: object) -> Conversation:
    return Conversation(
        store,
        HashEmbedder(),
        model or ScriptedInference(),
        ConversationPolicy(persona=PERSONA, reactions=DEFAULT_REACTIONS, **policy),  # type: ignore[arg-type]
    )


async def say(conv: Conversation, text: str, user: str = "ann", at: datetime = T0) -> list[ReplyEvent]:
    return [event async for event in conv.handle_message(UserMessage(user, "c1", text, at))]


async def test_a_message_is_stored_answered_in_chunks_and_the_reply_stored(store: SqliteStore) -> None:
    conv = make(store, ScriptedInference("Hello there, friend."))
    events = await say(conv, "Hi!")
    chunks = [e.text for e in events if isinstance(e, ReplyChunk)]
    assert len(chunks) == 3 and "".join(chunks) == "Hello there, friend."
    done = events[-1]
    assert isinstance(done, ReplyDone) and done.turn_id is not None and done.notice is None
    turns = await store.turns.recent_turns("ann", "c1", 10)
    assert [(t.role, t.text) for t in turns] == [("user", "Hi!"), ("assistant", "Hello there, friend.")]
    assert turns[1].reply_to == turns[0].id


async def test_the_prompt_has_persona_memories_and_recent_turns(store: SqliteStore) -> None:
    model = ScriptedInference()
    conv = make(store, model, recent_turns=2)
    emb = HashEmbedder()
    await import_items(
        store.memories,
        emb,
        "ann",
        [
            ImportItem(1, "I drink too much coffee and then I sleep badly", "user", T0 - timedelta(days=90)),
            ImportItem(2, "My cat is called Miso", "user", T0 - timedelta(days=80)),
        ],
    )
    await say(conv, "first message")
    await say(conv, "why do I sleep badly lately?")
    prompt = model.prompts[-1]
    assert prompt[0].role == "system" and prompt[0].content.startswith(PERSONA)
    assert "coffee and then I sleep badly" in prompt[0].content
    assert "2026-05-03" in prompt[0].content  # when it was said
    assert [m.role for m in prompt[1:]] == ["user", "assistant", "user"]
    assert prompt[-1].content == "why do I sleep badly lately?"


async def test_memories_already_in_the_history_are_not_repeated(store: SqliteStore) -> None:
    model = ScriptedInference()
    conv = make(store, model)
    await say(conv, "my sister lives in Lisbon")
    await say(conv, "where does my sister live?")
    system = model.prompts[-1][0].content
    assert "Lisbon" not in system  # it is in the recent turns already
    assert any("Lisbon" in m.content for m in model.prompts[-1][1:])


async def test_the_reply_records_which_memories_its_prompt_used(store: SqliteStore) -> None:
    conv = make(store, recent_turns=0)
    ids = await import_items(
        store.memories, HashEmbedder(), "ann", [ImportItem(1, "I love hiking in the Alps", "user", T0)]
    )
    events = await say(conv, "any hiking ideas?")
    done = events[-1]
    assert isinstance(done, ReplyDone) and ids[0] in done.memory_ids
    reply = (await store.turns.recent_turns("ann", "c1", 1))[0]
    assert ids[0] in reply.used_memory_ids


async def test_memories_never_cross_users(store: SqliteStore) -> None:
    model = ScriptedInference()
    conv = make(store, model)
    await say(conv, "my password hint is blue giraffe", user="bob")
    await say(conv, "what is my password hint? giraffe", user="ann")
    assert "giraffe" not in model.prompts[-1][0].content


@pytest.mark.parametrize("text", ["", "   \n\t  ", "\x00\x01\x02\x1b", "\x7f\x9f \x85"])
async def test_empty_messages_get_a_clear_answer_and_store_nothing(store: SqliteStore, text: str) -> None:
    model = ScriptedInference()
    events = await say(make(store, model), text)
    assert len(events) == 1 and isinstance(events[0], Refusal)
    assert "didn't get any text" in events[0].text
    assert model.prompts == [] and (await store.stats()).turns == 0


async def test_control_characters_are_removed_and_the_rest_kept(store: SqliteStore) -> None:
    await say(make(store), "he\x00llo\x1b[31m wor\x07ld\r\nbye")
    [first, _] = await store.turns.recent_turns("ann", "c1", 2)
    assert first.text == "hello[31m world\nbye"


async def test_a_100k_character_message_is_stored_whole_and_the_prompt_fits(store: SqliteStore) -> None:
    model = ScriptedInference()
    text = ("word " * 20_000)[:100_000]
    conversation = make(store, model)
    events = await say(conversation, text)
    assert isinstance(events[-1], ReplyDone)
    first = (await store.turns.recent_turns("ann", "c1", 2))[0]
    assert len(first.text) == len(text.strip())
    prompt = model.prompts[-1]
    room = model.context_window - conversation.policy.max_new_tokens
    assert sum(model.count_tokens(m.content) for m in prompt) <= room
    assert prompt[-1].content.endswith("[…]")


async def test_an_over_long_message_is_refused_with_the_limit(store: SqliteStore) -> None:
    events = await say(make(store, max_message_chars=1000), "x" * 1001)
    assert isinstance(events[0], Refusal) and "1,000" in events[0].text
    assert (await store.stats()).turns == 0


async def test_a_model_timeout_answers_clearly_and_keeps_the_message(store: SqliteStore) -> None:
    model = ScriptedInference(fail_with=InferenceTimeout("generation took longer than 60 s"))
    events = await say(make(store, model), "are you there?")
    assert isinstance(events[-1], Refusal) and "longer than 60 s" in events[-1].text
    assert [t.text for t in await store.turns.recent_turns("ann", "c1", 5)] == ["are you there?"]


async def test_reactions_are_recorded_replaced_and_undone(store: SqliteStore) -> None:
    conv = make(store)
    done = (await say(conv, "hello"))[-1]
    assert isinstance(done, ReplyDone) and done.turn_id is not None
    assert await conv.handle_reaction(Reaction("ann", done.turn_id, "👍", T0)) == 1.0
    assert await conv.handle_reaction(Reaction("ann", done.turn_id, "❤️", T0)) == 1.0
    assert await conv.handle_reaction(Reaction("ann", done.turn_id, "👎", T0)) == -1.0
    assert (await store.stats()).feedback_events == 1
    assert await conv.handle_reaction(Reaction("ann", done.turn_id, "🦄", T0)) is None
    await conv.handle_reaction(Reaction("ann", done.turn_id, "", T0, removed=True))
    assert (await store.stats()).feedback_events == 0


async def test_a_redelivered_message_is_stored_once(store: SqliteStore) -> None:
    conv = make(store)
    for _ in range(2):
        [e async for e in conv.handle_message(UserMessage("ann", "c1", "hi", T0, idempotency_key="tg:1:7"))]
    turns = await store.turns.recent_turns("ann", "c1", 10)
    assert [t.role for t in turns] == ["user", "assistant"]


async def test_many_people_at_once_are_all_answered_stored_and_linked(store: SqliteStore) -> None:
    """Adapters run conversations concurrently on one core: no write may trip over another."""
    import asyncio

    from bot.core.events import MessageReaction

    conv = make(store)

    async def person(n: int) -> None:
        user = f"user{n}"
        message = UserMessage(user, f"chat{n}", f"hello, I am {n}", T0, idempotency_key=f"m{n}")
        events = [event async for event in conv.handle_message(message)]
        done = events[-1]
        assert isinstance(done, ReplyDone) and done.turn_id is not None
        await conv.link_reply("telegram", f"chat{n}", [str(n)], done, user)
        result = await conv.handle_message_reaction(
            MessageReaction("telegram", f"chat{n}", str(n), user, "👍", T0)
        )
        assert result.status == "recorded"

    await asyncio.gather(*(person(n) for n in range(40)))
    stats = await store.stats()
    assert (stats.turns, stats.feedback_events) == (80, 40)
    assert len(conv.outbox) == 0


async def test_a_reaction_changed_to_a_meaningless_emoji_takes_the_old_one_away(store: SqliteStore) -> None:
    from bot.core.events import MessageReaction

    conv = make(store)
    done = await reply_to(conv, "hello")
    await conv.link_reply("telegram", "c", ["9"], done, "ann")
    for emoji, expected in (("👍", "recorded"), ("🤔", "ignored"), (None, "removed")):
        result = await conv.handle_message_reaction(MessageReaction("telegram", "c", "9", "ann", emoji, T0))
        assert result.status == expected
        if emoji == "🤔":
            assert (await store.stats()).feedback_events == 0
    unknown = await conv.handle_message_reaction(MessageReaction("telegram", "c", "10", "ann", "👍", T0))
    assert unknown.status == "unknown"


async def reply_to(conv: Conversation, text: str) -> ReplyDone:
    events = await say(conv, text)
    assert isinstance(events[-1], ReplyDone)
    return events[-1]


async def test_a_shared_chat_recalls_only_what_was_said_in_it(store: SqliteStore) -> None:
    """Others read a group reply: a secret told in a DM must not surface there."""
    model = ScriptedInference()
    conv = make(store, model)

    async def tell(text: str, chat: str, private: bool) -> None:
        message = UserMessage("ann", chat, text, T0, private=private)
        assert isinstance([event async for event in conv.handle_message(message)][-1], ReplyDone)

    def recalled() -> str:
        return "\n".join(message.content for message in model.prompts[-1])  # memories and history

    await tell("my salary is 9000 zorkmids", "dm", True)
    await tell("the group picnic is on the zorkmid hill", "group", False)
    await tell("tell me about zorkmids", "group", False)
    assert "zorkmid hill" in recalled() and "salary" not in recalled()
    await tell("what about zorkmids?", "dm", True)
    assert "salary" in recalled() and "zorkmid hill" in recalled(), "a private chat recalls everything"


async def test_additive_reactions_keep_the_meaningful_one(store: SqliteStore) -> None:
    """Discord adds and removes one emoji at a time; a 😂 beside a 👍 must not erase the 👍."""
    from bot.core.events import MessageReaction

    conv = make(store)
    done = await reply_to(conv, "hello")
    await conv.link_reply("discord", "c", ["5"], done, "ann")

    def event(emoji: str | None, removed: str | None = None) -> MessageReaction:
        return MessageReaction("discord", "c", "5", "ann", emoji, T0, additive=True, removed_emoji=removed)

    assert (await conv.handle_message_reaction(event("👍"))).status == "recorded"
    assert (await conv.handle_message_reaction(event("😂"))).status == "ignored"
    assert (await conv.handle_message_reaction(event(None, removed="😂"))).status == "ignored"
    assert (await store.stats()).feedback_events == 1
    assert (await conv.handle_message_reaction(event(None, removed="👍"))).status == "removed"
    assert (await store.stats()).feedback_events == 0


async def test_a_forgotten_message_never_reaches_the_next_prompt(store: SqliteStore) -> None:
    model = ScriptedInference()
    conv = make(store, model)
    await say(conv, "my PIN is 4711")
    (secret,) = [m for m in await store.memories.list_memories("ann", 10) if "4711" in m.text]
    assert await store.memories.forget("ann", secret.id)
    await say(conv, "what did I tell you?")
    assert all("4711" not in message.content for message in model.prompts[-1])
