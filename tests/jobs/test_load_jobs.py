"""The composition root picks the runner: in-process without REDIS_URL, Celery with it."""

from __future__ import annotations

from bot.core.miniapps.commands import RESULT_WAIT_S
from bot.jobs.celery_runner import CeleryJobs
from bot.jobs.inprocess import InProcessJobs
from bot.wiring.jobs import job_registry, load_jobs
from bot.wiring.settings import Settings, WorkerSettings


def settings(redis_url: str | None = None) -> Settings:
    return Settings(workers=WorkerSettings(REDIS_URL=redis_url))


async def test_without_redis_jobs_run_in_this_process() -> None:
    jobs = load_jobs(settings())
    try:
        assert isinstance(jobs, InProcessJobs)
    finally:
        await jobs.close()


async def test_with_redis_jobs_go_to_celery_and_nothing_is_contacted_yet() -> None:
    jobs = load_jobs(settings(redis_url="redis://127.0.0.1:1/0"))  # a dead port: no error here
    try:
        assert isinstance(jobs, CeleryJobs)
    finally:
        await jobs.close()


def test_every_job_is_named_by_topic_and_its_visibility_margin_holds() -> None:
    from bot.jobs.celery_config import visibility_timeout_s

    registry = job_registry(settings())
    names = [job.spec.name for job in registry]
    assert names == [
        "kindred.store.upkeep",
        "kindred.memory.extract",
        "kindred.memory.upkeep",
        "kindred.training.nightly",
        "kindred.learning.canary",
        "kindred.miniapps.build",
        "kindred.apps.build",
        "kindred.proactive.beat",
        "kindred.media.keep_document",
        "kindred.media.hear_voice",
        "kindred.inference.generate",
    ]
    assert registry.get("kindred.inference.generate").spec.queue == "gpu"
    assert registry.get("kindred.proactive.beat").spec.queue == "default"
    assert registry.get("kindred.learning.canary").spec.queue == "default"
    assert registry.get("kindred.media.keep_document").spec.queue == "default"
    assert registry.get("kindred.miniapps.build").spec.queue == "build"
    # A build queued by a Kindred from before "miniapp" runs the same job on the same queue.
    older = registry.get("kindred.apps.build")
    assert older.run is registry.get("kindred.miniapps.build").run and older.spec.queue == "build"
    nightly = registry.get("kindred.training.nightly").spec
    assert nightly.queue == "train" and nightly.soft_s == 180 * 60 and nightly.hard_s > nightly.soft_s
    assert all(name.startswith("kindred.") and name.count(".") == 2 for name in names)
    assert visibility_timeout_s(registry.longest_hard_limit_s(), None) > registry.longest_hard_limit_s()
    assert visibility_timeout_s(8 * 3600, None) > 8 * 3600  # a nightly training run of 8 h


def test_a_celery_worker_takes_a_build_queued_under_its_older_name() -> None:
    """Workers register every name of a job: an upgrade leaves no queued build without a task."""
    from workers.app import build_app

    app = build_app(settings(redis_url="redis://127.0.0.1:1/0"), job_registry(settings()))
    assert {"kindred.miniapps.build", "kindred.apps.build"} <= set(app.tasks)
    assert app.tasks["kindred.apps.build"].queue == app.tasks["kindred.miniapps.build"].queue == "build"


def test_a_build_waits_out_a_store_away_for_a_minute_and_still_answers_in_time() -> None:
    """A full disk under SQLite (30 s in the long soak) or a PostgreSQL failover: the build is tried
    again for a minute at least, and its last try still ends before the chat stops waiting."""
    spec = job_registry(settings()).get("kindred.miniapps.build").spec
    retried_for = sum(spec.retry_delay(n) for n in range(spec.retries))
    assert retried_for >= 60
    assert retried_for + spec.hard_s < RESULT_WAIT_S
