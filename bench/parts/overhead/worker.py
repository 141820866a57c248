"""`celery -A bench.parts.overhead.worker worker --queues gpu`: Kindred's worker app (workers/app.py
`build_app`, every job) plus `kindred.inference.empty`, a job on the GPU queue that does nothing but
take the store the way every store job takes it. What one costs is the worker's own overhead per
task: the event loop, the store, Celery's bookkeeping. Settings from the environment only."""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery

from bot.core.jobs import JobPayload, JobRegistry
from bot.wiring.job_store import StoreAccess
from bot.wiring.jobs import job_registry
from bot.wiring.settings import load_settings
from workers.app import worker_app

EMPTY_JOB = "kindred.inference.empty"


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)

    def registry(stores: StoreAccess) -> JobRegistry:
        jobs = job_registry(settings, stores=stores)

        @jobs.job(EMPTY_JOB, soft_s=30, hard_s=60)
        async def empty(payload: JobPayload) -> JobPayload:
            async with stores() as store:
                return {"backend": store.backend}

        return jobs

    return worker_app(settings, registry)


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
