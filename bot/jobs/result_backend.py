"""Celery's Redis result backend without its pub/sub: Kindred polls a job's state instead.

Stock Celery subscribes the sending process to a job's result channel the moment it sends the job
(`on_task_call`), to serve a blocking `AsyncResult.get()`, and unsubscribes when the result object
is collected. Kindred never calls `get()` (`CeleryJobs.result` polls the state, which holds no
thread for the whole wait), so nothing reads that connection: the server's confirmation of every
subscribe and unsubscribe piles up unread, in the socket and then in Redis's own memory, one pair
per job sent, until Redis drops the client at its pub/sub buffer limit (32 MB). At 50 messages a
second that is about 5 MB every ten minutes.
"""

from __future__ import annotations

from typing import Any

from celery.backends.redis import RedisBackend

# `result_backend = "<this class>+redis://…"`: Celery's form for a backend class with its URL.
POLLED_REDIS_BACKEND = f"{__name__}:PolledRedisBackend"


def polled_backend_url(redis_url: str) -> str:
    return f"{POLLED_REDIS_BACKEND}+{redis_url}"


class PolledRedisBackend(RedisBackend):  # type: ignore[misc]  # celery ships no types
    def on_task_call(self, producer: Any, task_id: str) -> None:
        """Subscribe to nothing: the sender polls (see the module's docstring)."""
