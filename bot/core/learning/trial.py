"""What a night puts on trial ([canary]): a new reward model, trained on the night's rated replies,
and the candidate variant, which becomes the canary.

- The reward model learns from the same labelled replies as the adapter (core/learning/dataset.py),
  on the embedder's vectors of the person's message and the reply. It is used only when its
  held-out AUC's lower 95 % bound clears the policy's bar, and only after its sycophancy pre-screen
  (core/learning/rm_screen.py). Either way it is registered, so an admin sees why.
- The candidate variant is the serving one with what passed tonight in place: the new adapter, the
  new reward model (best of `best_of` with it), or both. A part that failed is left out; with
  nothing new, nothing goes on trial.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from bot.core.learning.canary import CanaryPolicy, start
from bot.core.learning.gate import GatePolicy
from bot.core.learning.models import (
    AdapterRecord,
    Canary,
    NewRewardModel,
    RewardModelRecord,
    TrainingExample,
    Variant,
)
from bot.core.learning.reward_model import (
    LabeledReply,
    RewardModel,
    RewardModelPolicy,
    RewardModelReport,
    train_reward_model,
)
from bot.core.learning.rm_screen import Probe, screen_reward_model
from bot.core.memory.ports import Embedder
from bot.core.store import Store
from bot.core.text import EMBED_CHARS

# lora: adapters only (the local engine, vLLM). rerank: a reward model and best-of-n only, which
# every backend can serve. both: the night's variant is the new adapter with the new reward model.
Learner = Literal["lora", "rerank", "both"]
LEARNERS: tuple[Learner, ...] = ("lora", "rerank", "both")
_EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class TrialPolicy:
    learner: Learner = "both"
    best_of: int = 4
    canary: CanaryPolicy = field(default_factory=CanaryPolicy)
    reward_model: RewardModelPolicy = field(default_factory=RewardModelPolicy)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.learner not in LEARNERS or self.best_of < 1:
            raise ValueError(f"TrialPolicy: learner one of {LEARNERS}, best_of ≥ 1")

    @property
    def trains_adapter(self) -> bool:
        return self.learner in ("lora", "both")

    @property
    def trains_reward_model(self) -> bool:
        return self.learner in ("rerank", "both")


@dataclass(frozen=True, slots=True)
class RerankParts:
    """What the reward model step needs beyond the store: the embedder, the probes, and the serving
    policy's chance of agreeing with each probe, given the serving adapter's folder name (None: the
    base model); it answers None without a local scorer. Blocking: called on a thread."""

    embedder: Embedder
    probes: Sequence[Probe]
    odds: Callable[[str | None], Sequence[float] | None]
    # Held around the fit: the wiring holds numpy's BLAS to one thread (threadpoolctl), since two
    # BLAS threads on a busy 2-core machine made the fit about 20 times slower.
    fitting: Callable[[], AbstractContextManager[object]] = nullcontext


def person_said(example: TrainingExample) -> str:
    """The message a reply answered: the prompt's last message from the person."""
    return next((m.content for m in reversed(example.prompt) if m.role == "user"), "")


async def labelled(embedder: Embedder, examples: Sequence[TrainingExample]) -> list[LabeledReply]:
    texts = [t[:EMBED_CHARS] for e in examples for t in (person_said(e), e.completion)]
    vectors = []
    for start_at in range(0, len(texts), _EMBED_BATCH):
        vectors.extend(await embedder.embed(texts[start_at : start_at + _EMBED_BATCH]))
    return [LabeledReply(vectors[2 * i], vectors[2 * i + 1], e.desirable) for i, e in enumerate(examples)]


async def reward_model_step(
    store: Store,
    parts: RerankParts,
    examples: Sequence[TrainingExample],
    policy: TrialPolicy,
    gate: GatePolicy,
    run_id: int,
    now: datetime,
) -> tuple[RewardModelRecord, bool]:
    """Train, screen and register tonight's reward model. Returns it and whether it may serve."""
    data = await labelled(parts.embedder, examples)
    embedder = parts.embedder.model_name

    def fit() -> RewardModelReport:
        with parts.fitting():
            return train_reward_model(data, embedder, policy.reward_model)

    report = await asyncio.to_thread(fit)
    summary: dict[str, object] = dict(report.as_json())
    usable = report.usable and report.model is not None
    if usable and report.model is not None:
        serving = await _serving_model(store)
        adapter = await store.adapters.serving_adapter()
        odds = await asyncio.to_thread(parts.odds, None if adapter is None else adapter.path)
        check = await screen_reward_model(
            report.model, serving, parts.embedder, parts.probes, odds, policy.best_of, gate
        )
        summary["sycophancy"] = {"passed": check.passed, "message": check.message, **dict(check.details)}
        usable = check.passed
    model = report.model.as_json() if report.model is not None else {}
    new = NewRewardModel(embedder, model, summary, "candidate" if usable else "failed", run_id)
    return await store.trials.add_reward_model(new, now), usable


async def _serving_model(store: Store) -> RewardModel | None:
    record = await store.trials.serving_reward_model()
    if record is None:
        return None
    try:
        return RewardModel.from_json(dict(record.model))
    except ValueError:
        return None  # unreadable: measured against the policy alone, as the variant is served


async def put_on_trial(
    store: Store,
    base_model: str,
    adapter: AdapterRecord | None,
    reward_model: RewardModelRecord | None,
    policy: TrialPolicy,
    *,
    run_id: int,
    now: datetime,
) -> tuple[Canary | None, str]:
    """Start the canary of tonight's candidate variant. Returns it (None: nothing new passed, or
    another canary runs) and a sentence saying what happened."""
    serving_adapter = await store.adapters.serving_adapter()
    serving_rm = await store.trials.serving_reward_model()
    serving = variant_of(serving_adapter, serving_rm, policy.best_of)
    candidate = variant_of(adapter or serving_adapter, reward_model or serving_rm, policy.best_of)
    if candidate == serving:
        return None, "nothing new passed its pre-screen, so nothing goes on trial"
    seed = int.from_bytes(hashlib.blake2b(f"{policy.seed}:{run_id}".encode(), digest_size=6).digest(), "big")
    canary = await start(
        store, base_model, candidate, serving, policy.canary, seed=seed, at=now, run_id=run_id
    )
    if canary is None:
        return None, "another canary is running, so tonight's candidate waits"
    share = f"{policy.canary.share:.0%}"
    return canary, f"{candidate.describe()} answers {share} of replies as canary {canary.id}"


def variant_of(
    adapter: AdapterRecord | None, reward_model: RewardModelRecord | None, best_of: int
) -> Variant:
    if reward_model is None:
        return Variant(None if adapter is None else adapter.version)
    return Variant(None if adapter is None else adapter.version, reward_model.version, best_of)
