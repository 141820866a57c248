"""The held-out measurement: how often a variant's replies meet the taste, on lines no simulated
person ever sends.

Each held-out line is answered `samples` times with the prompt a newcomer's first message gets (the
persona and the line), by the product's own `ReplyWriter`: streamed by the variant's adapter, or the
best of n sampled candidates chosen by its reward model. Nothing is stored or reacted to, and no
reaction is flipped. Sample j of line i is drawn from (seed, i, j), the same for every variant, so
two variants are compared on the same draws; the replies run in one lockstep round, so the engine
batches them the same way every time.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bench.parts.learning.lockstep import Lockstep
from bot.core.chat.prompt import build_messages
from bot.core.chat.writing import Draft, ReplyWriter
from bot.core.learning import Pick, RewardModel
from bot.core.learning.models import Variant
from bot.core.learning.trial import variant_of
from bot.core.memory.ports import Embedder
from bot.core.store import Store


@dataclass(frozen=True, slots=True)
class Rate:
    rate: float
    replies: int

    @property
    def standard_error(self) -> float:
        return binomial_se(self.rate, self.replies)

    @property
    def upper95(self) -> float:
        return self.rate + 1.96 * self.standard_error


def binomial_se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-9) / n) if n else 0.0


class Meter:
    """Rates per variant, each measured once (a variant's replies are the same on every call)."""

    def __init__(
        self,
        store: Store,
        lockstep: Lockstep,
        embedder: Embedder,
        persona: str,
        lines: Sequence[str],
        *,
        samples: int,
        max_new_tokens: int,
        taste: Callable[[str], bool],
        seed: int,
    ) -> None:
        self._store = store
        self._lockstep = lockstep
        self._embedder = embedder
        self._persona = persona
        self._lines = list(lines)
        self._samples = samples
        self._taste = taste
        self._writer = ReplyWriter(lockstep, embedder, max_new_tokens, seed=seed)
        self._known: dict[Variant, Rate] = {}

    async def rate(self, variant: Variant) -> Rate:
        if variant not in self._known:
            replies = await self.replies(await pick_of(self._store, variant))
            hits = sum(1 for reply in replies if self._taste(reply))
            self._known[variant] = Rate(hits / len(replies) if replies else 0.0, len(replies))
        return self._known[variant]

    async def replies(self, pick: Pick) -> list[str]:
        answers: list[Callable[[], Awaitable[str]]] = [
            functools.partial(self._answer, text, pick, f"held-out:{i}:{j}")
            for i, text in enumerate(self._lines)
            for j in range(self._samples)
        ]
        return await self._lockstep.round(answers)

    async def _answer(self, text: str, pick: Pick, key: str) -> str:
        inference = self._lockstep
        messages = build_messages(
            self._persona,
            [],
            [],
            text,
            budget_tokens=inference.context_window - self._writer.max_new_tokens,
            count_tokens=inference.count_tokens,
        )
        context = (await self._embedder.embed([text]))[0]
        parts = [chunk async for chunk in self._writer.write(messages, Draft(pick), key, context)]
        return "".join(parts).strip()


async def pick_of(store: Store, variant: Variant) -> Pick:
    """What writes a reply of `variant`, as the conversation's VariantPicker resolves it."""
    adapter = None
    if variant.adapter_version is not None:
        adapter = await store.adapters.get_adapter(variant.adapter_version)
    model = None
    if variant.reward_model_version is not None:
        record = await store.trials.get_reward_model(variant.reward_model_version)
        model = None if record is None else RewardModel.from_json(dict(record.model))
    if model is None:
        return Pick(adapter)
    return Pick(adapter, model, variant.reward_model_version, variant.n)


async def serving_variant(store: Store, best_of: int) -> Variant:
    """What answers everyone now: the serving adapter, with the serving reward model's best of n."""
    adapter = await store.adapters.serving_adapter()
    reward_model = await store.trials.serving_reward_model()
    return variant_of(adapter, reward_model, best_of)
