"""The memory jobs, part of the composition root (`bot/wiring/jobs.py` registers them).

- `kindred.memory.extract` {user_id, memory_id}: after an exchange, the person's turn becomes
  lasting memories (core/memory/remember.py). Submitted by the conversation, never awaited by it.
- `kindred.memory.upkeep` {}: beat's nightly run over everyone: external checks (core/memory/checks.py),
  then consolidation (core/memory/consolidation.py).

Each job takes its store through `StoreAccess` (bot/wiring/job_store.py): a job may run on another
thread's event loop or in a Celery worker, where the conversation's connection does not exist.
Models are loaded once per process (`Models`), or handed over by `bot.wiring.kindred.build` when
jobs run in the same process.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.core.chat.ports import Inference
from bot.core.errors import JobError
from bot.core.jobs import JobPayload, JobRegistry
from bot.core.learning.reward import RewardWeights
from bot.core.loading import LoadOnce
from bot.core.memory.checks import run_checks
from bot.core.memory.consolidation import ConsolidationPolicy, consolidate
from bot.core.memory.ports import Embedder
from bot.core.memory.remember import remember_turn
from bot.wiring.job_store import StoreAccess
from bot.wiring.settings import MemorySettings

log = logging.getLogger(__name__)

EXTRACT_JOB = "kindred.memory.extract"
UPKEEP_JOB = "kindred.memory.upkeep"
PEOPLE_PAGE = 200


def reward_weights(memory: MemorySettings) -> RewardWeights:
    """R's weights from the settings: what recall credits and what a night labels by."""
    return RewardWeights(
        alpha=memory.reward_alpha,
        beta=memory.reward_beta,
        gamma=memory.reward_gamma,
        session_gap=timedelta(minutes=memory.session_gap_minutes),
    )


@dataclass(frozen=True, slots=True)
class Models:
    """The embedder and the model for extraction, each loaded by the first job that needs it."""

    embedder: LoadOnce[Embedder]
    inference: LoadOnce[Inference]


@dataclass(frozen=True, slots=True)
class MemoryJobOptions:
    """What the memory jobs are told: whether the model extracts, their time, consolidation."""

    extraction_model: bool
    extract_s: float
    consolidation: ConsolidationPolicy

    @classmethod
    def of(cls, memory: MemorySettings, generation_timeout_s: float) -> MemoryJobOptions:
        return cls(
            extraction_model=memory.extraction_model,
            extract_s=generation_timeout_s + 60,  # one model call, plus embedding and writes
            consolidation=ConsolidationPolicy(
                older_than=timedelta(days=memory.consolidate_after_days),
                session_gap=timedelta(minutes=memory.session_gap_minutes),
                budget=memory.budget,
            ),
        )


def add_memory_jobs(
    registry: JobRegistry,
    options: MemoryJobOptions,
    stores: StoreAccess,
    models: Models,
) -> None:
    """Register the memory jobs. Each takes its store through `stores`."""

    extract_s = options.extract_s

    # One a message, and nobody asks for its outcome (it is in the store): no record kept in Redis,
    # where a day of them at 50 messages a second was ~2.8 GB (bench/soak.py --long).
    @registry.job(EXTRACT_JOB, soft_s=extract_s, hard_s=extract_s + 60, retries=2, retry_delay_s=5,
                  keep_result=False)  # fmt: skip
    async def extract(payload: JobPayload) -> JobPayload:
        user_id, memory_id = payload.get("user_id"), payload.get("memory_id")
        if not isinstance(user_id, str) or not isinstance(memory_id, int) or isinstance(memory_id, bool):
            raise JobError(f"{EXTRACT_JOB} needs user_id (text) and memory_id (a whole number)")
        inference = models.inference.get() if options.extraction_model else None
        async with stores() as store:
            done = await remember_turn(
                store, models.embedder.get(), user_id, memory_id, datetime.now(UTC), inference=inference
            )
        return done.as_payload()

    policy = options.consolidation

    @registry.job(UPKEEP_JOB, soft_s=3 * 3600, hard_s=3 * 3600 + 300, retries=1, retry_delay_s=60)
    async def upkeep(payload: JobPayload) -> JobPayload:
        totals = {"people": 0, "past": 0, "summaries": 0, "covered": 0, "archived": 0}
        now = datetime.now(UTC)
        async with stores() as opened:
            after: str | None = None
            while people := await opened.curation.people(after, PEOPLE_PAGE):
                for user_id in people:
                    checked = await run_checks(opened, user_id, now)
                    done = await consolidate(opened, models.embedder.get(), user_id, now, policy)
                    totals["people"] += 1
                    totals["past"] += checked.get("event_date_passed", 0)
                    for key, value in done.as_payload().items():
                        totals[key] += value
                after = people[-1]
        log.info("memory upkeep: %s", totals)
        return dict(totals)
