"""Hostile input to the core on a real SQLite store: any text to `Conversation.handle_message`,
odd arguments to every command in `Controls`. A message is answered and stored as cleaned, or
refused with words for the person and nothing stored; a command always answers in words. The
store's file is made once per test and reopened for each example (the migrations run once)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.errors import InvalidInput
from bot.core.events import Refusal, ReplyDone, UserMessage
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.controls import Controls, page_number
from bot.core.text import clean_message, query_terms
from bot.store.sqlite.store import SqliteStore
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.hostile import hostile_texts, odd_arguments

T0 = datetime(2026, 8, 1, tzinfo=UTC)
MAX_CHARS = 4096
FUNCTION_SCOPED = [HealthCheck.function_scoped_fixture]


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(text=hostile_texts)
def test_cleaning_and_search_terms_take_any_text(text: str) -> None:
    try:
        cleaned = clean_message(text, MAX_CHARS)
    except InvalidInput as refused:
        assert str(refused)
    else:
        assert cleaned.strip() and len(cleaned) <= MAX_CHARS and "\x00" not in cleaned
        cleaned.encode("utf-8")  # storable: no lone surrogate left
    for term in query_terms(text):
        assert term and term.strip() == term


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(texts=st.lists(hostile_texts, min_size=1, max_size=3))
def test_a_message_is_answered_and_stored_as_cleaned_or_refused_in_words(
    tmp_path: Path, texts: list[str]
) -> None:
    async def play() -> None:
        store = await SqliteStore.open(tmp_path / "kindred.db")
        user, chat = f"telegram:{uuid.uuid4().hex[:8]}", "telegram:1"
        policy = ConversationPolicy(persona="p", reactions=DEFAULT_REACTIONS, max_message_chars=MAX_CHARS)
        conversation = Conversation(store, HashEmbedder(), ScriptedInference("Noted."), policy)
        accepted: list[str] = []
        try:
            for text in texts:
                events = [
                    event async for event in conversation.handle_message(UserMessage(user, chat, text, T0))
                ]
                if isinstance(events[0], Refusal):
                    assert events[0].text and len(events) == 1
                    continue
                assert isinstance(events[-1], ReplyDone) and events[-1].turn_id is not None
                accepted.append(clean_message(text, MAX_CHARS))
            turns = await store.turns.recent_turns(user, chat, 20)
            assert [turn.text for turn in turns if turn.role == "user"] == accepted
        finally:
            await store.close()

    asyncio.run(play())


COMMANDS = ("memories", "forget", "confirm", "correct", "privacy", "export")


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(calls=st.lists(st.tuples(st.sampled_from(COMMANDS), odd_arguments), min_size=1, max_size=4))
def test_every_command_answers_any_argument_in_words(tmp_path: Path, calls: list[tuple[str, str]]) -> None:
    async def play() -> None:
        store = await SqliteStore.open(tmp_path / "kindred.db")
        controls = Controls(store, "p", embedder=HashEmbedder())
        user = f"telegram:{uuid.uuid4().hex[:8]}"
        conversation = Conversation(store, HashEmbedder(), ScriptedInference("Noted."),
                                    ConversationPolicy(persona="p", reactions=DEFAULT_REACTIONS))  # fmt: skip
        async for _ in conversation.handle_message(UserMessage(user, "c", "I live in Oslo", T0)):
            pass
        try:
            for command, argument in calls:
                answer = await _run(controls, user, command, argument)
                assert answer and answer.strip()
        finally:
            await store.close()

    asyncio.run(play())


async def _run(controls: Controls, user: str, command: str, argument: str) -> str:
    if command == "memories":
        return (await controls.memories_page(user, page_number(argument), chat_id="c")).render()
    if command == "forget":
        return await controls.forget_one(user, argument, chat_id="c")
    if command == "confirm":
        return await controls.confirm(user, argument, chat_id="c")
    if command == "correct":
        return await controls.correct(user, argument, chat_id="c")
    if command == "privacy":
        return await controls.privacy(user, argument)
    return (await controls.export_jsonl(user, chat_id="c")).decode() or "(empty)"
