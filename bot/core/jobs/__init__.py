"""One job API: submit a job by name with a JSON payload, then await its result.

Two runners implement `Jobs`: in-process threads (no server at all) and Celery over Redis. Both
run the same `JobRegistry`, so a job (its function, time limits and retries) is defined once, and
both apply one attempt policy (`run_attempt`): a soft time limit, retries only for errors that a
retry can fix (`is_transient`), and a failure text that names the job and its error.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, NewType, Protocol, runtime_checkable

from bot.core.errors import JobError, JobTimeout, StoreUnavailable

log = logging.getLogger(__name__)

JobId = NewType("JobId", str)
# Ids and primitives only: a payload crosses a process boundary as JSON.
JobPayload = dict[str, Any]
JobFunction = Callable[[JobPayload], Awaitable[JobPayload]]

QUEUES = ("gpu", "train", "build", "default")
# A job's queue follows from its name (kindred.<topic>.<fn>): one routing rule for both runners.
_ROUTES = (
    ("kindred.inference.", "gpu"),
    ("kindred.training.", "train"),
    ("kindred.build.", "build"),
    ("kindred.miniapps.", "build"),
    ("kindred.apps.", "build"),  # the mini-app build's name before "miniapp"
)
# Errors that a later attempt can fix. Anything else (a bad payload, a bug) fails at once: a poison
# job must not be retried forever, nor block the jobs behind it.
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (StoreUnavailable, ConnectionError)
# The id of the job whose attempt runs in this context (set by `run_attempt`): Celery redelivers a
# job, and retries it, under the same id, so a job can tell a second delivery of itself apart.
_CURRENT_JOB: ContextVar[str | None] = ContextVar("kindred_current_job", default=None)
# Where a long job's progress goes: Celery's task state (Flower shows it); nowhere in-process.
ProgressHook = Callable[[JobPayload], None]
_PROGRESS: ContextVar[ProgressHook | None] = ContextVar("kindred_job_progress", default=None)


class Jobs(Protocol):
    def submit(self, name: str, payload: JobPayload) -> JobId:
        """Queue a job. Raises JobError for an unknown name or a payload that is not JSON, and
        QueueUnavailable when the queue cannot be reached (then nothing was queued)."""
        ...

    async def result(self, job_id: JobId, timeout_s: float) -> JobPayload:
        """The job's result. Raises JobError with the job's error text when it failed, and
        JobTimeout when it ran past its limit or no result came within `timeout_s`."""
        ...

    async def lost(self, job_id: JobId) -> bool:
        """True only when the job is surely gone without running: its queue lost its data (a
        Redis back empty) before any worker ended it. A caller that sees no sign of the job having
        started may then submit it again."""
        ...

    async def depths(self) -> dict[str, int]:
        """Jobs waiting per queue, for the admin page."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class JobProgress(Protocol):
    """A runner that tells how a running job is doing (both runners do; a caller checks with
    isinstance, so that a runner without it still runs jobs)."""

    async def progress(self, job_id: JobId) -> JobPayload | None:
        """What the job last passed to `report_progress`; None before it reported any, once it
        has ended, or when it cannot be read just now (progress is a courtesy)."""
        ...


def queue_for(name: str) -> str:
    return next((queue for prefix, queue in _ROUTES if name.startswith(prefix)), "default")


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    # The soft limit stops the job's coroutine; the hard limit gives up on it (Celery: kills it).
    soft_s: float
    hard_s: float
    retries: int = 0
    # Before retry n (0-based) the runner waits retry_delay_s · 2ⁿ.
    retry_delay_s: float = 1.0
    # False for a job whose outcome reaches its caller another way (a reply's stream), or nobody
    # (memory extraction, one per message): Celery would otherwise keep each run's record,
    # arguments included, for a day (`result_expires`). A failure is kept all the same.
    keep_result: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.soft_s <= self.hard_s:
            raise ValueError(f"{self.name}: need 0 < soft_s <= hard_s")

    @property
    def queue(self) -> str:
        return queue_for(self.name)

    def retry_delay(self, attempt: int) -> float:
        return self.retry_delay_s * 2.0**attempt


