"""A per-person message allowance: a token bucket, so short bursts are fine and floods are not."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

# Buckets of people who went quiet are dropped past this many, oldest first.
MAX_TRACKED = 100_000


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    def __init__(self, per_minute: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_second = per_minute / 60.0
        self.burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def wait_s(self, key: str) -> float:
        """Take one message from `key`'s allowance. 0.0: go ahead; otherwise seconds to wait."""
        if self.per_second <= 0:
            return 0.0  # limiting is off
        now = self._clock()
        bucket = self._buckets.pop(key, None) or _Bucket(self.burst, now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.per_second)
        bucket.updated = now
        self._buckets[key] = bucket  # re-inserted: dict order is least recently seen first
        if len(self._buckets) > MAX_TRACKED:
            del self._buckets[next(iter(self._buckets))]
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.per_second


def slow_down(wait_s: float) -> str:
    seconds = max(int(wait_s + 0.999), 1)
    return f"You're writing faster than I can think! Give me {seconds} s and try again."
