"""Every job Kindred runs, defined once for both runners (in-process threads, Celery workers)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from bot.core.errors import ConfigError, JobError, QueueUnavailable
from bot.core.jobs import Job, JobPayload, JobRegistry, Jobs, JobSpec
from bot.core.loading import LoadOnce
from bot.core.media.ports import SpeechToText
from bot.core.models import Turn
from bot.wiring.backends import job_runner, load_embedder, load_inference, load_local_inference, open_store
from bot.wiring.job_store import StoreAccess, per_job
from bot.wiring.media.backends import load_speech
from bot.wiring.media.document_jobs import add_document_jobs
from bot.wiring.media.voice_jobs import add_voice_jobs
from bot.wiring.memory_jobs import EXTRACT_JOB, MemoryJobOptions, Models, add_memory_jobs
from bot.wiring.miniapp_jobs import add_app_jobs, build_policy
from bot.wiring.proactive_jobs import add_proactive_jobs
from bot.wiring.settings import Settings
from bot.wiring.training_jobs import add_training_jobs

log = logging.getLogger(__name__)

# The first request on a GPU worker also loads the model; a big one can take minutes.
MODEL_LOAD_ALLOWANCE_S = 300.0


def job_registry(
    settings: Settings,
    models: Models | None = None,
    *,
    stores: StoreAccess | None = None,
    speech: Callable[[], SpeechToText | None] | None = None,
) -> JobRegistry:
    """Every job: store upkeep, memory extraction and upkeep, nightly training, mini-app builds,
    the proactive beat, long documents kept, long recordings heard, inference on GPU workers.
    `models`: the embedder and model this process already loaded (in-process jobs), else loaded
    on first use. `stores`: how a
    job gets its store (a worker process's one store, bot/wiring/job_store.py); by default each job
    opens its own. `speech`: makes the speech backend a job hears with (by default the settings')."""
    registry = JobRegistry()
    models = models or Models(
        LoadOnce(lambda: load_embedder(settings), what="embedder"),
        LoadOnce(lambda: load_inference(settings), what="extraction model"),
    )

    stores = stores or per_job(lambda: open_store(settings))

    @registry.job("kindred.store.upkeep", soft_s=600, hard_s=900, retries=2, retry_delay_s=30)
    async def store_upkeep(payload: JobPayload) -> JobPayload:
        async with stores() as store:
            return {"backend": store.backend, "done": await store.maintain()}

    options = MemoryJobOptions.of(settings.memory, settings.inference.generation_timeout_s)
    add_memory_jobs(registry, options, stores, models)
    add_training_jobs(registry, settings, stores, models.embedder)
    app_policy = build_policy(
        settings.web, settings.inference.generation_timeout_s, settings.inference.backend
    )
    wants_model = app_policy.spec_pass or app_policy.free_form
    add_app_jobs(registry, stores, app_policy, models.inference if wants_model else None)
    add_proactive_jobs(registry, settings, stores, models)
    add_document_jobs(registry, stores, models.embedder, settings.documents, settings.data_dir)
    hearing = speech or (lambda: load_speech(settings.speech, device=settings.inference.device))
    add_voice_jobs(
        registry, stores, models.embedder, hearing, settings.data_dir,
        section=settings.speech, max_message_chars=settings.chat.max_message_chars,
    )  # fmt: skip
    registry.add(generate_job(settings))
    return registry


def generate_job(settings: Settings, *, pace_s: float = 0.0) -> Job:
    """`kindred.inference.generate`, run by GPU workers for KINDRED_INFERENCE_BACKEND=celery.

    The model is loaded by the worker's first such job, once per process. `pace_s` waits after
    each chunk written; tests use it to catch a reply half-way."""
    engines = LoadOnce(lambda: load_local_inference(settings), what="inference model")
    redis_url = settings.workers.redis_url

    async def generate(payload: JobPayload) -> JobPayload:
        import redis.asyncio as aioredis

        from bot.inference.gpu_workers.serving import serve

        if not redis_url:
            raise ConfigError("invalid configuration: REDIS_URL: inference workers need it")
        client = aioredis.Redis.from_url(redis_url, socket_connect_timeout=5.0)
        try:
            return await serve(payload, engines, client, pace_s=pace_s)
        finally:
            await client.aclose()

    soft_s = settings.inference.generation_timeout_s + MODEL_LOAD_ALLOWANCE_S
    # The reply reaches the chat side through its stream; a result kept per message for a day
    # would grow Redis by tens of MB an hour at 50 messages/s.
    spec = JobSpec("kindred.inference.generate", soft_s=soft_s, hard_s=soft_s + 60, keep_result=False)
    return Job(spec, generate)


def load_jobs(settings: Settings, registry: JobRegistry | None = None) -> Jobs:
    """The configured runner (Celery with REDIS_URL, else threads here) over every job."""
    return job_runner(settings, registry or job_registry(settings))


async def requeue_job(settings: Settings, job_id: str) -> str:
    """Run a failed job again under its id (`kindred requeue`): one a worker gave up after it died
    KINDRED_JOB_MAX_WORKER_DEATHS times, or any other. Returns its name."""
    from bot.jobs.celery_runner import CeleryJobs

    redis_url = settings.workers.redis_url
    if not redis_url:
        raise ConfigError("invalid configuration: REDIS_URL: only jobs on Celery workers are requeued")
    jobs = CeleryJobs.connect(redis_url, job_registry(settings))
    try:
        return await asyncio.to_thread(jobs.requeue, job_id)
    finally:
        await jobs.close()


def extraction_submitter(jobs: Jobs) -> Callable[[Turn], None]:
    """What the conversation calls once a person's turn is stored: queue its extraction."""

    def submit(turn: Turn) -> None:
        try:
            jobs.submit(EXTRACT_JOB, {"user_id": turn.user_id, "memory_id": turn.memory_id})
        except (JobError, QueueUnavailable) as exc:
            # The reply goes on; the turn is stored and recallable, only not yet distilled.
            log.warning("memory extraction not queued: %s", exc)

    return submit
