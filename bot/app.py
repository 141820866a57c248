"""The one composition root: settings in, wired parts out. Nothing else picks implementations."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.adapters.base import Services
from bot.config import Settings, id_set
from bot.core.access import Access
from bot.core.controls import Controls
from bot.core.conversation import Conversation, ConversationPolicy
from bot.core.errors import ConfigError, JobError, QueueUnavailable
from bot.core.jobs import Job, JobPayload, JobRegistry, Jobs, JobSpec
from bot.core.loading import LoadOnce
from bot.core.models import Turn
from bot.core.ports import Embedder, Inference, Store
from bot.core.ratelimit import RateLimiter
from bot.memory_jobs import EXTRACT_JOB, Models, add_memory_jobs

if TYPE_CHECKING:
    from bot.inference.local import LocalInference
    from bot.store.postgres import PostgresStore
    from bot.store.sqlite import SqliteStore

log = logging.getLogger(__name__)


async def open_store(settings: Settings, *, migrate: bool = True) -> Store:
    """The configured store, migrated to the current schema unless `migrate` is False."""
    if settings.store_backend == "postgres":
        from bot.store.postgres import PostgresStore

        assert settings.database_url is not None
        return await PostgresStore.open(settings.database_url, migrate=migrate)
    from bot.store.sqlite import SqliteStore

    return await SqliteStore.open(
        settings.sqlite_path, busy_timeout_ms=settings.sqlite_busy_timeout_ms, migrate=migrate
    )


async def migrate_store(settings: Settings) -> tuple[str, list[int], list[int]]:
    """Apply pending migrations. Returns the backend, the versions applied now, and all applied."""
    store: SqliteStore | PostgresStore
    if settings.store_backend == "postgres":
        from bot.store.postgres import PostgresStore

        assert settings.database_url is not None
        store = await PostgresStore.open(settings.database_url, migrate=False)
    else:
        from bot.store.sqlite import SqliteStore

        store = await SqliteStore.open(settings.sqlite_path, migrate=False)
    try:
        applied = await store.migrate()
        return store.backend, applied, await store.applied_versions()
    finally:
        await store.close()


def _quiet_model_loading() -> None:
    # Progress bars and load reports belong to a developer's console, not a person's chat.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TQDM_DISABLE", "1")  # the one-time GGUF conversion uses plain tqdm


def load_embedder(settings: Settings) -> Embedder:
    _quiet_model_loading()
    from bot.inference.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.load(settings.embedding_model)


def resolve_device(setting: str) -> str:
    if setting != "auto":
        return setting
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def load_inference(settings: Settings) -> Inference:
    """The configured backend: the local engine (loads the model; blocks), an OpenAI-compatible
    server, or GPU workers over Celery (`celery`: loads only the tokenizer)."""
    _quiet_model_loading()
    from bot.inference.model_files import prepare_model

    if settings.inference_backend == "openai":
        from bot.inference.openai_compat import OpenAICompatInference, local_token_counter

        assert settings.openai_base_url is not None and settings.openai_model is not None
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        counter = None
        if settings.openai_tokenizer:
            counter = local_token_counter(prepare_model(settings.openai_tokenizer, settings.data_dir))
        return OpenAICompatInference(
            settings.openai_base_url,
            model=settings.openai_model,
            api_key=key,
            timeout_s=settings.generation_timeout_s,
            context_window=settings.openai_context_window,
            count_tokens=counter,
            adapters_dir=settings.adapters_path,
            load_lora=settings.load_lora,
            lora_root=settings.openai_lora_root,
        )
    if settings.inference_backend == "celery":
        from bot.inference.remote import RemoteInference

        if not settings.redis_url:
            raise ConfigError(
                "invalid configuration: REDIS_URL: is required when KINDRED_INFERENCE_BACKEND=celery"
            )
        return RemoteInference.connect(
            load_jobs(settings),
            settings.redis_url,
            prepare_model(settings.model, settings.data_dir),
            wait_s=settings.inference_wait_s,
            timeout_s=settings.generation_timeout_s,
        )
    return load_local_inference(settings)


def load_local_inference(settings: Settings) -> LocalInference:
    """The local engine (transformers, this process): loads the model, which blocks a while."""
    _quiet_model_loading()
    from bot.inference.local import LocalInference
    from bot.inference.model_files import prepare_model

    model_dir = prepare_model(settings.model, settings.data_dir)
    return LocalInference.load(
        model_dir,
        device=resolve_device(settings.device),
        timeout_s=settings.generation_timeout_s,
        max_batch=settings.inference_batch_size,
        adapters_dir=settings.adapters_path,
    )


def policy(settings: Settings) -> ConversationPolicy:
    from datetime import timedelta

    from bot.core.reward import RewardWeights
    from bot.core.scoring import TURN_HALF_LIFE_DAYS, Scoring

    half_lives = dict(settings.memory_half_life_days)
    return ConversationPolicy(
        persona=settings.persona,
        max_new_tokens=settings.max_new_tokens,
        recent_turns=settings.recent_turns,
        memory_top_k=settings.memory_top_k,
        memory_token_budget=settings.memory_token_budget,
        max_message_chars=settings.max_message_chars,
        reactions=settings.reactions,
        scoring=Scoring(
            half_life_days=half_lives,
            default_half_life_days=half_lives.get("turn", TURN_HALF_LIFE_DAYS),
            assistant_weight=settings.memory_assistant_weight,
            mix=settings.memory_weight_mix,
            favoured_reward=settings.memory_favoured_reward,
        ),
        reward=RewardWeights(
            alpha=settings.reward_alpha,
            beta=settings.reward_beta,
            gamma=settings.reward_gamma,
            session_gap=timedelta(minutes=settings.session_gap_minutes),
        ),
    )


def services(kindred: Kindred) -> Services:
    """What the chat-platform adapters are handed."""
    settings = kindred.settings
    return Services(
        conversation=kindred.conversation,
        controls=Controls(kindred.store, settings.persona, embedder=kindred.embedder),
        limiter=RateLimiter(settings.user_messages_per_minute, settings.user_message_burst),
        access=Access(id_set(settings.allowed_ids), id_set(settings.admin_ids) or frozenset()),
    )


def job_registry(settings: Settings, models: Models | None = None) -> JobRegistry:
    """Every job Kindred runs, defined once for both runners: store upkeep, memory extraction and
    upkeep, inference on GPU workers; nightly training and check-ins join later. `models`: the
    embedder and model this process already loaded (in-process jobs), else loaded on first use."""
    registry = JobRegistry()
    models = models or Models(
        LoadOnce(lambda: load_embedder(settings), what="embedder"),
        LoadOnce(lambda: load_inference(settings), what="extraction model"),
    )

    @registry.job("kindred.store.upkeep", soft_s=600, hard_s=900, retries=2, retry_delay_s=30)
    async def store_upkeep(payload: JobPayload) -> JobPayload:
        store = await open_store(settings)
        try:
            return {"backend": store.backend, "done": await store.maintain()}
        finally:
            await store.close()

    add_memory_jobs(registry, settings, open_store, models)
    registry.add(generate_job(settings))
    return registry


# The first request on a GPU worker also loads the model; a big one can take minutes.
MODEL_LOAD_ALLOWANCE_S = 300.0


def generate_job(settings: Settings, *, pace_s: float = 0.0) -> Job:
    """`kindred.inference.generate`, run by GPU workers for KINDRED_INFERENCE_BACKEND=celery.

    The model is loaded by the worker's first such job, once per process. `pace_s` waits after
    each chunk written; tests use it to catch a reply half-way."""
    engines = LoadOnce(lambda: load_local_inference(settings), what="inference model")

    async def generate(payload: JobPayload) -> JobPayload:
        import redis.asyncio as aioredis

        from bot.inference.serving import serve

        if not settings.redis_url:
            raise ConfigError("invalid configuration: REDIS_URL: inference workers need it")
        client = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=5.0)
        try:
            return await serve(payload, engines, client, pace_s=pace_s)
        finally:
            await client.aclose()

    soft_s = settings.generation_timeout_s + MODEL_LOAD_ALLOWANCE_S
    return Job(JobSpec("kindred.inference.generate", soft_s=soft_s, hard_s=soft_s + 60), generate)


def load_jobs(settings: Settings, registry: JobRegistry | None = None) -> Jobs:
    """Celery workers when REDIS_URL is set; otherwise a thread pool in this process."""
    registry = registry or job_registry(settings)
    if settings.redis_url:
        from bot.jobs.celery_runner import CeleryJobs

        return CeleryJobs.connect(settings.redis_url, registry)
    from bot.jobs.inprocess import InProcessJobs

    return InProcessJobs(registry, workers=settings.job_threads)


@dataclass
class Kindred:
    """A running companion: its parts, so that whoever opened it can close it."""

    settings: Settings
    store: Store
    embedder: Embedder
    conversation: Conversation
    jobs: Jobs

    async def close(self) -> None:
        await self.jobs.close()
        await self.conversation.flush()
        # The embedder's batching thread and a remote model's HTTP client, where there are any.
        for part in (self.embedder, self.conversation.inference):
            close = getattr(part, "close", None)
            if close is not None:
                await close()
        await self.store.close()


async def build(settings: Settings) -> Kindred:
    store = await open_store(settings)
    embedder = load_embedder(settings)
    inference = load_inference(settings)
    # In-process jobs share this process's models; Celery workers load their own.
    models = None if settings.redis_url else Models(LoadOnce(lambda: embedder), LoadOnce(lambda: inference))
    jobs = load_jobs(settings, job_registry(settings, models))
    conversation = Conversation(
        store, embedder, inference, policy(settings), after_turn=extraction_submitter(jobs)
    )
    return Kindred(settings, store, embedder, conversation, jobs)


def extraction_submitter(jobs: Jobs) -> Callable[[Turn], None]:
    """What the conversation calls once a person's turn is stored: queue its extraction."""

    def submit(turn: Turn) -> None:
        try:
            jobs.submit(EXTRACT_JOB, {"user_id": turn.user_id, "memory_id": turn.memory_id})
        except (JobError, QueueUnavailable) as exc:
            # The reply goes on; the turn is stored and recallable, only not yet distilled.
            log.warning("memory extraction not queued: %s", exc)

    return submit
