"""The Celery app. Nothing happens at import: `celery -A workers.app …` asks this module for
`app`, and only then are the settings read and the app built (`get_app`).

    celery -A workers.app worker --queues gpu --pool threads         # one per GPU
    celery -A workers.app worker --queues build,default,train        # CPU jobs
    celery -A workers.app beat                                        # exactly one (see schedule.py)

`kindred worker`, `kindred beat` and `kindred flower` run these with Kindred's settings and checks.
Configuration (broker, JSON only, late acks, routes, visibility timeout) is
`bot/jobs/celery_config.py`, shared with the side that submits jobs. Each worker process keeps one
event loop and one store for all its tasks (workers/process.py, bot/wiring/job_store.py), and never
migrates: `kindred migrate` does.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from celery import Celery

from bot.core.errors import ConfigError
from bot.core.jobs import JobRegistry
from bot.jobs.celery_runner import DeliveryLedger, make_app
from bot.wiring.job_store import StoreAccess, WorkerStore
from bot.wiring.jobs import job_registry
from bot.wiring.schedule import schedule_entries
from bot.wiring.settings import Settings, load_settings
from workers.process import WorkerProcess
from workers.schedule import beat_schedule
from workers.tasks import TaskPolicy, kindred_task


def worker_app(settings: Settings, registry_of: Callable[[StoreAccess], JobRegistry]) -> Celery:
    """The worker app whose jobs share each worker process's one store: `registry_of` is given
    the access to it and returns the jobs (Kindred's, or a test's or a benchmark's)."""
    store = WorkerStore(settings)
    return build_app(settings, registry_of(store.use), WorkerProcess(store.close))


def build_app(settings: Settings, registry: JobRegistry, process: WorkerProcess | None = None) -> Celery:
    """The worker app: Kindred's Celery configuration, every job as a task, beat's schedule.
    `process`: what each worker process holds (its loop; through `worker_app`, its store)."""
    workers = settings.workers
    if not workers.redis_url:
        raise ConfigError("invalid configuration: REDIS_URL: workers need it (redis://HOST:6379/0)")
    process = process or WorkerProcess()
    process.connect()
    policy = TaskPolicy(process, DeliveryLedger(workers.redis_url), workers.job_max_worker_deaths)
    app = make_app(workers.redis_url, registry, workers.visibility_timeout_s)
    app.conf.update(
        timezone="UTC",
        enable_utc=True,
        # A job that ends while Redis restarts keeps trying to store its result (and its state)
        # for about a minute instead of being recorded as failed: bench/soak.py lost an app build
        # that way. Only the worker waits; the bot's own reads still fail fast.
        result_backend_always_retry=True,
        result_backend_max_retries=RESULT_RETRIES,
        result_backend_max_sleep_between_retries_ms=2000,
        beat_schedule=beat_schedule(schedule_entries(workers, settings.training)),
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )
    for job in registry:
        kindred_task(app, job.spec, policy)(job.run)
    return app


# With the sleeps capped at 2 s, about a minute of retries.
RESULT_RETRIES = 36


@cache
def get_app() -> Celery:
    """The process's one app, built on first use from the environment (and `.env`)."""
    settings = load_settings()
    return worker_app(settings, lambda stores: job_registry(settings, stores=stores))


def __getattr__(name: str) -> Any:
    # `celery -A workers.app` looks up `app`, then `celery`, on this module.
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
