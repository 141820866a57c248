"""A real python-telegram-bot Application, wired to the core, against the loopback Bot API fake."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from bot.adapters.base import Services
from bot.adapters.telegram.adapter import TelegramAdapter, TelegramConfig
from bot.adapters.telegram.chat import ChatPolicy
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.images import Images
from bot.core.chat.ports import Inference, Intake
from bot.core.chat.ratelimit import RateLimiter
from bot.core.chat.spoken import SpokenReplies
from bot.core.chat.voice import VoiceNotes
from bot.core.chat_models import ModelPicker
from bot.core.learning.commands import TrainingCommands
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.media.ports import FileShelf
from bot.core.memory.controls import Controls
from bot.core.memory.ports import Embedder
from bot.core.miniapps.commands import AppCommands
from bot.core.personas import PersonaPicker, PersonaSource
from bot.core.proactive.commands import ProactiveCommands
from bot.core.proactive.outcomes import ProactiveReplies
from bot.core.settings import SettingsLinks
from bot.core.store import Store
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_intake import LocalIntake
from tests.support.budgets import under_budgets
from tests.support.fakes import HashEmbedder, ScriptedInference
from tests.support.places import open_place
from tests.support.telegram_api import FakeTelegramBotApi

PERSONA = "You are a test companion."
ANN = 4242  # a private chat's id is its person's id
GROUP = -1001234567890


@dataclass
class Running:
    api: FakeTelegramBotApi
    adapter: TelegramAdapter
    store: Store
    path: Path  # the SQLite file (unless the test gave a PostgreSQL place)

    def feedback(self) -> list[tuple[int, str, str, str, float]]:
        """(turn, user, source, emoji, value) rows, read straight from the database file."""
        with sqlite3.connect(self.path) as db:
            return db.execute(
                "SELECT turn_id, user_id, source, emoji, value FROM feedback ORDER BY turn_id, source"
            ).fetchall()

    async def turns(self, user: str, chat: str) -> list[tuple[str, str]]:
        return [(t.role, t.text) for t in await self.store.turns.recent_turns(user, chat, 100)]


async def replies_done(api: FakeTelegramBotApi, chat_id: int, count: int, wait_s: float = 10.0) -> list[str]:
    """Wait for `count` finished replies (stored, linked, buttons added) and return the texts."""

    def done() -> bool:
        with_buttons = [m for m in api.bot_messages(chat_id) if m.reply_markup is not None]
        return len(with_buttons) >= count

    await api.wait_until(done, wait_s, what=f"{count} finished replies in chat {chat_id}")
    return api.texts(chat_id)


@pytest.fixture
async def api() -> AsyncIterator[FakeTelegramBotApi]:
    async with FakeTelegramBotApi() as fake:
        yield fake


@asynccontextmanager
async def running_bot(
    api: FakeTelegramBotApi,
    tmp_path: Path,
    *,
    inference: Inference | None = None,
    chat: ChatPolicy | None = None,
    access: Access | None = None,
    limiter: RateLimiter | None = None,
    webhook_url: str | None = None,
    intake: Intake | None = None,
    token: str | None = None,
    training: Callable[[Store], TrainingCommands] | None = None,
    apps: Callable[[Store], AppCommands] | None = None,
    # Scripted replies end by themselves, however long, unless a test gives a budget that cuts one.
    max_new_tokens: int = 2000,
    # Where the store lives (tests/support/places.py); None: a SQLite file in tmp_path.
    place: str | None = None,
    # Voice notes, heard through the conversation; None: not wired (a note is ignored).
    voice: Callable[[Conversation], VoiceNotes] | None = None,
    # Photos, seen through the conversation; None: not wired (a photo is ignored).
    images: Callable[[Conversation], Images] | None = None,
    # Documents, kept and then their caption answered; None: not wired (a document is ignored).
    documents: Callable[[Store, Conversation, Embedder], ChatDocuments] | None = None,
    # Where the files of people who asked are kept; forgetting one deletes it there.
    shelf: FileShelf | None = None,
    # /voice and spoken replies; None: not wired (text only).
    spoken: Callable[[Store], SpokenReplies] | None = None,
    # /persona's picker over these personas; None: not wired (the one persona is shown).
    personas: PersonaSource | None = None,
    # budgets.toml's text; None: no budgets (usage is counted all the same).
    budgets: str | None = None,
    # /settings web's signed links; None: no settings page.
    settings_links: SettingsLinks | None = None,
    # /model's picker over the store and the configured model; None: not wired (one model).
    models: Callable[[Store, Inference], ModelPicker] | None = None,
) -> AsyncIterator[Running]:
    path = tmp_path / "kindred.db"
    store = await open_place(place or str(path))
    embedder = HashEmbedder()
    configured = inference or ScriptedInference("Lovely to hear from you.")
    conversation = Conversation(
        store,
        embedder,
        configured,
        ConversationPolicy(persona=PERSONA, reactions=DEFAULT_REACTIONS, max_new_tokens=max_new_tokens),
        proactive=ProactiveReplies(store),
        personas=PersonaPicker(personas, store.personas) if personas is not None else None,
        **under_budgets(store, budgets),
        access=access,
        models=models(store, configured) if models is not None else None,
    )
    services = Services(
        conversation=conversation,
        controls=Controls(store, PERSONA, embedder=embedder, shelf=shelf),
        limiter=limiter or RateLimiter(per_minute=0, burst=1, buckets=LocalBuckets()),
        access=conversation.room.access,
        training=training(store) if training is not None else None,
        apps=apps(store) if apps is not None else None,
        proactive=ProactiveCommands(store.proactive),
        intake=intake or LocalIntake(),
        voice=voice(conversation) if voice is not None else None,
        images=images(conversation) if images is not None else None,
        documents=documents(store, conversation, embedder) if documents is not None else None,
        spoken=spoken(store) if spoken is not None else None,
        personas=conversation.personas,
        settings_links=settings_links,
        models=conversation.models,
    )
    config = TelegramConfig(
        token=token or api.token,
        api_base_url=api.base_url,
        webhook_url=webhook_url,
        chat=chat or replace(ChatPolicy(), edit_interval_s=0.05),
        poll_timeout_s=1,
        sends_per_second=1000,
    )
    adapter = TelegramAdapter(config, services)
    await adapter.start()
    try:
        yield Running(api, adapter, store, path)
    finally:
        await adapter.stop()
        await store.close()
