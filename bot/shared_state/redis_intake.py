"""Webhook intake shared by every replica, in Redis: each update handled once, each chat in order.

Keys (under kindred:shared:intake:):
- `u:<update>`: a hash {state: held|done, ticket, until}; `until` (Redis's clock, ms) is the
  holder's lease, renewed by its heartbeat. Kept `remember_s` after the last change.
- `c:<chat>`: {next, served}: the last ticket handed out, and the ticket up to which every one
  is finished (or was given up).
- `h:<chat>`: {ticket: until}: the tickets held now, each with its holder's lease.

A ticket's turn comes when every earlier ticket is served or held by nobody alive: a replica that
died holding tickets stalls their chats for at most the lease. Its updates come back when the
platform redelivers them (the webhook answered nothing), with their tickets. Every step is one Lua
script, so two replicas never see half of another's change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter

from redis.asyncio import Redis

from bot.core.errors import SharedStateUnavailable
from bot.core.models import Admission
from bot.shared_state.connection import KEY_PREFIX, UNREACHABLE

log = logging.getLogger(__name__)

NOW_MS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
# KEYS: update, chat, held. ARGV: lease ms, remember ms, has chat (1/0).
ADMIT = (
    NOW_MS
    + """
local lease, remember, has_chat = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] == '1'
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'done' then return {'duplicate', 0} end
local ticket = 0
if state == 'held' then
  if tonumber(redis.call('HGET', KEYS[1], 'until')) > now then return {'busy', 0} end
  ticket = tonumber(redis.call('HGET', KEYS[1], 'ticket'))
elseif has_chat then
  ticket = redis.call('HINCRBY', KEYS[2], 'next', 1)
  redis.call('PEXPIRE', KEYS[2], remember)
end
if ticket > 0 then
  redis.call('HSET', KEYS[3], ticket, now + lease)
  redis.call('PEXPIRE', KEYS[3], remember)
end
redis.call('HSET', KEYS[1], 'state', 'held', 'ticket', ticket, 'until', now + lease)
redis.call('PEXPIRE', KEYS[1], remember)
return {'handle', ticket}
"""
)
# KEYS: chat, held. ARGV: ticket. Returns 0: wait; 1: its turn; 2: its turn, earlier tickets
# given up (their holders died).
TURN = (
    NOW_MS
    + """
local ticket = tonumber(ARGV[1])
local served = tonumber(redis.call('HGET', KEYS[1], 'served') or '0')
if served >= ticket - 1 then return 1 end
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do
  local other = tonumber(held[i])
  if other > served and other < ticket and tonumber(held[i + 1]) > now then return 0 end
end
for i = 1, #held, 2 do
  if tonumber(held[i]) < ticket then redis.call('HDEL', KEYS[2], held[i]) end
end
redis.call('HSET', KEYS[1], 'served', ticket - 1)
return 2
"""
)
# KEYS: update, chat, held. ARGV: ticket, remember ms.
FINISH = """
local ticket, remember = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'state', 'done')
redis.call('HDEL', KEYS[1], 'until')
redis.call('PEXPIRE', KEYS[1], remember)
if ticket > 0 then
  redis.call('HDEL', KEYS[3], ticket)
  -- A ticket past the chat's count is from before Redis lost its data: the chat counts anew.
  local count = tonumber(redis.call('HGET', KEYS[2], 'next') or '0')
  if ticket <= count and ticket > tonumber(redis.call('HGET', KEYS[2], 'served') or '0') then
    redis.call('HSET', KEYS[2], 'served', ticket)
    redis.call('PEXPIRE', KEYS[2], remember)
  end
end
return 1
"""
# KEYS: update, held. ARGV: ticket. The hold ends now: the next copy takes the update over.
RELEASE = """
if redis.call('HGET', KEYS[1], 'state') == 'held' then
  redis.call('HSET', KEYS[1], 'until', 0)
  if tonumber(ARGV[1]) > 0 then redis.call('HSET', KEYS[2], ARGV[1], 0) end
end
return 1
"""
# KEYS: update₁, held₁, update₂, held₂, … ARGV: lease ms, ticket₁, ticket₂, …
RENEW = (
    NOW_MS
    + """
local lease = tonumber(ARGV[1])
for i = 1, #KEYS, 2 do
  if redis.call('HGET', KEYS[i], 'state') == 'held' then
    redis.call('HSET', KEYS[i], 'until', now + lease)
    local ticket = tonumber(ARGV[(i + 1) / 2 + 1])
    if ticket > 0 then redis.call('HSET', KEYS[i + 1], ticket, now + lease) end
  end
