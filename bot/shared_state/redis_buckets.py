"""Token buckets shared by every replica: one Lua script, so that taking a token is atomic and
uses Redis's clock (replicas' clocks need not agree). The arithmetic is `LocalBuckets`'."""

from __future__ import annotations

import logging

from redis.asyncio import Redis

from bot.shared_state.connection import KEY_PREFIX, UNREACHABLE
from bot.shared_state.local_buckets import LocalBuckets

log = logging.getLogger(__name__)

# ARGV: rate per second, burst. Returns the seconds to wait, as a string (Lua numbers become
# integers on their way out of a script). '%.17g' keeps a double whole: tostring keeps 14 digits.
TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(state[1]), tonumber(state[2])
if tokens == nil or at == nil then tokens, at = burst, now end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', now))
-- Past this, the bucket is full again: a missing key says the same.
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return string.format('%.17g', wait)
"""


class RedisBuckets:
    """While Redis is unreachable, each replica limits with buckets of its own (logged once per
    outage): a person is then limited per replica for a while, and never refused for the outage."""

    def __init__(self, client: Redis, *, namespace: str = "buckets") -> None:
        self._client = client
        self._prefix = f"{KEY_PREFIX}{namespace}:"
        self._take = client.register_script(TAKE)
        self._fallback = LocalBuckets()
        self._outage = False

    async def take(self, key: str, rate_per_s: float, burst: float) -> float:
        try:
            wait = await self._take(keys=[self._prefix + key], args=[repr(rate_per_s), repr(burst)])
        except UNREACHABLE as exc:
            if not self._outage:
                self._outage = True
                log.warning(
                    "shared state: Redis unreachable (%s); limits are this replica's own until it is back",
                    type(exc).__name__,
                )
            return self._fallback.take_now(key, rate_per_s, burst)
        if self._outage:
            self._outage = False
            log.warning("shared state: Redis is back; limits are shared again")
        return float(wait)
