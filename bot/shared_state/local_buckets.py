"""Token buckets in this process: today's behaviour, for one replica (the `Buckets` port).

Several replicas share theirs in Redis instead (bot/shared_state/redis_buckets.py), with the
same arithmetic: a bucket holds up to `burst` tokens, fills at `rate_per_s`, and is full when new.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

# Buckets not used for a while are dropped past this many, least recently used first.
MAX_TRACKED = 100_000


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class LocalBuckets:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take_now(self, key: str, rate_per_s: float, burst: float) -> float:
        """`take`, without waiting for anything: a plain function for callers off the event loop."""
        now = self._clock()
        bucket = self._buckets.pop(key, None) or _Bucket(burst, now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * rate_per_s)
        bucket.updated = now
        self._buckets[key] = bucket  # re-inserted: dict order is least recently used first
        if len(self._buckets) > MAX_TRACKED:
            del self._buckets[next(iter(self._buckets))]
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / rate_per_s

    async def take(self, key: str, rate_per_s: float, burst: float) -> float:
        return self.take_now(key, rate_per_s, burst)
