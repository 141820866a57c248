"""One Redis client for the shared state, and the errors that mean "Redis is not there now"."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# A Redis that is down, restarting or unreachable; anything else is a bug, not an outage.
UNREACHABLE: tuple[type[Exception], ...] = (RedisConnectionError, RedisTimeoutError, OSError)
KEY_PREFIX = "kindred:shared:"


# At most this many connections per replica; a request past them waits for one to come free, up
# to POOL_WAIT_S. redis-py's default pool refuses the 101st at once (MaxConnectionsError, a
# ConnectionError: read as "Redis is away"): under a backlog on 2026-12-06 the bots logged it 624
# times, refused webhooks that Redis would have taken, and opened connections up to the limit.
MAX_CONNECTIONS = 50
POOL_WAIT_S = 5.0


def connect(url: str) -> Redis:
    """A client that fails fast when Redis is away: the callers decide how to wait (admit: refuse
    with 503 so that the platform redelivers; limits: this replica's own buckets meanwhile). Busy
    is not away: a request waits for one of the pool's connections."""
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=MAX_CONNECTIONS,
        timeout=POOL_WAIT_S,
        socket_connect_timeout=2.0,
        socket_timeout=5.0,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=30,
    )
    return Redis.from_pool(pool)
