"""Jobs in this process, on a small thread pool: `kindred run` and `kindred chat` need no server.

Each attempt runs in its own event loop on a pool thread, under the same policy as a Celery worker
(`run_attempt`): the soft limit cancels the job's coroutine, transient errors are retried with
backoff, anything else fails at once. A thread cannot be killed, so past the hard limit the job is
given up (its result says so) and whatever it still does is discarded.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from bot.core.errors import JobError, JobTimeout
from bot.core.jobs import (
    QUEUES,
    Job,
    JobId,
    JobPayload,
    JobRegistry,
    check_payload,
    describe_failure,
    run_attempt,
)

log = logging.getLogger(__name__)

# Finished results kept for `result()`, oldest dropped first (Celery expires them after a day).
MAX_KEPT_RESULTS = 10_000
# Closing waits this long for jobs still running or queued (see InProcessJobs.close).
CLOSE_GRACE_S = 30.0


class InProcessJobs:
    def __init__(self, registry: JobRegistry, *, workers: int = 2) -> None:
        self._registry = registry
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kindred-job")
        self._results: OrderedDict[JobId, Future[JobPayload]] = OrderedDict()
        self._waiting: dict[str, int] = dict.fromkeys(QUEUES, 0)
        # The last progress of each running job; dropped when it ends.
        self._progress: dict[JobId, JobPayload] = {}
        self._lock = threading.Lock()

    def submit(self, name: str, payload: JobPayload) -> JobId:
        job = self._registry.get(name)
        checked = check_payload(payload)
        job_id = JobId(uuid.uuid4().hex)
        outcome: Future[JobPayload] = Future()
        with self._lock:
            self._results[job_id] = outcome
            self._waiting[job.spec.queue] += 1
            self._forget_old()
        self._pool.submit(self._run, job, job_id, checked, outcome)
        return job_id

    async def result(self, job_id: JobId, timeout_s: float) -> JobPayload:
        with self._lock:
            outcome = self._results.get(job_id)
        if outcome is None:
            raise JobError(f"no job has the id {job_id}")
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(outcome)), timeout_s)
        except TimeoutError:
            raise JobTimeout(f"job {job_id} sent no result within {timeout_s:g} s") from None

    async def lost(self, job_id: JobId) -> bool:
        return False  # a thread's queue cannot lose its jobs and keep running

    async def progress(self, job_id: JobId) -> JobPayload | None:
        with self._lock:
            found = self._progress.get(job_id)
        return dict(found) if found is not None else None

    async def depths(self) -> dict[str, int]:
        with self._lock:
            return dict(self._waiting)

    async def close(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Take no more jobs; give the running and queued ones `grace_s` to finish (a memory
        extraction queued by the last message of a pipe), then leave the rest behind."""
        waiting = asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=False)
        try:
            await asyncio.wait_for(waiting, grace_s)
        except TimeoutError:
            self._pool.shutdown(wait=False, cancel_futures=True)
            log.warning("in-process jobs still running after %g s were left unfinished", grace_s)

    def _run(self, job: Job, job_id: JobId, payload: JobPayload, outcome: Future[JobPayload]) -> None:
        with self._lock:
            self._waiting[job.spec.queue] -= 1
        spec = job.spec
        for attempt in range(spec.retries + 1):
            if outcome.done():  # given up at the hard limit
                return
            try:
                _settle(outcome, result=self._attempt(job, job_id, payload, outcome))
                return
            except JobError as exc:
                log.error("job %s (%s) failed: %s", spec.name, job_id, exc)
                _settle(outcome, error=exc)
                return
            except Exception as exc:  # transient: run_attempt let it through for a retry
                if attempt == spec.retries:
                    error = JobError(describe_failure(spec.name, exc))
                    log.error("job %s (%s) failed, attempt %d: %s", spec.name, job_id, attempt + 1, error)
                    _settle(outcome, error=error)
                    return
                log.warning("job %s (%s) will be retried: %s", spec.name, job_id, exc)
                time.sleep(spec.retry_delay(attempt))

    def _attempt(
        self, job: Job, job_id: JobId, payload: JobPayload, outcome: Future[JobPayload]
    ) -> JobPayload:
        name, hard_s = job.spec.name, job.spec.hard_s
        past_limit = JobTimeout(f"{name} ran past its hard limit of {hard_s:g} s")
        hard_limit = threading.Timer(hard_s, _settle, args=(outcome,), kwargs={"error": past_limit})
        hard_limit.daemon = True
        hard_limit.start()

        def reported(progress: JobPayload) -> None:
            with self._lock:
                self._progress[job_id] = check_payload(progress)

        try:
            return asyncio.run(run_attempt(job, payload, job_id, progress=reported))
        finally:
            hard_limit.cancel()
            with self._lock:
                self._progress.pop(job_id, None)

    def _forget_old(self) -> None:
        while len(self._results) > MAX_KEPT_RESULTS:
            oldest = next(iter(self._results))
            if not self._results[oldest].done():
                return
            del self._results[oldest]


def _settle(outcome: Future[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Set the outcome once; the hard limit and a late-finishing attempt may race for it."""
    try:
        if error is not None:
            outcome.set_exception(error)
        else:
            outcome.set_result(result)
    except Exception:  # InvalidStateError: already settled
        pass
