"""A per-person message allowance: a token bucket, so short bursts are fine and floods are not.

The buckets are a port (`Buckets`): in this process (`bot/shared_state/local_buckets.py`), or shared
by every replica (Redis), so that a person writing through two replicas is limited as one person."""

from __future__ import annotations

from bot.core.chat.ports import Buckets

# A person's bucket, beside others kept in the same place (flood control's, say).
KEY_PREFIX = "person:"


class RateLimiter:
    def __init__(
        self,
        per_minute: float,
        burst: int,
        buckets: Buckets,
    ) -> None:
        self.per_second = per_minute / 60.0
        self.burst = float(burst)
        self.buckets = buckets

    async def take(self, key: str) -> float:
        """Take one message from `key`'s allowance. 0.0: go ahead; otherwise seconds to wait."""
        if self.per_second <= 0:
            return 0.0  # limiting is off
        return await self.buckets.take(KEY_PREFIX + key, self.per_second, self.burst)


def slow_down(wait_s: float) -> str:
    seconds = max(int(wait_s + 0.999), 1)
    return f"You're writing faster than I can think! Give me {seconds} s and try again."
