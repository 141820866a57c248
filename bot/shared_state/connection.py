"""One Redis client for the shared state, and the errors that mean "Redis is not there now"."""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# A Redis that is down, restarting or unreachable; anything else is a bug, not an outage.
UNREACHABLE: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError, OSError)
KEY_PREFIX = "kindred:shared:"


def connect(url: str) -> Redis:
    """A client that fails fast when Redis is away: the callers decide how to wait (admit: refuse
    with 503 so that the platform redelivers; limits: this replica's own buckets meanwhile)."""
    return Redis.from_url(
        url,
        socket_connect_timeout=2.0,
        socket_timeout=5.0,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
    )
