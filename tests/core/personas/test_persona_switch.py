"""Switching persona keeps what Kindred knows: a fact told under one persona is recalled under
another, each reply is written in its chat's persona, and the reply's variant record names it.
The real conversation and SQLite store; an unknown name answers with the list."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.events import ReplyDone, UserMessage
from bot.core.personas import PersonaBook, PersonaPicker, parse_personas
from bot.store.sqlite.store import SqliteStore
from tests.conftest import STORE_FILE
from tests.support.fakes import HashEmbedder, ScriptedInference

BOOK = parse_personas(
    '[[persona]]\nname = "kindred"\nprompt = "You are Kindred."\n'
    '[[persona]]\nname = "coach"\nprompt = "You are a coach."\ngreeting = "Coach here."\n'
)
ANN, CHAT = "telegram:1", "telegram:1"


class Fixed:
    def __init__(self, book: PersonaBook) -> None:
        self._book = book

    def book(self) -> PersonaBook:
        return self._book


async def say(conversation: Conversation, text: str, key: str) -> ReplyDone:
    message = UserMessage(ANN, CHAT, text, datetime.now(UTC), idempotency_key=key)
    events = [event async for event in conversation.handle_message(message)]
    done = events[-1]
    assert isinstance(done, ReplyDone)
    return done


async def test_a_fact_told_under_one_persona_is_recalled_under_another(
    store: SqliteStore, tmp_path: Path
) -> None:
    model = ScriptedInference("Noted.")
    picker = PersonaPicker(Fixed(BOOK), store.personas)
    conversation = Conversation(
        store, HashEmbedder(), model, ConversationPolicy(persona="unused", recent_turns=0), personas=picker
    )
    first = await say(conversation, "My sister Mira lives in Lisbon.", "m1")
    answer = await picker.pick(CHAT, "COACH", owner=ANN)
    second = await say(conversation, "Where does my sister Mira live?", "m2")
    system_before, system_after = model.prompts[0][0].content, model.prompts[1][0].content
    assert system_before.startswith("You are Kindred.") and system_after.startswith("You are a coach.")
    assert "Lisbon" in system_after  # recalled under the new persona: memory is the person's
    assert answer.endswith("Coach here.") and await store.personas.chosen(CHAT) == "coach"
    with sqlite3.connect(tmp_path / STORE_FILE) as db:  # the variant record ([canary]) names who spoke
        recorded = db.execute("SELECT turn_id, persona FROM generations ORDER BY turn_id").fetchall()
    assert recorded == [(first.turn_id, "kindred"), (second.turn_id, "coach")]


async def test_an_unknown_name_answers_with_the_list_and_keeps_nothing(store: SqliteStore) -> None:
    picker = PersonaPicker(Fixed(BOOK), store.personas)
    answer = await picker.pick(CHAT, "pirate", owner=ANN)
    assert (
        answer
        == "I have no persona called 'pirate'. Personas: kindred (now), coach. /persona NAME picks one."
    )
    assert await store.personas.chosen(CHAT) is None


async def test_a_person_who_may_not_change_it_changes_nothing(store: SqliteStore) -> None:
    picker = PersonaPicker(Fixed(BOOK), store.personas)
    assert "admins" in await picker.pick("telegram:-100", "coach", owner=None, may_change=False)
    assert await store.personas.chosen("telegram:-100") is None
