"""The one decorator that turns a Kindred job into a Celery task, with its time limits and retries.

The task body holds no logic: it runs the job's function under the same attempt policy as the
in-process runner (`bot.core.jobs.run_attempt`), on the worker process's one event loop
(workers/process.py), and maps what comes out onto Celery: transient errors are retried with
backoff up to the job's `retries`; anything else fails once, recorded in the result backend (state
FAILURE, the error's text) and in the worker's log.

Redelivery is bounded: a job whose worker died `max_deaths` times while running it (each time
delivered again, since jobs are acked late) is refused at its next delivery and fails with the
reason, until an admin runs `kindred requeue ID` (bot/jobs/celery_runner.py: DeliveryLedger).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.exceptions import SoftTimeLimitExceeded

from bot.core.errors import JobError, JobTimeout
from bot.core.jobs import Job, JobFunction, JobPayload, JobSpec, describe_failure, run_attempt
from bot.jobs.celery_runner import DeliveryLedger
from workers.process import WorkerProcess

log = logging.getLogger(__name__)
GIVEN_UP = (
    "{name} was given up: its worker died {deaths} times while running it "
    "(KINDRED_JOB_MAX_WORKER_DEATHS={limit}); `kindred requeue {job_id}` runs it again"
)


@dataclass(frozen=True, slots=True)
class TaskPolicy:
    """What every task shares: the process it runs in, and the bound on its redeliveries."""

    process: WorkerProcess
    ledger: DeliveryLedger
    max_deaths: int


def kindred_task(app: Celery, spec: JobSpec, policy: TaskPolicy) -> Callable[[JobFunction], Any]:
    """Decorator: register the async job function as the Celery task `spec.name`.

    Soft and hard limits are Celery's own on a prefork worker; the soft limit is also applied by
    `run_attempt`, so it holds on the solo pool (the GPU worker) too, where Celery enforces none.
    """

    def register(fn: JobFunction) -> Any:
        job = Job(spec, fn)

        def body(task: Any, payload: JobPayload) -> JobPayload:
            return run_job(task, job, payload, policy)

        return app.task(
            body,
            name=spec.name,
            bind=True,
            queue=spec.queue,
            soft_time_limit=spec.soft_s,
            time_limit=spec.hard_s,
            max_retries=spec.retries,
            acks_late=True,
            reject_on_worker_lost=True,
            ignore_result=not spec.keep_result,
            typing=False,
        )

    return register


def _task_state(task: Any) -> Callable[[JobPayload], None]:
    """A job's progress as the task's state PROGRESS with the step as its meta: Flower shows it.

    The id is read here: a job's thread (the trainer's) has no Celery request of its own."""
    task_id = task.request.id

    def update(progress: JobPayload) -> None:
        task.update_state(task_id=task_id, state="PROGRESS", meta=progress)

    return update


def run_job(task: Any, job: Job, payload: JobPayload, policy: TaskPolicy) -> JobPayload:
    spec, job_id = job.spec, task.request.id
    deaths = policy.ledger.start(job_id)
    if deaths >= policy.max_deaths:
        reason = GIVEN_UP.format(name=spec.name, deaths=deaths, limit=policy.max_deaths, job_id=job_id)
        log.error("job %s (%s): %s", spec.name, job_id, reason)
        raise JobError(reason)  # counted still: a stray delivery of it is refused too
    try:
        return _attempt(task, job, payload, policy.process)
    finally:
        policy.ledger.forget(job_id)  # it ended here, whatever its end: no death


def _attempt(task: Any, job: Job, payload: JobPayload, process: WorkerProcess) -> JobPayload:
    spec, job_id, attempt = job.spec, task.request.id, task.request.retries
    try:
        return process.run(run_attempt(job, payload, job_id, progress=_task_state(task)))
    except SoftTimeLimitExceeded:
        error: JobError = JobTimeout(f"{spec.name} ran past its time limit of {spec.soft_s:g} s")
    except JobError as exc:
        error = exc
    except Exception as exc:  # transient: run_attempt let it through so that it may be retried
        if attempt < spec.retries:
            log.warning("job %s (%s) will be retried: %s", spec.name, job_id, exc)
            raise task.retry(exc=exc, countdown=spec.retry_delay(attempt)) from None
        error = JobError(describe_failure(spec.name, exc))
    log.error("job %s (%s) failed, attempt %d: %s", spec.name, job_id, attempt + 1, error)
    raise error
