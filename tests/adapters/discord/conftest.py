"""A real discord.py client, started by the real adapter, against Discord on loopback, over a
real SQLite store. Only Kindred's own ports are faked (the embedder and the model)."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.adapters.base import Services
from bot.adapters.discord.adapter import DiscordAdapter
from bot.adapters.discord.options import DiscordOptions
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.documents import ChatDocuments
from bot.core.chat.images import Images
from bot.core.chat.ratelimit import RateLimiter
from bot.core.chat.voice import VoiceNotes
from bot.core.learning.commands import TrainingCommands
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.controls import Controls
from bot.core.memory.ports import Embedder
from bot.core.miniapps.commands import AppCommands
from bot.core.proactive.outcomes import ProactiveReplies
from bot.core.store import Store
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_intake import LocalIntake
from tests.conftest import STORE_FILE
from tests.support import discord_payloads as p
from tests.support.budgets import under_budgets
from tests.support.discord_fake import FakeDiscord
from tests.support.fakes import HashEmbedder, ScriptedInference

PERSONA = "You are Kindred, a test companion."


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    server.point_discord_py_here(monkeypatch)
    yield server
    await server.stop()


@pytest.fixture
def feedback(tmp_path: Path) -> Callable[[], list[tuple[str, str, str, float]]]:
    """The feedback table as it is now: (user, source, emoji, value) rows."""

    def rows() -> list[tuple[str, str, str, float]]:
        with contextlib.closing(sqlite3.connect(tmp_path / STORE_FILE)) as db:
            found = db.execute(
                "SELECT user_id, source, emoji, value FROM feedback ORDER BY user_id"
            ).fetchall()
        return [tuple(row) for row in found]

    return rows


def services(
    store: Store,
    *,
    inference: Any = None,
    access: Access | None = None,
    per_minute: float = 0.0,
    burst: int = 5,
    max_new_tokens: int = 2000,
    max_message_chars: int = 100_000,
    training: TrainingCommands | None = None,
    apps: AppCommands | None = None,
    voice: Callable[[Conversation], VoiceNotes] | None = None,
    images: Callable[[Conversation], Images] | None = None,
    documents: Callable[[Store, Conversation, Embedder], ChatDocuments] | None = None,
    budgets: str | None = None,
) -> Services:
    policy = ConversationPolicy(
        persona=PERSONA,
        reactions=DEFAULT_REACTIONS,
        max_new_tokens=max_new_tokens,
        max_message_chars=max_message_chars,
    )
    embedder = HashEmbedder()
    replies = ProactiveReplies(store)
    conversation = Conversation(
        store, embedder, inference or ScriptedInference(), policy, proactive=replies,
        **under_budgets(store, budgets), access=access,
    )  # fmt: skip
    return Services(
        documents=documents(store, conversation, embedder) if documents is not None else None,
        conversation=conversation,
        controls=Controls(store, PERSONA, embedder=embedder),
        limiter=RateLimiter(per_minute, burst, LocalBuckets()),
        access=conversation.room.access,
        intake=LocalIntake(),
        training=training,
        apps=apps,
        proactive=replies.commands,
        voice=voice(conversation) if voice is not None else None,
        images=images(conversation) if images is not None else None,
    )


OPTIONS = DiscordOptions(
    token=SecretStr(p.TOKEN), edit_interval_s=0.05, ready_timeout_s=10.0, guild_ready_timeout_s=0.05
)


@contextlib.asynccontextmanager
async def running(served: Services, **options: Any) -> AsyncIterator[DiscordAdapter]:
    """The adapter, started (READY received) and stopped around the block."""
    adapter = DiscordAdapter(served, dataclasses.replace(OPTIONS, **options))
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()
