"""`celery -A tests.jobs.worker_app worker`: Kindred's worker app (workers.app.worker_app: one loop
and one store per process) with the sample jobs added, settings from the environment only."""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery

from bot.wiring.settings import load_settings
from tests.jobs.sample_jobs import sample_registry
from workers.app import worker_app


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)
    return worker_app(settings, lambda stores: sample_registry(settings, stores))


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
