"""Budget holds in this process: the `Holds` of a single replica, and each replica's own while
Redis is unreachable. The rule is the Redis script's (bot/shared_state/redis_holds.py)."""

from __future__ import annotations

import time

from bot.core.usage.ports import Check


class LocalHolds:
    def __init__(self, hold_s: float = 600.0) -> None:
        self._hold_s = hold_s
        # subject -> hold id -> (lapses at, tokens, cost)
        self._held: dict[str, dict[str, tuple[float, int, float]]] = {}

    async def take(self, subject: str, hold_id: str, tokens: int, cost: float, checks: list[Check]) -> bool:
        return self.take_now(subject, hold_id, tokens, cost, checks)

    def take_now(self, subject: str, hold_id: str, tokens: int, cost: float, checks: list[Check]) -> bool:
        now = time.monotonic()
        held = {k: v for k, v in self._held.get(subject, {}).items() if v[0] > now}
        room = {"tokens": float(sum(v[1] for v in held.values())), "cost": sum(v[2] for v in held.values())}
        if any(check.used + room[check.measure] >= check.limit for check in checks):
            self._held[subject] = held
            return False
        held[hold_id] = (now + self._hold_s, tokens, cost)
        self._held[subject] = held
        return True

    async def release(self, subject: str, hold_id: str) -> None:
        self.release_now(subject, hold_id)

    def release_now(self, subject: str, hold_id: str) -> None:
        held = self._held.get(subject)
        if held is not None:
            held.pop(hold_id, None)
            if not held:
                del self._held[subject]
