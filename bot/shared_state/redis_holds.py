"""Budget holds shared by every replica: one Lua script takes a hold only while every limit has
room, so that two replicas cannot both take the last of a budget; Redis's clock lapses the holds of
a replica that died mid-reply. The rule is `LocalHolds`'."""

from __future__ import annotations

import logging

from redis.asyncio import Redis

from bot.core.usage.ports import Check
from bot.shared_state.connection import KEY_PREFIX, UNREACHABLE
from bot.shared_state.local_holds import LocalHolds

log = logging.getLogger(__name__)

# KEYS[1]: the subject's holds (a sorted set: member "id|tokens|cost", score: lapses at, ms).
# ARGV: member, hold ms, then for each check: measure ("t" or "c"), used, limit. 1: taken; 0: no room.
TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local tokens, cost = 0, 0
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local _, _, held_tokens, held_cost = string.find(member, '^[^|]*|([^|]*)|(.*)$')
  tokens = tokens + tonumber(held_tokens)
  cost = cost + tonumber(held_cost)
end
for i = 3, #ARGV, 3 do
  local held = (ARGV[i] == 't') and tokens or cost
  if tonumber(ARGV[i + 1]) + held >= tonumber(ARGV[i + 2]) then return 0 end
end
local hold = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + hold, ARGV[1])
redis.call('PEXPIRE', KEYS[1], hold + 1000)
return 1
"""


class RedisHolds:
    """While Redis is unreachable each replica holds on its own (logged once per outage): a
    budget may then be overspent by the replies in flight on the other replicas, never refused
    for the outage."""

    def __init__(self, client: Redis, *, hold_s: float = 600.0) -> None:
        self._client = client
        self._prefix = f"{KEY_PREFIX}holds:"
        self._take = client.register_script(TAKE)
        self._hold_ms = int(hold_s * 1000)
        self._fallback = LocalHolds(hold_s)
        # hold id -> its member: the replica that took a hold gives it back.
        self._members: dict[str, str] = {}
        self._outage = False

    async def take(self, subject: str, hold_id: str, tokens: int, cost: float, checks: list[Check]) -> bool:
        member = f"{hold_id}|{int(tokens)}|{float(cost)!r}"
        args: list[str | int] = [member, self._hold_ms]
        for check in checks:
            args += [
                "t" if check.measure == "tokens" else "c",
                repr(float(check.used)),
                repr(float(check.limit)),
            ]
        try:
            taken = bool(await self._take(keys=[self._prefix + subject], args=args))
        except UNREACHABLE as exc:
            self._away(exc)
            return self._fallback.take_now(subject, hold_id, tokens, cost, checks)
        self._back()
        if taken:
            self._members[hold_id] = member
        return taken

    async def release(self, subject: str, hold_id: str) -> None:
        self._fallback.release_now(subject, hold_id)
        member = self._members.pop(hold_id, None)
        if member is None:
            return
        try:
            await self._client.zrem(self._prefix + subject, member)
        except UNREACHABLE as exc:
            self._away(exc)  # the hold lapses by itself

    def _away(self, exc: BaseException) -> None:
        if not self._outage:
            self._outage = True
            log.warning("budgets: Redis unreachable (%s); holds are this replica's own until it is back",
                        type(exc).__name__)  # fmt: skip

    def _back(self) -> None:
        if self._outage:
            self._outage = False
            log.warning("budgets: Redis is back; holds are shared again")
