"""Test doubles of Kindred's own ports (never of an SDK): a deterministic embedder and a
scripted model. Each is used where a test checks the core's logic, not a model's output;
the real embedder and model have their own tests and the end-to-end CLI test."""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Sequence
from datetime import datetime

import numpy as np

from bot.core.chat.conversation import Conversation
from bot.core.errors import InferenceTimeout
from bot.core.events import ReplyDone, UserMessage
from bot.core.models import ChatMessage, Sampled, StreamEnd, Vector

DIM = 384


def _bucket(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % DIM


class HashEmbedder:
    """Bag-of-words hashed into 384 dimensions: texts sharing words are close, others are not."""

    model_name = "test/hash-bag-of-words"
    dim = DIM

    def __init__(self) -> None:
        self.calls = 0

    def vector(self, text: str) -> Vector:
        vec = np.zeros(DIM, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            vec[_bucket(word)] += 1.0
        vec[_bucket("\0bias")] += 0.01  # empty text still gets a unit vector
        return vec / np.linalg.norm(vec)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        return [self.vector(text) for text in texts]


class ScriptedInference:
    """Replies with a fixed text, one word a token within its budget, and records every prompt it
    was given. `delay_s` pauses before each word, like a model on a slow machine. It says how the
    reply ended as an engine does: "length" when the budget ran out (every token it allowed was a
    word, so no end token came), else "stop". `sample`'s candidate i is `candidates[i]` (cycled;
    by default the reply), cut the same way; `samples` records each call's (n, seed)."""

    context_window = 2048

    def __init__(
        self,
        reply: str = "Nice to hear from you.",
        *,
        fail_with: Exception | None = None,
        delay_s: float = 0.0,
        candidates: Sequence[str] = (),
    ) -> None:
        self.reply = reply
        self.fail_with = fail_with
        self.delay_s = delay_s
        self.candidates = list(candidates)
        self.prompts: list[list[ChatMessage]] = []
        self.samples: list[tuple[int, int | None]] = []

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
        self.prompts.append(list(messages))
        if self.fail_with is not None:
            raise self.fail_with
        every = self.reply.split(" ")
        for index, word in enumerate(every[:max_tokens]):
            await asyncio.sleep(self.delay_s)
            yield word if index == 0 else " " + word
        if ending is not None:
            ending.reason = "length" if len(every) >= max_tokens else "stop"

    async def sample(
        self,
        messages: Sequence[ChatMessage],
        *,
        n: int,
        max_tokens: int,
        adapter: str | None = None,
        seed: int | None = None,
    ) -> list[Sampled]:
        self.prompts.append(list(messages))
        self.samples.append((n, seed))
        if self.fail_with is not None:
            raise self.fail_with
        await asyncio.sleep(self.delay_s)
        pool = self.candidates or [self.reply]
        words = [pool[i % len(pool)].split(" ") for i in range(n)]
        return [Sampled(" ".join(w[:max_tokens]), len(w) >= max_tokens) for w in words]


class SlowInference(ScriptedInference):
    """The scripted model writing one word every `delay_s`, so that the growing text is shown
    (drafts, edits) before the reply ends."""

    def __init__(self, reply: str, delay_s: float) -> None:
        super().__init__(reply, delay_s=delay_s)


async def reply_done(conversation: Conversation, text: str, *, at: datetime) -> ReplyDone:
    """Send `text` as ann in chat c1 and return how the reply ended; it must have ended in one."""
    message = UserMessage("ann", "c1", text, at)
    events = [event async for event in conversation.handle_message(message)]
    assert isinstance(events[-1], ReplyDone)
    return events[-1]


def timeout_error() -> InferenceTimeout:
    return InferenceTimeout("generation took longer than 0.1 s")
