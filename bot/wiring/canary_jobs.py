"""The canary's job and what a night puts on trial ([canary]), part of the composition root.

- `kindred.learning.canary` {now?} (the `default` queue; beat every KINDRED_TRAIN_CANARY_CRON):
  enters the running canary's settled replies into its test and decides (core/learning/canary.py).
- What a night trains (KINDRED_TRAIN_LEARNER): "auto" is both an adapter and a reward model where
  replies come from a model this deployment serves adapters on (the local engine, GPU workers, or
  vLLM with KINDRED_LOAD_LORA), and a reward model alone where they come from a server that cannot
  serve an adapter (Ollama, a hosted API): that is how those deployments learn.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.jobs import JobPayload, JobRegistry
from bot.core.learning.canary import CANARY_JOB, CanaryPolicy, advance
from bot.core.learning.ports import AdapterScorer
from bot.core.learning.reward_model import RewardModelPolicy
from bot.core.learning.rm_screen import Probe
from bot.core.learning.trial import Learner, RerankParts, TrialPolicy
from bot.core.memory.ports import Embedder
from bot.wiring.job_store import StoreAccess
from bot.wiring.memory_jobs import reward_weights
from bot.wiring.settings import Settings
from bot.wiring.settings.training import TrainingSettings


def learner(settings: Settings) -> Learner:
    chosen = settings.training.learner
    if chosen != "auto":
        return chosen
    serves_adapters = settings.inference.backend != "openai" or settings.inference.load_lora
    return "both" if serves_adapters else "rerank"


def canary_policy(training: TrainingSettings) -> CanaryPolicy:
    return CanaryPolicy(
        share=training.canary_share,
        alpha=training.canary_alpha,
        settle=timedelta(minutes=training.canary_settle_minutes),
        max_days=training.canary_max_days,
        max_replies=training.canary_max_replies,
        per_person_daily=training.canary_per_person_daily,
        min_people=training.canary_min_people,
    )


def trial_policy(settings: Settings) -> TrialPolicy:
    training = settings.training
    return TrialPolicy(
        learner=learner(settings),
        best_of=training.best_of,
        canary=canary_policy(training),
        reward_model=RewardModelPolicy(min_auc_low=training.reward_model_min_auc, seed=training.seed),
        seed=training.seed,
    )


def probes() -> list[Probe]:
    """The shipped sycophancy probes as the reward model's pre-screen reads them (no torch)."""
    from bot.training.evalsets import sycophancy_probes

    return [
        Probe(next((m.content for m in reversed(p.messages) if m.role == "user"), ""), p.agree, p.disagree)
        for p in sycophancy_probes()
    ]


def rerank_parts(embedder: Embedder, scorer: AdapterScorer | None, adapters_dir: Path) -> RerankParts:
    """`scorer`: the local one where this deployment has it (log-probabilities of the probes'
    answers), else None: the pre-screen falls back to its sign test."""

    def odds(serving: str | None) -> Sequence[float] | None:
        if scorer is None:
            return None
        return scorer.agreement_odds(adapters_dir / serving if serving else None)

    def one_blas_thread() -> AbstractContextManager[object]:
        from threadpoolctl import threadpool_limits

        limits: AbstractContextManager[object] = threadpool_limits(limits=1, user_api="blas")
        return limits

    return RerankParts(embedder, probes(), odds, one_blas_thread)


def add_canary_job(registry: JobRegistry, settings: Settings, stores: StoreAccess) -> None:
    weights = reward_weights(settings.memory)
    adapters_dir = settings.adapters_path

    @registry.job(CANARY_JOB, soft_s=240, hard_s=300, retries=1, retry_delay_s=30)
    async def canary(payload: JobPayload) -> JobPayload:
        given = payload.get("now")
        now = datetime.fromisoformat(given) if isinstance(given, str) else datetime.now(UTC)
        async with stores() as store:

            async def present(version: int) -> bool:
                record = await store.adapters.get_adapter(version)
                return record is not None and (adapters_dir / record.path).is_dir()

            done = await advance(store, weights, now, adapter_present=present)
        return dict(done.as_json())
