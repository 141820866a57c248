"""The nightly training job, part of the composition root (`bot/wiring/jobs.py` registers it).

- `kindred.training.nightly` {run_key?}: dataset → KTO + LoRA → gate → registry → promote
  (core/learning/nightly.py), on the `train` queue. Beat and the in-process schedule send it with no
  payload; its run is then keyed by the job's id, which Celery keeps when it redelivers the job of
  a killed worker, so the redelivered run fails the dead one and starts cleanly. `/train_now` and
  `kindred train now` send a `run_key` of their own.

The trainer and the scorer (bot/training/: torch, transformers, peft, trl) are built on first use,
once per process, so that the bot and the other workers start without importing torch.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.jobs import Job, JobPayload, JobRegistry, JobSpec, current_job_id, run_attempt
from bot.core.learning.dataset import DatasetPolicy, build_dataset
from bot.core.learning.gate import GatePolicy
from bot.core.learning.models import TrainingExample
from bot.core.learning.nightly import NIGHTLY_JOB, NightlyPolicy, run_nightly, weights
from bot.core.learning.ports import AdapterScorer, Trainer
from bot.core.loading import LoadOnce
from bot.core.memory.ports import Embedder
from bot.core.models import JSONObject
from bot.training.options import TrainingOptions
from bot.wiring.canary_jobs import add_canary_job, rerank_parts, trial_policy
from bot.wiring.job_store import StoreAccess, per_job
from bot.wiring.memory_jobs import reward_weights
from bot.wiring.settings import Settings
from bot.wiring.settings.training import TrainingSettings

# The hard limit lets a run past its soft limit record itself failed before the worker is killed.
HARD_MARGIN_S = 600.0


def nightly_policy(settings: Settings, *, pace_s: float = 0.0) -> NightlyPolicy:
    training, memory = settings.training, settings.memory
    return NightlyPolicy(
        dataset=DatasetPolicy(
            window_days=training.window_days,
            desirable_at=training.desirable_at,
            undesirable_at=training.undesirable_at,
            default_consent=training.default_consent,
            heldout_share=training.heldout_share,
            min_per_label=training.min_examples,
            trains=settings.inference.model,
        ),
        reward=reward_weights(memory),
        gate=gate_policy(training),
        stale_after=timedelta(minutes=training.stale_minutes),
        pace_s=pace_s,
        trial=trial_policy(settings),
        base_model=settings.inference.model,
    )


def gate_policy(training: TrainingSettings) -> GatePolicy:
    return GatePolicy(
        confidence=training.gate_confidence,
        min_margin_gain=training.gate_min_margin_gain,
        max_loss_rise=training.gate_max_loss_rise,
        max_kl=training.gate_max_kl,
        sycophancy_alpha=training.gate_sycophancy_alpha,
        sycophancy_max_extra=training.gate_sycophancy_max_extra,
        seed=training.seed,
    )


class LazyTrainer:
    """A Trainer built on its first `train` (on the training thread): a night without enough data,
    or a bot process that only registers the job, never imports torch."""

    def __init__(self, base_model: str, load: Callable[[], Trainer]) -> None:
        self.base_model = base_model
        self._loaded = LoadOnce(load, what="trainer")

    def train(
        self,
        examples: Sequence[TrainingExample],
        out_dir: Path,
        progress: Callable[[JSONObject], None],
        *,
        desirable_weight: float = 1.0,
        undesirable_weight: float = 1.0,
    ) -> JSONObject:
        trainer = self._loaded.get()
        return trainer.train(
            examples,
            out_dir,
            progress,
            desirable_weight=desirable_weight,
            undesirable_weight=undesirable_weight,
        )


class LazyScorer:
    """An AdapterScorer built on first use (on the gate's thread)."""

    def __init__(self, load: Callable[[], AdapterScorer]) -> None:
        self._loaded = LoadOnce(load, what="gate scorer")

    def implicit_rewards(self, adapter: Path | None, examples: Sequence[TrainingExample]) -> list[float]:
        return self._loaded.get().implicit_rewards(adapter, examples)

    def regression(self, adapter: Path | None) -> JSONObject:
        return self._loaded.get().regression(adapter)

    def agreements(self, adapter: Path | None) -> tuple[bool, ...]:
        return self._loaded.get().agreements(adapter)

    def agreement_odds(self, adapter: Path | None) -> tuple[float, ...]:
        return self._loaded.get().agreement_odds(adapter)


@dataclass(frozen=True, slots=True)
class TrainingModels:
    """The trainer and the gate's scorer of this process, each built when first used."""

    trainer: Trainer
    scorer: AdapterScorer

    @classmethod
    def of(cls, settings: Settings) -> TrainingModels:
        return cls(
            LazyTrainer(settings.inference.model, lambda: _trainer(settings)),
            LazyScorer(lambda: _scorer(settings)),
        )


def training_options(settings: Settings) -> TrainingOptions:
    """The trainer's and the scorer's options. The base model is the one replies come from
    (KINDRED_MODEL, prepared once under the data dir), so an adapter fits the model it serves."""
    from bot.wiring.backends import model_dir, quiet_model_loading

    quiet_model_loading()  # no progress bars from datasets and TRL in a worker's log

    training = settings.training
    return TrainingOptions(
        base_model=str(model_dir(settings.inference.model, settings.data_dir)),
        lora_rank=training.lora_rank,
        lora_alpha=training.lora_alpha,
        learning_rate=training.learning_rate,
        max_steps=training.max_steps,
        epochs=training.epochs or None,
        batch_size=training.batch_size,
        max_length=training.max_length,
        beta=training.beta,
        device=training.device,
        seed=training.seed,
        threads=training.threads or None,
    )


def _trainer(settings: Settings) -> Trainer:
    from bot.training.kto import LoraKtoTrainer

    return LoraKtoTrainer(training_options(settings))


def _scorer(settings: Settings) -> AdapterScorer:
    from bot.training.scorer import LoraScorer

    return LoraScorer(training_options(settings))


def run_key(payload: JobPayload) -> str:
    """The run's key: the payload's `run_key`, else the job's id (kept across redelivery)."""
    given = payload.get("run_key")
    if isinstance(given, str) and given.strip():
        return given.strip()
    return current_job_id() or f"job:{uuid.uuid4().hex}"


def nightly_job(
    settings: Settings,
    stores: StoreAccess,
    models: TrainingModels | None = None,
    *,
    pace_s: float = 0.0,
    embedder: LoadOnce[Embedder] | None = None,
) -> Job:
    """`kindred.training.nightly`. `pace_s`: see NightlyPolicy (tests catch a run mid-way).
    `embedder`: the reward model's (None: no reward model is trained)."""
    policy = nightly_policy(settings, pace_s=pace_s)
    adapters_dir: Path = settings.adapters_path
    # A deployment that cannot serve adapters trains none, and loads no trainer or scorer.
    local = policy.trial.trains_adapter
    built = (models or TrainingModels.of(settings)) if local else None

    async def nightly(payload: JobPayload) -> JobPayload:
        scorer = built.scorer if built is not None else None
        parts = None
        if embedder is not None and policy.trial.trains_reward_model:
            parts = rerank_parts(await asyncio.to_thread(embedder.get), scorer, adapters_dir)
        async with stores() as store:
            result = await run_nightly(
                store,
                built.trainer if built is not None else None,
                scorer,
                policy,
                job_key=run_key(payload),
                adapters_dir=adapters_dir,
                rerank=parts,
            )
        return dict(result)

    soft_s = settings.training.time_limit_minutes * 60
    return Job(JobSpec(NIGHTLY_JOB, soft_s=soft_s, hard_s=soft_s + HARD_MARGIN_S), nightly)


def add_training_jobs(
    registry: JobRegistry,
    settings: Settings,
    stores: StoreAccess,
    embedder: LoadOnce[Embedder] | None = None,
) -> None:
    registry.add(nightly_job(settings, stores, embedder=embedder))
    add_canary_job(registry, settings, stores)


async def dataset_summary(
    settings: Settings, *, persona: str | None = None, model: str | None = None
) -> JSONObject:
    """What tonight's run would train on, without training (`kindred train dataset`); with
    `persona` or `model`, only the replies that persona or base model wrote (`model` also shows
    another model's replies, which the night leaves out)."""
    from bot.wiring.backends import open_store

    policy = nightly_policy(settings)
    only = replace(policy.dataset, persona=persona.lower() if persona else None, model=model)
    if model is not None:
        only = replace(only, trains=None)
    store = await open_store(settings)
    try:
        dataset = await build_dataset(store, only, policy.reward, datetime.now(UTC))
    finally:
        await store.close()
    return {
        **dataset.stats,
        "window_start": dataset.window_start.isoformat(),
        "window_end": dataset.window_end.isoformat(),
        "weights": weights(dataset),
        "shortfall": dataset.shortfall(only),
    }


async def train_here(settings: Settings, models: TrainingModels | None = None) -> JSONObject:
    """Run the nightly job in this process now (`kindred train now`), under its time limits."""
    from bot.wiring.backends import load_embedder, open_store

    embedder = LoadOnce(lambda: load_embedder(settings), what="embedder")
    job = nightly_job(settings, per_job(lambda: open_store(settings)), models, embedder=embedder)
    return await run_attempt(job, {"run_key": f"cli:{uuid.uuid4().hex[:12]}"})