end
return 1
"""
)

# How long `admit` keeps trying a Redis that does not answer before the webhook says 503.
ADMIT_PATIENCE_S = 2.0
# Waiting for a chat's turn: the first re-check comes soon, later ones less often (other replicas'
# progress is seen by asking; this replica's own wakes its waiters at once).
FIRST_POLL_S = 0.005
MAX_POLL_S = 0.05
REMEMBER_S = 3600.0


class RedisIntake:
    def __init__(
        self,
        client: Redis,
        *,
        lease_s: float = 30.0,
        remember_s: float = REMEMBER_S,
        namespace: str = "intake",
    ) -> None:
        self._client = client
        self._prefix = f"{KEY_PREFIX}{namespace}:"
        self.lease_s = lease_s
        self._lease_ms = int(lease_s * 1000)
        self._remember_ms = int(remember_s * 1000)
        self._admit = client.register_script(ADMIT)
        self._turn = client.register_script(TURN)
        self._finish = client.register_script(FINISH)
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)
        self._held: dict[str, Admission] = {}
        # Chats this replica has updates waiting in, and what wakes them when one of its own ends.
        self._waiting: Counter[str] = Counter()
        self._wakeups: dict[str, asyncio.Event] = {}
        self._heartbeat: asyncio.Task[None] | None = None

    def _keys(self, admission: Admission) -> list[str]:
        chat, prefix = admission.chat_key or "", self._prefix
        return [f"{prefix}u:{admission.update_key}", f"{prefix}c:{chat}", f"{prefix}h:{chat}"]

    async def admit(self, update_key: str, chat_key: str | None) -> Admission:
        asked = Admission("handle", update_key, chat_key)
        args = [self._lease_ms, self._remember_ms, int(chat_key is not None)]
        deadline = time.monotonic() + ADMIT_PATIENCE_S
        while True:
            try:
                verdict, ticket = await self._admit(keys=self._keys(asked), args=args)
                break
            except UNREACHABLE as exc:
                if time.monotonic() >= deadline:
                    raise SharedStateUnavailable(f"Redis: {type(exc).__name__}") from None
                await asyncio.sleep(0.2)
        admission = Admission(verdict.decode(), update_key, chat_key, int(ticket))
        if admission.verdict == "handle":
            self._held[update_key] = admission
            self._start_heartbeat()
        return admission

    async def wait_turn(self, admission: Admission) -> None:
        if admission.chat_key is None or not admission.ticket:
            return
        chat = admission.chat_key
        self._waiting[chat] += 1
        try:
            await self._wait_turn(admission, chat)
        finally:
            self._waiting[chat] -= 1
            if not self._waiting[chat]:
                del self._waiting[chat]
                self._wakeups.pop(chat, None)

    async def _wait_turn(self, admission: Admission, chat: str) -> None:
        keys = self._keys(admission)[1:]
        poll, unreachable_since = FIRST_POLL_S, None
        while True:
            try:
                turn = await self._turn(keys=keys, args=[admission.ticket])
                unreachable_since = None
            except UNREACHABLE as exc:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since >= self.lease_s:
                    # Order is worth less than the person's message: go on without it.
                    log.warning(
                        "shared state: Redis unreachable for %.0f s (%s); chat %s goes on unordered",
                        now - unreachable_since, type(exc).__name__, chat,
                    )  # fmt: skip
                    return
                turn = 0
            if turn == 2:
                log.warning(
                    "shared state: chat %s went on past tickets below %d that no live replica "
                    "holds (given back, or not renewed for %.0f s: their replica died)",
                    chat, admission.ticket, self.lease_s,
                )  # fmt: skip
            if turn:
                return
            wakeup = self._wakeups.setdefault(chat, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.wait(), poll)
            poll = min(poll * 2, MAX_POLL_S)

    async def finish(self, admission: Admission) -> None:
        # Still held (and renewed) while Redis is asked: nobody takes it over meanwhile.
        for attempt in range(20):
            try:
                await self._finish(keys=self._keys(admission), args=[admission.ticket, self._remember_ms])
                break
            except UNREACHABLE as exc:
                if attempt == 19:
                    # Its hold runs out by itself; a copy of it would then be handled again.
                    log.warning(
                        "shared state: could not mark update %s finished (%s)",
                        admission.update_key, type(exc).__name__,
                    )  # fmt: skip
                    break
                await asyncio.sleep(min(0.1 * 2**attempt, 2.0))
        self._held.pop(admission.update_key, None)
        if admission.chat_key is not None:
            wakeup = self._wakeups.pop(admission.chat_key, None)
            if wakeup is not None:
                wakeup.set()

    async def release(self, admission: Admission) -> None:
        self._held.pop(admission.update_key, None)
        keys = self._keys(admission)
        try:
            await self._release(keys=[keys[0], keys[2]], args=[admission.ticket])
        except UNREACHABLE as exc:  # its hold then runs out by itself, after the lease
            log.warning(
                "shared state: could not give update %s back (%s)", admission.update_key, type(exc).__name__
            )

    async def close(self) -> None:
        """Stop renewing holds. What is still held is given up after the lease."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None

    def _start_heartbeat(self) -> None:
        if self._heartbeat is None or self._heartbeat.done():
            self._heartbeat = asyncio.create_task(self._renew_holds(), name="shared-state heartbeat")

    async def _renew_holds(self) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            held = list(self._held.values())
            if not held:
                continue
            keys = [key for admission in held for key in (self._keys(admission)[0], self._keys(admission)[2])]
            try:
                await self._renew(keys=keys, args=[self._lease_ms, *(a.ticket for a in held)])
            except UNREACHABLE as exc:
                log.warning("shared state: could not renew %d holds (%s)", len(held), type(exc).__name__)
