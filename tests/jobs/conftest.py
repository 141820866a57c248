"""Both job runners, for one contract: in-process threads, and Celery with a real worker process
on a real Redis (its own database, flushed before and after the session)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bot.core.jobs import JobRegistry, Jobs
from bot.jobs.celery_runner import CeleryJobs
from bot.jobs.inprocess import InProcessJobs
from bot.wiring.settings import GeneralSettings, Settings, StoreSettings
from tests.jobs.sample_jobs import sample_registry
from tests.jobs.workerproc import Worker, flush, redis_url


@pytest.fixture(scope="session")
def jobs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jobs")


@pytest.fixture(scope="session")
def registry(jobs_dir: Path) -> JobRegistry:
    settings = Settings(
        general=GeneralSettings(data_dir=jobs_dir),
        store=StoreSettings(DATABASE_URL=f"sqlite:///{jobs_dir / 'worker.db'}"),
    )
    return sample_registry(settings)


@pytest.fixture(scope="session")
def session_redis() -> Iterator[str]:
    url = redis_url()
    flush(url)
    yield url
    flush(url)


@pytest.fixture(scope="session")
def worker(session_redis: str, jobs_dir: Path) -> Iterator[Worker]:
    """One worker on the `default` queue for the whole session."""
    started = Worker(session_redis, jobs_dir)
    try:
        yield started.wait_ready()
    finally:
        started.kill()


@pytest.fixture(params=["inprocess", pytest.param("celery", marks=pytest.mark.procs)])
async def jobs(request: pytest.FixtureRequest, registry: JobRegistry) -> AsyncIterator[Jobs]:
    runner: Jobs
    if request.param == "inprocess":
        runner = InProcessJobs(registry, workers=2)
    else:
        request.getfixturevalue("worker")
        runner = CeleryJobs.connect(request.getfixturevalue("session_redis"), registry)
    try:
        yield runner
    finally:
        await runner.close()
