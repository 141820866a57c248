"""The guard against two beats: one Redis key, set only if absent, with a TTL its holder renews.

Two beats would send every periodic job twice. `kindred beat` takes this lock before starting
Celery beat and renews it while beat runs; a second `kindred beat` finds it held and refuses. If
the holder dies, the key expires after `ttl_s` and a new beat may start.
"""

from __future__ import annotations

import os
import socket
import uuid

import redis

from bot.core.errors import SharedStateUnavailable

BEAT_LOCK_KEY = "kindred:beat"
# Compare-and-act in one step: only the holder may renew or release the lock.
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('expire', KEYS[1], ARGV[2]) end return 0"
)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


class BeatLock:
    def __init__(self, client: redis.Redis, ttl_s: int, key: str = BEAT_LOCK_KEY) -> None:
        self._client = client
        self.ttl_s = ttl_s
        self.key = key
        # Who holds it, readable by whoever is refused: host, process and a unique part.
        self.token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"

    def acquire(self) -> bool:
        return bool(self._client.set(self.key, self.token, nx=True, ex=self.ttl_s))

    def renew(self) -> bool:
        """False when the lock is no longer ours (it expired and another beat took it). Raises
        SharedStateUnavailable when Redis cannot be asked: the lock may expire meanwhile."""
        try:
            return bool(self._client.eval(_RENEW, 1, self.key, self.token, str(self.ttl_s)))
        except redis.RedisError as exc:
            raise SharedStateUnavailable(f"Redis unreachable ({type(exc).__name__})") from exc

    def release(self) -> None:
        self._client.eval(_RELEASE, 1, self.key, self.token)

    def holder(self) -> str | None:
        value = self._client.get(self.key)
        return value.decode() if isinstance(value, bytes) else None
