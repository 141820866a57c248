"""`celery -A tests.workers.inference_worker_app worker --queues gpu`: Kindred's worker app with
the one inference job, paced by KINDRED_TEST_REPLY_PACE_S (seconds after each chunk) so that a
test can catch a reply half-way. Settings from the environment only."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from celery import Celery

from bot.core.jobs import JobRegistry
from bot.wiring.jobs import generate_job
from bot.wiring.settings import load_settings
from workers.app import build_app


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)
    registry = JobRegistry()
    registry.add(generate_job(settings, pace_s=float(os.environ.get("KINDRED_TEST_REPLY_PACE_S", "0"))))
    return build_app(settings, registry)


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
