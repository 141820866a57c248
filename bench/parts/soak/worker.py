"""`celery -A bench.parts.soak.worker worker`: Kindred's worker app (workers/app.py `build_app`, every
job, beat's schedule) with the load fixtures of bench/parts/telegram/fixtures.py as its embedder and
model, settings from the environment only. bench/soak.py runs it with the options `kindred worker`
gives (bot/cli/workers.py); only the app differs, since the fixtures cannot be named in settings."""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery

from bench.parts.telegram.fixtures import LoadFixtureEmbedder, LoadFixtureGenerator
from bot.core.loading import LoadOnce
from bot.wiring.jobs import job_registry
from bot.wiring.memory_jobs import Models
from bot.wiring.settings import load_settings
from workers.app import worker_app


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)
    models = Models(LoadOnce(LoadFixtureEmbedder, what="embedder"), LoadOnce(LoadFixtureGenerator))
    return worker_app(settings, lambda stores: job_registry(settings, models, stores=stores))


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
