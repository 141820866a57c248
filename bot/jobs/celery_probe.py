"""A quick look at the job queue: does Redis answer, and which Celery workers listen on which
queues. Nothing is queued; both calls give up after `timeout_s`."""

from __future__ import annotations

import redis
from celery import Celery
from kombu.exceptions import OperationalError

from bot.core.errors import JobError
from bot.jobs.celery_config import DEFAULT_VISIBILITY_TIMEOUT_S, celery_config

_UNREACHABLE = (OperationalError, redis.RedisError, OSError)


def ping_redis(url: str, timeout_s: float) -> None:
    """Return when Redis answers PING; raise JobError with the reason otherwise."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        client.ping()
    except _UNREACHABLE as exc:
        raise JobError(f"Redis does not answer: {type(exc).__name__}: {exc}") from None
    finally:
        client.close()


def worker_queues(url: str, timeout_s: float) -> dict[str, list[str]]:
    """Each worker that answered within `timeout_s`, with the queues it consumes."""
    app = Celery("kindred-probe", set_as_current=False)
    app.conf.update(celery_config(url, DEFAULT_VISIBILITY_TIMEOUT_S))
    try:
        replies = app.control.inspect(timeout=timeout_s).active_queues() or {}
    except _UNREACHABLE as exc:
        raise JobError(f"cannot ask the workers: {type(exc).__name__}: {exc}") from None
    finally:
        app.close()
    return {worker: sorted(str(q["name"]) for q in queues) for worker, queues in replies.items()}


def consumers(url: str, queue: str, timeout_s: float) -> list[str]:
    """The workers that consume `queue` and answered within `timeout_s` (Redis asked first, so
    that an unreachable one fails fast). Raises JobError when Redis or the workers cannot be asked."""
    ping_redis(url, timeout_s)
    return sorted(worker for worker, queues in worker_queues(url, timeout_s).items() if queue in queues)
