"""Jobs on Celery workers over Redis. Jobs are sent by name: `bot/` never imports `workers/`.

Redis errors are mapped once, here: unreachable → QueueUnavailable ("busy, try again shortly"),
so an adapter can answer the person and keep nothing it could not queue.

`DeliveryLedger` bounds redelivery: a job is acked late (after it ran), so a worker killed while
running it leaves it to be delivered again, and a job that kills every worker it meets (out of
memory) would be delivered forever. The ledger counts, in Redis, the starts of each job that never
finished; past its limit the worker refuses the job and records it failed, until `requeue`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import redis
from celery import Celery
from celery.states import FAILURE, PENDING, READY_STATES, SUCCESS
from kombu.exceptions import OperationalError

from bot.core.errors import JobError, JobTimeout, QueueUnavailable
from bot.core.jobs import QUEUES, JobId, JobPayload, JobRegistry, check_payload, queue_for
from bot.jobs.celery_config import CONNECT_TIMEOUT_S, celery_config, visibility_timeout_s

log = logging.getLogger(__name__)

# Errors that mean "Redis is not there right now", from kombu (publishing) and redis-py (results).
_UNREACHABLE = (OperationalError, redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError)
# Polling a result: quick at first (most jobs are short), then at most 4 times a second.
FIRST_POLL_S = 0.02
LAST_POLL_S = 0.25
# Set when a job (one that keeps its result) is sent: gone with the queue when Redis loses its
# data. Outlives any wait for a result.
QUEUED_MARK = "kindred:job:queued:{}"
QUEUED_MARK_TTL_S = 6 * 3600
# Kombu's Redis transport keeps a queue's prioritised messages under `queue\x06\x16N` keys.
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def make_app(redis_url: str, registry: JobRegistry, configured_visibility_s: float | None = None) -> Celery:
    """A Celery app configured for Kindred (no tasks: the submitting side sends them by name)."""
    app = Celery("kindred", set_as_current=False)
    timeout = visibility_timeout_s(registry.longest_hard_limit_s(), configured_visibility_s)
    if timeout <= registry.longest_hard_limit_s():
        log.warning(
            "visibility timeout %.0f s is shorter than the longest job (%.0f s): such a job can run twice",
            timeout,
            registry.longest_hard_limit_s(),
        )
    app.conf.update(celery_config(redis_url, timeout))
    return app


class CeleryJobs:
    def __init__(self, app: Celery, registry: JobRegistry) -> None:
        self._app = app
        self._registry = registry
        self._marks_client: redis.Redis | None = None

    @classmethod
    def connect(cls, redis_url: str, registry: JobRegistry) -> CeleryJobs:
        """Nothing is contacted yet: a Redis that is down shows in `submit`, not here."""
        return cls(make_app(redis_url, registry), registry)

    def submit(self, name: str, payload: JobPayload) -> JobId:
        job = self._registry.get(name)
        checked = check_payload(payload)
        job_id = str(uuid.uuid4())
        try:
            if job.spec.keep_result:
                # Written first: a job queued is always marked, and the mark goes with the queue
                # when Redis loses its data (`lost`).
                self._marks().set(QUEUED_MARK.format(job_id), 1, ex=QUEUED_MARK_TTL_S)
            self._app.send_task(name, args=(checked,), task_id=job_id, queue=job.spec.queue, retry=False)
        except Exception as exc:
            if not _unreachable(exc):
                raise
            log.warning("job %s not queued: Redis is unreachable (%s)", name, type(exc).__name__)
            raise QueueUnavailable("the job queue cannot be reached") from None
        return JobId(job_id)

    async def lost(self, job_id: JobId) -> bool:
        """No mark of the job's queuing and no state of it: Redis lost both since it was sent.
        Redis unreachable: False (nothing is known)."""

        def looked() -> bool:
            marked = self._marks().exists(QUEUED_MARK.format(job_id))
            return not marked and self._app.AsyncResult(job_id).state == PENDING

        try:
            return await asyncio.to_thread(looked)
        except _UNREACHABLE:
            return False

    def _marks(self) -> redis.Redis:
        if self._marks_client is None:
            self._marks_client = redis.Redis.from_url(
                self._app.conf.broker_url, socket_connect_timeout=CONNECT_TIMEOUT_S
            )
        return self._marks_client

    async def result(self, job_id: JobId, timeout_s: float) -> JobPayload:
        # Celery's own blocking `get` checks its timeout only once a second, and holds a thread the
        # whole wait; polling the state holds one for a Redis GET at a time.
        pending = self._app.AsyncResult(job_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        pause = FIRST_POLL_S
        while True:
            try:
                state = await asyncio.to_thread(lambda: pending.state)
            except _UNREACHABLE as exc:
                log.warning("no result of job %s: Redis is unreachable (%s)", job_id, type(exc).__name__)
                raise QueueUnavailable("the job queue cannot be reached") from None
            if state in READY_STATES:
                break
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise JobTimeout(f"job {job_id} sent no result within {timeout_s:g} s")
            await asyncio.sleep(min(pause, remaining))
            pause = min(pause * 1.5, LAST_POLL_S)
        value = pending.result
        if state == SUCCESS and isinstance(value, dict):
            return value
        if isinstance(value, JobError):
            raise value
        raise JobError(f"job {job_id} ended {state}: {type(value).__name__}: {value}")

    async def progress(self, job_id: JobId) -> JobPayload | None:
        # The worker writes PROGRESS with the step as its meta (workers/tasks.py: _task_state).
        pending = self._app.AsyncResult(job_id)
        try:
            state, info = await asyncio.to_thread(lambda: (pending.state, pending.info))
        except _UNREACHABLE as exc:
            log.info("no progress of job %s: Redis is unreachable (%s)", job_id, type(exc).__name__)
            return None
        return dict(info) if state == "PROGRESS" and isinstance(info, dict) else None

    async def depths(self) -> dict[str, int]:
        return await asyncio.to_thread(self._depths)

    def _depths(self) -> dict[str, int]:
        url = self._app.conf.broker_url
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_S)
        try:
            with client.pipeline(transaction=False) as pipe:
                for queue in QUEUES:
                    for suffix in _PRIORITY_SUFFIXES:
                        pipe.llen(queue + suffix)
                lengths: list[Any] = pipe.execute()
        except _UNREACHABLE:
            raise QueueUnavailable("the job queue cannot be reached") from None
        finally:
            client.close()
        per = len(_PRIORITY_SUFFIXES)
        return {queue: sum(lengths[i * per : (i + 1) * per]) for i, queue in enumerate(QUEUES)}

    def requeue(self, job_id: str) -> str:
        """Send a failed job again under its own id (a night's run key stays), its deaths forgotten.
        Returns the job's name. JobError when the result backend holds no failed job of that id."""
        meta = self._app.backend.get_task_meta(job_id)
        name, args = meta.get("name"), meta.get("args")
        if meta.get("status") != FAILURE or not isinstance(name, str) or not isinstance(args, list | tuple):
            raise JobError(f"no failed job {job_id} is recorded (a job's record expires after a day)")
        DeliveryLedger(self._app.conf.broker_url).forget(job_id)
        self._app.AsyncResult(job_id).forget()  # its FAILURE must not read as the new run's end
        self._app.send_task(name, args=tuple(args), task_id=job_id, queue=queue_for(name), retry=False)
        return name

    async def close(self) -> None:
        if self._marks_client is not None:
            self._marks_client.close()
        self._app.close()


class DeliveryLedger:
    """Per job id, how many times a worker started it without finishing: each such start is a
    worker that died while running it. Kept a week, long past any redelivery."""

    KEY = "kindred:job:unfinished:{}"
    TTL_S = 7 * 24 * 3600

    def __init__(self, redis_url: str) -> None:
        self._url = redis_url
        self._client: redis.Redis | None = None

    def _redis(self) -> redis.Redis:
        # Made on first use, in the process that uses it: never inherited across a fork.
        if self._client is None:
            self._client = redis.Redis.from_url(self._url, socket_connect_timeout=CONNECT_TIMEOUT_S)
        return self._client

    def start(self, job_id: str) -> int:
        """Count this start; returns how many earlier starts never finished (0: none died).
        Redis away: 0, and the job runs; bookkeeping is no reason to hold work back."""
        key = self.KEY.format(job_id)
        try:
            with self._redis().pipeline() as pipe:
                pipe.incr(key)
                pipe.expire(key, self.TTL_S)
                started, _ = pipe.execute()
        except _UNREACHABLE as exc:
            log.warning("job %s: its deliveries are not counted: Redis unreachable (%s)", job_id, exc)
            return 0
        return int(started) - 1

    def forget(self, job_id: str) -> None:
        """The job's starts are no deaths: it ended in its worker (done, failed or to be retried),
        or an admin sends it again."""
        try:
            self._redis().delete(self.KEY.format(job_id))
        except _UNREACHABLE as exc:
            log.warning("job %s: its deliveries stay counted: Redis unreachable (%s)", job_id, exc)


def _unreachable(exc: BaseException) -> bool:
    """True when Redis could not be reached. Celery's result store wraps the connection error
    in a RuntimeError ("retry limit exceeded"), so the whole chain is searched."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, _UNREACHABLE):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
