"""How a reply is written ([canary]): streamed by the variant's model, or, when its variant has a
reward model, the best of n sampled candidates, sent whole once chosen (the platform shows
"typing…" meanwhile, as it does before a first chunk).

An adapter that cannot be served (deleted, unreadable, not loaded by the server) falls back to the
base model for this reply instead of failing it; the reply then records the base model, so a
canary's test does not count it as the canary's.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace

from bot.core.chat.ports import Inference
from bot.core.errors import InferenceError, InferenceTimeout
from bot.core.learning import Pick, choose_best
from bot.core.memory.ports import Embedder
from bot.core.models import ChatMessage, Generation, Sampled, StreamEnd, Vector
from bot.core.text import EMBED_CHARS

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Draft:
    """A reply being written: what writes it, its chunks, and how its stream ended (the engine
    fills it in). `pick.adapter` becomes None when the adapter could not be served."""

    pick: Pick
    parts: list[str] = field(default_factory=list)
    ending: StreamEnd = field(default_factory=StreamEnd)
    # Every candidate a best-of-n drew, the chosen one among them: each counts as used.
    candidates: list[Sampled] = field(default_factory=list)


class ReplyWriter:
    def __init__(
        self,
        inference: Inference,
        embedder: Embedder,
        max_new_tokens: int,
        *,
        base_model: str = "",
        seed: int | None = None,
    ) -> None:
        self.inference = inference
        self.embedder = embedder
        self.max_new_tokens = max_new_tokens
        self.base_model = base_model
        # Another model than the adapters' base whose replies the reward model may still choose.
        self.best_of = False
        # Set (the learning simulation): every reply's sampling is fixed by (seed, message key).
        self._seed = seed

    def using(self, inference: Inference, base_model: str, *, best_of: bool = False) -> ReplyWriter:
        """The same writer with another model (a chat's /model choice); `best_of`: the serving
        reward model chooses among its samples too."""
        writer = ReplyWriter(inference, self.embedder, self.max_new_tokens, base_model=base_model)
        writer._seed = self._seed
        writer.best_of = best_of
        return writer

    def seed_for(self, key: str) -> int | None:
        if self._seed is None:
            return None
        digest = hashlib.blake2b(f"{self._seed}:{key}".encode(), digest_size=4).digest()
        return int.from_bytes(digest, "big")

    async def write(
        self, messages: Sequence[ChatMessage], draft: Draft, key: str, context: Vector
    ) -> AsyncIterator[str]:
        """The reply's chunks, kept in `draft`."""
        seed = self.seed_for(key)
        pick = draft.pick
        if pick.reward_model is not None and pick.n > 1:
            text = await self._best_of(messages, draft, seed, context)
            draft.parts.append(text)
            yield text
            return
        try:
            async for chunk in self._stream(messages, draft, seed):
                yield chunk
        except InferenceError as exc:
            if pick.adapter is None or draft.parts or not _about_adapter(exc):
                raise
            self._fall_back(draft, exc)
            async for chunk in self._stream(messages, draft, seed):
                yield chunk

    async def _stream(
        self, messages: Sequence[ChatMessage], draft: Draft, seed: int | None
    ) -> AsyncIterator[str]:
        adapter = draft.pick.adapter.path if draft.pick.adapter else None
        async for chunk in self.inference.stream(
            messages, max_tokens=self.max_new_tokens, adapter=adapter, ending=draft.ending, seed=seed
        ):
            draft.parts.append(chunk)
            yield chunk

    async def _best_of(
        self, messages: Sequence[ChatMessage], draft: Draft, seed: int | None, context: Vector
    ) -> str:
        try:
            candidates = await self._sample(messages, draft, seed)
        except InferenceError as exc:
            if draft.pick.adapter is None or not _about_adapter(exc):
                raise
            self._fall_back(draft, exc)
            candidates = await self._sample(messages, draft, seed)
        model = draft.pick.reward_model
        assert model is not None  # write() chose this path for it
        vectors = await self.embedder.embed([c.text.strip()[:EMBED_CHARS] or "…" for c in candidates])
        draft.candidates = candidates
        chosen = candidates[choose_best(model, context, vectors)]
        draft.ending.reason = "length" if chosen.cut else "stop"
        return chosen.text

    async def _sample(self, messages: Sequence[ChatMessage], draft: Draft, seed: int | None) -> list[Sampled]:
        adapter = draft.pick.adapter.path if draft.pick.adapter else None
        return await self.inference.sample(
            messages, n=draft.pick.n, max_tokens=self.max_new_tokens, adapter=adapter, seed=seed
        )

    def _fall_back(self, draft: Draft, exc: InferenceError) -> None:
        adapter = draft.pick.adapter
        assert adapter is not None
        log.warning(
            "adapter v%d (%s) cannot be served, answering with the base model: %s",
            adapter.version,
            adapter.path,
            exc,
        )
        draft.pick = _without_adapter(draft.pick)
        draft.ending = StreamEnd()

    def generation(self, messages: Sequence[ChatMessage], draft: Draft) -> Generation:
        """How the reply was made, to keep with it: the prompt exactly as the model saw it, and
        the variant and arm that wrote it."""
        pick = draft.pick
        return Generation(
            prompt=tuple(messages),
            adapter_version=pick.adapter.version if pick.adapter else None,
            # Stopped by the token budget rather than by the model: never trained as if it had ended.
            cut=self._cut(draft),
            base_model=self.base_model,
            reward_model_version=pick.reward_model_version,
            n=pick.n,
            arm=pick.arm,
            canary_id=pick.canary_id,
        )

    def tokens(self, messages: Sequence[ChatMessage], draft: Draft) -> tuple[int, int, int]:
        """(tokens in, tokens out, samples) the reply used: as the backend reported them, else
        counted with its tokenizer; a best-of-n counts every candidate, each reading the prompt."""
        prompt = sum(self.inference.count_tokens(message.content) for message in messages)
        if draft.candidates:
            read = sum(prompt if c.tokens_in is None else c.tokens_in for c in draft.candidates)
            written = sum(self.inference.count_tokens(c.text) if c.tokens_out is None else c.tokens_out
                          for c in draft.candidates)  # fmt: skip
            return read, written, len(draft.candidates)
        ending = draft.ending
        read = prompt if ending.tokens_in is None else ending.tokens_in
        if ending.tokens_out is not None:
            return read, ending.tokens_out, 1
        return read, self.inference.count_tokens("".join(draft.parts)), 1

    def _cut(self, draft: Draft) -> bool:
        """Whether the token budget stopped the reply, as the engine says. Re-counting the text is
        only for an engine that cannot say: a cut reply's text can re-tokenize to fewer tokens
        than the model wrote (merges the tokenizer would not choose), so it reads as ended."""
        if draft.ending.reason is not None:
            return draft.ending.reason == "length"
        return self.inference.count_tokens("".join(draft.parts)) >= self.max_new_tokens


def _without_adapter(pick: Pick) -> Pick:
    return replace(pick, adapter=None)


def _about_adapter(exc: InferenceError) -> bool:
    """An error about the adapter rather than the model: the base model can still answer. A
    timeout is never one (the base would be as slow)."""
    return not isinstance(exc, InferenceTimeout) and "adapter" in str(exc).lower()
