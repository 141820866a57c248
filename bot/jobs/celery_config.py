"""Celery's configuration, shared by the side that submits jobs and the workers that run them.

`workers/app.py` owns the worker app and its tasks; the submitting side (`CeleryJobs`) needs the
same broker, serialisation and routes, so both build their app from `celery_config` here.
"""

from __future__ import annotations

from typing import Any

from bot.core.jobs import queue_for
from bot.jobs.result_backend import polled_backend_url

# How long a job may stay unacknowledged before Redis hands it to another worker. Jobs are acked
# late (after they finish, so a killed worker's job is redelivered), which means a job still
# running past this would be delivered a second time, and nightly training would run twice. So it
# must exceed the longest hard limit, with room for the wait before a retry's countdown.
VISIBILITY_MARGIN_S = 600.0
DEFAULT_VISIBILITY_TIMEOUT_S = 3600.0
# Fail fast when Redis is gone: the caller answers "busy, try again shortly" instead of hanging.
CONNECT_TIMEOUT_S = 2.0


def visibility_timeout_s(longest_hard_limit_s: float, configured_s: float | None) -> float:
    """The configured value, or one that outlasts every job's hard limit."""
    if configured_s is not None:
        return configured_s
    return max(DEFAULT_VISIBILITY_TIMEOUT_S, longest_hard_limit_s + VISIBILITY_MARGIN_S)


def route(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict[str, str]:
    """Celery router: a task's queue follows from its name (kindred.inference.* → gpu, …)."""
    return {"queue": queue_for(name)}


def celery_config(redis_url: str, visibility_timeout: float) -> dict[str, Any]:
    transport = {
        "visibility_timeout": visibility_timeout,
        # How often a worker looks for jobs that are past the visibility timeout and requeues them
        # (kombu's default looks every 100 s); one ZRANGE on Redis each time.
        "unacked_restore_interval": int(min(max(visibility_timeout / 4, 1), 60)),
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "socket_timeout": 30.0,
    }
    return {
        "broker_url": redis_url,
        # Results are polled, never awaited through pub/sub: bot/jobs/result_backend.py says why.
        "result_backend": polled_backend_url(redis_url),
        "broker_transport_options": transport,
        "result_backend_transport_options": {"retry_policy": {"max_retries": 0}},
        "redis_socket_connect_timeout": CONNECT_TIMEOUT_S,
        "broker_connection_timeout": CONNECT_TIMEOUT_S,
        "broker_connection_retry_on_startup": True,
        # JSON only: a pickled payload from the broker could run code in the worker.
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        # Ack after the job finished: a worker killed mid-job leaves it to be redelivered.
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        # One job at a time per worker process: a long job never holds others hostage in its prefetch.
        "worker_prefetch_multiplier": 1,
        "task_default_queue": "default",
        "task_create_missing_queues": True,
        "task_routes": (route,),
        # Publishing fails at once when Redis is gone; the caller says "busy" and keeps nothing queued.
        "task_publish_retry": False,
        "task_track_started": True,
        "result_extended": True,
        "result_expires": 24 * 3600,
        # A job that keeps no result (JobSpec.keep_result) still leaves its failure, for Flower.
        "task_store_errors_even_if_ignored": True,
    }
