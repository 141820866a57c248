"""`celery -A bench.parts.overhead.worker worker --queues gpu`: Kindred's worker app (workers/app.py
`build_app`, every job) plus `kindred.inference.empty`, a job on the GPU queue that does nothing but
take the store the way every store job takes it. What one costs is the worker's own overhead per
task: the event loop, the store, Celery's bookkeeping. Settings from the environment only."""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery

from bot.core.jobs import JobPayload
from bot.core.store import Store
from bot.wiring.backends import open_store
from bot.wiring.jobs import job_registry
from bot.wiring.settings import load_settings
from workers.app import build_app

EMPTY_JOB = "kindred.inference.empty"


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)

    async def opener() -> Store:
        return await open_store(settings)

    registry = job_registry(settings)

    @registry.job(EMPTY_JOB, soft_s=30, hard_s=60)
    async def empty(payload: JobPayload) -> JobPayload:
        store = await opener()
        try:
            return {"backend": store.backend}
        finally:
            await store.close()

    return build_app(settings, registry)


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
