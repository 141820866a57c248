"""The load fixtures of bench/telegram_load.py: stand-ins for the model and the embedder, so that
the benchmark measures the bot (python-telegram-bot, the core, the store) and not a model."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence

import numpy as np

from bot.adapters.base import Services
from bot.adapters.telegram.adapter import TelegramAdapter, TelegramConfig
from bot.adapters.telegram.chat import ChatPolicy
from bot.core.chat.access import Access
from bot.core.chat.conversation import Conversation, ConversationPolicy
from bot.core.chat.ratelimit import RateLimiter
from bot.core.learning.reward import DEFAULT_REACTIONS
from bot.core.memory.controls import Controls
from bot.core.models import ChatMessage, Sampled, StreamEnd, Vector
from bot.core.store import Store
from bot.shared_state.local_buckets import LocalBuckets
from bot.shared_state.local_intake import LocalIntake

REPLY_WORDS = 24


class LoadFixtureGenerator:
    """NOT a model: a deterministic reply, streamed in a few chunks with no delay."""

    context_window = 2048

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        adapter: str | None = None,
        ending: StreamEnd | None = None,
        seed: int | None = None,
    ) -> AsyncIterator[str]:
        words = [f"w{n}" for n in range(REPLY_WORDS)]
        for start in range(0, len(words), 6):
            await asyncio.sleep(0)
            yield " ".join(words[start : start + 6]) + " "

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        await asyncio.sleep(0)
        return [Sampled(" ".join(f"w{i}" for i in range(REPLY_WORDS)) + " ", False)] * n


class LoadFixtureEmbedder:
    """NOT an embedding model: a seeded unit vector per text, so recall and storage run for real."""

    model_name = "load-fixture-hash"
    dim = 384

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        vectors = []
        for text in texts:
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            vectors.append(vector / np.linalg.norm(vector))
        return vectors


def build_adapter(api_base: str, token: str, store: Store) -> TelegramAdapter:
    conversation = Conversation(
        store,
        LoadFixtureEmbedder(),
        LoadFixtureGenerator(),
        ConversationPolicy(persona="load test", reactions=DEFAULT_REACTIONS),
    )
    limiter = RateLimiter(0, 1, LocalBuckets())
    services = Services(conversation, Controls(store, "load test"), limiter, Access(), LocalIntake())
    # The loopback server has no flood limit; Telegram's own (about 30 messages/s) would be the cap.
    config = TelegramConfig(token=token, api_base_url=api_base, chat=ChatPolicy(), sends_per_second=100_000)
    return TelegramAdapter(config, services)
