"""`celery -A tests.workers.training_worker_app worker --queues train`: Kindred's worker app with
the one nightly training job, paced by KINDRED_TEST_TRAIN_PACE_S (seconds after each training
step) so that a test can kill the worker mid-run. Settings from the environment only."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from celery import Celery

from bot.core.jobs import JobRegistry
from bot.wiring.job_store import StoreAccess
from bot.wiring.settings import load_settings
from bot.wiring.training_jobs import nightly_job
from workers.app import worker_app


@cache
def get_app() -> Celery:
    settings = load_settings(env_file=None)
    pace_s = float(os.environ.get("KINDRED_TEST_TRAIN_PACE_S", "0"))

    def registry(stores: StoreAccess) -> JobRegistry:
        jobs = JobRegistry()
        jobs.add(nightly_job(settings, stores, pace_s=pace_s))
        return jobs

    return worker_app(settings, registry)


def __getattr__(name: str) -> Any:
    if name in ("app", "celery"):
        return get_app()
    raise AttributeError(name)