@dataclass(frozen=True, slots=True)
class Job:
    spec: JobSpec
    run: JobFunction


class JobRegistry:
    """Job names → functions and their limits. Built by a function, never at import."""

    def __init__(self) -> None:
        self._jobs: dict[str, Job] = {}

    def job(
        self,
        name: str,
        *,
        soft_s: float,
        hard_s: float,
        retries: int = 0,
        retry_delay_s: float = 1.0,
        keep_result: bool = True,
    ) -> Callable[[JobFunction], JobFunction]:
        """Decorator: register `fn` as the job `name` (kindred.<topic>.<fn>)."""

        def register(fn: JobFunction) -> JobFunction:
            self.add(Job(JobSpec(name, soft_s, hard_s, retries, retry_delay_s, keep_result), fn))
            return fn

        return register

    def add(self, job: Job) -> None:
        if job.spec.name in self._jobs:
            raise ValueError(f"job {job.spec.name} is defined twice")
        self._jobs[job.spec.name] = job

    def alias(self, old: str, name: str) -> None:
        """Register `old` as a second name of the job `name`: jobs queued under a name that
        changed still run (Celery finds a task by the name it was sent with)."""
        self.add(Job(replace(self.get(name).spec, name=old), self.get(name).run))

    def get(self, name: str) -> Job:
        try:
            return self._jobs[name]
        except KeyError:
            raise JobError(f"no job is named {name!r}") from None

    def __iter__(self) -> Iterator[Job]:
        return iter(self._jobs.values())

    def longest_hard_limit_s(self) -> float:
        return max((job.spec.hard_s for job in self), default=0.0)


def check_payload(payload: Mapping[str, Any]) -> JobPayload:
    """The payload as JSON will carry it; JobError when it holds anything JSON cannot."""
    try:
        loaded = json.loads(json.dumps(payload, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise JobError(f"a job payload must be JSON (ids and primitives): {exc}") from None
    if not isinstance(loaded, dict):
        raise JobError("a job payload must be a JSON object")
    return loaded


def is_transient(exc: BaseException) -> bool:
    return isinstance(exc, TRANSIENT_ERRORS)


def describe_failure(name: str, exc: BaseException) -> str:
    return f"{name} failed: {type(exc).__name__}: {exc}"


def current_job_id() -> str | None:
    """The runner's id of the job running now (None outside a job, or when the runner gave none)."""
    return _CURRENT_JOB.get()


def report_progress(progress: JobPayload) -> None:
    """Tell the runner how the running job is doing (JSON). Never raises: progress is a courtesy.

    Safe from a thread the job started with `asyncio.to_thread`, which carries the job's context."""
    hook = _PROGRESS.get()
    if hook is None:
        return
    try:
        hook(progress)
    except Exception as exc:  # a dashboard that cannot be told is no reason to stop the job
        log.warning("job progress not reported: %s", exc)


async def run_attempt(
    job: Job, payload: JobPayload, job_id: str | None = None, progress: ProgressHook | None = None
) -> JobPayload:
    """One attempt within the soft limit. Raises JobTimeout past it, the error itself when
    `is_transient` (the runner may retry), and JobError with the error's text for anything else.
    `job_id` is what `current_job_id` tells the job's function; `progress` receives what it
    passes to `report_progress`."""
    name = job.spec.name
    _CURRENT_JOB.set(job_id)
    _PROGRESS.set(progress)
    try:
        async with asyncio.timeout(job.spec.soft_s) as limit:
            result = await job.run(check_payload(payload))
    except TimeoutError as exc:
        if limit.expired():
            raise JobTimeout(f"{name} ran past its time limit of {job.spec.soft_s:g} s") from None
        raise JobError(describe_failure(name, exc)) from exc
    except JobError:
        raise
    except Exception as exc:
        if is_transient(exc):
            raise
        raise JobError(describe_failure(name, exc)) from exc
    if not isinstance(result, Mapping):
        raise JobError(f"{name} returned {type(result).__name__}, not a JSON object")
    return check_payload(result)
