"""A message the platform delivers twice is answered once, on both stores, when the intake could
not turn the copy away (its memory lost in a Redis failover): the reply stored under the message's
key, or waiting for the store in the outbox, or being written right now, is found and the copy is
not answered again. The scripted model counts the replies written; a copy of a message whose first
answer failed is answered (nothing a person wrote goes unanswered)."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.errors import InferenceTimeout
from bot.core.events import AnsweredBefore, Refusal, ReplyDone, ReplyEvent, UserMessage
from bot.core.store import Store
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def talk(store: Store, model: ScriptedInference) -> Conversation:
    return Conversation(store, HashEmbedder(), model, ConversationPolicy(persona="p", recent_turns=2))


def message(n: int, text: str = "hello") -> UserMessage:
    return UserMessage("ann", "c1", text, T0 + timedelta(seconds=n), idempotency_key=f"telegram:c1:{n}")


async def said(conversation: Conversation, sent: UserMessage) -> list[ReplyEvent]:
    return [event async for event in conversation.handle_message(sent)]


async def roles(store: Store) -> list[str]:
    return [turn.role for turn in await store.turns.recent_turns("ann", "c1", 50)]


async def test_a_copy_of_an_answered_message_is_not_answered_again(any_store: Store) -> None:
    model = ScriptedInference("Hi.")
    conversation = talk(any_store, model)
    first = await said(conversation, message(1))
    assert isinstance(first[-1], ReplyDone)
    again = await said(conversation, message(1))
    assert again == [AnsweredBefore("telegram:c1:1:reply")]
    assert len(model.prompts) == 1, "the model wrote one reply"
    assert await roles(any_store) == ["user", "assistant"]


async def test_another_process_finds_the_stored_reply(any_store: Store) -> None:
    """A copy that reaches the other replica: nothing in its memory, the store knows."""
    await said(talk(any_store, ScriptedInference("Hi.")), message(1))
    other = ScriptedInference("Hi.")
    assert await said(talk(any_store, other), message(1)) == [AnsweredBefore("telegram:c1:1:reply")]
    assert other.prompts == []


async def test_two_copies_at_once_are_answered_once(any_store: Store) -> None:
    model = ScriptedInference("One two three four.", delay_s=0.02)
    conversation = talk(any_store, model)
    first, second = await asyncio.gather(said(conversation, message(1)), said(conversation, message(1)))
    endings = sorted(type(events[-1]).__name__ for events in (first, second))
    assert endings == ["AnsweredBefore", "ReplyDone"]
    assert len(model.prompts) == 1
    assert await roles(any_store) == ["user", "assistant"]


async def test_a_copy_of_a_message_long_since_answered_is_not_answered_again(any_store: Store) -> None:
    model = ScriptedInference("Hi.")
    conversation = talk(any_store, model)
    for n in range(1, 6):  # the first message's turns fall out of the recent window (2 turns)
        await said(conversation, message(n, f"message {n}"))
    assert await said(conversation, message(1, "message 1")) == [AnsweredBefore("telegram:c1:1:reply")]
    assert len(model.prompts) == 5


async def test_a_copy_of_a_message_whose_answer_failed_is_answered(any_store: Store) -> None:
    model = ScriptedInference("Hi.", fail_with=InferenceTimeout("took too long"))
    conversation = talk(any_store, model)
    assert isinstance((await said(conversation, message(1)))[-1], Refusal)
    model.fail_with = None
    assert isinstance((await said(conversation, message(1)))[-1], ReplyDone)
    assert await roles(any_store) == ["user", "assistant"]


async def test_copies_of_two_messages_are_told_apart(any_store: Store) -> None:
    conversation = talk(any_store, ScriptedInference("Hi."))
    await said(conversation, message(1, "same words"))
    done = await said(conversation, message(2, "same words"))  # a new message, not a copy
    assert isinstance(done[-1], ReplyDone)


async def test_while_the_store_is_down_the_outbox_knows_the_reply(tmp_path: Path) -> None:
    """The SQLite long soak's duplicates: the store full, the intake's memory gone."""
    store = await SqliteStore.open(tmp_path / "k.db", busy_timeout_ms=50)
    try:
        model = ScriptedInference("Hi.")
        conversation = talk(store, model)
        lock = sqlite3.connect(tmp_path / "k.db", timeout=0, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")  # another process's write lock: every write is refused
        try:
            first = await said(conversation, message(1))
            assert isinstance(first[-1], ReplyDone) and first[-1].turn_id is None
            assert await said(conversation, message(1)) == [AnsweredBefore("telegram:c1:1:reply")]
        finally:
            lock.execute("ROLLBACK")
            lock.close()
        assert await conversation.flush() == 2
        assert len(model.prompts) == 1
        assert await roles(store) == ["user", "assistant"]
        # Written now: the store answers for the next copy.
        assert await said(conversation, message(1)) == [AnsweredBefore("telegram:c1:1:reply")]
    finally:
        await store.close()
